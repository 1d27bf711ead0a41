# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # MPTCP over two radios (mptcp-dualband)
#
# Khan et al. (WiNTECH'21) ported MPTCP to an ASUS ROG Phone II with an
# 802.11ad (60 GHz) and an 802.11ac (5 GHz) radio, assigned packets to the two
# interfaces by a fixed ratio (*FixedRatio* scheduler), and asked which ratio
# maximizes throughput and which minimizes energy per bit (nJ/bit = power /
# throughput), per direction and application demand. They also found that the
# phone needs GRO on the 802.11ac interface and SoftIRQ processing on the big
# cores to reach the sum of the two interfaces' rates.
#
# This chapter re-runs the experiments on a Linux host with the capture kit
# `scripts/capture/mptcp_dualband/`: two network namespaces (a "phone" and an
# "AP/server") joined by two veth paths limited with `tc htb` in the paper's
# proportions (path **a** stands for 802.11ad, path **b** for 802.11ac:
# {glue:text}`rate_dl_a` and {glue:text}`rate_dl_b` Mbps downlink, {glue:text}`rate_ul_a` and
# {glue:text}`rate_ul_b` Mbps uplink, §3.2), Linux MPTCP
# (one `IPPROTO_MPTCP` socket, `ip mptcp` endpoints) for backlogged transfers,
# and, because upstream MPTCP has no fixed-ratio scheduler, a sender that
# stripes one stream over two TCP connections by a given ratio, chunk by
# chunk, with blocking writes (a slow path stalls the stream, as in
# FixedRatio), optionally paced to a demand.
#
# ```{admonition} Provenance
# **measured**: throughput, per-path bytes and CPU time, from raw captures in
# `data/raw/mptcp-dualband/<device>/` (hashes in the boxes below).
# **published**: the paper's stated numbers (`data/published/mptcp-dualband.yaml`).
# **modeled**: every power and energy-per-bit value: the paper's backlogged
# radio powers (§4.1, published) scaled by each path's measured utilization,
# plus the phone-side process's measured CPU time priced by a CPU power model
# whose coefficients are *assumed* (`params.yaml`, `power-models`). No radio
# and no battery were measured here: the veth paths have no power draw.
# ```

# %% tags=["parameters"]
study = "mptcp-dualband"
devices = []
published_dir = "data/interim/published/mptcp-dualband"
interim_dir = "data/interim/mptcp-dualband"
results_dir = "data/results/mptcp-dualband"
radio_models = {}
cpu_model = ""
radio_floor_fracs = [0.0]
satisfied_frac = 0.95
rel_tol_equal = 0.05
rel_tol_approx = 0.10
ratio_tol = 5

# %% tags=["hide-input"]
import json
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
import yaml
from IPython.display import Markdown, display

from mobitrace.core import claims as cl
from mobitrace.studies.mptcp_dualband import analysis as mda
from mobitrace.studies.mptcp_dualband import ingest as md
from mobitrace.energy import power_models as power
from mobitrace.stats import resampling as rs
from mobitrace.book.build import with_interval
from mobitrace.core import numbers
from mobitrace.book.chapter import ChapterOutputs, paper_text, site_href
from mobitrace.book.figures import PALETTE, SEED, legend_outside
from mobitrace.core.published import value_of

results = Path(results_dir)
out = ChapterOutputs(results, "analyze_mptcp_dualband")
tables_dir, figures_dir = out.tables_dir, out.figures_dir
put, put_text, save_table, show, table, provenance, figure = (out.put, out.put_text, out.save_table, out.show,
                                                             out.table, out.provenance, out.figure)
values = pd.read_parquet(Path(published_dir) / "values.parquet")
pm = yaml.safe_load(Path("params.yaml").read_text())["power-models"]
radio_all = power.radio_models(pm)
cpu = power.cpu_models(pm)[cpu_model]
radio = {d: {p: radio_all[name] for p, name in radio_models[d].items()} for d in md.DIRECTIONS}
STAGE = "analyze_mptcp_dualband"
COLORS = {"a": PALETTE[0], "b": PALETTE[1], "total": PALETTE[2]}
N_BOOT = rs.N_BOOT


def v(value_id):
    return value_of(values, value_id)


# %%
frames, manifests = [], {}
for device in devices:
    folder = Path(interim_dir) / device
    frames.append(pd.read_parquet(folder / "runs.parquet"))
    manifests[device] = json.loads((folder / "manifests.json").read_text())
if not frames:
    raise SystemExit("no mptcp-dualband device listed in params.yaml")
runs = pd.concat(frames, ignore_index=True)
energy = md.energy_table(runs, radio, cpu)
put("n_captured", int((runs["device"] == devices[0]).sum()))
# Runs whose MPTCP connection used both paths (each path > 1% of the bytes),
# and the MPTCP runs of sessions captured before the kit's listener fix set
# aside (mobitrace.studies.mptcp_dualband.ingest.select_runs).
energy["paths_used"] = md.paths_used(energy)
energy, aside = md.select_runs(energy, manifests)
early = aside[aside["transport"] == "mptcp"]
ref = devices[0]
ref_runs = energy[energy["device"] == ref]
ref_manifest = next(iter(manifests[ref].values()))
scale = float(ref_manifest["config"]["scale"])
rates_paper = ref_manifest["config"]["paper_path_rates_mbps"]
put("ref_device", ref)
for d in md.DIRECTIONS:
    for p in md.PATHS:
        put(f"rate_{d[0]}l_{p}", f"{rates_paper[d][p]:g}")
put("scale", f"{scale:g}")
put("n_runs", int(len(ref_runs)))
_counts = ref_runs.groupby(["part", "config", "direction", "ratio_a_pct", "demand_mbps"], dropna=False).size()
put("reps_mptcp", int(_counts.loc["mptcp"].min()))
put("reps_extra", int(_counts.loc[["gro", "sirq"]].min()) if {"gro", "sirq"} <= set(ref_runs["part"]) else 0)
put("reps_sweep", int(_counts.loc["sweep"].min()))
put("dur_cdf", f"{ref_manifest['config']['duration_cdf_s']:g}")
put("dur_sweep", f"{ref_manifest['config']['duration_sweep_s']:g}")

# %% [markdown]
# (mptcp-dualband-capture)=
# ## The capture
#
# The chapter's reference host is {glue:text}`ref_device`; the chapter uses
# {glue:text}`n_runs` of its {glue:text}`n_captured` captured runs (see
# below for the ones set aside). The rate scale factor was {glue:text}`scale`:
# the host sustained the paper's rates through `tc htb` on its two shared
# cores, so path rates and demands are the paper's (a scale below 1 would
# multiply every rate and demand by it, and throughputs are divided by it
# before pricing, so that the figures are in the paper's units).
# Captures were made on a **shared 2-core VM** (other helpers' captures ran
# between this kit's batches; a machine-wide lock kept measured runs from
# overlapping, and each run records the 1-min load average). Repetitions and
# durations were scaled to fit about 20 minutes of measurement (table below):
# {glue:text}`reps_mptcp` runs of {glue:text}`dur_cdf` s per direction of
# backlogged MPTCP, {glue:text}`reps_extra` runs per GRO and RPS
# configuration, and {glue:text}`reps_sweep` runs of {glue:text}`dur_sweep` s
# per ratio x demand x direction of the sweep (the paper: 20 runs for Figs. 1
# and 2, 5 for the power figures).

# %%
def capture_view(device):
    rows = []
    for session, m in manifests[device].items():
        c, h = m["config"], m["host"]
        rows.append({"device": device, "session": session, "runs": int(((energy["device"] == device) & (energy["session"] == session)).sum()),
                     "scale": c["scale"], "kernel": h.get("kernel"), "CPU": ", ".join(h.get("cpu_model", [])),
                     "cores": h.get("cpu_count"), "congestion control": c.get("congestion_control"),
                     "s/run CDF": c.get("duration_cdf_s"), "s/run sweep": c.get("duration_sweep_s"),
                     "lock held (s)": (m.get("lock") or {}).get("held_s")})
    return pd.DataFrame(rows)


cap = pd.concat([capture_view(d) for d in devices], ignore_index=True)
table(cap, "captures", "Captures behind the measured results")
provenance("measured: data/raw/mptcp-dualband/<device>/<session>/ (manifest.yaml with host, link and "
           "configuration; runs.jsonl.gz with every run's tool output).")
load = ref_runs["loadavg1"]
put("load_median", f"{load.median():.2f}")
put("load_max", f"{load.max():.2f}")

# %% [markdown]
# The 1-min load average at the start of a run had a median of
# {glue:text}`load_median` (maximum {glue:text}`load_max`) on 2 cores.

# %% [markdown]
# (mptcp-dualband-first-session)=
# ### MPTCP runs set aside
#
# The kit's first session closed the server's listening socket once the
# connection was accepted. Linux MPTCP receives a new subflow's MP_JOIN SYN
# through the listener, so a join that arrived after the close was reset
# (the phone's path-b counters show one SYN out and one short reply in) and
# the connection ran on path a alone. The table counts, per configuration of
# that session, the runs whose MPTCP connection used both paths. The kit now
# keeps the listener open and lets the sender wait 300 ms for the subflows; the
# MPTCP figures below use only the session captured that way. The first
# session's striped runs (the ratio sweep) open one TCP connection per path
# and are unaffected.

# %%
if len(early):
    ea = (early.groupby(["device", "session", "config", "direction"])
          .agg(runs=("run_id", "size"), both_paths=("paths_used", lambda x: int((x == 2).sum())),
               median_mbps=("tput_eq_mbps", "median")).reset_index())
    table(ea, "mptcp_runs_set_aside", "MPTCP runs of the first session (set aside): runs that used both paths",
          shown=ea.rename(columns={"both_paths": "runs on both paths", "median_mbps": "median throughput (Mbps)"}))
    provenance("measured: per-path bytes from the phone's interface counters.")
    put("early_both", int((early["paths_used"] == 2).sum()))
    put("early_n", int(len(early)))
else:
    display(Markdown("*No MPTCP runs were set aside.*"))
    put("early_both", 0)
    put("early_n", 0)
put("late_both", int((energy.loc[energy["transport"] == "mptcp", "paths_used"] == 2).sum()))
put("late_n", int((energy["transport"] == "mptcp").sum()))

# %% [markdown]
# In the first session {glue:text}`early_both` of {glue:text}`early_n` MPTCP
# runs used both paths; in the runs the chapter uses, {glue:text}`late_both`
# of {glue:text}`late_n` MPTCP runs did (backup-mode runs use one path by
# design).

# %% [markdown]
# (mptcp-dualband-fig1)=
# ## Figure 1: MPTCP throughput per path and in total
#
# Backlogged MPTCP (Linux's default scheduler, one subflow per path, GRO on
# at the phone) against the sum of the two paths' rates, per direction. The
# paper's analog averages 20 runs with standard deviations; its bars' values
# are not in the text beyond the expected sums ({glue:text}`p_expected_dl` and
# {glue:text}`p_expected_ul` Mbps) and the downlink's {glue:text}`p_mptcp_dl_default` Mbps
# before the GRO and SoftIRQ fixes.

# %%
mp = energy[(energy["part"] == "mptcp")]
fig1 = (mp.groupby(["device", "direction"])
        .agg(n=("tput_eq_mbps", "size"), total=("tput_eq_mbps", "mean"), total_sd=("tput_eq_mbps", "std"),
             path_a=("tput_a_eq_mbps", "mean"), path_a_sd=("tput_a_eq_mbps", "std"),
             path_b=("tput_b_eq_mbps", "mean"), path_b_sd=("tput_b_eq_mbps", "std")).reset_index())
fig1["sum of path rates"] = [rates_paper[d]["a"] + rates_paper[d]["b"] for d in fig1["direction"]]
fig1["% of sum"] = 100 * fig1["total"] / fig1["sum of path rates"]
_ci = {k: rs.mean_ci(g["tput_eq_mbps"]) for k, g in mp.groupby(["device", "direction"])}
fig1["total_ci_low"] = [_ci[k][1] for k in zip(fig1["device"], fig1["direction"])]
fig1["total_ci_high"] = [_ci[k][2] for k in zip(fig1["device"], fig1["direction"])]
table(fig1, "fig1_mptcp_throughput", "Backlogged MPTCP throughput: mean [95% CI], and SD, over runs",
      shown=with_interval(fig1, "total", "total_ci_low", "total_ci_high").rename(columns={
          "n": "runs", "total": "MPTCP total (Mbps)", "total_sd": "SD total (Mbps)", "path_a": "path a (Mbps)",
          "path_a_sd": "SD path a (Mbps)", "path_b": "path b (Mbps)", "path_b_sd": "SD path b (Mbps)",
          "sum of path rates": "sum of path rates (Mbps)", "% of sum": "of the sum (%)"}))
provenance("measured: receiver payload over first-to-last byte; per path by the phone's interface byte counters.")

r = fig1[fig1["device"] == ref].set_index("direction").loc[list(md.DIRECTIONS)]
long1 = (mp[mp["device"] == ref]
         .melt(id_vars=["direction"], value_vars=["tput_a_eq_mbps", "tput_b_eq_mbps", "tput_eq_mbps"],
               var_name="series", value_name="throughput (Mbps)")
         .replace({"series": {"tput_a_eq_mbps": "path a (802.11ad analog)", "tput_b_eq_mbps": "path b (802.11ac analog)",
                              "tput_eq_mbps": "MPTCP total"}}))
fig, ax = plt.subplots(figsize=(6.4, 3.6))
sns.barplot(data=long1, x="direction", y="throughput (Mbps)", hue="series", order=list(md.DIRECTIONS),
            palette=[COLORS["a"], COLORS["b"], COLORS["total"]], errorbar=("ci", 95), n_boot=N_BOOT, seed=SEED,
            capsize=0.1, err_kws={"linewidth": 1}, ax=ax)
ax.hlines(r["sum of path rates"], np.arange(len(r)) - 0.4, np.arange(len(r)) + 0.4, colors="k", linestyles="--",
          linewidth=1, label="sum of path rates")
ax.legend()
ax.set(xlabel="direction", ylabel="throughput (Mbps)")
legend_outside(ax)
figure(fig, "fig1_mptcp_throughput",
       alt="Bar chart of backlogged MPTCP throughput in Mbps per direction: path a, path b and the MPTCP total, "
           "with 95% confidence intervals and a dashed line at the sum of the two paths' rates.",
       caption="Mean throughput over the backlogged MPTCP runs (measured), bars: 95% bootstrap CI over runs. "
               "Look at how close the green total bar comes to the dashed sum of the path rates.")
for d in md.DIRECTIONS:
    put(f"fig1_{d}_pct", f"{r.loc[d, '% of sum']:.1f}")
    put(f"fig1_{d}_total", f"{r.loc[d, 'total']:.0f}")
    put(f"fig1_{d}_sum", f"{r.loc[d, 'sum of path rates']:.0f}")
for vid in ("expected_dl", "expected_ul", "mptcp_dl_default"):
    put(f"p_{vid}", f"{v(vid):g}")

# %% [markdown]
# Downlink MPTCP reached {glue:text}`fig1_downlink_total` Mbps
# ({glue:text}`fig1_downlink_pct`% of the sum of the path rates), uplink
# {glue:text}`fig1_uplink_total` Mbps ({glue:text}`fig1_uplink_pct`%). The
# htb paths themselves deliver a little under their configured rates (TCP
# payload vs. htb's rate on frames with headers).

# %% [markdown]
# (mptcp-dualband-fig2)=
# ## Figure 2: throughput CDFs, GRO and SoftIRQ steering
#
# Downlink MPTCP, the runs per configuration in the table below: GRO on at both phone interfaces
# (default here), GRO off on path a or on path b (the paper's problem was GRO
# disabled on the 802.11ac interface), and the phone's receive SoftIRQ steered
# by RPS to CPU 0 or CPU 1 (as the cpu-gbps kit's `rps-cpu<N>`; the paper
# steered SIRQs to the big cores). The host's two cores are identical, so the
# steering tests concentration of the SoftIRQ work, not a big/LITTLE effect.

# %%
dl = energy[(energy["direction"] == "downlink") & (energy["transport"] == "mptcp")
            & energy["part"].isin(["mptcp", "gro", "sirq"])].copy()
dl["configuration"] = dl["config"].replace({"default": "GRO on (default)"})
cdf_rows = []
for conf, g in dl[dl["device"] == ref].groupby("configuration", sort=True):
    xs, ys = md.ecdf(g["tput_eq_mbps"] / 1000)
    cdf_rows.append({"configuration": conf, "n": len(g), "median_gbps": float(np.median(xs)),
                     "min_gbps": float(xs.min()), "max_gbps": float(xs.max()),
                     "below_2gbps": int((xs < 2.0).sum()),
                     "pct_of_sum": 100 * float(np.median(xs)) * 1000 / (rates_paper["downlink"]["a"]
                                                                        + rates_paper["downlink"]["b"]),
                     "phone_cpu_s_per_gbit": float((g["phone_cpu_s"] / (g["payload_bytes"] * 8 / 1e9)).median()),
                     "ap_cpu_s_per_gbit": float((g["ap_cpu_s"] / (g["payload_bytes"] * 8 / 1e9)).median())})
dl_ref = dl[dl["device"] == ref].assign(tput_gbps=lambda f: f["tput_eq_mbps"] / 1000)
fig, ax = plt.subplots(figsize=(6.4, 3.6))
sns.ecdfplot(data=dl_ref, x="tput_gbps", hue="configuration", hue_order=sorted(dl_ref["configuration"].unique()), ax=ax)
handles, labels = ax.get_legend().legend_handles, [t.get_text() for t in ax.get_legend().get_texts()]
for vid, label, ls in (("cdf_default_median", "paper median, default", ":"),
                       ("cdf_affinity_median", "paper median, SIRQ on big cores", "--")):
    handles.append(ax.axvline(v(vid), ls=ls, color="k", lw=1))
    labels.append(label)
ax.legend(handles, labels, title="configuration")
ax.set(xlabel="downlink MPTCP throughput (Gbps)", ylabel="share of runs (ECDF)")
legend_outside(ax)
_meds = [c["median_gbps"] for c in cdf_rows]
cdf_spread = 100 * (max(_meds) / min(_meds) - 1)
figure(fig, "fig2_throughput_cdf",
       alt="Empirical CDFs of downlink MPTCP throughput in Gbps, one curve per GRO or SoftIRQ configuration, "
           "with vertical lines at the paper's two published medians.",
       caption="Throughput CDFs per configuration (measured, reference host); black lines: the paper's medians "
               f"(published, §3.4). Look at whether the curves separate: on this host the medians differ by at most "
               f"{cdf_spread:.1f}%.")
cdf = pd.DataFrame(cdf_rows)
table(cdf, "fig2_cdf_summary", "Downlink MPTCP throughput per configuration",
      shown=cdf.rename(columns={"n": "runs", "median_gbps": "median (Gbps)", "min_gbps": "min (Gbps)",
                                "max_gbps": "max (Gbps)", "below_2gbps": "runs below 2 Gbps",
                                "pct_of_sum": "median, % of the sum of path rates",
                                "phone_cpu_s_per_gbit": "phone CPU (s/Gbit)", "ap_cpu_s_per_gbit": "AP CPU (s/Gbit)"}))
provenance("measured: throughput and the per-process CPU time (getrusage) of the phone and AP processes.")
cdf_i = cdf.set_index("configuration")
put("cdf_default_median", f"{cdf_i.loc['GRO on (default)', 'median_gbps']:.2f}")
put("cdf_default_below2", int(cdf_i.loc["GRO on (default)", "below_2gbps"]))
gro_gain = 100 * (cdf_i.loc["GRO on (default)", "median_gbps"] / cdf_i.loc["gro-off-b", "median_gbps"] - 1)
put("gro_gain", f"{gro_gain:.1f}")
_d = dl[(dl["device"] == ref) & (dl["config"] == "default")]
put("phone_core_pct", f"{100 * (_d['phone_cpu_s'] / _d['rx_seconds']).median():.0f}")
put("ap_core_pct", f"{100 * (_d['ap_cpu_s'] / _d['rx_seconds']).median():.0f}")

# %% [markdown]
# With GRO on, the median downlink throughput was
# {glue:text}`cdf_default_median` Gbps ({glue:text}`cdf_default_below2` of
# {glue:text}`reps_mptcp` runs below 2 Gbps); GRO on vs off on path b changed the median by
# {glue:text}`gro_gain`%. On veth at these rates the receiving process used
# a median {glue:text}`phone_core_pct`% of one core and the sender
# {glue:text}`ap_core_pct`% (per-process CPU time; part of the receive path's
# SoftIRQ work runs in the sender's context on a veth pair): the CPU is far
# from saturated, so neither GRO nor the SoftIRQ placement is the bottleneck
# it was on the phone.

# %% [markdown]
# (mptcp-dualband-cpu)=
# ### Precise and tick-sampled CPU
#
# Each run records both the two processes' own CPU time (`getrusage`) and
# `/proc/stat` before and after. On this VM the tick-sampled counters are not
# reliable for paced network load, and they count the whole shared host:
# other helpers' builds and tests ran during some batches (the lock only
# keeps measured runs from overlapping), so the host's busy time can exceed
# the two processes' by far. The energy model uses the per-process time.

# %%
cpu_cmp = (energy[energy["device"] == ref].groupby(["part", "direction"])
           .agg(runs=("run_id", "size"), phone_cpu_s=("phone_cpu_s", "mean"), ap_cpu_s=("ap_cpu_s", "mean"),
                procstat_busy_s=("procstat_busy_s", "mean"), procstat_softirq_s=("procstat_softirq_s", "mean"),
                seconds=("rx_seconds", "mean")).reset_index())
table(cpu_cmp, "cpu_sources", "CPU seconds per run: per-process (precise) vs /proc/stat (whole host, tick-sampled)",
      shown=cpu_cmp.rename(columns={"phone_cpu_s": "phone process CPU (s)", "ap_cpu_s": "AP process CPU (s)",
                                    "procstat_busy_s": "/proc/stat busy (s)",
                                    "procstat_softirq_s": "/proc/stat softirq (s)", "seconds": "run length (s)"}))
provenance("measured: getrusage of each mtmp_xfer process; /proc/stat of the whole (shared) host.")

# %% [markdown]
# (mptcp-dualband-power)=
# ## Figure 3 analog: modeled power per direction
#
# The phone's power above its base power, for backlogged MPTCP: each
# interface's radio at its measured rate (the paper's backlogged powers,
# linear in utilization, 0 at no traffic), plus the phone-side process's CPU
# time through the CPU model. The paper measured total phone power with the
# battery's voltage and current; this is a model fed with measured rates and
# CPU time.

# %%
radio_tab = pd.DataFrame([{"model": m.name, "Tx backlogged (mW)": m.tx_active_mw, "Rx backlogged (mW)": m.rx_active_mw,
                           "full at (Mbps)": m.max_rate_mbps, "idle (mW)": m.idle_mw, "provenance": m.provenance,
                           "source": m.source} for m in radio_all.values() if m.name.startswith("mptcp-dualband")]
                         + [{"model": cpu.name, "Tx backlogged (mW)": np.nan, "Rx backlogged (mW)": np.nan,
                             "full at (Mbps)": np.nan, "idle (mW)": cpu.idle_mw, "provenance": cpu.provenance,
                             "source": f"busy core {cpu.busy_core_mw():.0f} mW at {cpu.nominal_ghz} GHz; {cpu.source}"}])
table(radio_tab, "power_models", "Power models used (params.yaml power-models)")
provenance("published radio powers (§4.1) and rates (§3.2); the CPU coefficients are assumed (modeled).")

pw = (mp.groupby(["device", "direction"]).agg(radio_mw=("radio_mw", "mean"), cpu_mw=("cpu_mw", "mean"),
                                              power_mw=("power_mw", "mean"), power_sd=("power_mw", "std"),
                                              nj_per_bit=("nj_per_bit", "mean")).reset_index())
table(pw, "fig3_power", "Modeled power of backlogged MPTCP (above base)",
      shown=pw.rename(columns={"radio_mw": "radio (mW)", "cpu_mw": "CPU (mW)", "power_mw": "total (mW)",
                               "power_sd": "SD total (mW)", "nj_per_bit": "energy per bit (nJ/bit)"}))
provenance("modeled from measured per-path throughput and CPU time.")
pwr = pw[pw["device"] == ref].set_index("direction")
ul_excess = 100 * (pwr.loc["uplink", "power_mw"] / pwr.loc["downlink", "power_mw"] - 1)
_pd = rs.boot_means(mp[mp["device"] == ref], ["direction"], ["power_mw"])["power_mw"]
ul_excess_ci = rs.percentile_ci(rs.change_pct(_pd.loc["uplink"], _pd.loc["downlink"]))
put("ul_excess", f"{abs(ul_excess):.0f}")
put("ul_excess_ci", f"{ul_excess_ci[0]:.0f} to {ul_excess_ci[1]:.0f}")
put_text("ul_excess_dir", "above" if ul_excess > 0 else "below")
put("p_ul_excess", f"{v('ul_power_excess'):g}")

# %% [markdown]
# Modeled uplink power is {glue:text}`ul_excess`% {glue:text}`ul_excess_dir`
# the downlink's (95% bootstrap CI over runs: {glue:text}`ul_excess_ci`%; the
# paper measured {glue:text}`p_ul_excess`%, "mainly due to the very high Tx power consumption of
# the 802.11ac radio").

# %% [markdown]
# (mptcp-dualband-fig4)=
# ## Figure 4: throughput and energy per bit against the packet ratio, backlogged
#
# The striping sender, ratios 0:100 to 100:0 in steps of 10 plus the paper's
# 73:27, 66:34, 83:17 (x axis: % of packets on path a). Throughput is
# measured; nJ/bit is modeled.

# %%
summary = md.ratio_summary(energy[energy["device"] == ref])
save_table(summary, "ratio_sweep")
opt = md.optima(summary, satisfied_frac)
sweep = mda.sweep_runs(energy[energy["device"] == ref])
draws = mda.boot(sweep)
oci = mda.optima_ci(draws, satisfied_frac)
save_table(opt.merge(oci, on=["direction", "demand"]), "optima")
fig = mda.sweep_figure(sweep, opt, {"downlink": 0.0, "uplink": 0.0}, "Backlogged traffic", COLORS)
_bl = opt[opt["demand"] == 0].set_index("direction")
_same = {d: "coincide" if _bl.loc[d, "tput_opt_ratio"] == _bl.loc[d, "energy_opt_satisfying_ratio"] else "do not coincide"
         for d in md.DIRECTIONS}
figure(fig, "fig4_backlogged",
       alt="Four panels against the share of packets on path a (%): throughput in Mbps (top) and modeled "
           "energy per bit in nJ/bit (bottom), downlink (left) and uplink (right), with 95% confidence bands "
           "and vertical lines at the throughput-optimal and energy-optimal ratios.",
       caption="Backlogged traffic: throughput (measured) and energy per bit (modeled), means over runs with 95% "
               "bootstrap CI bands. Look at the dashed line (throughput peak, near the rate ratio) against the "
               f"dash-dotted line (lowest nJ/bit): under this model they {_same['downlink']} in the downlink and "
               f"{_same['uplink']} in the uplink.")
provenance("measured throughput (runs of the ratio sweep); modeled nJ/bit from it and the measured CPU time.")
show(mda.optima_shown(opt[opt["demand"] == 0], oci), "Throughput- and energy-optimal ratios, backlogged "
     "(95% bootstrap interval over runs)", csv_href=out.href("optima"))
provenance("measured throughput; modeled nJ/bit; intervals: bootstrap over the runs of each ratio.")

# %%
def at(direction, demand, ratio, col):
    g = summary[(summary["direction"] == direction) & (summary["demand"] == demand)
                & (summary["ratio_a_pct"] == ratio)]
    return float(g[col].iloc[0]) if len(g) else float("nan")


o = opt.set_index(["direction", "demand"])
dl_best = o.loc[("downlink", 0.0)]
dl_t = float(dl_best["tput_opt_ratio"])
dl_ratio = float(dl_best["energy_opt_both_ratio"])
# The paper's comparison: the throughput-optimal ("right") ratio against 100:0.
dl_tput_gain = 100 * (at("downlink", 0.0, dl_t, "tput_mbps") / at("downlink", 0.0, 100.0, "tput_mbps") - 1)
dl_energy_cost = 100 * (at("downlink", 0.0, dl_t, "nj_per_bit") / at("downlink", 0.0, 100.0, "nj_per_bit") - 1)
ul_best = o.loc[("uplink", 0.0)]
ul_t = float(ul_best["tput_opt_ratio"])
ul_e = float(ul_best["energy_opt_both_ratio"])
ul_tput_gain = 100 * (at("uplink", 0.0, 70.0, "tput_mbps") / at("uplink", 0.0, 90.0, "tput_mbps") - 1)
ul_energy_cost = 100 * (at("uplink", 0.0, 70.0, "nj_per_bit") / at("uplink", 0.0, 90.0, "nj_per_bit") - 1)
for k, vid in (("p_dl_gain", "dl_tput_gain_pct"), ("p_dl_cost", "dl_energy_cost_pct"),
               ("p_ul_gain", "ul_tput_gain_pct"), ("p_ul_cost", "ul_energy_cost_pct")):
    put(k, f"{v(vid):g}")
for path, p in (("ad", "a"), ("ac", "b")):
    put(f"nj_{path}_rx", f"{radio['downlink'][p].rx_active_mw / radio['downlink'][p].max_rate_mbps:.1f}")
    put(f"nj_{path}_tx", f"{radio['uplink'][p].tx_active_mw / radio['uplink'][p].max_rate_mbps:.1f}")
_per_bit = {d: {p: (m.rx_active_mw if d == "downlink" else m.tx_active_mw) / m.max_rate_mbps for p, m in radio[d].items()}
            for d in md.DIRECTIONS}
_cheaper = {d: min(_per_bit[d], key=_per_bit[d].get) for d in md.DIRECTIONS}
put_text("cheaper_path", f"path {_cheaper['downlink']} in both directions" if len(set(_cheaper.values())) == 1
         else f"path {_cheaper['downlink']} to receive and path {_cheaper['uplink']} to send")
for k, val in {"dl_tput_opt": f"{dl_best['tput_opt_ratio']:g}", "dl_energy_opt_both": f"{dl_ratio:g}",
               "dl_energy_opt": f"{dl_best['energy_opt_ratio']:g}", "dl_tput_gain": f"{abs(dl_tput_gain):.0f}",
               "dl_energy_cost": f"{abs(dl_energy_cost):.1f}", "ul_tput_opt": f"{ul_t:g}", "ul_energy_opt_both": f"{ul_e:g}",
               "ul_energy_opt": f"{ul_best['energy_opt_ratio']:g}", "ul_tput_gain": f"{abs(ul_tput_gain):.0f}",
               "ul_energy_cost": f"{abs(ul_energy_cost):.0f}"}.items():
    put(k, val)
for k, val in (("dl_tput_gain", dl_tput_gain), ("dl_energy_cost", dl_energy_cost), ("ul_tput_gain", ul_tput_gain),
               ("ul_energy_cost", ul_energy_cost)):
    put_text(f"{k}_word", "more" if val >= 0 else "less")

# The paper's four comparisons (and the uplink/downlink power of Fig. 3) as ratios, 95% bootstrap CI over runs.
cmp_ci = {"dl_tput_gain": mda.change_ci(draws, "tput_eq_mbps", "downlink", 0.0, dl_t, 100.0),
          "dl_energy_cost": mda.change_ci(draws, "nj_per_bit", "downlink", 0.0, dl_t, 100.0),
          "ul_tput_gain": mda.change_ci(draws, "tput_eq_mbps", "uplink", 0.0, 70.0, 90.0),
          "ul_energy_cost": mda.change_ci(draws, "nj_per_bit", "uplink", 0.0, 70.0, 90.0),
          "ul_power_excess": ul_excess_ci}
ratios = pd.DataFrame([
    {"comparison": f"downlink throughput, {dl_t:g}:{100 - dl_t:g} / 100:0", "key": "dl_tput_gain",
     "pct": dl_tput_gain, "paper_pct": v("dl_tput_gain_pct"), "provenance": "measured"},
    {"comparison": f"downlink nJ/bit, {dl_t:g}:{100 - dl_t:g} / 100:0", "key": "dl_energy_cost",
     "pct": dl_energy_cost, "paper_pct": v("dl_energy_cost_pct"), "provenance": "modeled"},
    {"comparison": "uplink throughput, 70:30 / 90:10", "key": "ul_tput_gain", "pct": ul_tput_gain,
     "paper_pct": v("ul_tput_gain_pct"), "provenance": "measured"},
    {"comparison": "uplink nJ/bit, 70:30 / 90:10", "key": "ul_energy_cost", "pct": ul_energy_cost,
     "paper_pct": v("ul_energy_cost_pct"), "provenance": "modeled"},
    {"comparison": "power, uplink / downlink (backlogged MPTCP)", "key": "ul_power_excess", "pct": ul_excess,
     "paper_pct": v("ul_power_excess"), "provenance": "modeled"}])
ratios["ratio"] = 1 + ratios["pct"] / 100
ratios["low"] = [1 + cmp_ci[k][0] / 100 for k in ratios["key"]]
ratios["high"] = [1 + cmp_ci[k][1] / 100 for k in ratios["key"]]
ratios["paper"] = 1 + ratios["paper_pct"] / 100
ax = rs.ratio_points(ratios, xlabel="ratio (1 = the same; throughput measured, nJ/bit and power modeled)")
legend_outside(ax)
n_outside = int(((ratios["paper"] < ratios["low"]) | (ratios["paper"] > ratios["high"])).sum())
figure(ax.figure, "ratios_vs_paper",
       alt="Dot plot of five ratios with 95% bootstrap intervals and a dashed reference line at 1: downlink and "
           "uplink throughput and energy per bit of the paper's ratio comparisons, and uplink over downlink power; "
           "the paper's ratios are crosses.",
       caption=f"The paper's comparisons as ratios (points: this artifact, lines: 95% bootstrap CI over runs; "
               f"crosses: the paper). Right of the dashed line at 1 means more. The paper's ratio lies outside "
               f"our interval in {n_outside} of {len(ratios)} rows.")
save_table(ratios.drop(columns=["key"]), "ratios_vs_paper")
provenance("measured throughput and modeled nJ/bit and power of the ratio sweep and the backlogged MPTCP runs; "
           "published ratios (§4.1, §4.2); intervals: bootstrap over runs.")

# %% [markdown]
# Downlink: the throughput-optimal ratio is {glue:text}`dl_tput_opt` % on
# path a; among ratios that use both paths the energy-optimal one is
# {glue:text}`dl_energy_opt_both` %, and over all ratios
# {glue:text}`dl_energy_opt` % (the paper found the throughput-optimal ratio
# also energy-optimal among two-path ratios). Against 100:0 the
# throughput-optimal ratio gives {glue:text}`dl_tput_gain`% {glue:text}`dl_tput_gain_word` throughput
# at {glue:text}`dl_energy_cost`% {glue:text}`dl_energy_cost_word` energy per bit (paper:
# {glue:text}`p_dl_gain`% at {glue:text}`p_dl_cost`%). Uplink: throughput-optimal
# {glue:text}`ul_tput_opt` %, energy-optimal among two-path ratios
# {glue:text}`ul_energy_opt_both` % (over all ratios
# {glue:text}`ul_energy_opt` %); 70:30 against 90:10 gives
# {glue:text}`ul_tput_gain`% {glue:text}`ul_tput_gain_word` throughput at {glue:text}`ul_energy_cost`%
# {glue:text}`ul_energy_cost_word` energy per bit (paper: {glue:text}`p_ul_gain`% at {glue:text}`p_ul_cost`%).
#
# Under a radio model linear in utilization, the per-bit radio cost of each
# path is constant (backlogged power / full rate): 802.11ad costs
# {glue:text}`nj_ad_rx` nJ/bit to receive and {glue:text}`nj_ad_tx` to send,
# 802.11ac {glue:text}`nj_ac_rx` and {glue:text}`nj_ac_tx`. The model therefore always prefers
# {glue:text}`cheaper_path`, per bit; the paper's downlink finding that 802.11ac is
# the cheaper receiver rests on absolute power at partial load, which a
# linear model with no wake-up floor does not have.

# %% [markdown]
# (mptcp-dualband-fig5-7)=
# ## Figures 5 to 7: demands of 1750, 1500/1400 and 500 Mbps

# %%
DEMANDS = {d: sorted(x for x in summary.loc[summary["direction"] == d, "demand"].unique() if x > 0)[::-1]
           for d in md.DIRECTIONS}
for k in range(min(len(x) for x in DEMANDS.values())):
    dem = {d: DEMANDS[d][k] for d in md.DIRECTIONS}
    fig = mda.sweep_figure(sweep, opt, dem, f"Demand: {dem['downlink']:g} Mbps downlink, {dem['uplink']:g} Mbps uplink",
                           COLORS)
    figure(fig, f"fig{5 + k}_demand",
           alt=f"Four panels against the share of packets on path a (%) for a demand of {dem['downlink']:g} Mbps "
               f"downlink and {dem['uplink']:g} Mbps uplink: throughput in Mbps (top) and modeled nJ/bit (bottom), "
               "with 95% confidence bands and the throughput- and energy-optimal ratios.",
           caption="Paced demand: throughput (measured) and energy per bit (modeled), means over runs with 95% "
                   "bootstrap CI bands; dotted: the demand. Look at which ratios reach the demand, and where among "
                   "them the nJ/bit curve is lowest (dash-dotted line).")
    provenance("measured throughput (runs of the ratio sweep); modeled nJ/bit.")
show(mda.optima_shown(opt[opt["demand"] > 0], oci), "Throughput- and energy-optimal ratios per demand "
     f"(energy over the ratios meeting at least {satisfied_frac:.0%} of the demand; 95% bootstrap interval over runs)",
     csv_href=out.href("optima"))
provenance("measured throughput; modeled nJ/bit; intervals: bootstrap over the runs of each ratio.")

# %% [markdown]
# ### Throughput-optimal against energy-optimal
#
# The two optima side by side for every direction and demand, with the
# paper's energy-optimal ratios (§4.2). As in the paper, the backlogged
# energy optimum is taken among the ratios that use both paths, a demand's
# among the ratios that meet it.

# %%
paper_e = {("downlink", v("demand_high")): v("dl_1750_energy_opt"), ("downlink", v("demand_mid_dl")): v("dl_1500_energy_opt"),
           ("downlink", v("demand_low")): v("dl_500_energy_opt"), ("uplink", v("demand_high")): v("ul_1750_energy_opt"),
           ("uplink", v("demand_mid_ul")): v("ul_1400_energy_opt"), ("uplink", v("demand_low")): v("ul_500_energy_opt"),
           ("downlink", 0.0): v("ratio_dl_tput_opt"), ("uplink", 0.0): v("ul_energy_opt_ratio")}
oo = opt.merge(oci, on=["direction", "demand"])
oo["case"] = [f"{d}, {'backlogged' if m == 0 else f'{m:g} Mbps'}" for d, m in zip(oo["direction"], oo["demand"])]
long_o = pd.concat([
    oo.assign(optimum="throughput-optimal (measured)", ratio=oo["tput_opt_ratio"], low=oo["tput_opt_ratio_low"],
              high=oo["tput_opt_ratio_high"]),
    oo.assign(optimum="energy-optimal (modeled)",
              **{k: np.where(oo["demand"] == 0, oo[f"energy_opt_both_ratio{sfx}"], oo[f"energy_opt_satisfying_ratio{sfx}"])
                 for k, sfx in (("ratio", ""), ("low", "_low"), ("high", "_high"))}),
    oo.assign(optimum="energy-optimal, paper", ratio=[paper_e.get((d, m), np.nan) for d, m in zip(oo["direction"], oo["demand"])],
              low=np.nan, high=np.nan)], ignore_index=True)
fig, ax = plt.subplots(figsize=(6.4, 4.2))
sns.scatterplot(data=long_o, x="ratio", y="case", hue="optimum", style="optimum", s=70,
                palette=[COLORS["total"], "k", PALETTE[3]], markers=["o", "s", "X"], ax=ax)
cases = list(dict.fromkeys(oo["case"]))
for (name, g), dy in zip(long_o.groupby("optimum", sort=False), (-0.12, 0.12, 0.0)):
    y = np.array([cases.index(c) for c in g["case"]]) + dy
    ax.hlines(y, g["low"], g["high"], colors=["k" if "energy" in name else COLORS["total"]], lw=1.5)
ax.set(xlabel="packets on path a (%)", ylabel="", xlim=(-5, 105))
legend_outside(ax)
figure(fig, "optima_compared",
       alt="Dot plot, one row per direction and demand, of the throughput-optimal and the energy-optimal share of "
           "packets on path a (%), with 95% bootstrap intervals, and the paper's energy-optimal ratios as crosses.",
       caption="Throughput-optimal ratio (measured) and energy-optimal ratio (modeled) with 95% bootstrap intervals "
               "over runs (lines; absent when every resample agrees), and the paper's energy-optimal ratio (published). "
               "Look at the rows where the paper's cross sits far from the black square.")
provenance("measured throughput; modeled nJ/bit; published energy-optimal ratios (§4.2).")

# %% [markdown]
# (mptcp-dualband-guideline)=
# ## The Figure 9 guideline against exhaustive search
#
# The paper's Figure 9 (a flow chart, not in the text) gives guidelines for an
# energy-aware scheduler from the demand and each interface's maximum rate.
# `mobitrace.studies.mptcp_dualband.ingest.guideline_ratio` encodes them as §4.2 states them:
# backlogged traffic gets the throughput-optimal ratio R_ad : R_ac; downlink
# demands above R_ad fill 802.11ac and put the rest on 802.11ad, demands
# between R_ac and R_ad use 802.11ad alone, demands up to R_ac 802.11ac alone;
# uplink demands above R_ad fill 802.11ad, smaller ones use 802.11ad alone.
# The table compares its ratio (rounded to the measured grid) with the
# exhaustive search over the measured ratios: the lowest modeled nJ/bit among
# the ratios that meet the demand (or, backlogged, among all).

# %%
rates_eq = {d: {p: float(rates_paper[d][p]) for p in md.PATHS} for d in md.DIRECTIONS}
gl = md.guideline_vs_search(summary, opt, rates_eq, satisfied_frac)
table(gl, "guideline_vs_search", "Figure 9 guideline vs exhaustive search",
      shown=gl.assign(meets_demand=gl["meets_demand"].map({True: "yes", False: "no"})).rename(columns={"demand": "demand (Mbps, 0 = backlogged)", "guideline_ratio": "guideline (% on a)",
                               "grid_ratio": "nearest measured (% on a)", "guideline_mbps": "guideline throughput (Mbps)",
                               "guideline_nj": "guideline energy (nJ/bit)", "meets_demand": "meets the demand",
                               "search_ratio": "search (% on a)", "search_nj": "search energy (nJ/bit)",
                               "search_mbps": "search throughput (Mbps)", "excess_energy_pct": "energy above search (%)",
                               "tput_shortfall_pct": "throughput short of best (%)"}))
provenance("measured throughput; modeled nJ/bit; the guideline from the paper's published rules (§4.2).")
put("gl_max_excess", f"{gl.loc[gl['demand'] > 0, 'excess_energy_pct'].max():.0f}")
put("gl_bl_excess", ", ".join(f"{r.direction} {r.excess_energy_pct:.0f}%" for r in gl[gl["demand"] == 0].itertuples()))
put("gl_max_shortfall", f"{gl['tput_shortfall_pct'].max():.1f}")
put("gl_met", int(gl["meets_demand"].sum()))
put("gl_n", int(len(gl)))

# %% [markdown]
# The guideline meets the demand in {glue:text}`gl_met` of
# {glue:text}`gl_n` cases (within {glue:text}`gl_max_shortfall`% of the
# best throughput). For the paced demands it lands at most
# {glue:text}`gl_max_excess`% above the searched minimum nJ/bit under this
# model. For backlogged traffic it picks the throughput-optimal ratio by
# design (§4.2: "the throughput optimal ratio should be selected even in an
# energy-aware design"); its nJ/bit is then above the single-path minimum by
# {glue:text}`gl_bl_excess`, the price of the extra throughput.

# %% [markdown]
# (mptcp-dualband-floor)=
# ### Sensitivity: a wake-up floor in the radio model
#
# The paper's downlink preference for 802.11ac at low demand (and for
# filling 802.11ac first at 1750 Mbps) needs a radio that costs a large part
# of its backlogged power as soon as it carries any traffic, while an unused
# radio sleeps. The table recomputes the energy-optimal ratio with such a
# floor (an *assumed* fraction f of the backlogged power; f = 0 is the
# model above) on the same measured throughputs.

# %%
sens = md.floor_sensitivity(summary, radio, [float(f) for f in radio_floor_fracs], satisfied_frac)
sens_wide = sens.pivot(index=["direction", "demand"], columns="floor_frac", values="energy_opt_ratio")
sens_wide.columns = [f"f = {c:g}" for c in sens_wide.columns]
sens_wide = sens_wide.reset_index()
table(sens_wide, "floor_sensitivity", "Energy-optimal ratio (% on path a) against the assumed wake-up floor f",
      shown=sens_wide.rename(columns={"demand": "demand (Mbps, 0 = backlogged)"}))
provenance("modeled (floor assumed) from measured throughput and CPU time.")

# %% [markdown]
# (mptcp-dualband-backup)=
# ## Figure 8: MPTCP backup mode vs a 0-packet ratio
#
# Downlink, paced demands: MPTCP with the other path's subflow in backup mode
# (the phone's endpoint flagged `backup`) against the striping sender with all
# packets on one path. The table shows the bytes the backup path carried
# (measured) and the modeled receive power of both.

# %%
bk = energy[(energy["part"] == "backup") & (energy["device"] == ref)].copy()
bk["on path"] = np.where(((bk["transport"] == "mptcp") & (bk["primary"] == "a")) | (bk["ratio_a_pct"] == 100), "a", "b")
bk["mode"] = np.where(bk["transport"] == "mptcp", "MPTCP, other path backup", "0 packets on the other path")
bk["other_path_mbps"] = np.where(bk["on path"] == "a", bk["tput_b_eq_mbps"], bk["tput_a_eq_mbps"])
bk_sum = (bk.groupby(["on path", "demand_mbps", "mode"])
          .agg(n=("run_id", "size"), tput_mbps=("tput_eq_mbps", "mean"), other_path_mbps=("other_path_mbps", "mean"),
               other_path_max_mbps=("other_path_mbps", "max"), radio_mw=("radio_mw", "mean"),
               power_mw=("power_mw", "mean")).reset_index())
table(bk_sum, "fig8_backup", "Backup mode vs 0 packets (downlink)",
      shown=bk_sum.rename(columns={"demand_mbps": "demand (Mbps)", "n": "runs", "tput_mbps": "throughput (Mbps)",
                                   "other_path_mbps": "other path, mean (Mbps)", "other_path_max_mbps": "other path, max (Mbps)",
                                   "radio_mw": "radio (mW)", "power_mw": "total power (mW)"}))
bk_plot = bk.assign(path=lambda f: "path " + f["on path"])
bk_diff = float((bk_sum.groupby(["on path", "demand_mbps"])["power_mw"].agg(lambda s: 100 * (s.max() / s.min() - 1))).max())
fig, ax = plt.subplots(figsize=(6.4, 3.6))
sns.lineplot(data=bk_plot, x="demand_mbps", y="power_mw", hue="path", style="mode", markers=True, dashes=True,
             palette=[COLORS["a"], COLORS["b"]], hue_order=["path a", "path b"], errorbar=("ci", 95), n_boot=N_BOOT,
             seed=SEED, ax=ax)
ax.set(xlabel="source data rate (Mbps)", ylabel="modeled power above base (mW)")
legend_outside(ax)
figure(fig, "fig8_backup",
       alt="Line chart of modeled power above base (mW) against the source data rate (Mbps), for traffic on path a "
           "or path b, with MPTCP backup mode and with 0 packets on the other path; the two modes' lines overlap.",
       caption="Modeled power from measured per-path throughput and CPU time, means over runs with 95% bootstrap CI. "
               "Look at whether the backup-mode line and the 0-packet line of the same path separate: they differ "
               f"by at most {bk_diff:.1f}%.")
provenance("measured throughput and per-path bytes; modeled power from them and the measured CPU time "
           "(table and figure).")
put("backup_leak_max", f"{bk_sum.loc[bk_sum['mode'].str.startswith('MPTCP'), 'other_path_max_mbps'].max():.2f}")

# %% [markdown]
# In backup mode the backup path carried at most
# {glue:text}`backup_leak_max` Mbps, so the two approaches cost the same
# under the model; on the phone the paper also found them very similar.

# %% [markdown]
# (mptcp-dualband-claims)=
# ## Claims

# %%
rows = []


def claim(claim_id, text, location, relation, paper, artifact, unit, basis, provenance_kind, section,
          verdict=None, tolerance=None, rel_tol=0.0, abs_tol=0.0):
    checkable = artifact is not None and not (isinstance(artifact, float) and np.isnan(artifact)) and relation
    if verdict is None:
        verdict = cl.verdict(relation, paper, artifact, rel_tol, abs_tol) if checkable else cl.NOT_CHECKABLE
    if tolerance is None:
        tolerance = cl.tolerance_text(relation, rel_tol, abs_tol) if checkable else "n/a"
    rows.append({"study": study, "claim_id": claim_id, "claim": text, "location": location,
                 "paper_relation": relation, "paper_value": paper, "artifact_value": artifact, "unit": unit,
                 "tolerance": tolerance, "verdict": verdict, "basis": basis, "provenance": provenance_kind,
                 "section": section})


def tol(rel):
    return rel_tol_approx if rel == "~" else rel_tol_equal


rl = {"downlink": (v("sptcp_dl_ad"), v("sptcp_dl_ac")), "uplink": (v("sptcp_ul_ad"), v("sptcp_ul_ac"))}
claim("tput_opt_ratio_dl_arith", "Downlink throughput-optimal ratio = ratio of the single-path throughputs, 73:27",
      "§3.2", "=", v("ratio_dl_tput_opt"), 100 * rl["downlink"][0] / sum(rl["downlink"]), "%",
      "arithmetic 1600 / (1600 + 600)", "published", "mptcp-dualband-fig4", abs_tol=1.0)
claim("tput_opt_ratio_dl", "Downlink throughput-optimal ratio is 73:27 (rate ratio 1600:600)", "§3.2", "=",
      v("ratio_dl_tput_opt"), float(dl_best["tput_opt_ratio"]), "%", "measured ratio sweep, backlogged",
      "measured", "mptcp-dualband-fig4", abs_tol=ratio_tol)
claim("tput_opt_ratio_ul", "Uplink throughput-optimal ratio is 70:30 (rate ratio 1450:600)", "§3.2; §4.2", "=",
      v("ul_tput_opt_ratio"), ul_t, "%", "measured ratio sweep, backlogged", "measured", "mptcp-dualband-fig4",
      abs_tol=ratio_tol)
for d, vid in (("downlink", "expected_dl"), ("uplink", "expected_ul")):
    claim(f"mptcp_sum_{d}", f"Backlogged MPTCP reaches the sum of the two paths ({d}, about {v(vid):g} Mbps)",
          "§3.2", "~", v(vid), float(r.loc[d, "total"]), "Mbps",
          "measured mean of backlogged MPTCP runs (paths limited to the paper's rates)", "measured",
          "mptcp-dualband-fig1", rel_tol=rel_tol_approx)
claim("gro_gain", "GRO on the 802.11ac interface improves downlink MPTCP throughput by 10%", "§3.3", "=",
      v("gro_gain_pct"), float(gro_gain), "%", "median GRO on vs GRO off on path b (veth; receiver not CPU-bound)",
      "measured", "mptcp-dualband-fig2", abs_tol=5.0)
claim("cdf_default_median", "Median downlink MPTCP throughput with GRO on is 2.01 Gbps", "§3.4", "=",
      v("cdf_default_median"), float(cdf_i.loc["GRO on (default)", "median_gbps"]), "Gbps",
      "measured CDF of the backlogged downlink MPTCP runs; here bounded by the htb paths, not by the CPU",
      "measured", "mptcp-dualband-fig2", rel_tol=rel_tol_equal)
claim("ul_power_excess", "Uplink power is 56% above downlink power (backlogged MPTCP)", "§4.1", "=",
      v("ul_power_excess"), float(ul_excess), "%", "modeled radio + CPU power at the measured rates",
      "modeled", "mptcp-dualband-power", rel_tol=0.2)
claim("dl_tput_opt_is_energy_opt", "Downlink: the throughput-optimal ratio (73:27) is also the energy-optimal two-path ratio",
      "§4.2", "=", v("ratio_dl_tput_opt"), dl_ratio, "%", "modeled nJ/bit over the measured two-path ratios",
      "modeled", "mptcp-dualband-fig4", abs_tol=ratio_tol)
claim("dl_tput_gain", "Downlink: the right two-path ratio gives 32% more throughput than 100:0", "§4.2", "=",
      v("dl_tput_gain_pct"), float(dl_tput_gain), "%", f"measured, throughput-optimal ratio {dl_t:g} vs 100",
      "measured", "mptcp-dualband-fig4", abs_tol=5.0)
claim("dl_energy_cost", "...at only 1.4% more energy per bit", "§4.2", "=", v("dl_energy_cost_pct"),
      float(dl_energy_cost), "%", f"modeled nJ/bit, ratio {dl_t:g} vs 100", "modeled", "mptcp-dualband-fig4",
      abs_tol=2.0)
claim("ul_energy_opt", "Uplink energy-optimal ratio is 90:10 (among two-path ratios)", "§4.2", "=",
      v("ul_energy_opt_ratio"), ul_e, "%", "modeled nJ/bit over the measured two-path ratios", "modeled",
      "mptcp-dualband-fig4", abs_tol=ratio_tol)
claim("ul_tput_gain", "Uplink: 70:30 gives 25% more throughput than 90:10", "§4.2", "=", v("ul_tput_gain_pct"),
      float(ul_tput_gain), "%", "measured", "measured", "mptcp-dualband-fig4", abs_tol=5.0)
claim("ul_energy_cost", "...at 12% more energy per bit", "§4.2", "=", v("ul_energy_cost_pct"), float(ul_energy_cost),
      "%", "modeled nJ/bit, 70 vs 90", "modeled", "mptcp-dualband-fig4", abs_tol=3.0)
for d, dem, vid in (("downlink", v("demand_high"), "dl_1750_energy_opt"), ("downlink", v("demand_mid_dl"), "dl_1500_energy_opt"),
                    ("downlink", v("demand_low"), "dl_500_energy_opt"), ("uplink", v("demand_high"), "ul_1750_energy_opt"),
                    ("uplink", v("demand_mid_ul"), "ul_1400_energy_opt"), ("uplink", v("demand_low"), "ul_500_energy_opt")):
    key = (d, float(dem))
    art = float(o.loc[key, "energy_opt_satisfying_ratio"]) if key in o.index else None
    claim(f"{'dl' if d == 'downlink' else 'ul'}_{dem:g}_energy_opt", f"{d.capitalize()}, {dem:g} Mbps: energy-optimal ratio {v(vid):g}:{100 - v(vid):g}",
          "§4.2", "=", v(vid), art, "%", f"modeled nJ/bit over measured ratios meeting >= {satisfied_frac:.0%} of the demand",
          "modeled", "mptcp-dualband-fig5-7", abs_tol=ratio_tol)
    gl_row = gl[(gl["direction"] == d) & (gl["demand"] == float(dem))]
    claim(f"{'dl' if d == 'downlink' else 'ul'}_{dem:g}_guideline", f"Guideline (Fig. 9 rules) gives {v(vid):g}:{100 - v(vid):g} for {d} {dem:g} Mbps",
          "§4.2; Fig. 9", "=", v(vid), float(gl_row["guideline_ratio"].iloc[0]) if len(gl_row) else None, "%",
          "guideline_ratio(demand, 1600|1450, 600) (arithmetic on published rules)", "published",
          "mptcp-dualband-guideline", abs_tol=1.0)
claim("backup_similar", "Backup mode and a 0-packet ratio draw very similar power", "§4.2, Fig. 8", "~", 0.0,
      float((bk_sum.groupby(["on path", "demand_mbps"])["power_mw"].agg(lambda s: 100 * (s.max() / s.min() - 1))).max()),
      "%", "largest modeled power difference between the two modes (measured per-path bytes)", "modeled",
      "mptcp-dualband-backup", abs_tol=5.0)
claim("sirq_big_cores", "Steering SoftIRQs to big cores raises the median to 2.15 Gbps", "§3.4", "=",
      v("cdf_affinity_median"), None, "Gbps", "not checkable: the host's cores are identical (no big/LITTLE)",
      "measured", "mptcp-dualband-fig2")

claims_table = cl.claims_frame(rows)
cl.write_claims(claims_table, results / "claims.csv")
o_ci = oci.set_index(["direction", "demand"])
intervals = {
    "tput_opt_ratio_dl": tuple(o_ci.loc[("downlink", 0.0), ["tput_opt_ratio_low", "tput_opt_ratio_high"]]),
    "tput_opt_ratio_ul": tuple(o_ci.loc[("uplink", 0.0), ["tput_opt_ratio_low", "tput_opt_ratio_high"]]),
    "mptcp_sum_downlink": tuple(r.loc["downlink", ["total_ci_low", "total_ci_high"]]),
    "mptcp_sum_uplink": tuple(r.loc["uplink", ["total_ci_low", "total_ci_high"]]),
    "ul_power_excess": ul_excess_ci,
    "dl_tput_opt_is_energy_opt": tuple(o_ci.loc[("downlink", 0.0), ["energy_opt_both_ratio_low", "energy_opt_both_ratio_high"]]),
    "ul_energy_opt": tuple(o_ci.loc[("uplink", 0.0), ["energy_opt_both_ratio_low", "energy_opt_both_ratio_high"]]),
    "dl_tput_gain": cmp_ci["dl_tput_gain"],
    "dl_energy_cost": cmp_ci["dl_energy_cost"],
    "ul_tput_gain": cmp_ci["ul_tput_gain"],
    "ul_energy_cost": cmp_ci["ul_energy_cost"],
    **{f"{'dl' if d == 'downlink' else 'ul'}_{m:g}_energy_opt":
       tuple(o_ci.loc[(d, m), ["energy_opt_satisfying_ratio_low", "energy_opt_satisfying_ratio_high"]])
       for d, m in o_ci.index if m > 0},
}
shown = claims_table.assign(
    paper=[paper_text(rel, val) for rel, val in zip(claims_table["paper_relation"], claims_table["paper_value"])],
    ours=[numbers.interval(a, *intervals.get(c, (None, None))) for c, a in
          zip(claims_table["claim_id"], claims_table["artifact_value"])])
show(shown[["claim", "location", "paper", "ours", "unit", "tolerance", "verdict", "provenance"]]
     .rename(columns={"ours": "this artifact [95% CI]"}), "Claims of the mptcp-dualband paper and their verdicts",
     csv_href=site_href(results / "claims.csv"))
provenance("published paper values against measured throughput and modeled energy (the provenance column says which); "
           "intervals: bootstrap over runs (seeded) or Student-t for a mean.")
out.findings(claims_table, headline=["mptcp_sum_downlink", "tput_opt_ratio_dl", "dl_tput_gain", "dl_energy_cost",
                                     "dl_500_energy_opt", "ul_power_excess"], intervals=intervals)

# %%
counts = claims_table["verdict"].value_counts()
for verdict_name in cl.VERDICTS:
    put(f"n_{verdict_name.replace(' ', '_')}", int(counts.get(verdict_name, 0)))


def r6(x):
    return None if x is None or (isinstance(x, float) and np.isnan(x)) else round(float(x), 6)


metrics = {
    "reference_device": ref,
    "scale": scale,
    "runs": int(len(ref_runs)),
    "mptcp_mbps": {d: r6(r.loc[d, "total"]) for d in md.DIRECTIONS},
    "cdf_median_gbps": {c: r6(x) for c, x in cdf_i["median_gbps"].items()},
    "backlogged": {"dl_tput_opt_ratio": r6(dl_best["tput_opt_ratio"]), "dl_energy_opt_both_ratio": r6(dl_ratio),
                   "ul_tput_opt_ratio": r6(ul_t), "ul_energy_opt_both_ratio": r6(ul_e),
                   "dl_tput_gain_pct": r6(dl_tput_gain), "dl_energy_cost_pct": r6(dl_energy_cost)},
    "guideline_max_excess_energy_pct": r6(gl["excess_energy_pct"].max()),
    "claims": {k.replace(" ", "_"): int(counts.get(k, 0)) for k in cl.VERDICTS},
}
_ = (results / "metrics.json").write_text(json.dumps(metrics, indent=2, sort_keys=True) + "\n")

# %% [markdown]
# Of the chapter's claims, {glue:text}`n_reproduced` are reproduced,
# {glue:text}`n_not_reproduced` are not, and {glue:text}`n_not_checkable` cannot
# be checked. Verdicts on modeled values say whether the stated model, fed
# with this host's measurements, agrees with the paper; they say nothing about
# a phone's radios, which were not measured here.

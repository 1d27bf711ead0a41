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
# # Trimming the network stack (stack-trim)
#
# Zhu et al. (HotNets'16) price the CPU activity of Android phones with a
# componentized power model and find that the CPU dominates networking energy
# at high rates. They estimate what two ways of trimming the stack save:
# **one-copy** data moves (`sendfile()` and `splice()` instead of
# `read()`+`send()` and `recv()`+`write()`, §4) and **offloading TCP** to the
# access point (§5), over WiFi and over the loopback interface to emulate
# faster links. On loopback they also compare TCP with UDP and find that UDP
# with 1.5 KB datagrams costs *more* CPU energy than TCP from {glue:text}`p_cross:g` Mbps up,
# unless the MTU and the datagrams are raised to 20 KB.
#
# This chapter repeats the one-copy and the TCP-vs-UDP experiments on a Linux
# host with the capture kit `scripts/capture/stack_trim/`: constant-bit-rate
# streams from 1 Mbps to beyond what the host sustains, over loopback and over
# a veth pair, uplink (the device sends a file) and downlink (the device
# stores what it receives), with the precise CPU time of each process. TCP
# offload needs a cooperating access point and a raw-socket stack; it is not
# re-run here (its claims are listed as not checkable).
#
# ```{admonition} Provenance
# **measured**: CPU time, bytes and rates from the raw captures in
# `data/raw/stack-trim/<device>/` (manifest and content hash below).
# **modeled**: every energy and power: the measured CPU time priced with the
# CPU power model named below (its coefficients are *assumed*, not fitted).
# **published**: the paper's numbers (`data/published/stack-trim.yaml`).
# ```

# %% tags=["parameters"]
study = "stack-trim"
published_dir = "data/interim/published/stack-trim"
interim_dir = "data/interim/stack-trim"
results_dir = "data/results/stack-trim"
devices = []
power_model = "stack-trim-assumed-core"
cpu_basis = "both"
ci_level = 0.95
n_resamples = 2000
seed = 20161109
min_delivered = 0.95
wifi_max_mbps = 24
wifi_link = "veth"
rel_tol_approx = 0.25

# %%
import json
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
import yaml
from matplotlib.ticker import FuncFormatter, NullFormatter

from mobitrace.core import claims as cl
from mobitrace.studies.stack_trim import analysis as sta
from mobitrace.book.chapter import ChapterOutputs, paper_text, site_href
from mobitrace.book.figures import legend_outside
from mobitrace.energy.power_models import cpu_models
from mobitrace.core.published import value_of

results = Path(results_dir)
out = ChapterOutputs(results, "analyze_stack_trim")
put, put_text, save_table, show, provenance = out.put, out.put_text, out.save_table, out.show, out.provenance
values = pd.read_parquet(Path(published_dir) / "values.parquet")
text_tables = pd.read_parquet(Path(published_dir) / "text_tables.parquet")
model = cpu_models(yaml.safe_load(Path("params.yaml").read_text())["power-models"])[power_model]


def v(value_id):
    return value_of(values, value_id)


measured = {}
for device in devices:
    folder = Path(interim_dir) / device
    runs = pd.read_parquet(folder / "runs.parquet")
    sessions = pd.read_parquet(folder / "sessions.parquet")
    measured[device] = (sta.price(runs, model), sessions)
ref = devices[0] if devices else None
put("ref_device", ref or "none")
plain_ticks = FuncFormatter(lambda x, _: f"{x:g}")

# %% [markdown]
# (stack-trim-capture)=
# ## The captures
#
# Each run streams at a constant bit rate for a fixed time. The sender paces
# in user space (an absolute-deadline timer loop in `stnet.c`, C so that the
# per-call overhead of the tool does not swamp the copy being measured); the
# receiver stores into a file in tmpfs (page cache, no disk) or discards into
# memory. The *device* under test is the sender in uplink runs and the
# receiver in downlink runs; the other end moves memory only. Links run at
# MTU 1500 (a WiFi-sized MTU), the 20 KB UDP runs at MTU 21000 (loopback and
# veth alike). The CPU time of each process is measured precisely
# (`getrusage` around the data phase, in the tool); `/proc/stat` and the
# `cpu MHz` of `/proc/cpuinfo` are sampled every 500 ms as the paper's logger
# did (the VM has no cpufreq in sysfs, so the frequency is the one
# `/proc/cpuinfo` reports). The capture host is a shared 2-core VM: other
# capture kits ran on it, never during a measured batch (an exclusive lock),
# but their background load and the tick-sampled `/proc/stat` of the whole
# host are why the analysis uses the per-process CPU time.

# %%
for device, (runs, sessions) in measured.items():
    view = sessions[["device", "session", "runs", "reps", "duration_s", "kernel", "cpu_model", "cpu_count",
                     "cpufreq", "lock_seconds", "md5"]].rename(columns={
        "reps": "repetitions", "duration_s": "run length (s)", "cpu_model": "CPU", "cpu_count": "cores",
        "lock_seconds": "capture lock held (s)", "md5": "md5 of the session's files"})
    show(view, f"Capture sessions of {device}")
    provenance(f"measured: session manifests of data/raw/stack-trim/{device}/; {sessions['shared_host_note'].iloc[0]}.")
    conds = (runs.groupby(["condition", "experiment", "link", "direction", "proto", "size", "mtu",
                           "sender_mode", "receiver_mode"], as_index=False)
             .agg(rates=("rate_mbps", "nunique"), runs=("run_id", "count"), reps_min=("rep", "nunique")))
    out.table(conds, f"conditions_{device}", f"Conditions captured on {device}", shown=conds.rename(columns={
        "proto": "protocol", "size": "write / datagram (B)", "mtu": "MTU (B)", "sender_mode": "sender",
        "receiver_mode": "receiver", "rates": "rates", "reps_min": "repetitions"}))
    provenance("measured: the conditions found in the ingested runs.")

# %% [markdown]
# (stack-trim-model)=
# ## The CPU power model
#
# Per core, $P_c = u_c\,(k_f f_c + k_0)$ above idle (`mobitrace.energy.power_models`),
# linear in utilization and in frequency as the paper observes (§2.2). With
# $u_c$ integrated over a run, the energy of $s$ CPU-seconds at frequency $f$ is
# $E = s\,(k_f f + k_0)$, and the mean power over the run is $E/T$. The idle
# baseline is subtracted by construction (the paper subtracts $E_{bk}$).
# The coefficients below are **assumed**: the capture host has no power
# readout and the paper does not print the coefficients of its model. They set
# the scale of every mW in this chapter; the normalized savings
# $1 - E_a/E_b$ do not depend on them when both conditions ran at the same
# frequency, which the check below tests.

# %%
coef = pd.DataFrame([{"model": model.name, "k_f (mW/GHz)": model.mw_per_ghz, "k_0 (mW)": model.mw_at_zero_ghz,
                      "idle (mW, subtracted)": model.idle_mw, "nominal GHz": model.nominal_ghz,
                      "provenance": model.provenance, "source": model.source}])
out.table(coef, "power_model", "CPU power model coefficients (params.yaml power-models.cpu)")
provenance("modeled: coefficients assumed (see source); idle value published (§2.1), subtracted.")
if ref:
    runs_ref = measured[ref][0]
    put("mhz_min", float(runs_ref["mean_mhz"].min()))
    put("mhz_max", float(runs_ref["mean_mhz"].max()))
    put("busy_core_mw", float(model.busy_core_mw(runs_ref["mean_mhz"].mean() / 1000)))
    put("cpu_time_ratio_wait4", float((runs_ref["both_cpu_s"] / (runs_ref["sender_cpu_wait4_s"]
                                                                 + runs_ref["receiver_cpu_wait4_s"])).median()))
    n_cpu = int(measured[ref][1]["cpu_count"].iloc[0])
    host_busy = 100 * runs_ref["stat_busy_s"] / runs_ref["stat_interval_s"] / n_cpu
    endpoints = 100 * runs_ref["both_cpu_s"] / runs_ref["elapsed_s"] / n_cpu
    put("host_busy_median", float(host_busy.median()))
    put("endpoints_busy_median", float(endpoints.median()))
    put("loadavg_median", float(runs_ref["loadavg_1min"].median()))
    put("n_runs_ref", int(len(runs_ref)))

# %% [markdown]
# On {glue:text}`ref_device` the reported frequency ranged from
# {glue:text}`mhz_min:.1f` to {glue:text}`mhz_max:.1f` MHz over all runs, so a
# fully busy core is priced at {glue:text}`busy_core_mw:.0f` mW and the
# normalized savings are ratios of CPU time. The data-phase CPU time is, at the
# median, {glue:text}`cpu_time_ratio_wait4:.2f` of the whole-process time
# `wait4()` reports (process start-up and connection set-up make the rest).
#
# How busy the shared host was: over the {glue:text}`n_runs_ref` runs the
# median 1-min load average was {glue:text}`loadavg_median:.2f`, and
# `/proc/stat` shows the host's CPUs {glue:text}`host_busy_median:.0f`% busy
# at the median while the two endpoints accounted for
# {glue:text}`endpoints_busy_median:.1f`% of the host's capacity. Background
# work of the other tenants adds cache and scheduling interference to the
# endpoints' CPU time; it is one possible source of the run-to-run spread
# below, not separated here.

# %% [markdown]
# (stack-trim-onecopy)=
# ## One-copy vs two-copy (Figure 3 analogs)
#
# For each link, direction and rate: the normalized CPU energy saving
# $1 - E(\text{one-copy})/E(\text{two-copy})$ and the absolute CPU power saving
# $P(\text{two-copy}) - P(\text{one-copy})$, from the CPU time of **both
# endpoints** (on loopback the whole stack runs on the one host, as on the
# paper's phone measured with a power meter), as the ratio of the mean over
# the repetitions, with a {glue:text}`ci_pct:.0f`% percentile bootstrap
# interval ({glue:text}`n_boot` resamples of the repetitions of each
# condition). Crosses: a rate the host did not sustain (some run
# delivered less than {glue:text}`min_deliv_pct:.0f`% of it). The table also
# gives the saving for the device-side process alone.

# %%
put("ci_pct", 100 * ci_level)
put("n_boot", n_resamples)
put("min_deliv_pct", 100 * min_delivered)
BY = ["link", "direction", "rate_mbps"]
onecopy, transport = {}, {}
for device, (runs, _) in measured.items():
    oc = runs[runs["experiment"] == "onecopy"]
    parts = []
    for basis in ("both", "device"):
        t = sta.compare(oc, BY, {"device_mode": "onecopy"}, {"device_mode": "copy"}, basis=basis, level=ci_level,
                        n_resamples=n_resamples, seed=seed, min_delivered=min_delivered)
        parts.append(t.assign(basis=basis))
    onecopy[device] = save_table(pd.concat(parts, ignore_index=True), f"onecopy_{device}")


for device, table in onecopy.items():
    t = table[table["basis"] == cpu_basis].assign(**{
        "link, direction": lambda f: [sta.series_label(k, d) for k, d in zip(f["link"], f["direction"])],
        "rate sustained": lambda f: f["sustained"].map({True: "yes", False: "no"})})
    keep = ["link, direction", "rate_mbps", "rate sustained"]
    fig, axes = plt.subplots(2, 1, figsize=(7.5, 7.0), sharex=True)
    for ax, (est, lo, hi, scale, ylabel) in zip(axes, (
            ("saving", "saving_lo", "saving_hi", 100, "CPU energy saving (%)"),
            ("power_saving_mw", "power_saving_lo_mw", "power_saving_hi_mw", 1, "CPU power saving (mW, modeled)"))):
        sns.lineplot(data=sta.interval_long(t, est, lo, hi, keep, scale), x="rate_mbps", y="value",
                     hue="link, direction", style="rate sustained", style_order=["yes", "no"],
                     markers={"yes": "o", "no": "X"}, dashes=False, estimator="median", errorbar=sta.interval_extent,
                     err_style="bars", err_kws={"capsize": 3}, ax=ax, legend=ax is axes[0])
        ax.axhline(0, color="grey", lw=0.8)
        ax.set(xscale="log", xlabel="CBR rate (Mbps, log scale)", ylabel=ylabel)
    axes[0].set_ylabel("CPU energy saving (%)\n1 − E(one-copy)/E(two-copy)")
    axes[1].xaxis.set_major_formatter(plain_ticks)
    legend_outside(axes[0])
    out.figure(fig, f"onecopy_{device}",
               alt=f"Two panels against the constant bit rate in Mbps on {device}: the normalized CPU energy saving "
                   "of one-copy over two-copy in % (left) and the modeled CPU power saving in mW (right), with 95% "
                   "bootstrap intervals, for loopback and veth, uplink and downlink.",
               caption="One-copy against two-copy, CPU time of both endpoints, with 95% bootstrap intervals over the "
                       "repetitions. Look at where the intervals lie against the zero line (no saving); crosses mark "
                       "rates the host did not sustain.")
    provenance(f"measured CPU time on {device}; energies and powers modeled ({model.name}, assumed "
               f"coefficients); intervals: bootstrap over repetitions.")
    show(sta.onecopy_shown(table), f"One-copy vs two-copy on {device} (energies above idle, modeled)",
         csv_href=out.href(f"onecopy_{device}"))
    provenance("measured CPU time and goodput; energies, savings and intervals modeled from it.")

# %%
if ref:
    t = onecopy[ref]
    t = t[(t["basis"] == cpu_basis) & t["sustained"]]
    put("oc_n_points", int(len(t)))
    put("oc_n_zero_in", int(((t["saving_lo"] <= 0) & (t["saving_hi"] >= 0)).sum()))
    put("oc_n_pos", int((t["saving_lo"] > 0).sum()))
    put("oc_n_neg", int((t["saving_hi"] < 0).sum()))
    put("oc_median_saving", float(100 * t["saving"].median()))
    put("oc_cv_median", float(pd.concat([t["cv_variant_pct"], t["cv_baseline_pct"]]).median()))
    n_pos = int((t["saving_lo"] > 0).sum())
    put("oc_verdict_text", "On this host one-copy saves no CPU energy distinguishable from the run-to-run spread."
        if n_pos == 0 else f"One-copy saves CPU energy beyond the spread at {n_pos} of {len(t)} points.")

# %% [markdown]
# Of the {glue:text}`oc_n_points` sustained (link, direction, rate) points,
# the interval of the saving contains zero at {glue:text}`oc_n_zero_in`,
# lies above zero at {glue:text}`oc_n_pos` and below zero at
# {glue:text}`oc_n_neg`; the median saving is
# {glue:text}`oc_median_saving:.1f`% and the median coefficient of variation
# of a condition's energy over its repetitions {glue:text}`oc_cv_median:.0f`%.
# {glue:text}`oc_verdict_text` A plausible reading: a 16 KB copy costs little
# next to the per-call and per-packet work of the stack on a server-class
# core (the paper's phones had far less memory bandwidth), and downlink
# `splice()` needs two calls (socket to pipe, pipe to file) as
# `recv()`+`write()` does, and still copies into the tmpfs page cache.

# %% [markdown]
# (stack-trim-transport)=
# ## TCP vs UDP (Figure 5 c/d analogs)
#
# Uplink, the device sends a file with `read()`+`send()`: TCP (16 KB writes,
# MTU 1500), UDP with 1472-byte datagrams (MTU 1500) and UDP with 20000-byte
# datagrams on a link with its MTU raised to 21000. The figure shows the
# CPU energy ratio of each UDP variant to TCP, $E(\text{UDP})/E(\text{TCP})$
# (above 1: UDP costs more), with the same bootstrap intervals; the table
# also gives the absolute power saving. The *crossover* is
# the lowest rate from which UDP costs more than TCP at every higher rate.

# %%
for device, (runs, _) in measured.items():
    up = runs[(runs["direction"] == "up") & (runs["sender_mode"] == "copy")]
    parts = []
    for size in (1472, 20000):
        t = sta.compare(up, ["link", "rate_mbps"], {"proto": "udp", "size": size}, {"proto": "tcp"}, basis=cpu_basis,
                        level=ci_level, n_resamples=n_resamples, seed=seed, min_delivered=min_delivered)
        parts.append(t.assign(udp_size=size))
    transport[device] = save_table(pd.concat(parts, ignore_index=True), f"transport_{device}")

cross_rows = []
for device, table in transport.items():
    for (link, size), g in table.groupby(["link", "udp_size"]):
        g = g.sort_values("rate_mbps")
        r, below = sta.crossover_rate(g["rate_mbps"], g["ratio"])
        r_sig, below_sig = sta.crossover_rate(g["rate_mbps"], g["ratio"], g["ratio_lo"])
        cross_rows.append({"device": device, "link": link, "udp_size": size, "crossover_mbps": r,
                           "last_rate_below_mbps": below, "crossover_interval_above_1_mbps": r_sig,
                           "max_ratio": g["ratio"].max(), "ratio_at_max_rate": g["ratio"].iloc[-1]})
crossover = save_table(pd.DataFrame(cross_rows), "crossover")

for device, table in transport.items():
    t = table.assign(**{
        "link, datagram": lambda f: [sta.series_label(k, udp_size=z) for k, z in zip(f["link"], f["udp_size"])],
        "rate sustained": lambda f: f["sustained"].map({True: "yes", False: "no"})})
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    sns.lineplot(data=sta.interval_long(t, "ratio", "ratio_lo", "ratio_hi", ["link, datagram", "rate_mbps",
                                                                           "rate sustained"]),
                 x="rate_mbps", y="value", hue="link, datagram", style="rate sustained", style_order=["yes", "no"],
                 markers={"yes": "o", "no": "X"}, dashes=False, estimator="median", errorbar=sta.interval_extent,
                 err_style="bars", err_kws={"capsize": 3}, ax=ax)
    ax.axhline(1, color="grey", lw=0.8, ls="--")
    ax.set(xscale="log", yscale="log", xlabel="CBR rate (Mbps, log scale)",
           ylabel="CPU energy ratio E(UDP)/E(TCP) (log scale)")
    ax.xaxis.set_major_formatter(plain_ticks)
    ax.set_yticks([0.5, 1, 2, 5, 10])
    ax.yaxis.set_major_formatter(plain_ticks)
    ax.yaxis.set_minor_formatter(NullFormatter())
    legend_outside(ax)
    out.figure(fig, f"transport_{device}",
               alt=f"The ratio of UDP's to TCP's CPU energy for uplink streaming on {device} against the constant bit "
                   "rate in Mbps, for 1472-byte and 20000-byte datagrams over loopback and veth, with 95% bootstrap "
                   "intervals and a dashed reference line at 1.",
               caption="UDP against TCP, uplink, CPU time of both endpoints, with 95% bootstrap intervals over the "
                       "repetitions. Above the dashed line UDP costs more CPU energy than TCP; crosses mark rates "
                       "the host did not sustain.")
    provenance(f"measured CPU time on {device}; energies modeled ({model.name}); intervals: bootstrap over repetitions.")
    show(sta.transport_shown(table), f"UDP vs TCP on {device}: energy ratio E(UDP)/E(TCP) with its interval",
         csv_href=out.href(f"transport_{device}"))
    provenance("measured CPU time and goodput; energies, ratios and intervals modeled from it.")

show(crossover.assign(link=crossover["link"].map(sta.LINK_NAMES)).rename(columns={
         "udp_size": "UDP datagram (B)", "crossover_mbps": "UDP costs more from (Mbps)",
         "last_rate_below_mbps": "last rate below (Mbps)",
         "crossover_interval_above_1_mbps": "interval above 1 from (Mbps)",
         "max_ratio": "largest E(UDP)/E(TCP)", "ratio_at_max_rate": "E(UDP)/E(TCP) at the top rate"}),
     "Rate from which UDP costs more CPU energy than TCP at every higher rate (empty: none)",
     csv_href=out.href("crossover"))
provenance("measured CPU time; energy ratios modeled; crossover read from the ratio table.")
if ref:
    up = measured[ref][0]
    up = up[(up["direction"] == "up") & (up["sender_mode"] == "copy")]
    calls_per_mb = (up["sender_calls"] / (up["sender_bytes"] / 1e6)).groupby([up["proto"], up["size"]]).median()
    put("calls_tcp", float(calls_per_mb.loc[("tcp", 16384)]))
    put("calls_udp1", float(calls_per_mb.loc[("udp", 1472)]))
    put("calls_udp20", float(calls_per_mb.loc[("udp", 20000)]))
    lo_rates = transport[ref][(transport[ref]["link"] == "lo") & (transport[ref]["udp_size"] == 1472)]
    put("udp1_min_rate", float(lo_rates["rate_mbps"].min()))
    put("udp1_ratio_lowest", float(lo_rates.sort_values("rate_mbps")["ratio"].iloc[0]))
    cr = crossover[(crossover["device"] == ref) & (crossover["link"] == "lo") & (crossover["udp_size"] == 1472)]
    c_rate = float(cr["crossover_mbps"].iloc[0]) if len(cr) else float("nan")
    if np.isnan(c_rate):
        text = "Over loopback UDP with 1472-byte datagrams does not end up costing more than TCP at the top rates."
    elif c_rate == lo_rates["rate_mbps"].min():
        text = ("Over loopback UDP with 1472-byte datagrams costs more CPU energy than TCP at every rate measured: "
                f"the crossover the paper places at {v('udp_crossover'):g} Mbps lies below the lowest rate here.")
    else:
        text = (f"Over loopback UDP with 1472-byte datagrams costs more CPU energy than TCP from {c_rate:g} Mbps up "
                f"(paper: from {v('udp_crossover'):g} Mbps).")
    put("cross_text", text)

# %% [markdown]
# {glue:text}`cross_text` At the lowest rate, {glue:text}`udp1_min_rate:g`
# Mbps, UDP with 1472-byte datagrams costs {glue:text}`udp1_ratio_lowest:.1f`
# times TCP's CPU energy. The mechanism is the one the paper names: the
# sender makes
# {glue:text}`calls_udp1:.0f` system calls per MB with 1472-byte datagrams,
# {glue:text}`calls_udp20:.0f` with 20000-byte datagrams and
# {glue:text}`calls_tcp:.0f` with TCP's 16 KB writes (medians over the
# runs), and each datagram goes through layers 4 to 2 on its own, while TCP
# batches (segmentation offload on loopback and veth).

# %% [markdown]
# (stack-trim-breakdown)=
# ## CPU-time breakdown (a Table 1 analog)
#
# The paper splits the phone's CPU utilization during WiFi streaming into
# logging, OS processes, the WiFi driver and the network stack (per-process
# logging). Here, for TCP two-copy uplink: the endpoints' user time
# (application), the endpoints' kernel time (system calls, copies and the
# protocol stack run in process context) from `getrusage`, and from
# tick-sampled `/proc/stat` of the whole host the softirq time and all busy
# time; "other" is the host's busy time not charged to the endpoints
# (logging, the OS, and the other tenants of the shared VM). All in % of one
# core. There is no WiFi driver; the paper's table is printed below it.

# %%
for device, (runs, _) in measured.items():
    b = sta.breakdown(runs[(runs["proto"] == "tcp") & (runs["direction"] == "up") & (runs["sender_mode"] == "copy")])
    out.table(b, f"breakdown_{device}", f"CPU utilization (% of one core) of TCP two-copy uplink on {device}",
              shown=b.drop(columns=["condition", "proto", "size"]).assign(link=b["link"].map(sta.LINK_NAMES)).rename(
                  columns={"rate_mbps": "rate (Mbps)", "app_user_pct": "application, user (%)",
                           "endpoint_kernel_pct": "endpoints, kernel (%)", "endpoints_pct": "endpoints (%)",
                           "host_softirq_pct": "host softirq (%)", "host_busy_pct": "host busy (%)",
                           "other_pct": "other (%)"}))
    provenance("measured: endpoint times precise (getrusage); softirq, busy and other tick-sampled (/proc/stat).")
t1 = text_tables[text_tables["table"] == "table1"].pivot(index="row", columns="column", values="text")
t1 = t1[["Logging", "OS Proc.", "WiFi Driver", "Network Stack"]].reset_index(names="CBR rate")
show(t1, "Table 1 of the paper: CPU utilization during WiFi CBR streaming (Galaxy S3)")
provenance("published (Table 1).")

# %% [markdown]
# (stack-trim-numbers)=
# ## Key numbers
#
# On {glue:text}`ref_device`, over loopback, one-copy saved at most
# {glue:text}`oc_lo_max:.1f`% of the CPU energy of two-copy (interval
# {glue:text}`oc_lo_max_lo:.1f` to {glue:text}`oc_lo_max_hi:.1f`%, at
# {glue:text}`oc_lo_max_rate:g` Mbps, {glue:text}`oc_lo_max_dir`link); the
# paper reports up to {glue:text}`p_oc_max:g`%. At WiFi-like rates (at most
# {glue:text}`wifi_max:g` Mbps) over the veth pair the largest saving was
# {glue:text}`oc_wifi_max:.1f`% (paper: below {glue:text}`p_oc_wifi:g`%).
# The modeled power saving on loopback uplink was
# {glue:text}`oc_p100:.0f` mW at 100 Mbps and {glue:text}`oc_p240:.0f` mW at
# 240 Mbps (paper: {glue:text}`p_p100:g` and {glue:text}`p_p240:g` mW; ours
# scale with the assumed coefficients). Over loopback UDP with 1472-byte
# datagrams costs more CPU energy than TCP from {glue:text}`cross_lo:g` Mbps
# up (paper: from {glue:text}`p_cross:g` Mbps); at
# {glue:text}`udp_top_rate:g` Mbps, the highest rate both UDP variants
# sustained on loopback, UDP costs {glue:text}`udp20_ratio_top:.2f` times
# TCP's CPU energy with 20000-byte datagrams (interval
# {glue:text}`udp20_ratio_top_lo:.2f` to {glue:text}`udp20_ratio_top_hi:.2f`)
# against {glue:text}`udp1_ratio_top:.2f` with 1472-byte datagrams (interval
# {glue:text}`udp1_ratio_top_lo:.2f` to {glue:text}`udp1_ratio_top_hi:.2f`).

# %%
def pick_max(t):
    return t.loc[t["saving"].idxmax()] if len(t) else None


nums = {}
if ref:
    t = onecopy[ref]
    t = t[(t["basis"] == cpu_basis) & t["sustained"]]
    lo_ = pick_max(t[t["link"] == "lo"])
    nums.update(oc_lo_max=100 * lo_["saving"], oc_lo_max_lo=100 * lo_["saving_lo"], oc_lo_max_hi=100 * lo_["saving_hi"],
                oc_lo_max_rate=lo_["rate_mbps"], oc_lo_max_dir=lo_["direction"])
    wifi = t[(t["link"] == wifi_link) & (t["rate_mbps"] <= wifi_max_mbps)]
    w = pick_max(wifi)
    nums.update(oc_wifi_max=100 * w["saving"], oc_wifi_max_hi=100 * w["saving_hi"], oc_wifi_rate=w["rate_mbps"])
    up_lo = t[(t["link"] == "lo") & (t["direction"] == "up")].set_index("rate_mbps")
    for r, key in ((100.0, "oc_p100"), (240.0, "oc_p240")):
        nums[key] = float(up_lo.loc[r, "power_saving_mw"]) if r in up_lo.index else float("nan")
        nums[key + "_lo"] = float(up_lo.loc[r, "power_saving_lo_mw"]) if r in up_lo.index else float("nan")
        nums[key + "_hi"] = float(up_lo.loc[r, "power_saving_hi_mw"]) if r in up_lo.index else float("nan")
    oc_all = t[t["link"] == "lo"]
    from scipy.stats import spearmanr
    rho = spearmanr(oc_all["rate_mbps"], oc_all["saving"])
    nums["oc_lo_spearman"], nums["oc_lo_spearman_p"] = float(rho.statistic), float(rho.pvalue)
    nums["oc_lo_min_rate_saving"] = float(100 * oc_all.loc[oc_all["rate_mbps"].idxmin(), "saving"])
    c = crossover[crossover["device"] == ref].set_index(["link", "udp_size"])
    nums["cross_lo"] = float(c.loc[("lo", 1472), "crossover_mbps"]) if ("lo", 1472) in c.index else float("nan")
    nums["cross_lo_sig"] = float(c.loc[("lo", 1472), "crossover_interval_above_1_mbps"]) if ("lo", 1472) in c.index else float("nan")
    nums["cross_veth"] = float(c.loc[("veth", 1472), "crossover_mbps"]) if ("veth", 1472) in c.index else float("nan")
    tr = transport[ref]
    both_sus = tr[tr["sustained"] & (tr["link"] == "lo")]
    common = sorted(set(both_sus.loc[both_sus["udp_size"] == 1472, "rate_mbps"])
                    & set(both_sus.loc[both_sus["udp_size"] == 20000, "rate_mbps"]))
    top = common[-1] if common else float("nan")
    nums["udp_top_rate"] = top
    for size, key in ((1472, "udp1_ratio_top"), (20000, "udp20_ratio_top")):
        row = tr[(tr["link"] == "lo") & (tr["udp_size"] == size) & (tr["rate_mbps"] == top)]
        nums[key] = float(row["ratio"].iloc[0]) if len(row) else float("nan")
        nums[key + "_lo"] = float(row["ratio_lo"].iloc[0]) if len(row) else float("nan")
        nums[key + "_hi"] = float(row["ratio_hi"].iloc[0]) if len(row) else float("nan")
    below = tr[(tr["link"] == "lo") & (tr["udp_size"] == 1472) & (tr["rate_mbps"] < 40)]
    nums["udp1_ratio_below_40"] = float(below["ratio"].min()) if len(below) else float("nan")
    cv = pd.concat([onecopy[ref][onecopy[ref]["basis"] == cpu_basis][["cv_variant_pct", "cv_baseline_pct"]]
                    .stack(), tr[["cv_variant_pct"]].stack()])
    nums["cv_median"] = float(cv.median())
    nums["sustained_tcp_max"] = float(t.loc[t["link"] == "lo", "rate_mbps"].max())
for key, val in nums.items():
    put(key, val if not isinstance(val, (np.floating, np.integer)) else val.item())
put("wifi_max", wifi_max_mbps)
for key, vid in (("p_oc_max", "onecopy_loopback_saving_max"), ("p_oc_wifi", "onecopy_wifi_saving"),
                 ("p_p100", "onecopy_power_100"), ("p_p240", "onecopy_power_240"), ("p_cross", "udp_crossover")):
    put(key, v(vid))

# %% [markdown]
# (stack-trim-published)=
# ## The paper's stated values
#
# Every number the chapter compares with, as printed (with its location).

# %%
pub = values[["id", "quantity", "device", "relation", "value", "unit", "location"]]
show(pub, "Values stated by Zhu et al. (data/published/stack-trim.yaml)")
provenance("published: transcribed from the paper, location per row.")

# %% [markdown]
# (stack-trim-claims)=
# ## Claims
#
# Each claim of the paper that this chapter addresses, the paper's value, the
# artifact's value and a verdict. "About x" is reproduced within
# ±{glue:text}`tol_pct:.0f`% of x; bounds must hold as stated. Claims about TCP
# offload, WiFi radios and the phones' logging breakdown cannot be checked
# here (no offloading AP, no radio, no phone).

# %%
put("tol_pct", 100 * rel_tol_approx)
rows = []


def claim(claim_id, text, location, relation, paper, artifact, unit, basis, provenance_kind, section,
          verdict=None, tolerance=None, rel_tol=0.0):
    checkable = artifact is not None and not (isinstance(artifact, float) and np.isnan(artifact)) and relation
    if verdict is None:
        verdict = cl.verdict(relation, paper, artifact, rel_tol) if checkable else cl.NOT_CHECKABLE
    if tolerance is None:
        tolerance = cl.tolerance_text(relation, rel_tol) if checkable else "n/a"
    rows.append({"study": study, "claim_id": claim_id, "claim": text, "location": location,
                 "paper_relation": relation, "paper_value": paper, "artifact_value": artifact, "unit": unit,
                 "tolerance": tolerance, "verdict": verdict, "basis": basis, "provenance": provenance_kind,
                 "section": section})


g = nums.get
src = f"measured on {ref}, modeled energy" if ref else "no capture"
claim("onecopy_wifi_small", "One-copy saves <10% of CPU energy at WiFi rates (<24 Mbps)", "§4.1, Fig. 3(a)", "<",
      v("onecopy_wifi_saving"), g("oc_wifi_max"), "%",
      f"largest saving on the {wifi_link} link at rates <= {wifi_max_mbps} Mbps (both endpoints), {src}",
      "modeled", "stack-trim-onecopy")
claim("onecopy_loopback_max", "One-copy achieves up to 40% CPU energy reduction on loopback", "§4.1, Fig. 3(b)", "~",
      v("onecopy_loopback_saving_max"), g("oc_lo_max"), "%",
      f"largest saving over loopback rates and directions, sustained rates (both endpoints), {src}",
      "modeled", "stack-trim-onecopy", rel_tol=rel_tol_approx)
claim("onecopy_grows_with_rate", "The one-copy saving grows with the streaming rate (loopback)", "§4.1, Fig. 3(b)",
      ">", 0.0, g("oc_lo_spearman"), "rho",
      f"Spearman correlation of saving with rate over the sustained loopback points, both directions "
      f"(p = {g('oc_lo_spearman_p', np.nan):.2f}), {src}", "modeled", "stack-trim-onecopy",
      verdict=(cl.REPRODUCED if g("oc_lo_spearman", np.nan) > 0 and g("oc_lo_spearman_p", np.nan) < 0.05
               else cl.NOT_REPRODUCED) if ref else cl.NOT_CHECKABLE,
      tolerance="rho > 0 with p < 0.05")
claim("onecopy_power_100", "One-copy power saving about 100 mW at 100 Mbps", "§4.1, Fig. 3(c)", "~",
      v("onecopy_power_100"), g("oc_p100"), "mW",
      f"loopback uplink at 100 Mbps, assumed model coefficients (scale with them), {src}",
      "modeled", "stack-trim-onecopy", rel_tol=rel_tol_approx)
claim("onecopy_power_240", "One-copy power saving about 300 mW at 240 Mbps", "§4.1, Fig. 3(c)", "~",
      v("onecopy_power_240"), g("oc_p240"), "mW",
      f"loopback uplink at 240 Mbps, assumed model coefficients (scale with them), {src}",
      "modeled", "stack-trim-onecopy", rel_tol=rel_tol_approx)
claim("udp_crossover", "UDP (1.5 KB) costs more CPU energy than TCP at 40 Mbps and higher (loopback)",
      "§5.1, Fig. 5(c)", "<=", v("udp_crossover"), g("cross_lo"), "Mbps",
      f"lowest rate from which E(UDP 1472 B)/E(TCP) > 1 at every higher rate, {src}",
      "modeled", "stack-trim-transport")
claim("udp_not_above_below_40", "Below 40 Mbps UDP (1.5 KB) does not cost more than TCP (loopback)",
      "§5.1, Fig. 5(c) (implied by 'at 40Mbps and higher')", "<=", 1.0, g("udp1_ratio_below_40"), "x",
      f"smallest E(UDP 1472 B)/E(TCP) on loopback at rates below 40 Mbps, {src}", "modeled", "stack-trim-transport")
u20_ok = g("udp20_ratio_top_hi", np.nan) < g("udp1_ratio_top_lo", np.nan)
claim("udp20_more_efficient", "UDP with 20 KB datagrams (raised MTU) is much more efficient than with 1.5 KB",
      "§5.1, Fig. 5(c)", None, None, g("udp20_ratio_top"), "x",
      f"E(UDP 20000 B)/E(TCP) at {g('udp_top_rate')} Mbps on loopback, against "
      f"{g('udp1_ratio_top', np.nan):.2f} for 1472 B, {src}", "modeled", "stack-trim-transport",
      verdict=(cl.REPRODUCED if u20_ok else cl.NOT_REPRODUCED) if ref else cl.NOT_CHECKABLE,
      tolerance="20000 B interval entirely below the 1472 B interval")
claim("sd_low", "Standard deviation across repetitions below 2.5%", "§2.1", "<", v("sd_across_runs"),
      g("cv_median"), "%", f"median coefficient of variation of the energy over conditions and rates, {src}",
      "measured", "stack-trim-numbers")
claim("stack_share", "Network stack processing is more than 50% of CPU activity (WiFi streaming)", "§2.2, Table 1",
      ">", v("stack_share"), None, "%", "needs per-process logging on a phone with a WiFi driver; not captured",
      "published", "stack-trim-breakdown")
for vid, text, loc in (("offload_wifi_saving", "TCP offload saves about 40% CPU energy beyond 20 Mbps (WiFi)", "§5.1, Fig. 5(a)"),
                       ("offload_loopback_saving", "TCP offload saves more than 60% CPU energy above 100 Mbps", "§5.1, Fig. 5(c)"),
                       ("cpu_share_wifi_max", "CPU is more than 60% of networking energy on WiFi", "§2.2, Fig. 1")):
    claim(vid, text, loc, values.set_index("id").loc[vid, "relation"], v(vid), None, "%",
          "not re-run: needs an offloading AP / a WiFi radio model", "published", "stack-trim-claims")

claims_table = cl.claims_frame(rows)
cl.write_claims(claims_table, results / "claims.csv")
shown = claims_table.assign(paper=[paper_text(r, p) for r, p in
                                   zip(claims_table["paper_relation"], claims_table["paper_value"])])
show(shown[["claim", "location", "paper", "artifact_value", "unit", "verdict", "provenance"]]
     .rename(columns={"artifact_value": "this artifact"}), "Claims of the stack-trim paper",
     csv_href=site_href(results / "claims.csv"))

# %%
intervals = {}
if ref:
    intervals = {"onecopy_wifi_small": (100 * w["saving_lo"], 100 * w["saving_hi"]),
                 "onecopy_loopback_max": (g("oc_lo_max_lo"), g("oc_lo_max_hi")),
                 "onecopy_power_100": (g("oc_p100_lo"), g("oc_p100_hi")),
                 "udp20_more_efficient": (g("udp20_ratio_top_lo"), g("udp20_ratio_top_hi"))}
out.findings(claims_table, headline=["onecopy_wifi_small", "onecopy_loopback_max", "onecopy_power_100",
                                     "udp_crossover", "udp20_more_efficient"], intervals=intervals)

# %%
counts = claims_table["verdict"].value_counts()
for verdict_name in cl.VERDICTS:
    put(f"n_{verdict_name.replace(' ', '_')}", int(counts.get(verdict_name, 0)))


def r6(x):
    if isinstance(x, str):
        return x
    return None if x is None or (isinstance(x, float) and np.isnan(x)) else round(float(x), 6)


metrics = {
    "reference_device": ref,
    "power_model": {"name": model.name, "provenance": model.provenance},
    "numbers": {k: r6(x) for k, x in sorted(nums.items())},
    "claims": {k.replace(" ", "_"): int(counts.get(k, 0)) for k in cl.VERDICTS},
}
_ = (results / "metrics.json").write_text(json.dumps(metrics, indent=2, sort_keys=True) + "\n")

# %% [markdown]
# Of the chapter's claims, {glue:text}`n_reproduced` are reproduced,
# {glue:text}`n_not_reproduced` are not, and {glue:text}`n_not_checkable` cannot
# be checked.

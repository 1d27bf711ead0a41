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
# # CPU versus throughput, measured on Linux hosts
#
# Aggarwal et al. (MobiCom'19 poster) logged Total and SoftIRQ CPU utilization
# from `/proc/stat` while iperf3 pushed TCP at rates from 100 Mbps up to the
# maximum, fitted lines, and extrapolated them to 1.6, 4 and 12.8 Gbps and to
# the throughput at 50% CPU (§3.2, Figure 1). This chapter makes the same
# measurement with the project's capture kit (`scripts/capture/capture.py`) on
# real Linux machines and re-derives Figure 1 and the extrapolations for each
# measured device, next to the two published phones.
#
# **The test bed.** Two network namespaces on one host, the *device* and its
# *peer*, joined by a veth pair; iperf3 runs in both (downlink: the peer sends,
# as in the paper's downlink sessions; uplink: the device sends). Both ends
# share the host's CPUs, so the host's CPU utilization counts the sender's and
# the receiver's network stack together, expressed as a percentage of *all*
# the host's CPUs (as the paper's Total is of all the phone's cores). Each
# device name is one configuration of that test bed; the host itself (kernel,
# CPU model, core count, offloads, RPS masks, sysctls, tool versions) is
# recorded in every capture's `manifest.yaml` and summarized below.
#
# **Two CPU sources.** The paper read tick-sampled `/proc/stat`. On a
# tickless or virtualized kernel without `CONFIG_IRQ_TIME_ACCOUNTING`, tick
# sampling attributes a whole tick to whatever is running when the tick fires,
# so the split between user, system and SoftIRQ time, and paced network load,
# can be misread. The kit also records a precise source: the exact CPU time
# (wait4 rusage) of both iperf3 processes plus the run time of the ksoftirqd
# threads (schedstat, ns), and iperf3's own `cpu_utilization_percent`. Where
# the sources disagree the chapter shows both and quantifies the gap.
#
# ```{admonition} Provenance
# **measured**: computed from the raw captures under `data/raw/cpu-gbps/`
# (hashes in the captures table). **modeled**: OLS lines fitted to the
# measured runs, their extrapolations and inverse predictions; and the
# published phones' implied lines (from the cpu-gbps chapter). **published**:
# the paper's stated values. Each figure and table says which.
# ```

# %% tags=["parameters"]
study = "cpu-gbps-measured"
devices = ["vm-veth-default"]
interim_dir = "data/interim/cpu-gbps"
devices_dir = "data/results/cpu-gbps-devices"
results_dir = "data/results/cpu-gbps-measured"
published_lines = "data/results/cpu-gbps/tables/implied_lines.csv"
reference_device = "vm-veth-default"
offloads_off_device = "vm-veth-offloads-off"
rps_devices = ["vm-veth-rps-cpu0", "vm-veth-rps-cpu1"]
slow_device = "vm-veth-slow-cpumax"
alpha = 0.05
target_rates_gbps = [1.6, 4.0, 12.8]
cpu_threshold_pct = 50
linear_r2_min = 0.9
sharp_drop_max_ratio = 0.5
rel_tol_approx = 0.10

# %%
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
from IPython.display import Markdown, display

from mobitrace.core import claims as cl
from mobitrace.stats import cpufit
from mobitrace.studies.cpu_gbps import measured_analysis as cm
from mobitrace.book.build import format_column, with_interval
from mobitrace.book.chapter import ChapterOutputs, paper_text, site_href
from mobitrace.core import numbers
from mobitrace.studies.cpu_gbps.device_analysis import direction_word, figure1_fig

results = Path(results_dir)
out = ChapterOutputs(results, "analyze_cpu_gbps_measured")
put, put_text = out.put, out.put_text

sessions = pd.concat([pd.read_parquet(Path(interim_dir) / d / "sessions.parquet") for d in devices],
                     ignore_index=True)
runs = pd.concat([pd.read_parquet(Path(interim_dir) / d / "runs.parquet") for d in devices], ignore_index=True)
fits = pd.concat([pd.read_csv(Path(devices_dir) / d / "fits.csv") for d in devices], ignore_index=True)
extra = pd.concat([pd.read_csv(Path(devices_dir) / d / "extrapolations.csv") for d in devices],
                  ignore_index=True)
rates = pd.concat([pd.read_csv(Path(devices_dir) / d / "rate_summary.csv") for d in devices],
                  ignore_index=True)
phones = pd.read_csv(published_lines)
thr = f"{cpu_threshold_pct:g}"
have = set(devices)
source_names = cm.SOURCE_NAMES
direction_names = cm.DIRECTION_NAMES

put("n_devices", len(devices))
put("n_runs", len(runs))
put("raw_mb", sessions["bytes"].sum() / 1e6)
put("n_sessions", len(sessions))

# %% [markdown]
# ## The captures
#
# {glue:text}`n_sessions` capture sessions of {glue:text}`n_devices` device
# configurations, {glue:text}`n_runs` iperf3 runs, {glue:text}`raw_mb:.1f` MB
# of raw files in git. The capture hash is the md5 of each session folder
# (over its files' paths and md5s); DVC pins the same files in `dvc.lock`.
# The full table (sample period, CPU quota, kind) is in the CSV.

# %%
cap = sessions[["device", "config", "kind", "session", "hostname", "kernel", "cpu_model", "n_cpus", "hypervisor",
                "config_hz", "irq_time_accounting", "gro_device", "gso_device", "tso_device", "rps_device",
                "device_cpus", "cpu_quota", "repetitions", "duration_s", "sample_period_ms", "n_runs",
                "iperf3_version", "capture_md5", "bytes"]].copy()
cap["cpu_quota"] = cap["cpu_quota"].astype(float)
cap_fields = {"session": "session", "hostname": "host", "kernel": "kernel", "cpu_model": "CPU model",
              "n_cpus": "CPUs", "hypervisor": "virtualized", "config_hz": "CONFIG_HZ",
              "irq_time_accounting": "IRQ time accounting", "gro_device": "GRO", "gso_device": "GSO",
              "tso_device": "TSO", "rps_device": "RPS mask", "device_cpus": "device's iperf3 CPUs",
              "repetitions": "repetitions per rate", "duration_s": "run length (s)", "n_runs": "runs",
              "iperf3_version": "iperf3", "capture_md5": "capture hash (md5)", "bytes": "raw size (bytes)"}
cap_shown = pd.DataFrame([format_column(cap[c], c) for c in cap_fields], index=list(cap_fields.values()),
                         columns=list(cap["device"]))
out.table(cap, "captures", "Capture sessions and their hosts, one column per device (from manifest.yaml)",
          shown=cap_shown.rename_axis("field"), index=True)
out.provenance("measured (capture manifests).")

# %% [markdown]
# (cpu-gbps-measured-fig1)=
# ## Figure 1, per measured device
#
# Each point is one run (at least 3 repetitions of each target rate, 10 s each
# with the default settings); lines are OLS fits with their 95% confidence
# band (darker: where the fitted mean lies) and 95% prediction band (lighter:
# where one new run would fall), for `/proc/stat` Total and SoftIRQ (the
# paper's sources) and the precise Total.

# %%
for device in devices:
    f_stat = cm.fit_of(fits, device, "down", "stat_total")
    f_prec = cm.fit_of(fits, device, "down", "precise_total")
    out.figure(
        figure1_fig(runs[runs["device"] == device], alpha, device), f"figure1_{device}",
        alt=f"{device}: four scatter plots of CPU utilization (% of all CPUs) against TCP throughput (Gbps), "
            "downlink on top and uplink below, Total CPU on the left and SoftIRQ CPU on the right, one point per "
            "run, each source with a straight OLS line and shaded confidence and prediction bands.",
        caption=f"{device}. Look at how closely the points follow each line: on the downlink R² is "
                f"{f_stat['r2']:.2f} for /proc/stat Total and {f_prec['r2']:.2f} for the precise Total. Where "
                "the /proc/stat points scatter far from the precise ones, tick sampling or background work is "
                "at play (next sections).")
    out.provenance("measured runs; lines and bands modeled (OLS of the runs).")

# %% [markdown]
# ## The fitted lines
#
# $\mathrm{CPU} = a + b \cdot \mathrm{throughput}$ by OLS per device,
# direction and CPU source, with 95% confidence intervals of slope and
# intercept (t-based) and of R² (Fisher's z; `mobitrace.stats.cpufit`). The table
# shows the downlink; the CSV has the uplink too.

# %%
shown_sources = ["stat_total", "stat_softirq", "precise_total", "iperf3_total"]
fit_cols = ["device", "direction", "source", "n", "slope", "slope_lo", "slope_hi", "intercept", "intercept_lo",
            "intercept_hi", "r2", "resid_sd", "x_min", "x_max"]
fit_table = fits[fits["source"].isin(shown_sources)][fit_cols].rename(columns={
    "slope": "slope_pct_per_gbps", "x_min": "min_gbps", "x_max": "max_gbps"})
r2_bounds = [cpufit.r2_ci(r2, n, b, alpha) for r2, n, b in
             zip(fit_table["r2"], fit_table["n"], fit_table["slope_pct_per_gbps"])]
fit_table["r2_lo"], fit_table["r2_hi"] = [lo for lo, _ in r2_bounds], [hi for _, hi in r2_bounds]
fit_shown = fit_table[fit_table["direction"] == "down"].assign(source=lambda f: f["source"].map(source_names))
fit_shown = with_interval(fit_shown, "slope_pct_per_gbps", "slope_lo", "slope_hi", label="slope (% per Gbps)")
fit_shown = with_interval(fit_shown, "intercept", "intercept_lo", "intercept_hi", label="intercept (%)")
fit_shown = with_interval(fit_shown, "r2", "r2_lo", "r2_hi", label="R² [95% CI]")
fit_shown = fit_shown.drop(columns="direction").rename(columns={
    "source": "CPU source", "n": "runs", "resid_sd": "residual SD (%)", "min_gbps": "lowest (Gbps)",
    "max_gbps": "highest (Gbps)"})
out.table(fit_table, "fits", "Downlink OLS lines of CPU (%) on throughput (Gbps), with 95% CIs", shown=fit_shown)
out.provenance("modeled (OLS fitted to measured runs).")

# %% [markdown]
# (cpu-gbps-measured-extrapolation)=
# ## Extrapolation to 1.6, 4 and 12.8 Gbps
#
# The fitted mean CPU at the paper's target rates with the 95% confidence
# interval of the mean (statsmodels `get_prediction`); the CSV adds the 95%
# prediction interval of one new run. A rate marked "(extrapolated)" lies
# above the highest measured throughput of that line; a CPU above 100% there
# only says the line has left what the host can do.

# %%
ext = extra[extra["source"].isin(["stat_total", "stat_softirq", "precise_total"])].copy()
ext = ext[["device", "direction", "source", "target_gbps", "cpu_pct", "mean_ci_lo", "mean_ci_hi", "pred_lo",
           "pred_hi", "extrapolated"]]
ext_down = ext[ext["direction"] == "down"].assign(
    cell=lambda f: [numbers.interval(c, lo, hi) + (" (extrapolated)" if x else "") for c, lo, hi, x in
                    zip(f["cpu_pct"], f["mean_ci_lo"], f["mean_ci_hi"], f["extrapolated"])],
    column=lambda f: [f"CPU at {t:g} Gbps (%) [95% CI]" for t in f["target_gbps"]],
    source=lambda f: f["source"].map(source_names))
ext_shown = (ext_down.pivot(index=["device", "source"], columns="column", values="cell")
             .reindex(columns=[f"CPU at {t:g} Gbps (%) [95% CI]" for t in target_rates_gbps])
             .reindex(pd.MultiIndex.from_product([devices, [source_names[s] for s in
                                                             ("stat_total", "stat_softirq", "precise_total")]]))
             .reset_index(names=["device", "CPU source"]))
out.table(ext, "extrapolations", "Downlink: fitted CPU (%) at the paper's target rates, with 95% CI of the mean",
          shown=ext_shown)
out.provenance("modeled (OLS extrapolation of measured runs).")

# %% [markdown]
# ## Throughput at 50% CPU (inverse prediction)
#
# The throughput at which the fitted line reaches the threshold,
# $x_0 = (50 - a)/b$. Its interval is found by inverting the band (Fieller's
# theorem; Draper & Smith 1998, §3.2; formula in `mobitrace.stats.cpufit`): the
# 95% interval is the set of throughputs whose 95% confidence band of the
# mean contains 50%; the wider prediction-band interval is the set whose
# prediction band for one new run contains 50%. When the threshold lies far
# above every measured CPU value this is a long extrapolation and the
# interval says how far the data can carry it; when the slope is not
# significant the set is unbounded.

# %%
inv_cols = ["device", "direction", "source", "gbps_at_threshold", "gbps_at_threshold_lo", "gbps_at_threshold_hi",
            "gbps_at_threshold_pred_lo", "gbps_at_threshold_pred_hi", "x_max"]
inv = fits[fits["source"].isin(["stat_total", "precise_total"])][inv_cols].rename(columns={
    "gbps_at_threshold": f"gbps_at_{thr}pct", "gbps_at_threshold_lo": "ci_lo", "gbps_at_threshold_hi": "ci_hi",
    "gbps_at_threshold_pred_lo": "pred_lo", "gbps_at_threshold_pred_hi": "pred_hi", "x_max": "max_measured_gbps"})
inv_shown = pd.DataFrame({
    "device": inv["device"], "direction": inv["direction"].map(direction_names),
    "CPU source": inv["source"].map(source_names),
    f"Gbps at {thr}% CPU [95% CI]": [numbers.interval(x, lo, hi) + ("" if pd.notna(lo) else " [unbounded]")
                                     for x, lo, hi in zip(inv[f"gbps_at_{thr}pct"], inv["ci_lo"], inv["ci_hi"])],
    "prediction-band interval (Gbps)": [f"{numbers.number(lo)} to {numbers.number(hi)}" if pd.notna(lo)
                                        else "unbounded" for lo, hi in zip(inv["pred_lo"], inv["pred_hi"])],
    "highest measured (Gbps)": inv["max_measured_gbps"]})
out.table(inv, f"throughput_at_{thr}pct_cpu", f"Throughput (Gbps) at {thr}% CPU: estimate with 95% CI "
          "(confidence band) and the interval from the prediction band", shown=inv_shown)
out.provenance("modeled (inverse prediction from OLS of measured runs).")
for src, source in (("stat", "stat_total"), ("precise", "precise_total")):
    f = cm.fit_of(fits, reference_device, "down", source)
    put(f"ref_{src}_x50", f["gbps_at_threshold"])
    put(f"ref_{src}_x50_lo", f["gbps_at_threshold_lo"])
    put(f"ref_{src}_x50_hi", f["gbps_at_threshold_hi"])
put_text("reference_device", reference_device)

# %% [markdown]
# On the reference configuration ({glue:text}`reference_device`, offloads
# on) the `/proc/stat` line reaches 50% CPU at
# {glue:text}`ref_stat_x50:.1f` Gbps (95% CI
# {glue:text}`ref_stat_x50_lo:.1f` to {glue:text}`ref_stat_x50_hi:.1f` Gbps);
# the precise source puts it at {glue:text}`ref_precise_x50:.1f` Gbps
# ({glue:text}`ref_precise_x50_lo:.1f` to
# {glue:text}`ref_precise_x50_hi:.1f` Gbps). Both endpoints'
# network stacks share this host's CPUs, so a single receiving device would
# reach 50% at a higher rate than these.

# %% [markdown]
# (cpu-gbps-measured-procstat)=
# ## `/proc/stat` versus the precise source
#
# Per run, the gap is `/proc/stat` Total minus precise Total (percentage
# points of all CPUs), and the ratio is `/proc/stat` / precise. Two things
# make up the gap. `/proc/stat` counts everything the host ran (this is a
# shared machine: other users' work, the sampler itself), while the precise
# source counts only the two iperf3 processes and the ksoftirqd threads; and
# tick sampling misattributes time. Captures that also recorded the host-wide
# precise CPU time of all tasks (root cgroup `cpuacct`) split the two:
# *tick error* = `/proc/stat` minus host-wide precise, *background* =
# host-wide precise minus the iperf3/ksoftirqd precise Total. The table gives
# means with 95% t intervals per device and direction, at low rates (target
# at most 1 Gbps) and at all rates, medians (robust to bursts of background
# work), and the ratio of the two sources' slopes.

# %%
runs["gap_pp"] = runs["stat_all_total_pct"] - runs["precise_total_pct"]
runs["ratio"] = runs["stat_all_total_pct"] / runs["precise_total_pct"]
runs["low_rate"] = (runs["target_rate_bps"] > 0) & (runs["target_rate_bps"] <= 1e9)
runs["tick_error_pp"] = runs["stat_all_total_pct"] - runs["host_precise_total_pct"]
runs["background_pp"] = runs["host_precise_total_pct"] - runs["precise_total_pct"]
gap_rows = []
for (device, direction), g in runs.groupby(["device", "direction"], sort=True):
    all_gap = cpufit.mean_ci(g["gap_pp"], alpha)
    low = g[g["low_rate"]]
    low_gap = cpufit.mean_ci(low["gap_pp"], alpha)
    at_max = g[g["target_rate_bps"] == 0]
    gap_rows.append({
        "device": device, "direction": direction, "n": len(g),
        "gap_pp": all_gap[0], "gap_lo": all_gap[1], "gap_hi": all_gap[2],
        "low_rate_gap_pp": low_gap[0], "low_rate_gap_lo": low_gap[1], "low_rate_gap_hi": low_gap[2],
        "median_gap_pp": float(g["gap_pp"].median()),
        "low_rate_median_gap_pp": float(low["gap_pp"].median()),
        "low_rate_ratio": float(low["ratio"].median()),
        "n_host_precise": int(g["host_precise_total_pct"].notna().sum()),
        "tick_error_pp": float(g["tick_error_pp"].mean()),
        "low_rate_tick_error_pp": float(low["tick_error_pp"].mean()),
        "background_pp": float(g["background_pp"].mean()),
        "median_background_pp": float(g["background_pp"].median()),
        "max_rate_ratio": float(at_max["ratio"].median()),
        "max_abs_gap_pp": float(g["gap_pp"].abs().max()),
        "stat_slope": cm.fit_of(fits, device, direction, "stat_total")["slope"],
        "precise_slope": cm.fit_of(fits, device, direction, "precise_total")["slope"],
        "stat_softirq_share_at_max": float((at_max["stat_all_softirq_pct"] / at_max["stat_all_total_pct"]).mean()),
    })
gaps = pd.DataFrame(gap_rows)
gaps["slope_ratio"] = gaps["stat_slope"] / gaps["precise_slope"]
gaps_shown = with_interval(gaps, "gap_pp", "gap_lo", "gap_hi", label="gap, all rates (pp) [95% CI]")
gaps_shown = with_interval(gaps_shown, "low_rate_gap_pp", "low_rate_gap_lo", "low_rate_gap_hi",
                           label="gap, ≤ 1 Gbps (pp) [95% CI]")
gaps_shown = gaps_shown.assign(direction=gaps["direction"].map(direction_names))[[
    "device", "direction", "n", "gap, all rates (pp) [95% CI]", "median_gap_pp", "gap, ≤ 1 Gbps (pp) [95% CI]",
    "low_rate_ratio", "max_rate_ratio", "low_rate_tick_error_pp", "median_background_pp", "slope_ratio"]].rename(
    columns={"n": "runs", "median_gap_pp": "median gap (pp)", "low_rate_ratio": "ratio, ≤ 1 Gbps (median)",
             "max_rate_ratio": "ratio, unlimited rate (median)",
             "low_rate_tick_error_pp": "tick error, ≤ 1 Gbps (pp)",
             "median_background_pp": "background, median (pp)", "slope_ratio": "slope ratio"})
out.table(gaps, "procstat_vs_precise", "/proc/stat Total minus precise Total (pp, percentage points of all "
          "CPUs), the ratio /proc/stat ÷ precise, and the ratio of their slopes", shown=gaps_shown)
out.provenance("measured (both sources per run); slopes modeled (OLS).")
ratio_low = float(runs.loc[runs["low_rate"], "ratio"].median())
put("gap_mean_all", float(runs["gap_pp"].mean()))
put("gap_abs_max", float(runs["gap_pp"].abs().max()))
put("ratio_low_median", ratio_low)
put("ratio_max_median", float(runs.loc[runs["target_rate_bps"] == 0, "ratio"].median()))
put("gap_median_low", float(runs.loc[runs["low_rate"], "gap_pp"].median()))
put_text("low_rate_reading", direction_word(ratio_low, higher="counts more than",
                                            lower="misses most of" if ratio_low < 0.5 else "misses part of",
                                            same="matches"))
has_host = runs["host_precise_total_pct"].notna()
put("n_host_precise", int(has_host.sum()))
put("tick_error_low_median", float(runs.loc[has_host & runs["low_rate"], "tick_error_pp"].median()))
put("tick_error_all_median", float(runs.loc[has_host, "tick_error_pp"].median()))
put("tick_ratio_low_median", float((runs.loc[has_host & runs["low_rate"], "stat_all_total_pct"]
                                    / runs.loc[has_host & runs["low_rate"], "host_precise_total_pct"]).median()))
put("background_median", float(runs.loc[has_host, "background_pp"].median()))
put("background_max", float(runs.loc[has_host, "background_pp"].max()))
put("slope_ratio_min", float(gaps["slope_ratio"].min()))
put("slope_ratio_max", float(gaps["slope_ratio"].max()))

# %%
out.figure(
    cm.procstat_figure(runs, devices), "procstat_vs_precise",
    alt="Two scatter plots, one point per run and one colour per device. Left: /proc/stat Total CPU (%) against "
        "precise Total CPU (%) with a dashed line of equality. Right: /proc/stat minus precise (percentage "
        "points) against TCP throughput (Gbps) with a dashed line at zero.",
    caption="Tick-sampled /proc/stat against the precise CPU time, per run. Points on the dashed lines mean the "
            "two sources agree; look for the device whose points sit far above them (background work on the "
            "shared host during its capture) and for the spread at low throughput (tick sampling).")
out.provenance("measured (each point one run, both sources).")

# %% [markdown]
# Over all runs `/proc/stat` Total minus precise Total averages
# {glue:text}`gap_mean_all:.2f` percentage points (largest single-run gap
# {glue:text}`gap_abs_max:.1f` pp, from bursts of other work on the shared
# host). At target rates up to 1 Gbps the median gap is
# {glue:text}`gap_median_low:.2f` pp and the median ratio `/proc/stat` /
# precise is {glue:text}`ratio_low_median:.2f`: tick-sampled `/proc/stat`
# {glue:text}`low_rate_reading` the paced network load there. At the unlimited rate the
# median ratio is {glue:text}`ratio_max_median:.2f`. In the
# {glue:text}`n_host_precise` runs with the host-wide precise source, the
# tick error alone (`/proc/stat` minus host-wide precise) has a median of
# {glue:text}`tick_error_low_median:.2f` pp at rates up to 1 Gbps (median
# ratio {glue:text}`tick_ratio_low_median:.2f`) and
# {glue:text}`tick_error_all_median:.2f` pp over all rates, while
# background work adds a median of {glue:text}`background_median:.2f` pp
# (at most {glue:text}`background_max:.1f` pp in one run). The slopes of the two sources' lines
# differ by a factor between {glue:text}`slope_ratio_min:.2f` and
# {glue:text}`slope_ratio_max:.2f` (`/proc/stat` slope / precise slope). The
# SoftIRQ share of `/proc/stat` cannot be checked against a precise source on
# this kernel (no IRQ time accounting; the manifests record
# `CONFIG_IRQ_TIME_ACCOUNTING`). Without it, SoftIRQ work is charged to the
# task that happened to be running: the precise sources count it when that
# task is iperf3 or ksoftirqd, and miss SoftIRQ work that ran on an idle CPU
# (for example after an RPS inter-processor interrupt), which only the ticks
# of `/proc/stat` can catch.

# %% [markdown]
# (cpu-gbps-measured-offloads)=
# ## GRO, GSO and TSO off versus on (§3.3.1)
#
# The paper turned GRO off on the ROG Phone and saw the downlink throughput
# fall from 1.6 Gbps to 366 Mbps. Here the offloads-off configuration
# switches GRO, GSO and TSO off on both veth ends. Throughput at the
# unlimited rate (mean of the repetitions, 95% t interval), the ratio to
# offloads on (95% interval by the delta method on the log scale), Welch's
# t-test, and the CPU per Gbps (slopes of the precise lines).

# %%
gro = cm.compare(runs, fits, reference_device, offloads_off_device, "offloads off vs on", alpha) \
    if {reference_device, offloads_off_device} <= have else pd.DataFrame()
if not gro.empty:
    out.table(gro, "offloads_off_vs_on", "Offloads on (a) against GRO/GSO/TSO off (b): throughput at the "
              "unlimited rate", shown=cm.comparison_shown(gro, "offloads on", "offloads off"))
    out.provenance("measured (throughput and CPU per run); slopes modeled (OLS).")
    out.figure(
        cm.throughput_figure(runs, [reference_device, offloads_off_device], alpha), "offloads_throughput",
        alt="Mean TCP throughput (Gbps) at the unlimited rate with 95% confidence error bars, for the "
            "offloads-on and offloads-off configurations, downlink and uplink.",
        caption="Throughput at the unlimited rate with offloads on and off (mean of the repetitions, 95% t "
                "interval). Look at the gap between the two rows and at how wide the intervals are with only "
                "a few repetitions.")
    out.provenance("measured (mean of the runs at the unlimited rate).")
    d = gro.set_index("direction").loc["down"]
    for name in ("a_max_gbps", "b_max_gbps", "ratio_b_over_a", "ratio_lo", "ratio_hi"):
        put(f"gro_{name}", d[name])
    put_text("gro_p", numbers.p_value(d["welch_p"]))
    put("gro_paper_ratio", 366 / 1600)
    put("gro_cost_ratio", d["b_precise_slope"] / d["a_precise_slope"])
    put_text("gro_cost_word", direction_word(d["b_precise_slope"] / d["a_precise_slope"], "more", "less"))
else:
    display(Markdown(cm.not_captured_text("offloads-off comparison", [reference_device, offloads_off_device])))

# %% [markdown]
# With offloads on the downlink reaches {glue:text}`gro_a_max_gbps:.1f` Gbps
# at the unlimited rate; with GRO, GSO and TSO off
# {glue:text}`gro_b_max_gbps:.1f` Gbps, a ratio of
# {glue:text}`gro_ratio_b_over_a:.2f` (95% CI
# {glue:text}`gro_ratio_lo:.2f` to {glue:text}`gro_ratio_hi:.2f`; Welch
# p = {glue:text}`gro_p`); the paper's 366 Mbps / 1.6 Gbps is
# {glue:text}`gro_paper_ratio:.2f`. With the offloads off each Gbps costs
# {glue:text}`gro_cost_word` precise CPU: {glue:text}`gro_cost_ratio:.1f`
# times as much as with them on.

# %% [markdown]
# (cpu-gbps-measured-rps)=
# ## Which CPU does the SoftIRQ work (§3.3.2)
#
# The paper moved SoftIRQ processing from a LITTLE core to a big core and
# gained throughput. This host's cores are identical, so the test changes
# only *which* CPU does the receive SoftIRQ work: RPS masks on both veth ends
# steer it to CPU 0 or CPU 1, with the device's iperf3 pinned to the last CPU
# and the peer's to CPU 0 in both configurations. The per-CPU `/proc/stat`
# columns show where the SoftIRQ time landed at the unlimited rate.
#
# The machine is shared: work of other users that ran during a capture
# competes for the same two CPUs and lowers the throughput at the unlimited
# rate. The background columns of the `/proc/stat` versus precise table
# above measure it per device (host-wide precise CPU minus the iperf3 and
# ksoftirqd CPU); where it is tens of percentage points, a throughput
# difference between configurations is confounded with it.

# %%
rps = pd.DataFrame()
if set(rps_devices) <= have and len(rps_devices) == 2:
    rps = cm.compare(runs, fits, rps_devices[0], rps_devices[1], "RPS to the second vs the first CPU", alpha)
    out.table(rps, "rps_affinity", f"SoftIRQ steered as in {rps_devices[0]} (a) against {rps_devices[1]} (b): "
              "throughput at the unlimited rate", shown=cm.comparison_shown(rps, rps_devices[0], rps_devices[1]))
    out.provenance("measured (throughput and CPU per run); slopes modeled (OLS).")
    out.figure(
        cm.throughput_figure(runs, [reference_device, *rps_devices], alpha), "rps_throughput",
        alt="Mean TCP throughput (Gbps) at the unlimited rate with 95% confidence error bars for the reference "
            "configuration and the two RPS configurations, downlink and uplink.",
        caption="Throughput at the unlimited rate with SoftIRQ steered to either CPU, next to the reference "
                "(mean of the repetitions, 95% t interval). Look at whether the two RPS rows differ by more "
                "than their intervals.")
    out.provenance("measured (mean of the runs at the unlimited rate).")
    per_cpu = rates[rates["device"].isin(rps_devices + [reference_device]) & (rates["target_rate"] == "max")]
    cpu_cols = [c for c in per_cpu.columns if c.startswith("stat_cpu") and c.endswith("_pct")]
    per_cpu = per_cpu[["device", "direction", "throughput_gbps", *cpu_cols]]
    per_cpu_shown = per_cpu.assign(direction=per_cpu["direction"].map(direction_names)).rename(columns={
        "throughput_gbps": "throughput (Gbps)",
        **{c: "CPU {} {} (%)".format(c.split("_")[1][3:], "Total" if "total" in c else "SoftIRQ")
           for c in cpu_cols}})
    out.table(per_cpu, "per_cpu_at_max", "Per-CPU /proc/stat Total and SoftIRQ (% of that CPU) at the "
              "unlimited rate", shown=per_cpu_shown)
    out.provenance("measured (per-CPU /proc/stat, mean of the runs).")
    d = rps.set_index("direction").loc["down"]
    for name in ("a_max_gbps", "b_max_gbps", "ratio_b_over_a", "ratio_lo", "ratio_hi"):
        put(f"rps_{name}", d[name])
    put_text("rps_p", numbers.p_value(d["welch_p"]))
    put_text("rps_a", rps_devices[0])
    put_text("rps_b", rps_devices[1])
    put_text("rps_word", direction_word(d["ratio_b_over_a"], "higher", "lower"))
else:
    display(Markdown(cm.not_captured_text("RPS pair", rps_devices)))

# %% [markdown]
# Downlink at the unlimited rate: {glue:text}`rps_a_max_gbps:.1f` Gbps with
# SoftIRQ steered as in {glue:text}`rps_a` and
# {glue:text}`rps_b_max_gbps:.1f` Gbps as in {glue:text}`rps_b`, a
# {glue:text}`rps_word` throughput (ratio {glue:text}`rps_ratio_b_over_a:.2f`, 95% CI
# {glue:text}`rps_ratio_lo:.2f` to {glue:text}`rps_ratio_hi:.2f`; Welch p =
# {glue:text}`rps_p`). The paper's 4x came from moving the work from a
# 1.76 GHz LITTLE core to a big core with GRO off; on identical cores the
# choice of CPU can matter only through contention with the applications,
# not through core speed.

# %% [markdown]
# (cpu-gbps-measured-slow)=
# ## A slower emulated device
#
# Liang & Keshav emulated a PDA by clocking a server down. Here the device's
# iperf3 runs in a cgroup limited to a fraction of one CPU (CFS quota; the
# quota is in the captures table). SoftIRQ work done outside the process is
# not limited by the quota, so this emulates a slow application core rather
# than a slower clock for the whole stack.

# %%
slow = pd.DataFrame()
if {reference_device, slow_device} <= have:
    slow = cm.compare(runs, fits, reference_device, slow_device, "CPU-quota device vs reference", alpha)
    out.table(slow, "slow_vs_reference", "Reference (a) against the CPU-quota-limited device (b): throughput at "
              "the unlimited rate", shown=cm.comparison_shown(slow, "reference", "CPU quota"))
    out.provenance("measured; slopes modeled (OLS).")
    d = slow.set_index("direction").loc["down"]
    display(Markdown(
        f"Limited to its quota, the device's downlink reaches {d['b_max_gbps']:.1f} Gbps, "
        f"{d['ratio_b_over_a']:.2f} of the reference (95% CI {d['ratio_lo']:.2f} to {d['ratio_hi']:.2f}; "
        f"Welch p = {numbers.p_value(d['welch_p'])}); its precise slope is "
        f"{d['b_precise_slope'] / d['a_precise_slope']:.2f} times the reference's."))
else:
    display(Markdown(cm.not_captured_text("slower emulated device", [reference_device, slow_device])))

# %% [markdown]
# ## All measured devices and the published phones
#
# One figure and one table: each measured device's downlink `/proc/stat`
# Total line (the paper's source; solid over the measured range, dashed where
# extrapolated) with its 95% confidence band, and the two phones' lines
# implied by the paper's stated extrapolations (from the cpu-gbps chapter).

# %%
out.figure(
    cm.lines_figure(runs, phones, devices, target_rates_gbps, cpu_threshold_pct, alpha), "comparison",
    alt="Total CPU utilization (%) against TCP downlink throughput (Gbps): one straight line with a shaded "
        "confidence band per measured device, and two black lines for the published phones; a dashed grey line "
        f"at {thr}% CPU and dotted grey lines at the target rates.",
    caption="Downlink /proc/stat Total lines of the measured hosts (OLS, 95% confidence band; dashed beyond the "
            "measured range) and the lines the paper's extrapolations imply for the two phones. Look at where "
            f"each line crosses the dashed {thr}% line and how steep the hosts' lines are next to the phones'.")
out.provenance("measured devices: OLS lines (modeled) of measured runs; phones: lines implied by published "
               "points (modeled, cpu-gbps chapter).")

# %%
comp_rows = []
for _, p in phones.iterrows():
    row = {"device": p["device"], "provenance": "published (implied line, modeled)", "source": "/proc/stat (paper)",
           "slope_pct_per_gbps": p["slope_pct_per_gbps"], "intercept_pct": p["intercept_pct"],
           f"gbps_at_{thr}pct": p[f"gbps_at_{thr}pct_cpu"], "ci_lo": np.nan, "ci_hi": np.nan,
           "max_measured_gbps": np.nan}
    for r in target_rates_gbps:
        row[f"cpu_pct_at_{r:g}gbps"] = p[f"cpu_pct_at_{r:g}gbps"]
    comp_rows.append(row)
for device in devices:
    for source, label in (("stat_total", "/proc/stat"), ("precise_total", "precise")):
        f = cm.fit_of(fits, device, "down", source)
        row = {"device": device, "provenance": "measured (OLS line, modeled)", "source": label,
               "slope_pct_per_gbps": f["slope"], "intercept_pct": f["intercept"],
               f"gbps_at_{thr}pct": f["gbps_at_threshold"], "ci_lo": f["gbps_at_threshold_lo"],
               "ci_hi": f["gbps_at_threshold_hi"], "max_measured_gbps": f["x_max"]}
        e = extra[(extra["device"] == device) & (extra["direction"] == "down") & (extra["source"] == source)]
        for r in target_rates_gbps:
            row[f"cpu_pct_at_{r:g}gbps"] = float(e.loc[np.isclose(e["target_gbps"], r), "cpu_pct"].iloc[0])
        comp_rows.append(row)
comparison = pd.DataFrame(comp_rows)
comparison_shown = with_interval(comparison, f"gbps_at_{thr}pct", "ci_lo", "ci_hi",
                                 label=f"Gbps at {thr}% CPU [95% CI]").rename(columns={
    "provenance": "line", "source": "CPU source", "slope_pct_per_gbps": "slope (% per Gbps)",
    "intercept_pct": "intercept (%)", "max_measured_gbps": "highest measured (Gbps)",
    **{f"cpu_pct_at_{r:g}gbps": f"CPU at {r:g} Gbps (%)" for r in target_rates_gbps}})
out.table(comparison, "comparison_with_phones", "Downlink lines: measured devices and published phones (CPU % at "
          f"the target rates; Gbps at {thr}% CPU with 95% CI)", shown=comparison_shown)
out.provenance("measured devices: OLS lines (modeled); phones: lines through published points (modeled).")

# %% [markdown]
# (cpu-gbps-measured-claims)=
# ## Claims
#
# The paper's §3 statements that measurements on a Linux host can address,
# checked against the measured devices. The phones' own numbers are checked
# in the cpu-gbps chapter; here a claim is *reproduced* when the same
# statement holds on the measured host within the stated tolerance. Criteria
# the paper does not quantify are set in `params.yaml` (`linear_r2_min`,
# `sharp_drop_max_ratio`, `rel_tol_approx`) and named in the tolerance column.

# %%
rows = []


def claim(claim_id, text, location, relation, paper, artifact, unit, basis, provenance, rel_tol=0.0,
          tolerance=None, verdict=None):
    checkable = artifact is not None and not (isinstance(artifact, float) and math.isnan(artifact))
    if verdict is None:
        verdict = cl.verdict(relation, paper, artifact, rel_tol) if checkable else cl.NOT_CHECKABLE
    rows.append({
        "study": "cpu-gbps", "claim_id": claim_id, "claim": text, "location": location,
        "paper_relation": relation, "paper_value": paper, "artifact_value": artifact if checkable else None,
        "unit": unit, "tolerance": tolerance or (cl.tolerance_text(relation, rel_tol) if checkable else "n/a"),
        "verdict": verdict, "basis": basis, "provenance": provenance, "section": cm.anchor_of(claim_id),
    })


intervals = {}
for device in devices:
    for source, name, src_text in (("stat_total", "Total", "/proc/stat Total"),
                                   ("stat_softirq", "SoftIRQ", "/proc/stat SoftIRQ"),
                                   ("precise_total", "Total (precise source)", "precise Total")):
        f = cm.fit_of(fits, device, "down", source)
        claim_id = f"measured_linear_{source}_{cm.claim_key(device)}"
        claim(claim_id, f"{name} CPU grows linearly with throughput (Fig. 1), on {device}, downlink",
              "§3.2, Fig. 1", ">=", linear_r2_min, float(f["r2"]), "R^2",
              f"OLS of {src_text} on throughput, {int(f['n'])} runs; the paper gives no R^2, "
              f"'linear' is read as R^2 >= {linear_r2_min:g}", "modeled")
        intervals[claim_id] = cpufit.r2_ci(float(f["r2"]), int(f["n"]), float(f["slope"]), alpha)
    e = extra[(extra["device"] == device) & (extra["direction"] == "down") & (extra["source"] == "stat_total")]
    at = e.loc[np.isclose(e["target_gbps"], 1.6)].iloc[0]
    claim_id = f"measured_1p6gbps_under_50pct_{cm.claim_key(device)}"
    claim(claim_id, f"1.6 Gbps can be supported with less than 50% CPU (said of the Pixel 2), on {device}",
          "§3.2", "<", 50.0, float(at["cpu_pct"]), "%", "/proc/stat Total line at 1.6 Gbps, downlink", "modeled")
    intervals[claim_id] = (float(at["mean_ci_lo"]), float(at["mean_ci_hi"]))

ref_max = cm.max_runs(runs, reference_device, "down")
if not ref_max.empty:
    shares = ref_max["stat_all_softirq_pct"] / ref_max["stat_all_total_pct"]
    claim("measured_sirq_significant_share",
          "SoftIRQs account for a significant portion of Total CPU at the maximum throughput "
          "(ROG Phone: 8.1 of 17.1%, a share of 0.47; Pixel 2: 8.5 of 11.6%)",
          "§3.1", ">=", round(8.1 / 17.1, 6), float(shares.mean()), "ratio",
          f"/proc/stat SoftIRQ / Total at the unlimited rate, {reference_device}, downlink; "
          "bound: at least the smaller published share", "measured")
    intervals["measured_sirq_significant_share"] = cpufit.mean_ci(shares, alpha)[1:]
if not gro.empty:
    d = gro.set_index("direction").loc["down"]
    claim("measured_gro_off_ratio", "With GRO off the throughput falls from 1.6 Gbps to 366 Mbps (ratio 0.23)",
          "§3.3.1", "~", round(366 / 1600, 6), float(d["ratio_b_over_a"]), "ratio",
          f"{offloads_off_device} / {reference_device} downlink throughput at the unlimited rate "
          "(GRO, GSO and TSO off on both veth ends)", "measured", rel_tol=rel_tol_approx)
    claim("measured_gro_off_sharp_drop",
          "GSO/GRO optimizations are extremely critical for multi-Gbps rates (a sharp drop without them)",
          "§3.3.1 Remark", "<=", sharp_drop_max_ratio, float(d["ratio_b_over_a"]), "ratio",
          f"same ratio; 'sharp drop' read as at most {sharp_drop_max_ratio:g} of the offloads-on throughput",
          "measured")
    intervals["measured_gro_off_ratio"] = intervals["measured_gro_off_sharp_drop"] = (d["ratio_lo"], d["ratio_hi"])
if not rps.empty:
    d = rps.set_index("direction").loc["down"]
    flipped = d["ratio_b_over_a"] < 1
    claim("measured_affinity_4x",
          "Choosing the CPU that does SoftIRQ processing changes throughput about 4x (LITTLE to big core, GRO off)",
          "§3.3.2", "~", 4.0, float(max(d["ratio_b_over_a"], 1 / d["ratio_b_over_a"])), "x",
          f"larger / smaller downlink throughput at the unlimited rate of {rps_devices[0]} and {rps_devices[1]} "
          "(RPS masks; identical cores; offloads on)", "measured", rel_tol=rel_tol_approx)
    intervals["measured_affinity_4x"] = ((1 / d["ratio_hi"], 1 / d["ratio_lo"]) if flipped
                                         else (d["ratio_lo"], d["ratio_hi"]))
for frame, claim_id, text, location in [
        (gro, "measured_gro_off_sharp_drop", "GSO/GRO optimizations are extremely critical for multi-Gbps rates",
         "§3.3.1 Remark"),
        (rps, "measured_affinity_4x", "Choosing the CPU that does SoftIRQ processing changes throughput about 4x",
         "§3.3.2"),
        (slow, "measured_fig1c_same_trend",
         "With less CPU capacity the CPU-vs-throughput trend is almost identical (Fig. 1c)", "§3.2, Fig. 1c")]:
    if frame.empty:
        claim(claim_id, text, location, None, None, None, "n/a", "the configuration it needs was not captured for "
              "this build (see params.yaml)", "measured", verdict=cl.NOT_CHECKABLE)
if not slow.empty:
    d = slow.set_index("direction").loc["down"]
    claim("measured_fig1c_same_trend",
          "With less CPU capacity the CPU-vs-throughput trend is almost identical (Fig. 1c, ROG at 2.46 GHz)",
          "§3.2, Fig. 1c", "~", 1.0, float(d["b_stat_slope"] / d["a_stat_slope"]), "ratio",
          f"/proc/stat Total slope of {slow_device} / {reference_device}, downlink; a CPU quota on the "
          "device's iperf3, not a lower clock", "modeled", rel_tol=rel_tol_approx)
    claim("measured_max_tput_at_lower_capacity",
          "The maximum throughput is reached at every big-core frequency (less CPU capacity)",
          "§3.2", "~", 1.0, float(d["ratio_b_over_a"]), "ratio",
          f"{slow_device} / {reference_device} downlink throughput at the unlimited rate", "measured",
          rel_tol=rel_tol_approx)
    intervals["measured_max_tput_at_lower_capacity"] = (d["ratio_lo"], d["ratio_hi"])

claims_table = cl.claims_frame(rows)
cl.write_claims(claims_table, results / "claims.csv")
# For people only (claims.csv keeps the exact values): the paper's derived ratios to 3 significant figures, R².
claims_display = claims_table.assign(
    unit=claims_table["unit"].replace({"R^2": "R²"}),
    paper_value=[float(f"{v:.3g}") if pd.notna(v) else v for v in claims_table["paper_value"]])
claims_shown = claims_display.assign(
    paper=[paper_text(r, p) for r, p in zip(claims_display["paper_relation"], claims_display["paper_value"])],
    artifact=[numbers.interval(v, *intervals.get(c, (None, None))) for c, v in
              zip(claims_table["claim_id"], claims_table["artifact_value"])])
out.show(claims_shown[["claim", "location", "paper", "artifact", "unit", "tolerance", "verdict"]]
         .rename(columns={"artifact": "this artifact [95% CI]"}), "Claims of the paper and their verdicts",
         csv_href=site_href(results / "claims.csv"))
out.provenance("published (paper values); measured or modeled (artifact values, per the provenance column).")
headline = [f"measured_linear_stat_total_{cm.claim_key(reference_device)}",
            f"measured_linear_precise_total_{cm.claim_key(reference_device)}",
            f"measured_1p6gbps_under_50pct_{cm.claim_key(reference_device)}",
            "measured_sirq_significant_share", "measured_gro_off_ratio", "measured_affinity_4x"]
headline = [c for c in headline if c in set(claims_table["claim_id"])]
out.findings(claims_display, headline=headline, intervals={c: intervals[c] for c in headline if c in intervals})

# %%
counts = claims_table["verdict"].value_counts()
for verdict_name in cl.VERDICTS:
    put(f"n_{verdict_name.replace(' ', '_')}", int(counts.get(verdict_name, 0)))
r6 = cm.r6
metrics = {"devices": {}, "claims": {k.replace(" ", "_"): int(counts.get(k, 0)) for k in cl.VERDICTS}}
for device in devices:
    m = {}
    for source in ("stat_total", "precise_total"):
        f = cm.fit_of(fits, device, "down", source)
        m[f"down.{source}"] = {"slope_pct_per_gbps": r6(f["slope"]), "intercept_pct": r6(f["intercept"]),
                               "r2": r6(f["r2"]), f"gbps_at_{thr}pct": r6(f["gbps_at_threshold"]),
                               f"gbps_at_{thr}pct_ci_lo": r6(f["gbps_at_threshold_lo"]),
                               f"gbps_at_{thr}pct_ci_hi": r6(f["gbps_at_threshold_hi"])}
    for direction in ("down", "up"):
        mr = cm.max_runs(runs, device, direction)
        m[f"{direction}.max_throughput_gbps"] = r6(mr["throughput_gbps"].mean()) if not mr.empty else None
    g = gaps[gaps["device"] == device].set_index("direction")
    m["down.procstat_minus_precise_pp"] = r6(g.loc["down", "gap_pp"])
    metrics["devices"][device] = m
if not gro.empty:
    metrics["offloads_off_over_on_down"] = r6(gro.set_index("direction").loc["down", "ratio_b_over_a"])
if not rps.empty:
    metrics["rps_b_over_a_down"] = r6(rps.set_index("direction").loc["down", "ratio_b_over_a"])
if not slow.empty:
    metrics["slow_over_reference_down"] = r6(slow.set_index("direction").loc["down", "ratio_b_over_a"])
_ = (results / "metrics.json").write_text(json.dumps(metrics, indent=2, sort_keys=True) + "\n")

# %% [markdown]
# Of these claims {glue:text}`n_reproduced` hold on the measured hosts,
# {glue:text}`n_not_reproduced` do not, and {glue:text}`n_not_checkable` cannot
# be checked.

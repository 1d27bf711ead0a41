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
published_dir = "data/interim/published/cpu-gbps"
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
from pathlib import Path

import pandas as pd
from IPython.display import Markdown, display

from mobitrace.book.chapter import ChapterOutputs, site_href
from mobitrace.core import claims as cl
from mobitrace.core.published import Values
from mobitrace.studies.cpu_gbps import measured_analysis as cm
from mobitrace.studies.cpu_gbps import measured_chapter as mc
from mobitrace.studies.cpu_gbps.analysis import verdict_counts
from mobitrace.studies.cpu_gbps.device_analysis import figure1_fig

results = Path(results_dir)
out = ChapterOutputs(results, "analyze_cpu_gbps_measured")
data = mc.load(interim_dir, devices_dir, devices)
sessions, runs, fits, extra, rates = (data[k] for k in ("sessions", "runs", "fits", "extra", "rates"))
phones, paper = pd.read_csv(published_lines), Values(published_dir)
thr, have = f"{cpu_threshold_pct:g}", set(devices)
out.put_all({"n_devices": len(devices), "n_runs": len(runs), "raw_mb": sessions["bytes"].sum() / 1e6,
             "n_sessions": len(sessions)})

# %% [markdown]
# ## The captures
#
# {glue:text}`n_sessions` capture sessions of {glue:text}`n_devices` device
# configurations, {glue:text}`n_runs` iperf3 runs, {glue:text}`raw_mb:.1f` MB
# of raw files in git. The capture hash is the md5 of each session folder
# (over its files' paths and md5s); DVC pins the same files in `dvc.lock`.
# The full table (sample period, CPU quota, kind) is in the CSV.

# %%
cap, cap_shown = mc.captures(sessions)
out.table(cap, "captures", "Capture sessions and their hosts, one column per device (from manifest.yaml)",
          shown=cap_shown, index=True)
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
fit_table, fit_shown = mc.fits_table(fits, alpha)
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
ext, ext_shown = mc.extrapolations(extra, devices, target_rates_gbps)
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
inv, inv_shown = mc.inverse_predictions(fits, thr)
out.table(inv, f"throughput_at_{thr}pct_cpu", f"Throughput (Gbps) at {thr}% CPU: estimate with 95% CI "
          "(confidence band) and the interval from the prediction band", shown=inv_shown)
out.provenance("modeled (inverse prediction from OLS of measured runs).")
out.put_all(mc.reference_glue(fits, reference_device))

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
gaps, gaps_shown = mc.procstat_gaps(mc.add_gap_columns(runs), fits, alpha)
out.table(gaps, "procstat_vs_precise", "/proc/stat Total minus precise Total (pp, percentage points of all "
          "CPUs), the ratio /proc/stat ÷ precise, and the ratio of their slopes", shown=gaps_shown)
out.provenance("measured (both sources per run); slopes modeled (OLS).")
out.put_all(mc.procstat_glue(runs, gaps))

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
    out.put_all(mc.offloads_glue(gro, paper))
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
    per_cpu, per_cpu_shown = mc.per_cpu_at_max(rates, rps_devices + [reference_device])
    out.table(per_cpu, "per_cpu_at_max", "Per-CPU /proc/stat Total and SoftIRQ (% of that CPU) at the "
              "unlimited rate", shown=per_cpu_shown)
    out.provenance("measured (per-CPU /proc/stat, mean of the runs).")
    out.put_all(mc.rps_glue(rps, rps_devices))
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
    display(Markdown(mc.slow_text(slow)))
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
comparison, comparison_shown = mc.comparison_with_phones(phones, fits, extra, devices, target_rates_gbps, thr)
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
comparisons = {"gro": gro, "rps": rps, "slow": slow}
claims_table, intervals = mc.measured_claims(paper, data, comparisons, {
    "devices": devices, "reference_device": reference_device, "offloads_off_device": offloads_off_device,
    "rps_devices": rps_devices, "slow_device": slow_device, "alpha": alpha, "linear_r2_min": linear_r2_min,
    "sharp_drop_max_ratio": sharp_drop_max_ratio, "rel_tol_approx": rel_tol_approx})
cl.write_claims(claims_table, results / "claims.csv")
claims_display, claims_shown = mc.claims_for_people(claims_table, intervals)
out.show(claims_shown, "Claims of the paper and their verdicts", csv_href=site_href(results / "claims.csv"))
out.provenance("published (paper values); measured or modeled (artifact values, per the provenance column).")
headline = mc.headline(claims_table, reference_device)
out.findings(claims_display, headline=headline, intervals={c: intervals[c] for c in headline if c in intervals})

# %%
counts = verdict_counts(claims_table)
out.put_all({f"n_{k.replace(' ', '_')}": n for k, n in counts.items()})
metrics = mc.chapter_metrics(data, gaps, comparisons, devices, thr, counts)
_ = (results / "metrics.json").write_text(json.dumps(metrics, indent=2, sort_keys=True) + "\n")

# %% [markdown]
# Of these claims {glue:text}`n_reproduced` hold on the measured hosts,
# {glue:text}`n_not_reproduced` do not, and {glue:text}`n_not_checkable` cannot
# be checked.

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
# # CPU versus throughput, measured: methods and supplementary analyses
#
# This page supplements {doc}`cpu-gbps-measured`, where the findings and the claims are: the
# test bed and the two CPU sources, the captures, the fitted lines, the throughput at 50% CPU
# and `/proc/stat` against the precise source per device.

# %% [markdown]
# ## The test bed and the two CPU sources
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

# %% tags=["parameters"]
study = "cpu-gbps-measured"

# %% tags=["remove-cell"]
from mobitrace.studies.cpu_gbps.chapter_measured_methods import Chapter

ch = Chapter.from_parameters(globals())

# %% [markdown]
# ## The captures
#
# {glue:text}`n_sessions` capture sessions of {glue:text}`n_devices` device
# configurations, {glue:text}`n_runs` iperf3 runs, {glue:text}`raw_mb:.1f` MB
# of raw files in git. The capture hash is the md5 of each session folder
# (over its files' paths and md5s); DVC pins the same files in `dvc.lock`.
# The full table (sample period, CPU quota, kind) is in the CSV.

# %% tags=["hide-input"]
ch.captures_table()

# %% [markdown]
# Raw data is immutable: a session re-captured because it was unusable stays in
# `data/raw` and is named in `params.yaml` (`superseded`, with the reason);
# ingest leaves it out. The sessions superseded, if any:

# %% tags=["hide-input"]
ch.superseded_table()

# %% [markdown]
# ## The fitted lines
#
# $\mathrm{CPU} = a + b \cdot \mathrm{throughput}$ by OLS per device,
# direction and CPU source, with {glue:text}`ci_pct:.0f`% confidence intervals of slope and
# intercept (t-based) and of R² (Fisher's z; `mobitrace.stats.cpufit`). The table
# shows the downlink; the CSV has the uplink too.

# %% tags=["hide-input"]
ch.fits_section()

# %% [markdown]
# ## Throughput at 50% CPU (inverse prediction)
#
# The throughput at which the fitted line reaches the threshold,
# $x_0 = (50 - a)/b$. Its interval is found by inverting the band (Fieller's
# theorem; Draper & Smith 1998, §3.2; formula in `mobitrace.stats.cpufit`): the
# {glue:text}`ci_pct:.0f`% interval is the set of throughputs whose {glue:text}`ci_pct:.0f`% confidence band of the
# mean contains 50%; the wider prediction-band interval is the set whose
# prediction band for one new run contains 50%. When the threshold lies far
# above every measured CPU value this is a long extrapolation and the
# interval says how far the data can carry it; when the slope is not
# significant the set is unbounded.

# %% tags=["hide-input"]
ch.inverse_section()

# %% [markdown]
# On the reference configuration ({glue:text}`reference_device`, offloads
# on) the `/proc/stat` line reaches 50% CPU at
# {glue:text}`ref_stat_x50:.1f` Gbps ({glue:text}`ci_pct:.0f`% CI
# {glue:text}`ref_stat_x50_lo:.1f` to {glue:text}`ref_stat_x50_hi:.1f` Gbps);
# the precise source puts it at {glue:text}`ref_precise_x50:.1f` Gbps
# ({glue:text}`ref_precise_x50_lo:.1f` to
# {glue:text}`ref_precise_x50_hi:.1f` Gbps). {glue:text}`ref_x50_range`
# The table's last column flags every estimate beyond the measured range,
# that is above the device's saturation point: its fastest mean throughput
# over its target rates (one faster run, in the "fastest single run" column,
# is not a rate it sustains). A
# segmented fit would need more rate levels than a capture has to place its
# breakpoint. Both endpoints'
# network stacks share this host's CPUs, so a single receiving device would
# reach 50% at a higher rate than these.

# %% [markdown]
# ## `/proc/stat` versus the precise source, per device
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
# means with {glue:text}`ci_pct:.0f`% t intervals per device and direction, at low rates (target
# at most 1 Gbps) and at all rates, medians (robust to bursts of background
# work), and the ratio of the two sources' slopes.

# %% tags=["hide-input"]
ch.procstat_figure()
ch.procstat_table()

# %% [markdown]
# At target rates up to 1 Gbps, the median ratio `/proc/stat` / precise per
# device and direction is {glue:text}`ratio_low_by_device`. In the
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
# ## The shared machine
#
# The machine is shared: work of other users that ran during a capture
# competes for the same two CPUs and lowers the throughput at the unlimited
# rate. The background columns of the `/proc/stat` versus precise table
# above measure it per device (host-wide precise CPU minus the iperf3 and
# ksoftirqd CPU); where it is tens of percentage points, a throughput
# difference between configurations is confounded with it.

# %% [markdown]
# ## How each section of the chapter was made
#
# The fuller set-up of each section of the main page.
#
# **Figure 1 per device.** Each point is one run (at least 3 repetitions of each target rate, 10 s each
# with the default settings); lines are OLS fits with their {glue:text}`ci_pct:.0f`% confidence
# band (darker: where the fitted mean lies) and {glue:text}`ci_pct:.0f`% prediction band (lighter:
# where one new run would fall), for `/proc/stat` Total and SoftIRQ (the
# paper's sources) and the precise Total.
#
# **Extrapolation to 1.6, 4 and 12.8 Gbps.** The fitted mean CPU at the paper's target rates with the {glue:text}`ci_pct:.0f`% confidence
# interval of the mean (statsmodels `get_prediction`); the CSV adds the {glue:text}`ci_pct:.0f`%
# prediction interval of one new run. A rate marked "(extrapolated)" lies
# beyond the measured range, above the device's fastest mean throughput over
# its target rates; a CPU above 100% there only says the line has left what
# the host can do. The table per device is on its page, and the reference
# device's below.
#
# **Which CPU does the SoftIRQ work.** The paper moved SoftIRQ processing from a LITTLE core to a big core and
# gained throughput. This host's cores are identical, so the test changes
# only *which* CPU does the receive SoftIRQ work: RPS masks on both veth ends
# steer it to CPU 0 or CPU 1, with the device's iperf3 pinned to the last CPU
# and the peer's to CPU 0 in both configurations. The per-CPU `/proc/stat`
# columns show where the SoftIRQ time landed at the unlimited rate.
#
# **A slower emulated device.** Liang & Keshav emulated a PDA by clocking a server down. Here the device's
# iperf3 runs in a cgroup limited to a fraction of one CPU (CFS quota; the
# quota is in the captures table). SoftIRQ work done outside the process is
# not limited by the quota, so this emulates a slow application core rather
# than a slower clock for the whole stack.
#
# **All measured devices and the published phones.** One figure and one table: each measured device's downlink `/proc/stat`
# Total line (the paper's source; solid over the measured range, dashed where
# extrapolated) with its {glue:text}`ci_pct:.0f`% confidence band, and the two phones' lines
# implied by the paper's stated extrapolations (from the cpu-gbps chapter).
# With more devices than the figure has colours, the devices `params.yaml`
# names (reference, offloads off, RPS pair, slower device) keep theirs and the
# others are thin grey lines. Each device in the table links to its own page.

# %% [markdown]
# (cpu-gbps-measured-tables)=
# ## The chapter's tables
#
# The reference device's extrapolations, the headlines with and without the
# runs over the background limit, and the figures and tables of the offloads,
# RPS and slower-device comparisons whose numbers are in
# {doc}`cpu-gbps-measured`.

# %% tags=["hide-input"]
ch.extrapolations_section()
ch.background_sensitivity()
ch.background_sensitivity_table()
ch.offloads()
ch.rps_section()
ch.comparison_tables()

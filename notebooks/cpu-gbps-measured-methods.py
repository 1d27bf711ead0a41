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
# direction and CPU source, with 95% confidence intervals of slope and
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
# 95% interval is the set of throughputs whose 95% confidence band of the
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
# {glue:text}`ref_stat_x50:.1f` Gbps (95% CI
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
# means with 95% t intervals per device and direction, at low rates (target
# at most 1 Gbps) and at all rates, medians (robust to bursts of background
# work), and the ratio of the two sources' slopes.

# %% tags=["hide-input"]
ch.procstat_figure()
ch.procstat_table()

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

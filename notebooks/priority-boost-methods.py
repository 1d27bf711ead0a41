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
# # Priority boost: methods and supplementary analyses
#
# This page supplements {doc}`priority-boost`, where the findings and the claims are: the
# published tables, how the audit's tests are computed, the audit of the network-load table,
# the effect sizes, and the re-run's set-up, tests and run conditions.

# %% tags=["parameters"]
study = "priority-boost"

# %% tags=["remove-cell"]
from mobitrace.studies.priority_boost.chapter_methods import Chapter

ch = Chapter.from_parameters(globals())

# %% [markdown]
# (priority-boost-published)=
# ## The published tables
#
# Each cell is printed as in the paper: mean/SD in seconds for the transfer
# times, the SD of the absolute deviation from 20 ms in microseconds for
# the audio sender; columns are the number of competing CPU-bound processes
# and the cross traffic in % of the NIC's capacity. The paper gives n = 10
# repetitions per experiment (§4).

# %% tags=["hide-input"]
ch.published_tables()

# %% [markdown]
# ### Figure: the published means with their confidence intervals
#
# Each mean's {glue:text}`ci_pct:.0f`% interval is $\bar x \pm t_{1-\alpha/2,\,n-1}\, s/\sqrt{n}$ from the
# reported mean, SD and n. The audio table gives one number per cell and no
# spread, so it has no interval.

# %% tags=["hide-input"]
ch.published_means_figure()

# %% tags=["remove-cell"]
ch.audit()

# %% [markdown]
# (priority-boost-audit-cpu)=
# ## Audit of the CPU-load table
#
# Each published comparison of the CPU-load table: the paper's p beside the
# Welch p recomputed from the reported means, SDs and n, the range of p their
# rounding allows, the effect size and Holm's correction.

# %% tags=["hide-input"]
ch.audit_table()

# %% [markdown]
# ## How the audit's tests are computed
#
# For each policy against the original, Welch's statistic is
# $t = (\bar x_1 - \bar x_2)/\sqrt{s_1^2/n_1 + s_2^2/n_2}$ with the
# Welch-Satterthwaite degrees of freedom
# $\nu = (s_1^2/n_1 + s_2^2/n_2)^2 / \big(\tfrac{(s_1^2/n_1)^2}{n_1-1} + \tfrac{(s_2^2/n_2)^2}{n_2-1}\big)$
# and a two-sided p (`scipy.stats.ttest_ind_from_stats(equal_var=False)`).
#
# The reported statistics are rounded, so each true mean and SD lies in an
# interval of half a unit of its last printed digit. The range of p over the
# box of these four intervals is found by a grid search polished with a
# bounded optimizer (`mobitrace.stats.welch.p_range`). Two readings of the
# precision: **as printed** ("81" means 80.5 to 81.5, "0" means 0 to 0.5) and
# **at the table's precision** (trailing zeros dropped: "81" is 81.0, "0" is
# 0.00, as the other cells of the table are printed). A published p is
# flagged when it lies outside the range; "< 0.0001" is flagged when even the
# smallest p in the range is above 0.0001.
#
# Effect sizes are Hedges' g of policy minus original (negative: the policy
# is faster), with a {glue:text}`ci_pct:.0f`% normal-approximation interval
# (`statsmodels.stats.meta_analysis.effectsize_smd`). Holm's correction runs
# over the comparisons of each table at $\alpha$ = {glue:text}`alpha`.

# %% [markdown]
# (priority-boost-audit-net)=
# ## Audit of the network-load table
#
# The paper prints no p-values for this table; the same tests, from its
# means and SDs:

# %% tags=["hide-input"]
ch.audit_net_table()

# %% tags=["remove-cell"]
ch.net_numbers()

# %% [markdown]
# Under network load INCR is faster than the original in
# {glue:text}`net_incr_faster_cols` of {glue:text}`net_incr_cols` columns
# (Holm-significant in {glue:text}`net_n_incr_holm_sig`; DECR in
# {glue:text}`net_n_decr_holm_sig`), by up to
# {glue:text}`net_incr_rel_max:.1f`% of the transfer time. DECR's mean is
# below INCR's in {glue:text}`net_decr_better_cols` of
# {glue:text}`net_cols` columns (on average DECR is
# {glue:text}`net_decr_minus_incr_abs:.2f` s *{glue:text}`net_decr_vs_incr`* than INCR).

# %% [markdown]
# ## Figure: effect sizes of the published comparisons

# %% tags=["hide-input"]
ch.effect_sizes_figure()

# %% tags=["remove-cell"]
ch.conclusions()

# %% [markdown]
# ## The re-run's capture kit
#
# The capture kit (`scripts/capture/priority_boost/run.py`, entry
# `make capture-priority-boost DEVICE=<name>`) re-creates the experiment in
# user space, as root, inside two network namespaces joined by a veth pair:
#
# - **link**: the device side's egress is limited by `tc tbf` to the NIC rate;
#   an oracle process switches the device's veth up and down (`ip link set`)
#   on an exponential on/off schedule (mean 5 s, starting on), drawn from a
#   fixed, recorded seed per repetition, the same for every policy;
# - **slow CPU**: the device's programs and the competing processes run in a
#   cgroup whose CFS bandwidth (cgroup v2 `cpu.max`, or the v1 equivalent)
#   is the paper's clock ratio, 325 MHz / 2.5 GHz, of one core they are pinned to;
# - **policies**: the oracle renices the communicating processes
#   (`setpriority`), counting I/O events as write system calls and bytes moved
#   as bytes written (`/proc/<pid>/io`): original (never), INCR (nice -1 at the
#   first event after link-up, one step per event, up to -20), DECR (-20 at the
#   first event, one step lower per 60 kB, down to -1); reset to 0 when the
#   link goes down;
# - **workloads**: an encrypted bulk transfer (`openssl enc -des-ede3-cbc`
#   piped into a TCP socket, a stand-in for SCP; file scaled down, see the
#   manifest), CPU-bound busy loops, paced UDP cross traffic (boosted by the
#   same policy, as in the paper) and an audio-like sender writing 80 B every
#   20 ms on absolute deadlines, whose send times are logged.
#
# The metric of a transfer run is its time from start to the receiver's
# acknowledgement of the last byte; that of an audio run the SD of
# $|\Delta t_i - 20\,\mathrm{ms}|$ over its packets. Each cell's mean, SD and n
# are over runs; the Welch tests and effect sizes use the per-run values.

# %% tags=["hide-input"]
ch.load_measured()

# %% tags=["hide-input"]
ch.sessions()

# %% tags=["hide-input"]
ch.measured_tables()

# %% [markdown]
# ### Welch tests on the per-run samples
#
# Each policy against the original, per condition; Holm over each table's
# comparisons.

# %% tags=["hide-input"]
ch.welch_tests()

# %% [markdown]
# ### Supplementary: paired by link schedule
#
# Every repetition uses the same on/off schedule (seed) for all policies, and
# the schedule dominates the spread of the transfer times. Pairing each run
# with the original run of the same repetition removes that spread: the table
# gives, per cell, the median ratio policy/original over the pairs with its
# BCa bootstrap {glue:text}`ci_pct:.0f`% interval (the effect size), how many pairs the
# policy was faster in, and the two-sided Wilcoxon signed-rank p with Holm
# over each table (the family is named in the last column). This is not the paper's test; it is shown
# because the unpaired Welch test has little power against the schedule's
# variance.

# %% tags=["hide-input"]
ch.paired_tests()

# %% [markdown]
# ### Did each run get the conditions it was meant to?
#
# Per cell: the fraction of the run the link was up, how often the oracle
# reniced a process and the highest priority it set, the cross traffic the
# sender achieved against its target, how long the slow CPU's cgroup was
# throttled, and for audio runs the sends that failed (link down:
# ENETUNREACH) and those refused (ECONNREFUSED). Early in the capture the
# receiver had no socket on the audio and cross-traffic ports (a kit bug,
# fixed while the capture ran), so the peer answered with ICMP
# port-unreachable, which the kernel rate-limits to about one per second: the
# "audio sends refused" column counts the sends this made fail. Cells affected on
# the reference host: {glue:text}`m_refused_cells` (at most
# {glue:text}`m_refused_max` refused sends in a run).

# %% tags=["hide-input"]
ch.run_conditions()

# %% tags=["remove-cell"]
ch.device_numbers()

# %% [markdown]
# The reference host's capture has {glue:text}`m_n_cells` cells of the
# paper's tables; cells not run: {glue:text}`m_missing_cells`.
#
# The reference host's file is {glue:text}`m_file_mb:.2f` MB (the paper's:
# {glue:text}`paper_file_mb:.0f` MB) and each audio run lasts
# {glue:text}`m_audio_s:.0f` s. Unloaded, a transfer takes a median
# {glue:text}`m_t_unloaded_s:.2f` s and ends within the first on-period;
# loaded transfers last longer and span off-periods, after which TCP's
# retransmission back-off can waste part of the next on-period. The schedule
# therefore dominates the spread of loaded transfer times, which is why the
# runs are also compared paired by schedule.
#
# A user-space emulation differs from the paper's kernel in ways that matter
# here: CFS bandwidth control throttles the whole group in periods (so a
# sender can wait for the next period, unlike on a uniformly slower CPU),
# `nice -20` against nice-0 busy loops gives the boosted process most of the
# group's CPU under CFS weights (Linux 2.6.1's O(1) scheduler treated nice
# differently), and the oracle sees I/O only by polling `/proc` every few
# milliseconds. The re-run tests the paper's question on today's scheduler,
# not its exact numbers.

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
# # Dynamic priority boosting (priority-boost)
#
# Liang & Keshav boosted the CPU scheduling priority of communicating processes
# on a Linux 2.6 machine clocked down to 325 MHz (a PDA stand-in) while an
# oracle switched its 10 Mbps link on and off (exponential times, mean 5 s).
# They compared three policies, the unmodified scheduler (*original*), priority
# incrementing per I/O event (*INCR*) and priority decrementing per 60 KB moved
# (*DECR*), on the time to copy a 41 MB file with SCP under CPU and network
# load, and on the send-time jitter of an audio-like UDP sender, with n = 10
# runs per cell and t-tests whose variance is estimated by the Satterthwaite
# method, that is, Welch's test. They concluded that boosting helps only
# slightly, and only under heavy load.
#
# This chapter does two things:
#
# 1. **An audit of the published tables.** Every p-value is recomputed
#    from the reported mean, SD and n, with the range of p that the rounding of
#    those statistics allows, effect sizes, and Holm's family-wise correction;
#    and the paper's prose conclusions are checked against its own tables.
# 2. **A re-run on a Linux host.** The capture kit
#    (`scripts/capture/priority_boost/`) implements the policies in user
#    space and repeats the three experiments; the tables are re-derived from the
#    raw per-run logs and the tests run on the per-run samples.
#
# ```{admonition} Provenance
# **published**: numbers transcribed from the paper (`data/published/priority-boost.yaml`,
# location per table). **measured**: computed from raw captures in
# `data/raw/priority-boost/<device>/` (manifest and content hash shown below).
# Test statistics, p-value ranges and effect sizes are computed here from
# whichever of the two they are based on, and say so. Nothing is modeled.
# ```

# %% tags=["parameters"]
study = "priority-boost"
published_dir = "data/interim/published/priority-boost"
interim_dir = "data/interim/priority-boost"
results_dir = "data/results/priority-boost"
devices = []
alpha = 0.05
ci_level = 0.95
p_grid = 21
rel_tol_approx = 0.10
marginal_pct = 5.0

# %% tags=["remove-cell"]
from mobitrace.studies.priority_boost.chapter import Chapter

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
# ### Figure: the published means with their 95% confidence intervals
#
# Each mean's interval is $\bar x \pm t_{0.975,\,n-1}\, s/\sqrt{n}$ from the
# reported mean, SD and n. The audio table gives one number per cell and no
# spread, so it has no interval.

# %% tags=["hide-input"]
ch.published_means_figure()

# %% [markdown]
# (priority-boost-audit)=
# ## Audit: Welch tests recomputed from the reported statistics
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

# %% tags=["hide-input"]
ch.audit()

# %% tags=["remove-cell"]
ch.audit_numbers()

# %% [markdown]
# Of the {glue:text}`n_published_p` published p-values,
# {glue:text}`n_flag_table` lie outside the range their table's rounding
# allows at the table's precision, and {glue:text}`n_flag_printed` even when
# every printed number is read at its widest interval: the "< 0.0001" of
# INCR at {glue:text}`flag_procs` competing processes,
# where the reported means and SDs give p between
# {glue:text}`flag_p_lo:.3f` and {glue:text}`flag_p_hi:.3f`. Every other
# published p is attainable. Without correction
# {glue:text}`n_unadj_sig` of the {glue:text}`n_cpu_tests` recomputed tests are significant at
# $\alpha$ = {glue:text}`alpha` (all INCR comparisons, the largest INCR p being
# {glue:text}`incr_p_max:.4f`; the smallest DECR p is
# {glue:text}`decr_p_min:.3f`). After Holm's correction over the table only
# {glue:text}`n_holm_sig` remains: {glue:text}`holm_sig_list`. Holm applied to
# the paper's own p-values (taking "< 0.0001" at its bound) keeps
# {glue:text}`n_holm_pub_sig`; the difference comes from the unattainable
# "< 0.0001".

# %% [markdown]
# ## Figure: published p-values against the range their tables allow

# %% tags=["hide-input"]
ch.p_ranges_figure()

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

# %% [markdown]
# (priority-boost-conclusions)=
# ## Do the paper's conclusions follow from its tables?

# %% tags=["remove-cell"]
ch.conclusions()

# %% [markdown]
# - *"The results show that the INCR policy is statistically different than
#   the original policy, while the INCR policy is not"* (§4): the second INCR is
#   evidently DECR. Read so, it follows from the table without correction
#   (every INCR p < {glue:text}`alpha`, every DECR p > {glue:text}`alpha`),
#   but not after a family-wise correction: with Holm over the {glue:text}`n_cpu_tests` tests
#   only {glue:text}`holm_sig_list` stays significant.
# - *"Priority boosting improves application performance only slightly, and
#   only under heavy load"* (Abstract; §5: "when the competing CPU load is high
#   (i.e. with more than 30 competing processes)"): does **not** follow. The
#   table stops at {glue:text}`cpu_max_procs` processes, and the INCR
#   difference is significant with *no* competing process (p =
#   {glue:text}`incr_p0:.4f`, g = {glue:text}`incr_g0:.2f`, the only
#   comparison that survives Holm). INCR is faster by
#   {glue:text}`incr_faster0:.1f` s with no competing process and by
#   {glue:text}`incr_faster30:.1f` s with 30: the gain {glue:text}`incr_gain_trend` with load but
#   is never more than {glue:text}`cpu_max_gain_pct:.1f`% of the transfer time.
# - *"All three policies ... deliver essentially the same performance. DECR is
#   marginally better"* (network-load table): the first half holds in size
#   (at most {glue:text}`net_incr_rel_max:.1f`%), not in significance (INCR
#   is faster in {glue:text}`net_incr_faster_cols` of {glue:text}`net_incr_cols`
#   columns, Holm-significant in {glue:text}`net_n_incr_holm_sig`); the
#   second does **not** follow: DECR has the lower mean in only
#   {glue:text}`net_decr_better_cols` of {glue:text}`net_cols` columns.
# - *"Priority boosting does not seem to improve the performance of the
#   [audio] application ... a delay jitter increase of about 300-800
#   microseconds"*: the table's changes range from
#   {glue:text}`audio_inc_min:.0f` to {glue:text}`audio_inc_max:.0f` µs;
#   {glue:text}`audio_n_improved` of the {glue:text}`audio_n_boosted`
#   boosted cells have *lower* jitter than the original, one by
#   {glue:text}`audio_best_drop:.0f` µs. With one number per cell and no
#   spread, none of these differences can be tested.
# - Abstract arithmetic: {glue:text}`abstract_window_s:.0f` s at
#   {glue:text}`abstract_rate_mbps:.0f` Mbps is {glue:text}`abstract_mb:.2f` MB,
#   not {glue:text}`abstract_mb_paper:.1f` MB (the 2500 RTTs,
#   {glue:text}`abstract_rtts:.0f`, are right); the audio rate, 80 B per 20 ms,
#   is {glue:text}`audio_kbps:.0f` kbps as stated.

# %% [markdown]
# (priority-boost-rerun)=
# ## Re-run on a Linux host
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
#   first event, one step lower per 60 KB, down to -1); reset to 0 when the
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
# gives, per cell, the median ratio policy/original over the pairs, how many
# pairs the policy was faster in, and the two-sided Wilcoxon signed-rank p
# with Holm over each table. This is not the paper's test; it is shown
# because the unpaired Welch test has little power against the schedule's
# variance.

# %% tags=["hide-input"]
ch.paired_tests()

# %% [markdown]
# ### Figure: measured means with 95% confidence intervals, and every run
#
# Per policy and condition, the mean over runs with its 95% bootstrap
# confidence interval (seaborn, fixed seed), over the runs themselves (small
# points). Transfer times are on a log scale.

# %% tags=["hide-input"]
ch.measured_figures()

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
# On the reference host ({glue:text}`ref_device`,
# {glue:text}`m_runs_ok` completed runs, {glue:text}`m_timeouts` timed out),
# boosting shortens the transfer by at most
# {glue:text}`m_cpu_gain_max_pct:.0f`% of the original's time under CPU load:
# with {glue:text}`m_cpu_top_procs` competing processes INCR
# {glue:text}`m_cpu_incr_top_verb` {glue:text}`m_cpu_incr_gain_top_abs_pct:.0f`% and DECR
# {glue:text}`m_cpu_decr_top_verb` {glue:text}`m_cpu_decr_gain_top_abs_pct:.0f`%, with none the INCR difference
# is {glue:text}`m_cpu_incr_gain0_pct:.1f`% (p =
# {glue:text}`m_cpu_incr_p0:.3f`). After Holm's correction,
# {glue:text}`m_cpu_holm_sig` of {glue:text}`m_cpu_comparisons` CPU-load
# comparisons, {glue:text}`m_net_holm_sig` of
# {glue:text}`m_net_comparisons` network-load comparisons and
# {glue:text}`m_audio_holm_sig` of {glue:text}`m_audio_comparisons` audio
# comparisons differ from the original (audio: boosting lowers the jitter
# significantly in {glue:text}`m_audio_incr_holm_lower` INCR and
# {glue:text}`m_audio_decr_holm_lower` DECR cells, raises it in
# {glue:text}`m_audio_incr_holm_higher` and
# {glue:text}`m_audio_decr_holm_higher`). Paired by link schedule, the
# Wilcoxon test finds {glue:text}`m_cpu_paired_faster_sig` of
# {glue:text}`m_cpu_paired_comparisons` CPU-load comparisons significantly
# faster after Holm ({glue:text}`m_net_paired_holm_sig` of
# {glue:text}`m_net_paired_comparisons` network-load and
# {glue:text}`m_audio_paired_holm_sig` of
# {glue:text}`m_audio_paired_comparisons` audio comparisons differ).
#
# A user-space emulation differs from the paper's kernel in ways that matter
# here: CFS bandwidth control throttles the whole group in periods (so a
# sender can wait for the next period, unlike on a uniformly slower CPU),
# `nice -20` against nice-0 busy loops gives the boosted process most of the
# group's CPU under CFS weights (Linux 2.6.1's O(1) scheduler treated nice
# differently), and the oracle sees I/O only by polling `/proc` every few
# milliseconds. The re-run tests the paper's question on today's scheduler,
# not its exact numbers.

# %% [markdown]
# (priority-boost-claims)=
# ## Claims
#
# Each claim of the paper this chapter addresses, with the paper's value, the
# artifact's and a verdict. Published p-values are reproduced when they lie in
# the range of p their table's rounded statistics allow (table precision);
# significance claims are decided at $\alpha$ = {glue:text}`alpha` on the
# recomputed (published rows) or measured (measured rows) p; values the
# paper gives with "about" within {glue:text}`rel_tol_pct:.0f`%; "marginal"
# or "slight" improvements as below {glue:text}`marginal_pct:.0f`% of the
# transfer time.
#
# ```{provenance} measured, published
# :stage: analyze_priority_boost
#
# published (paper values); published arithmetic or measured (artifact values, per the provenance column).
# ```

# %% tags=["hide-input"]
ch.claims()

# %% tags=["remove-cell"]
ch.findings()

# %% tags=["remove-cell"]
ch.metrics()

# %% [markdown]
# Of the chapter's claims, {glue:text}`n_reproduced` are reproduced,
# {glue:text}`n_not_reproduced` are not, and {glue:text}`n_not_checkable` cannot
# be checked.

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
# # MPTCP over two radios: methods and supplementary analyses
#
# This page supplements {doc}`mptcp-dualband`, where the findings and the claims are: the
# capture and the runs set aside, the CPU sources, the power model and its per-bit costs,
# the two optima side by side, the guideline's encoding and a sensitivity of the model.

# %% tags=["parameters"]
study = "mptcp-dualband"

# %% tags=["remove-cell"]
from mobitrace.studies.mptcp_dualband.chapter_methods import Chapter

ch = Chapter.from_parameters(globals())

# %% tags=["remove-cell"]
ch.load_runs()

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

# %% tags=["hide-input"]
ch.captures()

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

# %% tags=["hide-input"]
ch.set_aside()

# %% [markdown]
# In the first session {glue:text}`early_both` of {glue:text}`early_n` MPTCP
# runs used both paths; in the runs the chapter uses, {glue:text}`late_both`
# of {glue:text}`late_n` MPTCP runs did (backup-mode runs use one path by
# design).

# %% tags=["remove-cell"]
ch.fig1()
ch.fig2_cdf()

# %% [markdown]
# (mptcp-dualband-cdf-table)=
# ## Throughput and CPU per GRO and SoftIRQ configuration
#
# The reference device's downlink MPTCP runs per configuration of Figure 2.

# %% tags=["hide-input"]
ch.cdf_table()

# %% [markdown]
# (mptcp-dualband-cpu)=
# ## Precise and tick-sampled CPU
#
# Each run records both the two processes' own CPU time (`getrusage`) and
# `/proc/stat` before and after. On this VM the tick-sampled counters are not
# reliable for paced network load, and they count the whole shared host:
# other helpers' builds and tests ran during some batches (the lock only
# keeps measured runs from overlapping), so the host's busy time can exceed
# the two processes' by far. The energy model uses the per-process time.

# %% tags=["hide-input"]
ch.cpu_sources()

# %% [markdown]
# ## The power model
#
# The phone's power above its base power, for backlogged MPTCP: each
# interface's radio at its measured rate (the paper's backlogged powers,
# linear in utilization, 0 at no traffic), plus the phone-side process's CPU
# time through the CPU model. The paper measured total phone power with the
# battery's voltage and current; this is a model fed with measured rates and
# CPU time.

# %% tags=["hide-input"]
ch.power()

# %% tags=["remove-cell"]
ch.backlogged_sweep()
ch.ratios_vs_paper()
ch.demand_sweeps()

# %% [markdown]
# (mptcp-dualband-power)=
# ## The power model's cost per bit
#
# Under a radio model linear in utilization, the per-bit radio cost of each
# path is constant (backlogged power / full rate): 802.11ad costs
# {glue:text}`nj_ad_rx` nJ/bit to receive and {glue:text}`nj_ad_tx` to send,
# 802.11ac {glue:text}`nj_ac_rx` and {glue:text}`nj_ac_tx`. The model therefore always prefers
# {glue:text}`cheaper_path`, per bit; the paper's downlink finding that 802.11ac is
# the cheaper receiver rests on absolute power at partial load, which a
# linear model with no wake-up floor does not have.

# %% [markdown]
# ## Throughput-optimal against energy-optimal
#
# The two optima side by side for every direction and demand, with the
# paper's energy-optimal ratios (§4.2). As in the paper, the backlogged
# energy optimum is taken among the ratios that use both paths, a demand's
# among the ratios that meet it.

# %% tags=["hide-input"]
ch.optima_compared()

# %% [markdown]
# (mptcp-dualband-guideline)=
# ## How the Figure 9 guideline is encoded
#
# The paper's Figure 9 (a flow chart, not in the text) gives guidelines for an
# energy-aware scheduler from the demand and each interface's maximum rate.
# `mobitrace.studies.mptcp_dualband.ratios.guideline_ratio` encodes them as §4.2 states them:
# backlogged traffic gets the throughput-optimal ratio R_ad : R_ac; downlink
# demands above R_ad fill 802.11ac and put the rest on 802.11ad, demands
# between R_ac and R_ad use 802.11ad alone, demands up to R_ac 802.11ac alone;
# uplink demands above R_ad fill 802.11ad, smaller ones use 802.11ad alone.
# The table compares its ratio (rounded to the measured grid) with the
# exhaustive search over the measured ratios: the lowest modeled nJ/bit among
# the ratios that meet the demand (or, backlogged, among all).

# %% tags=["hide-input"]
ch.guideline()

# %% [markdown]
# (mptcp-dualband-floor)=
# ## Sensitivity: a wake-up floor in the radio model
#
# The paper's downlink preference for 802.11ac at low demand (and for
# filling 802.11ac first at 1750 Mbps) needs a radio that costs a large part
# of its backlogged power as soon as it carries any traffic, while an unused
# radio sleeps. The table recomputes the energy-optimal ratio with such a
# floor (an *assumed* fraction f of the backlogged power; f = 0 is the
# model above) on the same measured throughputs.

# %% tags=["hide-input"]
ch.floor_sensitivity()

# %% [markdown]
# (mptcp-dualband-robustness)=
# ## Robustness of the modeled verdicts
#
# Each modeled claim of every device, recomputed from the same measured data
# with each assumed power coefficient halved and raised by half, and with
# all of them varied together; the radio's wake-up floor above is the
# model's other assumption.

# %% tags=["hide-input"]
ch.robustness_saved()

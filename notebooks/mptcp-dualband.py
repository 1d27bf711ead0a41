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
#
# The figures, tables and claims that need one device are made on the
# reference device, {glue:text}`ref_device`: the reader chooses it in
# `params.yaml` (`reference_device`, any of the captured devices) and the
# whole chapter follows.
#
# How the capture was made and which runs were set aside, the CPU sources, the power model,
# the guideline's encoding and the model's sensitivity to a wake-up floor: {doc}`mptcp-dualband-methods`.

# %% tags=["parameters"]
study = "mptcp-dualband"

# %% tags=["remove-cell"]
from mobitrace.studies.mptcp_dualband.chapter import Chapter

ch = Chapter.from_parameters(globals())

# %% tags=["remove-cell"]
ch.load_runs()
ch.captures()
ch.set_aside()

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

# %% tags=["hide-input"]
ch.fig1()

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

# %% tags=["hide-input"]
ch.fig2_cdf()

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
# (mptcp-dualband-power)=
# ## Figure 3 analog: modeled power per direction
#
# How the power is modeled: {doc}`mptcp-dualband-methods`.

# %% tags=["hide-input"]
ch.power()

# %% [markdown]
# Modeled uplink power is {glue:text}`ul_excess`% {glue:text}`ul_excess_dir`
# the downlink's (95% t interval of the log ratio over runs: {glue:text}`ul_excess_ci`%; the
# paper measured {glue:text}`p_ul_excess`%, "mainly due to the very high Tx power consumption of
# the 802.11ac radio").

# %% [markdown]
# (mptcp-dualband-fig4)=
# ## Figure 4: throughput and energy per bit against the packet ratio, backlogged
#
# The striping sender, ratios 0:100 to 100:0 in steps of 10 plus the paper's
# 73:27, 66:34, 83:17 (x axis: % of packets on path a). Throughput is
# measured; nJ/bit is modeled.

# %% tags=["hide-input"]
ch.backlogged_sweep()

# %% tags=["hide-input"]
ch.ratios_vs_paper()

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

# %% [markdown]
# (mptcp-dualband-fig5-7)=
# ## Figures 5 to 7: demands of 1750, 1500/1400 and 500 Mbps

# %% tags=["hide-input"]
ch.demand_sweeps()

# %% tags=["remove-cell"]
ch.cpu_sources()
ch.optima_compared()
ch.floor_sensitivity()

# %% [markdown]
# (mptcp-dualband-guideline)=
# ## The Figure 9 guideline against exhaustive search
#
# How the guideline is encoded: {doc}`mptcp-dualband-methods`.

# %% tags=["hide-input"]
ch.guideline()

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
# (mptcp-dualband-backup)=
# ## Figure 8: MPTCP backup mode vs a 0-packet ratio
#
# Downlink, paced demands: MPTCP with the other path's subflow in backup mode
# (the phone's endpoint flagged `backup`) against the striping sender with all
# packets on one path. The table shows the bytes the backup path carried
# (measured) and the modeled receive power of both.

# %% tags=["hide-input"]
ch.backup()

# %% [markdown]
# In backup mode the backup path carried at most
# {glue:text}`backup_leak_max` Mbps, so the two approaches cost the same
# under the model; on the phone the paper also found them very similar.

# %% [markdown]
# (mptcp-dualband-claims)=
# ## Claims

# %% tags=["hide-input"]
ch.claims()

# %% tags=["remove-cell"]
ch.metrics()

# %% [markdown]
# {glue:text}`claims_tally` The throughput-optimal ratios, the MPTCP sums, the
# throughput gains of the right ratios and the median of the CDF follow from
# the path rates our shaping sets to the paper's; the energy-optimal ratios,
# the energy costs, the uplink power and backup mode follow from the linear
# power model with radio idle 0 over the shaped paths and the grid of ratios
# (90:10 is simply its largest two-path ratio, 83:17 the shaped 1450/1750).
# They are counted apart: they test the testbed and the model, not the paper.
# The GRO gain is *testbed-bound*: htb caps the path below the rate at which
# a CPU-bound receiver would gain. Verdicts on modeled values say whether the stated model, fed
# with this host's measurements, agrees with the paper; they say nothing about
# a phone's radios, which were not measured here.
#
# {glue:text}`robustness_text`

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
# On {glue:text}`ref_device`, striping downlink packets
# {glue:text}`dl_tput_opt`:{glue:text}`dl_tput_opt_rest` over the two paths
# gave, against path a alone, {glue:text}`dl_tput_gain_phrase`
# ({glue:text}`dl_tput_gain_ci`) at {glue:text}`dl_energy_cost_phrase`
# ({glue:text}`dl_energy_cost_ci`); the paper found
# {glue:text}`p_dl_gain`% more throughput at {glue:text}`p_dl_cost`% more
# energy per bit.
#
# Khan et al. (WiNTECH'21) split a phone's MPTCP packets between an
# 802.11ad and an 802.11ac radio by a fixed ratio and asked which ratio
# maximizes throughput and which minimizes energy per bit. Here two veth
# paths shaped with `tc htb` stand in for the radios (path **a** for
# 802.11ad at {glue:text}`rate_dl_a`/{glue:text}`rate_ul_a` Mbps down/up,
# **b** for 802.11ac at {glue:text}`rate_dl_b`/{glue:text}`rate_ul_b`).
# Throughput is **measured**; power and nJ/bit are **modeled** from the
# paper's radio powers and measured CPU time: no radio was measured.
#
# The figures are those of the reference device, {glue:text}`ref_device`
# (params.yaml `reference_device`: {glue:text}`ref_reason`);
# {glue:text}`devices_text` has its own page, linked from the
# {ref}`comparison <mptcp-dualband-devices>`. Capture, power model, run
# conditions and detail tables: {doc}`mptcp-dualband-methods`.

# %% tags=["parameters"]
study = "mptcp-dualband"

# %% tags=["remove-cell"]
from mobitrace.studies.mptcp_dualband.chapter import Chapter

ch = Chapter.from_parameters(globals())

# %% tags=["remove-cell"]
ch.capture()

# %% [markdown]
# (mptcp-dualband-fig1)=
# ## Figure 1: MPTCP throughput per path and in total
#
# Backlogged MPTCP (one subflow per path, GRO on) against the sum of the two
# paths' rates (the paper expects {glue:text}`p_expected_dl` and
# {glue:text}`p_expected_ul` Mbps).

# %% tags=["hide-input"]
ch.fig1()

# %% [markdown]
# Downlink MPTCP reached {glue:text}`fig1_downlink_total` Mbps
# ({glue:text}`fig1_downlink_pct`% of the sum of the path rates, its {glue:text}`ci_pct:.0f`% CI
# {glue:text}`fig1_downlink_vs_sum` the sum), uplink
# {glue:text}`fig1_uplink_total` Mbps ({glue:text}`fig1_uplink_pct`%,
# {glue:text}`fig1_uplink_vs_sum` the sum). GRO on against off on path b
# gave {glue:text}`gro_gain` ({glue:text}`gro_gain_ci`; the
# throughput CDFs of Figure 2 are on the device pages): the receiver used a
# median {glue:text}`phone_core_pct`% of one core, so here the CPU, which
# the paper's GRO and SoftIRQ fixes relieved, does not limit throughput.

# %% tags=["remove-cell"]
ch.fig1_table()
ch.fig2_cdf()

# %% tags=["remove-cell"]
ch.model_inputs()

# %% [markdown]
# (mptcp-dualband-fig4-7)=
# ## Figures 4 to 7: energy per bit against the packet ratio
#
# Modeled uplink power is {glue:text}`ul_excess`%
# {glue:text}`ul_excess_dir` the downlink's ({glue:text}`ci_pct:.0f`% CI
# {glue:text}`ul_excess_ci`%; the paper: {glue:text}`p_ul_excess`% above).
# Backlogged, the throughput-optimal ratio is {glue:text}`dl_tput_opt` % on
# path a downlink and {glue:text}`ul_tput_opt` % uplink; the energy-optimal
# two-path ratio {glue:text}`dl_energy_opt_both` % and
# {glue:text}`ul_energy_opt_both` %. Uplink, 70:30 against 90:10 gives
# {glue:text}`ul_tput_gain_phrase` at {glue:text}`ul_energy_cost_phrase`
# (paper: {glue:text}`p_ul_gain`% at {glue:text}`p_ul_cost`% more).

# %% tags=["hide-input"]
ch.sweep_facets()

# %% tags=["remove-cell"]
ch.optima()
ch.optima_compared()
ch.guideline()
ch.floor_sensitivity()
ch.backup()
ch.device_sections()

# %% [markdown]
# The Figure 9 guideline meets the demand in {glue:text}`gl_met` of
# {glue:text}`gl_n` cases, at most {glue:text}`gl_max_excess`% above the
# searched minimum nJ/bit for paced demands. In MPTCP backup mode the backup
# path carried at most {glue:text}`backup_leak_max` Mbps, so backup mode and
# a 0-packet ratio cost the same under the model, as the paper found on the
# phone.

# %% [markdown]
# (mptcp-dualband-claims)=
# ## Claims

# %% tags=["hide-input"]
ch.claims()

# %% tags=["remove-cell"]
ch.robustness()

# %% [markdown]
# {glue:text}`claims_tally` Throughput optima, sums and gains follow from
# the shaping, energy optima and costs from the linear power model with
# radio idle 0, so they are counted apart; the GRO gain is testbed-bound
# (htb caps path b). How the modeled verdicts move with the assumed
# coefficients: {doc}`mptcp-dualband-methods`.

# %% [markdown]
# (mptcp-dualband-devices)=
# ## Every device
#
# One row per device; each links to its page, with every figure, table and
# claim of the chapter for that device.

# %% tags=["hide-input"]
ch.comparison()

# %% tags=["remove-cell"]
ch.metrics()
ch.device_pages()

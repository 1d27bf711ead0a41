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
# # Can mobile hardware keep up with gigabit wireless? (cpu-gbps)
#
# **In short:** {glue:text}`answer_text`
#
# Aggarwal et al. (MobiCom'19 poster) measured Total and SoftIRQ (SIRQ) CPU
# utilization against iperf3 TCP throughput on a Google Pixel 2 (802.11ac) and
# an ASUS ROG Phone (802.11ad) at their maximum CPU clock, and extrapolated
# linearly to rates the radios could not reach. This chapter works from the
# numbers the paper *states* (`data/published/cpu-gbps.yaml`) and checks them
# against the lines they imply; the measured chapter re-runs the experiment.
#
# ```{admonition} Provenance (measured, published, modeled)
# :class: dropdown
# **published**: the paper's numbers. **modeled**: the lines through two
# published points per phone. Nothing here is measured.
# ```

# %% tags=["parameters"]
study = "cpu-gbps"

# %% tags=["remove-cell"]
from mobitrace.studies.cpu_gbps.chapter import Chapter

ch = Chapter.from_parameters(globals())

# %% [markdown]
# ## Table 1: the phones
#
# ```{provenance} published
# :stage: analyze_cpu_gbps
#
# Table 1 as printed, from data/published/cpu-gbps.yaml.
# ```

# %% tags=["hide-input"]
ch.table1()

# %% [markdown]
# ## What the paper states about CPU versus throughput
#
# §3.1: default governor, backlogged traffic; §3.2: Figure 1's
# fixed-maximum-frequency sweeps and their linear extrapolation.
#
# ```{provenance} published
# :stage: analyze_cpu_gbps
#
# Numbers as printed; the location of each is in the last column.
# ```

# %% tags=["hide-input"]
ch.stated()

# %% [markdown]
# (cpu-gbps-lines)=
# ## The lines the extrapolations imply
#
# The paper extrapolates along a straight line, which two stated points
# (x1, y1), (x2, y2) fix (Gbps, total CPU %): slope b = (y2 − y1) / (x2 − x1),
# intercept a = y1 − b·x1, with the points set in `params.yaml`
# (`cpu-gbps.line_points`).
#
# ```{provenance} modeled
# :stage: analyze_cpu_gbps
#
# Lines through two published points per phone.
# ```

# %% tags=["hide-input"]
ch.implied_lines()

# %% [markdown]
# The Pixel 2's line rises {glue:text}`pixel_2_slope:.1f` percentage points of
# CPU per Gbps, the ROG Phone's {glue:text}`rog_phone_slope:.2f`
# ({glue:text}`slope_ratio:.1f` {glue:text}`slope_ratio_word` CPU per bit); the intercepts,
# {glue:text}`pixel_2_intercept:.1f`% and
# {glue:text}`rog_phone_intercept:.1f`%, are what the lines give at zero
# throughput.

# %% [markdown]
# ```{provenance} published, modeled
# :stage: analyze_cpu_gbps
#
# Points as published (filled: they define the line; open: checked against it; arrow: the paper states an upper bound). Lines modeled through the filled points.
# ```

# %% tags=["hide-input"]
ch.implied_lines_figure()

# %% [markdown]
# (cpu-gbps-gro-eas)=
# ## GRO, SoftIRQ affinity and EAS (§3.3, §4.1, Table 2)
#
# With GRO off the ROG Phone's throughput falls; moving SoftIRQ from a LITTLE
# core (CPU1) to a big one (CPU5) recovers much of it; the Energy Aware
# Scheduler (on when discharging) changes it again.
#
# ```{provenance} published
# :stage: analyze_cpu_gbps
#
# Table 2 as printed, from data/published/cpu-gbps.yaml.
# ```

# %% tags=["hide-input"]
ch.table2()

# %% [markdown]
# ```{provenance} published
# :stage: analyze_cpu_gbps
#
# Arithmetic on published numbers.
# ```

# %% tags=["hide-input"]
ch.derived_ratios()

# %% [markdown]
# The §3.3.2 "4x gain" is {glue:text}`affinity_gain:.2f`x by the paper's own
# numbers; with GRO off the throughput keeps
# {glue:text}`gro_penalty:.0%` of its GRO-on value; "drops to almost half"
# (LITTLE core) is a ratio of {glue:text}`little_ratio:.2f`; the big core's
# "drop of ~400 Mbps" is {glue:text}`big_drop:.0f` Mbps.
#
# (cpu-gbps-battery)=
# ## Battery drain (§4.2)
#
# {glue:text}`battery_minutes:.0f`-minute transfers drained
# {glue:text}`battery_drop_low:.0f`-{glue:text}`battery_drop_high:.0f`% of a
# full battery: with Table 1's capacity, a bound on the mean current (no
# voltage is given, so no energy).
#
# ```{provenance} published
# :stage: analyze_cpu_gbps
#
# Arithmetic on published numbers (Table 1 capacity, §4.2 drop and rates).
# ```

# %% tags=["hide-input"]
ch.battery()

# %% [markdown]
# (cpu-gbps-claims)=
# ## Claims
#
# Each claim checked against the implied lines or the paper's other numbers:
# a bound must hold; a plain value agree within
# {glue:text}`rel_tol_equal:.0%`, a "~" value within
# {glue:text}`rel_tol_approx:.0%` (`params.yaml`). Figure 1's curves are
# addressed by the measured chapter.
#
# ```{provenance} published, modeled
# :stage: analyze_cpu_gbps
#
# Paper values as published; artifact values from the implied lines (modeled) or from the paper's other numbers (published), as the basis column says.
# ```

# %% tags=["hide-input"]
ch.claims()

# %% tags=["remove-cell"]
ch.metrics()

# %% [markdown]
# {glue:text}`claims_tally` Every checkable claim here is the paper's own
# arithmetic, without an interval: each is decided on its value.

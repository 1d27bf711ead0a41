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
# # Transfer tuning: energy and speed (transfer-tuning)
#
# {glue:text}`opening`
#
# Guner & Kosar fetched three datasets over HTTP to phones, measuring
# throughput and the *dynamic energy per 100 MB* (their eq. 2) while turning
# three knobs: **concurrency** (files at once), **parallelism** (streams per
# file) and the **I/O request size**. This chapter re-runs it with the
# capture kit (nginx, a client with those knobs, a shaped link with an
# emulated round-trip time). Throughput is **measured**; energy is
# **modeled** from the measured CPU time and bytes (no power meter on the
# host; a capture with a power log is integrated as measured instead).

# %% tags=["parameters"]
study = "transfer-tuning"

# %% tags=["remove-cell"]
from mobitrace.studies.transfer_tuning.chapter import Chapter

ch = Chapter.from_parameters(globals()).setup()  # runs' energy
ch.datasets()  # tables/datasets.csv (methods page)
ch.captures()  # tables/captures.csv (methods page)
ch.power_model()  # tables/power_model.csv (methods page)

# %% [markdown]
# This page shows the reference device, {glue:text}`ref_device`
# ({glue:text}`ref_why`; `reference_device` in `params.yaml` chooses it), and
# one row per device in the [comparison](transfer-tuning-devices) below; each
# device has a page with every figure, table and claim. The testbed, the run
# conditions of each capture, the power model and the energy functions are on
# the {doc}`methods page <transfer-tuning-methods>`. Runs the capture's idle
# gate flagged (load outside the experiment above its limit) are left out:
# {glue:text}`n_left_out` of {glue:text}`n_runs`.

# %% [markdown]
# (transfer-tuning-sweeps)=
# ## One knob at a time (Figure 2 analog)

# %% tags=["hide-input"]
ch.sweeps()  # tables/sweep_<knob>.csv, Figure 2 per device

# %% tags=["hide-input"]
ch.gains()  # tables/ratios_ci.csv, tables/gains_vs_paper.csv, a ratio figure per device
ch.cpu_time()  # tables/cpu_concurrency.csv (device pages)

# %% [markdown]
# Concurrency 1 to {glue:text}`cc_top` {glue:text}`cc_word` throughput by
# {glue:text}`cc_html_xfold:.1f` (html), {glue:text}`cc_image_xfold:.1f`
# (image) and {glue:text}`cc_video_xfold:.1f` (video), against the paper's
# {glue:text}`p_cc_html_xfold:g`, {glue:text}`p_cc_image_xfold:g` and
# {glue:text}`p_cc_video_xfold:g`; the {glue:text}`energy_kind` energy per
# 100 MB {glue:text}`cc_saving_word` by {glue:text}`cc_html_saving:.0f`%,
# {glue:text}`cc_image_saving:.0f`% and {glue:text}`cc_video_saving:.0f`%
# (paper: {glue:text}`p_cc_html_saving:g`, {glue:text}`p_cc_image_saving:g`
# and {glue:text}`p_cc_video_saving:g`%). The paper's ordering (the gain is
# largest for the smallest files, dominated by request round trips)
# {glue:text}`order_word` here. Parallelism 8 changed html throughput by
# {glue:text}`p8_html_xfold:.2f`x and image by {glue:text}`p8_image_xfold:.2f`x
# (the paper: a reduction for both); for video the best parallelism
# ({glue:text}`p_video_best`) gave {glue:text}`p_video_xfold:.2f`x (paper
# {glue:text}`p_p_video_xfold:g`x). Raising the I/O size from {glue:text}`io_sizes`
# changed video throughput by {glue:text}`io_video_16_over_1:.2f`x.

# %% tags=["remove-cell"]
ch.grid()  # tables/grid.csv, Figure 7 per device (device pages)
ch.power_over_time()  # Figures 9 and 8, tables/tail_<device>.csv (device pages)

# %% [markdown]
# (transfer-tuning-grid)=
# ## Combined knobs (Figure 7 analog)
#
# Over the concurrency x parallelism grid the largest saving is
# {glue:text}`grid_best_saving:.0f`% ({glue:text}`grid_best_where`) and the
# largest throughput gain {glue:text}`grid_best_xfold:.1f`x; the paper reports
# up to {glue:text}`p_combined_saving:g`% and {glue:text}`p_combined_xfold:g`x.
#
# (transfer-tuning-power-time)=
# ## Power over time and tail energy (Figures 8 and 9 analogs)
#
# The modeled radio has no tail state (a phone's radio stays in a high-power
# state for a while after the last byte), so the modeled tails are short (at
# most {glue:text}`tail_max_s:.2f` s) and the paper's tail findings cannot be
# checked on the host; with a phone's power log the same functions measure
# them. Each device's grid, power traces and tail table are on its page.
#
# (transfer-tuning-devices)=
# ## Every device

# %% tags=["hide-input"]
ch.comparison()  # tables/devices.csv: one row per device, linking its page

# %% [markdown]
# (transfer-tuning-claims)=
# ## Claims

# %% tags=["hide-input"]
ch.claims()  # claims.csv, the reference device's claims and robustness, the key findings

# %% tags=["remove-cell"]
metrics = ch.metrics()  # metrics.json
ch.device_pages()  # book/chapters/transfer-tuning-devices/<device>.md

# %% [markdown]
# {glue:text}`claims_tally` A gain or saving is *testbed-bound* where this
# link cannot reach the paper's magnitude (the reason is in each claim's
# basis); where it can, the verdict rule decides. {glue:text}`robustness_text`

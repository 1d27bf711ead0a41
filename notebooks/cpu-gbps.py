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
# Aggarwal et al. (MobiCom'19 poster) measured Total and SoftIRQ (SIRQ) CPU
# utilization against iperf3 TCP throughput on a Google Pixel 2 (802.11ac) and
# an ASUS ROG Phone (802.11ad), with the CPU clock fixed at its maximum, and
# extrapolated linearly to rates the radios could not reach.
#
# The figures' data are not in the paper's text, so this chapter works from the
# numbers the paper *states*: every value below comes from
# `data/published/cpu-gbps.yaml`, where each number carries its unit and its
# section or table. From two stated points per phone it re-derives the line the
# paper's extrapolations imply, checks the paper's other statements against it
# and against each other, and ends with a claims table.
#
# ```{admonition} Provenance
# **published**: numbers transcribed from the paper (location given per value).
# **modeled**: the implied lines, computed from two published points per phone;
# they are the paper's extrapolation model, not a fit to measured data.
# Nothing in this chapter is measured.
# ```

# %% tags=["parameters"]
study = "cpu-gbps"
published_dir = "data/interim/published/cpu-gbps"
results_dir = "data/results/cpu-gbps"
target_rates_gbps = [1.6, 4.0, 12.8]
cpu_threshold_pct = 50
line_points = {
    "Pixel 2": ["pixel2_tput_at_50", "pixel2_cpu_at_4"],
    "ROG Phone": ["rog_cpu_at_4", "rog_tput_at_50"],
}
rel_tol_equal = 0.05
rel_tol_approx = 0.10

# %% tags=["hide-input"]
import json
from pathlib import Path

import pandas as pd

from mobitrace.book.chapter import ChapterOutputs, paper_text, site_href
from mobitrace.core import claims as cl
from mobitrace.core.published import Values
from mobitrace.studies.cpu_gbps import analysis as an

results = Path(results_dir)
out = ChapterOutputs(results, "analyze_cpu_gbps")
put, save_table, table = out.put, out.save_table, out.table
v = Values(published_dir)
text_tables = pd.read_parquet(Path(published_dir) / "text_tables.parquet")

# %% [markdown]
# ## Table 1: the phones
#
# ```{provenance} published
# :stage: analyze_cpu_gbps
#
# Table 1 as printed, from data/published/cpu-gbps.yaml.
# ```

# %% tags=["hide-input"]
table(an.text_table(text_tables, "table1"), "table1_phones", "Table 1: Phone Specifications")

# %% [markdown]
# ## What the paper states about CPU versus throughput
#
# The §3.1 baselines were measured with the default CPU governor under
# backlogged traffic; the §3.2 statements come from the fixed-maximum-frequency
# sweeps of Figure 1 and their linear extrapolation.
#
# ```{provenance} published
# :stage: analyze_cpu_gbps
#
# Numbers as printed; the location of each is in the last column.
# ```

# %% tags=["hide-input"]
stated = an.stated_values(v.frame)
table(stated, "stated_cpu_throughput", "CPU and throughput as the paper states them",
      shown=stated.rename(columns={"throughput_gbps": "throughput (Gbps)"}))

# %% [markdown]
# (cpu-gbps-lines)=
# ## The lines the extrapolations imply
#
# The paper says CPU utilization grows linearly with throughput and
# extrapolates along that line. Two stated points of a line fix it: with
# points (x1, y1) and (x2, y2) (throughput in Gbps, total CPU in %), the
# slope is b = (y2 − y1) / (x2 − x1) and the intercept a = y1 − b·x1. The
# points used for each phone are set in `params.yaml` (`cpu-gbps.line_points`).
#
# ```{provenance} modeled
# :stage: analyze_cpu_gbps
#
# Lines through two published points per phone.
# ```

# %% tags=["hide-input"]
lines, implied, glued = an.implied_lines(v, line_points, target_rates_gbps, cpu_threshold_pct)
save_table(implied, "implied_lines")
for name, value in glued.items():
    put(name, value)
out.show(implied.set_index("device").T.rename_axis("quantity"), "The lines implied by two stated points per phone",
         index=True, csv_href=out.href("implied_lines"))

# %% [markdown]
# The Pixel 2's line rises {glue:text}`pixel_2_slope:.1f` percentage points of
# CPU per Gbps, the ROG Phone's {glue:text}`rog_phone_slope:.2f`: the ROG
# Phone's network processing costs about
# {glue:text}`slope_ratio:.1f` times less CPU per bit. Both lines start from
# an intercept of a few percent ({glue:text}`pixel_2_intercept:.1f`% and
# {glue:text}`rog_phone_intercept:.1f`%), the utilization the line attributes
# to zero throughput.

# %% [markdown]
# ## Figure: implied CPU-vs-throughput lines with the stated points
#
# ```{provenance} published, modeled
# :stage: analyze_cpu_gbps
#
# Points as published (filled: they define the line; open: checked against it; arrow: the paper states an upper bound). Lines modeled through the filled points.
# ```

# %% tags=["hide-input"]
out.figure(an.lines_figure(lines, an.line_points_frame(v.frame, line_points), target_rates_gbps, cpu_threshold_pct),
           "implied_lines",
           alt="Two straight lines of total CPU utilization (%) against throughput (Gbps), one per phone, "
               "with the paper's stated points; the Pixel 2's line is the steeper.",
           caption="The lines the paper's extrapolations imply (modeled, through the round points) with the "
                   "points it states (published). Look at how far each line is from 100% CPU at the dotted "
                   "target rates, and whether the crosses lie on the lines.")

# %% [markdown]
# (cpu-gbps-gro-eas)=
# ## GRO, SoftIRQ affinity and EAS (§3.3, §4.1, Table 2)
#
# With GRO off the ROG Phone's throughput falls; moving SoftIRQ processing from
# a LITTLE core (CPU1) to a big core (CPU5) recovers much of it, and the Energy
# Aware Scheduler (on when discharging, off when charging) changes it again.
#
# ```{provenance} published
# :stage: analyze_cpu_gbps
#
# Table 2 as printed, from data/published/cpu-gbps.yaml.
# ```

# %% tags=["hide-input"]
table(an.table2(v), "table2_gro_off_mbps", "Table 2: Throughput (Mbps) with GRO off")

# %% [markdown]
# Ratios the prose states, re-derived from Table 2 and §3.3.
#
# ```{provenance} published
# :stage: analyze_cpu_gbps
#
# Arithmetic on published numbers.
# ```

# %% tags=["hide-input"]
derived_table, derived = an.derived_ratios(v)
table(derived_table, "derived_ratios", "Ratios the prose states, re-derived")
for name, value in [*derived.items(), ("battery_minutes", v("battery_test_duration")),
                    ("battery_drop_low", v("battery_drop_low")), ("battery_drop_high", v("battery_drop_high"))]:
    put(name, value)

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
# The paper ran {glue:text}`battery_minutes:.0f`-minute transfers from a full
# battery and saw a {glue:text}`battery_drop_low:.0f`-{glue:text}`battery_drop_high:.0f`%
# drop. With Table 1's capacity that bounds the average battery current; the
# energy cannot be derived because the paper gives no battery voltage.
#
# ```{provenance} published
# :stage: analyze_cpu_gbps
#
# Arithmetic on published numbers (Table 1 capacity, §4.2 drop and rates).
# ```

# %% tags=["hide-input"]
table(an.battery_drain(v), "battery_drain", "What the battery drop bounds")
put("rel_tol_equal", rel_tol_equal)
put("rel_tol_approx", rel_tol_approx)

# %% [markdown]
# (cpu-gbps-claims)=
# ## Claims
#
# Each claim of the paper this chapter can address, checked against the
# implied lines or against the paper's other numbers. Tolerances: a bound must
# hold; a value printed plainly must agree within
# {glue:text}`rel_tol_equal:.0%`, one printed with "~" within
# {glue:text}`rel_tol_approx:.0%` (both set in `params.yaml`). Claims about
# Figure 1's curves are not checkable from the text: the measured chapter
# (capture kit) addresses them on real hosts.
#
# ```{provenance} published, modeled
# :stage: analyze_cpu_gbps
#
# Paper values as published; artifact values from the implied lines (modeled) or from the paper's other numbers (published), as the basis column says.
# ```

# %% tags=["hide-input"]
claims_table = an.chapter_claims("cpu-gbps", v, lines, derived, rel_tol_equal, rel_tol_approx)
cl.write_claims(claims_table, results / "claims.csv")
shown = claims_table.assign(paper=[paper_text(r, p) for r, p in
                                   zip(claims_table["paper_relation"], claims_table["paper_value"])])
out.show(shown[["claim", "location", "paper", "artifact_value", "unit", "tolerance", "verdict"]]
         .rename(columns={"artifact_value": "artifact"}), "Claims of the paper and their verdicts",
         csv_href=site_href(results / "claims.csv"))
out.findings(claims_table, headline=["pixel2_1p6gbps_under_50pct", "rog_1p7gbps_under_15pct",
                                     "affinity_4x", "eas_big_drop_400"])

# %% tags=["hide-input"]
counts = an.verdict_counts(claims_table)
for verdict_name, n in counts.items():
    put(f"n_{verdict_name.replace(' ', '_')}", n)
metrics = an.chapter_metrics(lines, cpu_threshold_pct, target_rates_gbps, derived["affinity_gain"], counts)
_ = (results / "metrics.json").write_text(json.dumps(metrics, indent=2, sort_keys=True) + "\n")

# %% [markdown]
# Of the chapter's claims, {glue:text}`n_reproduced` are reproduced,
# {glue:text}`n_not_reproduced` are not, and {glue:text}`n_not_checkable` cannot
# be checked from the paper's text.

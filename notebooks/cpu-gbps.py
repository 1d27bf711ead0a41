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

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from mobitrace.core import claims as cl
from mobitrace.book.chapter import ChapterOutputs, paper_text, site_href
from mobitrace.book.figures import legend_outside
from mobitrace.studies.cpu_gbps.analysis import Line
from mobitrace.core.published import value_of

results = Path(results_dir)
out = ChapterOutputs(results, "analyze_cpu_gbps")
tables_dir, figures_dir = out.tables_dir, out.figures_dir
put, save_table, table = out.put, out.save_table, out.table
values = pd.read_parquet(Path(published_dir) / "values.parquet")
text_tables = pd.read_parquet(Path(published_dir) / "text_tables.parquet")


def v(value_id):
    return value_of(values, value_id)


def row_of(value_id):
    return values.loc[values["id"] == value_id].iloc[0]


# %% [markdown]
# ## Table 1: the phones
#
# ```{provenance} published
# :stage: analyze_cpu_gbps
#
# Table 1 as printed, from data/published/cpu-gbps.yaml.
# ```

# %% tags=["hide-input"]
t1 = text_tables[text_tables["table"] == "table1"]
table1 = t1.pivot(index="row", columns="column", values="text").loc[t1["row"].unique(), t1["column"].unique()]
table1.columns.name, table1.index.name = None, None
table(table1.reset_index(names=""), "table1_phones", "Table 1: Phone Specifications")

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
stated = values[values["location"].isin(["§3.1", "§3.2", "§1 and Abstract"])
                & values["unit"].isin(["%", "Mbps", "Gbps"])]
stated = stated[["device", "quantity", "throughput_gbps", "relation", "value", "unit", "location"]]
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
lines, line_rows = {}, []
for device, (id1, id2) in line_points.items():
    p1, p2 = row_of(id1), row_of(id2)
    line = Line.through((p1["throughput_gbps"], p1["value"]), (p2["throughput_gbps"], p2["value"]))
    lines[device] = line
    row = {"device": device, "defined_by": f"{id1}, {id2}",
           "slope_pct_per_gbps": line.slope, "intercept_pct": line.intercept,
           f"gbps_at_{cpu_threshold_pct:g}pct_cpu": line.inverse(cpu_threshold_pct)}
    for rate in target_rates_gbps:
        row[f"cpu_pct_at_{rate:g}gbps"] = line.predict(rate)
    beyond = [f"{r:g}" for r in target_rates_gbps if line.predict(r) > 100]
    row["note"] = f"line passes 100% CPU before {', '.join(beyond)} Gbps" if beyond else ""
    line_rows.append(row)
    key = device.lower().replace(" ", "_")
    put(f"{key}_slope", line.slope)
    put(f"{key}_intercept", line.intercept)
implied = save_table(pd.DataFrame(line_rows), "implied_lines")
put("slope_ratio", lines["Pixel 2"].slope / lines["ROG Phone"].slope)
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
x = np.linspace(0, max(target_rates_gbps) * 1.05, 200)
line_frame = pd.concat([pd.DataFrame({"device": d, "throughput_gbps": x, "cpu_pct": ln.predict(x)})
                        for d, ln in lines.items()])
points = values[values["device"].isin(list(lines)) & values["throughput_gbps"].notna()
                & (values["quantity"] == "total CPU at throughput")].copy()
points["role"] = ["defines the line" if i in line_points[d] else "checked against it"
                  for i, d in zip(points["id"], points["device"])]
fig, ax = plt.subplots()
sns.lineplot(data=line_frame, x="throughput_gbps", y="cpu_pct", hue="device", ax=ax)
sns.scatterplot(data=points, x="throughput_gbps", y="value", hue="device", style="role", s=70, ax=ax,
                markers={"defines the line": "o", "checked against it": "X"}, legend="brief")
ax.axhline(cpu_threshold_pct, color="grey", lw=0.8, ls="--")
for rate in target_rates_gbps:
    ax.axvline(rate, color="grey", lw=0.5, ls=":")
ax.set(xlabel="TCP downlink throughput (Gbps)", ylabel="Total CPU utilization (%)", xlim=(0, x.max()), ylim=(0, 100))
legend_outside(ax)
out.figure(fig, "implied_lines",
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
table2_ids = {("Discharging", "big Core"): "t2_big_discharging",
              ("Discharging", "LITTLE Core"): "t2_little_discharging",
              ("Charging", "big Core"): "t2_big_charging",
              ("Charging", "LITTLE Core"): "t2_little_charging"}
table2 = pd.Series({k: v(i) for k, i in table2_ids.items()}).unstack()
table2 = table2.loc[["Discharging", "Charging"], ["big Core", "LITTLE Core"]]
table(table2.reset_index(names="state"), "table2_gro_off_mbps", "Table 2: Throughput (Mbps) with GRO off")

# %% [markdown]
# Ratios the prose states, re-derived from Table 2 and §3.3.
#
# ```{provenance} published
# :stage: analyze_cpu_gbps
#
# Arithmetic on published numbers.
# ```

# %% tags=["hide-input"]
affinity_gain = v("rog_sirq_big_tput") * 1000 / v("rog_gro_off_tput")
little_ratio = v("t2_little_discharging") / v("t2_little_charging")
big_drop = v("t2_big_charging") - v("t2_big_discharging")
gro_penalty = v("rog_gro_off_tput") / (v("rog_gro_on_tput") * 1000)
derived = table(pd.DataFrame([
    {"quantity": "SIRQ LITTLE->big gain (1.23 Gbps / 366 Mbps)", "value": affinity_gain, "unit": "x"},
    {"quantity": "GRO-off / GRO-on throughput (366 Mbps / 1.6 Gbps)", "value": gro_penalty, "unit": "ratio"},
    {"quantity": "LITTLE core: discharging / charging (Table 2)", "value": little_ratio, "unit": "ratio"},
    {"quantity": "big core: charging - discharging (Table 2)", "value": big_drop, "unit": "Mbps"},
]), "derived_ratios", "Ratios the prose states, re-derived")
for name, val in [("affinity_gain", affinity_gain), ("little_ratio", little_ratio),
                  ("big_drop", big_drop), ("gro_penalty", gro_penalty),
                  ("battery_minutes", v("battery_test_duration")),
                  ("battery_drop_low", v("battery_drop_low")), ("battery_drop_high", v("battery_drop_high"))]:
    put(name, val)

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
hours = v("battery_test_duration") / 60
capacity = v("rog_battery")
battery = table(pd.DataFrame([
    {"quantity": "charge drawn, low end", "value": capacity * v("battery_drop_low") / 100, "unit": "mAh"},
    {"quantity": "charge drawn, high end", "value": capacity * v("battery_drop_high") / 100, "unit": "mAh"},
    {"quantity": "average current, low end", "value": capacity * v("battery_drop_low") / 100 / hours, "unit": "mA"},
    {"quantity": "average current, high end", "value": capacity * v("battery_drop_high") / 100 / hours, "unit": "mA"},
    {"quantity": "data moved downlink at 1.7 Gbps", "value": v("battery_dl_tput") * 60 * v("battery_test_duration") / 8, "unit": "GB"},
    {"quantity": "data moved uplink at 1.4 Gbps", "value": v("battery_ul_tput") * 60 * v("battery_test_duration") / 8, "unit": "GB"},
]), "battery_drain", "What the battery drop bounds")
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
rows = []


def claim(claim_id, text, value_id, artifact, basis, provenance, anchor, relation=None, paper=None,
          unit=None, rel_tol=None, abs_tol=0.0, location=None):
    """One claims-table row; `anchor` is the label of the section deriving it."""
    rec = row_of(value_id) if value_id else None
    relation = relation or (rec["relation"] if rec is not None else None)
    paper = paper if paper is not None else (rec["value"] if rec is not None else None)
    unit = unit or (rec["unit"] if rec is not None else "")
    if rel_tol is None:
        rel_tol = rel_tol_approx if relation == "~" else rel_tol_equal
    checkable = artifact is not None and relation is not None
    rows.append({
        "study": study, "claim_id": claim_id, "claim": text,
        "location": rec["location"] if rec is not None else location,
        "paper_relation": relation, "paper_value": paper, "artifact_value": artifact,
        "unit": unit,
        "tolerance": cl.tolerance_text(relation, rel_tol, abs_tol) if checkable else "n/a",
        "verdict": cl.verdict(relation, paper, artifact, rel_tol, abs_tol) if checkable else cl.NOT_CHECKABLE,
        "basis": basis, "provenance": provenance, "section": anchor,
    })


on_line = "implied line (modeled from two published points)"
claim("pixel2_1p6gbps_under_50pct", "Pixel 2 supports 1.6 Gbps with less than 50% CPU",
      "pixel2_cpu_at_1p6", lines["Pixel 2"].predict(1.6), on_line, "modeled", "cpu-gbps-lines")
claim("rog_1p7gbps_under_15pct", "ROG Phone's CPU stays below 15% at 1.7 Gbps",
      "rog_cpu_at_1p7", lines["ROG Phone"].predict(1.7), on_line, "modeled", "cpu-gbps-lines")
claim("affinity_4x", "Moving SIRQ from a LITTLE to a big core gives a 4x throughput gain (GRO off)",
      "rog_affinity_gain", affinity_gain, "1.23 Gbps (§3.3.2) / 366 Mbps (§3.3.1)", "published", "cpu-gbps-gro-eas")
claim("gro_off_366", "GRO off: 366 Mbps (§3.3.1) is Table 2's LITTLE-core discharging value",
      "rog_gro_off_tput", v("t2_little_discharging"), "Table 2", "published", "cpu-gbps-gro-eas")
claim("gro_on_1p6_vs_1p7", "GRO-on throughput: 1.6 Gbps (§3.3.1) and 1.7 Gbps (§3.3.2) state the same quantity",
      "rog_gro_on_tput", v("rog_gro_on_tput_s332"), "§3.3.2 value; both printed to 0.1 Gbps", "published",
      "cpu-gbps-gro-eas", abs_tol=0.1, rel_tol=0.0)
claim("sirq_big_1p23_vs_table2", "GRO off, SIRQ on a big core: 1.23 Gbps (§3.3.2) vs Table 2's big-core discharging value",
      "rog_sirq_big_tput", v("t2_big_discharging") / 1000, "Table 2", "published", "cpu-gbps-gro-eas")
claim("eas_little_charging_620", "LITTLE core, charging: ~620 Mbps", "s41_little_charging",
      v("t2_little_charging"), "Table 2", "published", "cpu-gbps-gro-eas")
claim("eas_little_almost_half", "LITTLE core: discharging throughput is almost half of charging",
      None, little_ratio, "Table 2 ratio", "published", "cpu-gbps-gro-eas", relation="~", paper=0.5, unit="ratio",
      location="§4.1")
claim("eas_big_charging_1p56", "big core, charging: 1.56 Gbps", "s41_big_charging",
      v("t2_big_charging") / 1000, "Table 2", "published", "cpu-gbps-gro-eas")
claim("eas_big_discharging_1p1", "big core, discharging: 1.1 Gbps", "s41_big_discharging",
      v("t2_big_discharging") / 1000, "Table 2", "published", "cpu-gbps-gro-eas")
claim("eas_big_drop_400", "big core: discharging costs ~400 Mbps", "s41_big_drop",
      big_drop, "Table 2 difference", "published", "cpu-gbps-gro-eas")
for claim_id, text, section in [
    ("fig1_linear", "CPU (Total and SIRQ) grows linearly with throughput (Fig. 1a, 1b)", "§3.2"),
    ("fig1c_same_at_2p46", "ROG Phone at 2.46 GHz has almost the same CPU trend as at 2.95 GHz (Fig. 1c)", "§3.2"),
    ("little_826mhz", "ROG Phone reaches 1.7 Gbps at every big-core frequency and LITTLE-core frequencies above 826 MHz", "§3.2"),
    ("battery_not_significant", "Battery life is not significantly affected by long Gbps transfers (4-5% in 20 min)", "§4.2"),
]:
    claim(claim_id, text, None, None, "figure data or a power log needed; not in the text", "published",
          "cpu-gbps-claims", location=section)

claims_table = cl.claims_frame(rows)
cl.write_claims(claims_table, results / "claims.csv")
shown = claims_table.assign(paper=[paper_text(r, p) for r, p in
                                   zip(claims_table["paper_relation"], claims_table["paper_value"])])
out.show(shown[["claim", "location", "paper", "artifact_value", "unit", "tolerance", "verdict"]]
         .rename(columns={"artifact_value": "artifact"}), "Claims of the paper and their verdicts",
         csv_href=site_href(results / "claims.csv"))
out.findings(claims_table, headline=["pixel2_1p6gbps_under_50pct", "rog_1p7gbps_under_15pct",
                                     "affinity_4x", "eas_big_drop_400"])

# %% tags=["hide-input"]
counts = claims_table["verdict"].value_counts()
for verdict_name in cl.VERDICTS:
    put(f"n_{verdict_name.replace(' ', '_')}", int(counts.get(verdict_name, 0)))
metrics = {
    "implied_lines": {
        device: {
            "slope_pct_per_gbps": round(line.slope, 6),
            "intercept_pct": round(line.intercept, 6),
            f"gbps_at_{cpu_threshold_pct:g}pct_cpu": round(line.inverse(cpu_threshold_pct), 6),
            **{f"cpu_pct_at_{r:g}gbps": round(line.predict(r), 6) for r in target_rates_gbps},
        }
        for device, line in lines.items()
    },
    "affinity_gain_x": round(affinity_gain, 6),
    "claims": {k.replace(" ", "_"): int(counts.get(k, 0)) for k in cl.VERDICTS},
}
_ = (results / "metrics.json").write_text(json.dumps(metrics, indent=2, sort_keys=True) + "\n")

# %% [markdown]
# Of the chapter's claims, {glue:text}`n_reproduced` are reproduced,
# {glue:text}`n_not_reproduced` are not, and {glue:text}`n_not_checkable` cannot
# be checked from the paper's text.

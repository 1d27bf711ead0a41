"""A chapter's robustness analysis (mobitrace.energy.robustness) for
readers: the table, the tornado plots of the one-at-a-time values and the
sentences on them (provenance: modeled)."""

from __future__ import annotations

import math
from collections.abc import Mapping

import matplotlib.pyplot as plt
import pandas as pd

from mobitrace.book.figures import PALETTE, legend_outside
from mobitrace.core import numbers
from mobitrace.energy.robustness import FACTORS, StudyRobustness, coefficient_label, moves, summary_text


def _tornado(ax, result: dict, xlabel: str, bound: float | None = None, legend: bool = True) -> None:
    oat = result["one_at_a_time"]
    base = result["base"][0]
    span = oat.groupby("coefficient", sort=False)["value"].agg(["min", "max"])
    span = span.assign(width=span["max"] - span["min"]).sort_values("width")
    for i, name in enumerate(span.index):
        lo_val = oat[(oat["coefficient"] == name) & (oat["factor"] == min(FACTORS))]["value"].iloc[0]
        hi_val = oat[(oat["coefficient"] == name) & (oat["factor"] == max(FACTORS))]["value"].iloc[0]
        ax.barh(i, lo_val - base, left=base, color=PALETTE[0], label="×0.5" if i == 0 else None)
        ax.barh(i, hi_val - base, left=base, color=PALETTE[1], label="×1.5" if i == 0 else None)
    ax.set_yticks(range(len(span)), list(span.index))
    ax.axvline(base, color="black", lw=1.0, label="assumed coefficients")
    if bound is not None and math.isfinite(bound):
        ax.axvline(bound, color="grey", lw=1.0, ls="--", label="the paper's value")
    ax.set(xlabel=xlabel, ylabel="")
    if legend:
        ax.legend()
        legend_outside(ax)


def tornado_figure(result: dict, title: str, unit: str, bound: float | None = None):
    """Tornado plot of one claim: per coefficient a bar from its value at
    x0.5 to its value at x1.5 (widest on top), the base value as a line and
    the claim's bound (if any) dashed. Provenance: modeled."""
    n = result["one_at_a_time"]["coefficient"].nunique()
    fig, ax = plt.subplots(figsize=(7.0, 0.45 * n + 1.6))
    _tornado(ax, result, f"{title} ({unit}), modeled", bound)
    return fig


def tornado_grid(results: Mapping[str, dict], claims: pd.DataFrame):
    """One tornado panel per claim of `results` whose value moves with the
    coefficients (:func:`moves`; claims: the claims table, for each claim's
    id, unit and paper value), in the table's order, with a shared legend;
    None when no value moves. Provenance: modeled."""
    moving = [c for c in claims["claim_id"] if c in results and moves(results[c])]
    if not moving:
        return None
    names = list(next(iter(results.values()))["one_at_a_time"]["coefficient"].unique())
    results = {c: {**results[c], "one_at_a_time": results[c]["one_at_a_time"].assign(
        coefficient=lambda f: [coefficient_label(n, names) for n in f["coefficient"]])} for c in moving}
    rows = claims.set_index("claim_id").loc[moving]
    n_coef = max(r["one_at_a_time"]["coefficient"].nunique() for r in results.values())
    ncols = 2 if len(rows) > 1 else 1
    nrows = math.ceil(len(rows) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(9.0, nrows * (0.35 * n_coef + 1.3)), squeeze=False)
    for ax, (claim_id, row) in zip(axes.flat, rows.iterrows()):
        _tornado(ax, results[claim_id], f"{claim_id} ({row['unit']})", row["paper_value"], legend=False)
    for ax in axes.flat[len(rows):]:
        ax.set_visible(False)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    return fig


def robustness_shown(table: pd.DataFrame) -> pd.DataFrame:
    """The robustness table for people: the value at the assumed
    coefficients and the range over all the varied sets, in the claim's unit."""
    return pd.DataFrame({
        "claim": table["claim"],
        "value (assumed)": [numbers.with_unit(numbers.number(v), u) for v, u in zip(table["value"], table["unit"])],
        "range over the varied coefficients": [numbers.with_unit(f"{numbers.number(lo)} to {numbers.number(hi)}", u)
                                               for lo, hi, u in zip(table["lowest"], table["highest"],
                                                                    table["unit"])],
        "verdict (assumed)": table["verdict"],
        "hypercube points keeping it (%)": [numbers.number(x, decimals=0) for x in table["hypercube_kept_pct"]],
        "robustness": table["robustness"],
    })


def show(out, rob: StudyRobustness) -> None:
    """Show a chapter's robustness analysis through its ChapterOutputs
    `out`: the table robustness, its tornado figure, and the glue
    robustness_text for the prose."""
    out.put_text("robustness_text", summary_text(rob.table, rob.lhs_size, rob.coefficients))
    if not rob.results:
        return
    out.table(rob.table, "robustness", "Modeled verdicts with the assumed power coefficients varied (each at ×0.5 "
              "and ×1.5, and all together over a Latin hypercube)", shown=robustness_shown(rob.table))
    out.provenance("modeled: the chapter's claims recomputed from the measured data at each set of coefficients "
                   "(params.yaml power-models, provenance assumed; robustness section).")
    fig = tornado_grid(rob.results, rob.claims)
    if fig is None:
        return
    out.figure(fig, "robustness",
               alt="Tornado plots, one panel per modeled claim whose value moves: for each assumed coefficient a "
                   "bar from the claim's value with that coefficient halved to its value with it at 1.5 times, a "
                   "solid line at the value with the assumed coefficients and a dashed line at the paper's value.",
               caption="How far each modeled value (that moves at all) shifts when one assumed coefficient is "
                       "halved (blue) or raised by half (orange); solid line: the assumed coefficients; dashed: the "
                       "paper's value. Look for a bar that crosses the dashed line: that verdict depends on the "
                       "coefficient.")
    out.provenance("modeled from measured data at varied assumed coefficients.")

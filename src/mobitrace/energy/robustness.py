"""Robustness of verdicts that rest on assumed power coefficients.

A modeled energy is only as good as the coefficients that price it
(params.yaml `power-models`, provenance "assumed"). For one claim,
:func:`sensitivity` recomputes its value and verdict with each coefficient
at x0.5 and x1.5 of its assumed value (one at a time) and over a seeded
Latin hypercube of all of them together (scipy.stats.qmc, each factor
uniform in [0.5, 1.5]). :func:`robustness_label` turns that into the
ledger's word: "robust" when no verdict changes, else "depends on <names>"
(the coefficients whose one-at-a-time change flips it; "depends on the
coefficients jointly" when only the hypercube finds a flip).
:func:`tornado_figure` draws the one-at-a-time values (provenance: modeled).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import matplotlib.pyplot as plt
import pandas as pd
from scipy.stats import qmc

from mobitrace.book.figures import PALETTE, legend_outside

FACTORS = (0.5, 1.5)
ROBUST = "robust"
JOINTLY = "the coefficients jointly"

# evaluate(coefficients) -> (the claim's value, its verdict)
Evaluate = Callable[[Mapping[str, float]], tuple[float, str]]


def sensitivity(evaluate: Evaluate, coefficients: Mapping[str, float], lhs_size: int, seed: int,
                factors: tuple[float, float] = FACTORS) -> dict:
    """The claim's value and verdict at the assumed coefficients ("base"),
    with each coefficient scaled by each factor ("one_at_a_time": a frame of
    coefficient, factor, value, verdict) and at `lhs_size` Latin-hypercube
    points of all factors in [min(factors), max(factors)] ("hypercube":
    one row per point with the factors, value and verdict)."""
    if lhs_size < 1:
        raise ValueError(f"lhs_size must be at least 1, got {lhs_size!r}")
    names = list(coefficients)
    base_value, base_verdict = evaluate(dict(coefficients))
    rows = []
    for name in names:
        for factor in factors:
            value, verdict = evaluate({**coefficients, name: coefficients[name] * factor})
            rows.append({"coefficient": name, "factor": factor, "value": value, "verdict": verdict})
    sample = qmc.scale(qmc.LatinHypercube(d=len(names), seed=seed).random(lhs_size),
                       [min(factors)] * len(names), [max(factors)] * len(names))
    cube = []
    for point in sample:
        value, verdict = evaluate({n: coefficients[n] * f for n, f in zip(names, point)})
        cube.append({**{f"factor_{n}": f for n, f in zip(names, point)}, "value": value, "verdict": verdict})
    return {"base": (base_value, base_verdict), "one_at_a_time": pd.DataFrame(rows), "hypercube": pd.DataFrame(cube)}


def robustness_label(result: dict) -> str:
    """"robust", or "depends on <coefficients>" whose one-at-a-time change
    flips the verdict (in their given order), or "depends on the
    coefficients jointly" when only the hypercube changes it."""
    base = result["base"][1]
    oat = result["one_at_a_time"]
    flips = list(dict.fromkeys(oat.loc[oat["verdict"] != base, "coefficient"]))
    if flips:
        return "depends on " + ", ".join(flips)
    if (result["hypercube"]["verdict"] != base).any():
        return f"depends on {JOINTLY}"
    return ROBUST


def tornado_figure(result: dict, title: str, unit: str, bound: float | None = None):
    """Tornado plot of one claim: per coefficient a bar from its value at
    x0.5 to its value at x1.5 (widest on top), the base value as a line and
    the claim's bound (if any) dashed. Provenance: modeled."""
    oat = result["one_at_a_time"]
    base = result["base"][0]
    span = oat.groupby("coefficient", sort=False)["value"].agg(["min", "max"])
    span = span.assign(width=span["max"] - span["min"]).sort_values("width")
    fig, ax = plt.subplots(figsize=(7.0, 0.45 * len(span) + 1.6))
    for i, (name, r) in enumerate(span.iterrows()):
        lo_val = oat[(oat["coefficient"] == name) & (oat["factor"] == min(FACTORS))]["value"].iloc[0]
        hi_val = oat[(oat["coefficient"] == name) & (oat["factor"] == max(FACTORS))]["value"].iloc[0]
        ax.barh(i, lo_val - base, left=base, color=PALETTE[0], label="x0.5" if i == 0 else None)
        ax.barh(i, hi_val - base, left=base, color=PALETTE[1], label="x1.5" if i == 0 else None)
    ax.set_yticks(range(len(span)), list(span.index))
    ax.axvline(base, color="black", lw=1.0, label="assumed coefficients")
    if bound is not None:
        ax.axvline(bound, color="grey", lw=1.0, ls="--", label="the claim's bound")
    ax.set(xlabel=f"{title} ({unit}), modeled", ylabel="")
    ax.legend()
    legend_outside(ax)
    return fig

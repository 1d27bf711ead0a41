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

A chapter with modeled energy has one function from its power models to its
claims table, which it calls itself at the assumed coefficients;
:func:`study_robustness` calls it at every varied set (the assumed pricing
fields of :func:`assumed_coefficients`), once for all claims, and labels
the claims table; mobitrace.book.robustness shows it in a chapter.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd
from pandera.config import config_context
from scipy.stats import qmc

from mobitrace.core import claims as cl

FACTORS = (0.5, 1.5)
ROBUST = cl.ROBUST
JOINTLY = "the coefficients jointly"

# evaluate(coefficients) -> (the claim's value, its verdict)
Evaluate = Callable[[Mapping[str, float]], tuple[float, str]]


def sensitivity_many(evaluate: Callable[[Mapping[str, float]], Mapping[str, tuple[float, str]]],
                     coefficients: Mapping[str, float], lhs_size: int, seed: int,
                     factors: tuple[float, float] = FACTORS) -> dict[str, dict]:
    """:func:`sensitivity` of several claims at once: `evaluate` returns
    {claim: (value, verdict)} for one set of coefficients, so each set is
    evaluated once for every claim. Returns {claim: result}."""
    if lhs_size < 1:
        raise ValueError(f"lhs_size must be at least 1, got {lhs_size!r}")
    names = list(coefficients)
    base = evaluate(dict(coefficients))
    rows = {claim: [] for claim in base}
    for name in names:
        for factor in factors:
            for claim, (value, verdict) in evaluate({**coefficients, name: coefficients[name] * factor}).items():
                rows[claim].append({"coefficient": name, "factor": factor, "value": value, "verdict": verdict})
    sample = qmc.scale(qmc.LatinHypercube(d=len(names), seed=seed).random(lhs_size),
                       [min(factors)] * len(names), [max(factors)] * len(names))
    cube = {claim: [] for claim in base}
    for point in sample:
        at = {f"factor_{n}": f for n, f in zip(names, point)}
        for claim, (value, verdict) in evaluate({n: coefficients[n] * f for n, f in zip(names, point)}).items():
            cube[claim].append({**at, "value": value, "verdict": verdict})
    return {claim: {"base": base[claim], "one_at_a_time": pd.DataFrame(rows[claim]),
                    "hypercube": pd.DataFrame(cube[claim])} for claim in base}


def sensitivity(evaluate: Evaluate, coefficients: Mapping[str, float], lhs_size: int, seed: int,
                factors: tuple[float, float] = FACTORS) -> dict:
    """The claim's value and verdict at the assumed coefficients ("base"),
    with each coefficient scaled by each factor ("one_at_a_time": a frame of
    coefficient, factor, value, verdict) and at `lhs_size` Latin-hypercube
    points of all factors in [min(factors), max(factors)] ("hypercube":
    one row per point with the factors, value and verdict)."""
    return sensitivity_many(lambda c: {"claim": evaluate(c)}, coefficients, lhs_size, seed, factors)["claim"]


# --------------------------------------------------------------------------- #
# Power models: which coefficients are assumed, and the models at other values

def assumed_coefficients(models: Mapping[str, object]) -> dict[str, float]:
    """{"<model>.<field>": value} of every pricing field (the model's
    PRICING) of every model whose provenance is "assumed" (published and
    fitted ones are not varied), leaving out zeros: x0.5 and x1.5 of 0 are 0."""
    out = {}
    for name, model in models.items():
        if model.provenance != "assumed":
            continue
        for field in model.PRICING:
            value = getattr(model, field)
            if value != 0:
                out[f"{name}.{field}"] = float(value)
    return out


def with_coefficients(models: Mapping[str, object], coefficients: Mapping[str, float]) -> dict[str, object]:
    """`models` with the coefficients {"<model>.<field>": value} replaced."""
    changes: dict[str, dict[str, float]] = {}
    for key, value in coefficients.items():
        name, field = key.rsplit(".", 1)
        changes.setdefault(name, {})[field] = value
    return {name: dataclasses.replace(m, **changes[name]) if name in changes else m for name, m in models.items()}


def claims_sensitivity(claims_at: Callable[[Mapping[str, object]], pd.DataFrame], models: Mapping[str, object],
                       lhs_size: int, seed: int, base: pd.DataFrame | None = None) -> dict[str, dict]:
    """Sensitivity of a study's modeled claims to its assumed coefficients.
    `claims_at(models)` is the study's claims table (mobitrace.core.claims)
    computed with `models` ({name: power model}); it is the same function
    the chapter calls at the assumed values. Returns {claim_id: result of
    :func:`sensitivity`} for the claims with provenance "modeled" and a
    verdict other than not checkable in `base`, the claims table at the
    assumed values (computed when not given)."""
    base = claims_at(models) if base is None else base
    keep = base[(base["provenance"] == "modeled") & (base["verdict"] != "not checkable")]["claim_id"].tolist()

    def evaluate(coefficients):
        # The study's tables passed their schemas when `base` was made; a
        # recompute moves only modeled values (no schema coerces), so it
        # goes without pandera's checks (a third of its time).
        with config_context(validation_enabled=False):
            t = claims_at(with_coefficients(models, coefficients)).set_index("claim_id").loc[keep]
        return {c: (float(v), verdict) for c, v, verdict in zip(keep, t["artifact_value"], t["verdict"])}

    coefficients = assumed_coefficients(models)
    if not coefficients or not keep:
        return {}
    return sensitivity_many(evaluate, coefficients, lhs_size, seed)


def robustness_table(results: Mapping[str, dict], claims: pd.DataFrame) -> pd.DataFrame:
    """One row per modeled claim: its value and verdict at the assumed
    coefficients, the smallest and largest value over the one-at-a-time
    changes and the hypercube, whether it moves at all (:func:`moves`), the
    share of hypercube points that keep the verdict, and the label (:func:`robustness_label`)."""
    text = claims.set_index("claim_id")
    rows = []
    for claim, r in results.items():
        values = pd.concat([r["one_at_a_time"]["value"], r["hypercube"]["value"]])
        rows.append({"claim_id": claim, "claim": text.loc[claim, "claim"], "unit": text.loc[claim, "unit"],
                     "value": r["base"][0], "verdict": r["base"][1],
                     "lowest": float(values.min()), "highest": float(values.max()),
                     "value_moves": moves(r),
                     "hypercube_kept_pct": 100.0 * float((r["hypercube"]["verdict"] == r["base"][1]).mean()),
                     "robustness": robustness_label(r)})
    table = pd.DataFrame(rows, columns=list(cl.ROBUSTNESS_SCHEMA.columns))
    return cl.ROBUSTNESS_SCHEMA.validate(table) if len(table) else table


def robustness_label(result: dict) -> str:
    """"robust", or "depends on <coefficients>" whose one-at-a-time change
    flips the verdict (in their given order), or "depends on the
    coefficients jointly" when only the hypercube changes it."""
    base = result["base"][1]
    oat = result["one_at_a_time"]
    flips = list(dict.fromkeys(oat.loc[oat["verdict"] != base, "coefficient"]))
    if flips:
        return cl.DEPENDS + ", ".join(flips)
    if (result["hypercube"]["verdict"] != base).any():
        return cl.DEPENDS + JOINTLY
    return ROBUST


def moves(result: dict) -> bool:
    """Whether a claim's value changes with the coefficients (beyond rounding)."""
    values = pd.concat([result["one_at_a_time"]["value"], result["hypercube"]["value"]])
    return not bool(np.allclose(values, result["base"][0], rtol=1e-9, atol=0.0, equal_nan=True))


def coefficient_label(name: str, names) -> str:
    """A coefficient's field name ("mw_per_ghz"), or "<model>.<field>" when
    two varied models share the field name."""
    field = name.rsplit(".", 1)[1]
    return field if sum(n.rsplit(".", 1)[1] == field for n in names) == 1 else name


def summary_text(table: pd.DataFrame, n_points: int, coefficients: list[str]) -> str:
    """Sentences on the table: what was varied, how many modeled verdicts
    hold everywhere, how many values move at all, and which verdicts depend
    on what."""
    n, robust = len(table), int((table["robustness"] == ROBUST).sum())
    if n == 0 or not coefficients:
        return "No verdict of this chapter rests on an assumed coefficient."
    n_moving = int(table["value_moves"].sum())
    text = (f"Each modeled claim was recomputed from the measured data with every assumed coefficient "
            f"({', '.join(coefficients)}) at ×0.5 and ×1.5, and with all of them together at {n_points} points of a "
            f"Latin hypercube over that range (the robustness table above): {robust} of the {n} modeled "
            f"verdicts hold throughout")
    if n_moving < n:
        text += (f" (the values of {n_moving} of them move; the others stay the same)"
                 if n_moving else " (no value moves)")
    depends = table[table["robustness"] != ROBUST]
    if len(depends):
        text += "; " + "; ".join(f"{c} {label}" for c, label in zip(depends["claim_id"], depends["robustness"]))
    return text + "."


@dataclasses.dataclass(frozen=True)
class StudyRobustness:
    """A chapter's robustness analysis: the results per modeled claim, the
    table, the claims table with each modeled claim's label, the hypercube
    size and the names of the coefficients varied."""

    results: dict
    table: pd.DataFrame
    claims: pd.DataFrame
    lhs_size: int
    coefficients: list[str]


def study_robustness(claims_at: Callable[[Mapping[str, object]], pd.DataFrame], models: Mapping[str, object],
                     claims: pd.DataFrame, settings: Mapping) -> StudyRobustness:
    """:func:`claims_sensitivity` of a chapter (`claims`: its claims table at
    the assumed coefficients; `settings`: params.yaml's robustness section,
    lhs_size and seed), its table and the labelled claims."""
    lhs_size, seed = int(settings["lhs_size"]), int(settings["seed"])
    results = claims_sensitivity(claims_at, models, lhs_size, seed, claims)
    return StudyRobustness(results, robustness_table(results, claims),
                           cl.with_robustness(claims, {c: robustness_label(r) for c, r in results.items()}),
                           lhs_size, list(assumed_coefficients(models)))


def with_labels(rob: StudyRobustness, labels: Mapping[str, str]) -> StudyRobustness:
    """`rob` with the robustness of the claims in `labels` ({claim_id:
    "depends on <assumption>"}) set from an analysis of an assumption that
    is not a coefficient (e.g. a model's form): a claim depends on it as
    well as on any coefficient it already depends on."""
    def merged(claim_id: str, old: str) -> str:
        new = labels.get(claim_id)
        if new is None:
            return old
        return new if old in (ROBUST, cl.NOT_VARIED) else f"{old}; {new[len(cl.DEPENDS):]}"
    old = dict(zip(rob.claims["claim_id"], rob.claims["robustness"]))
    claims = cl.with_robustness(rob.claims, {c: merged(c, old[c]) for c in labels})
    table = rob.table
    if len(table):
        table = cl.ROBUSTNESS_SCHEMA.validate(table.assign(robustness=[
            merged(c, r) for c, r in zip(table["claim_id"], table["robustness"])]))
    return dataclasses.replace(rob, claims=claims, table=table)


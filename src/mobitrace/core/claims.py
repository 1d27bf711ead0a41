"""Claims tables: each claim a paper makes that a chapter addresses, the
paper's value, the artifact's value, and a verdict with its tolerance.

Every chapter writes one as CSV (data/results/<study>/claims.csv) with the
columns in CLAIM_COLUMNS, so a book-level page can collect them all.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pandera.pandas as pa

from mobitrace.core.io import write_csv

REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
NOT_CHECKABLE = "not checkable"
# A bound whose interval straddles it: the point estimate alone would overclaim.
INCONCLUSIVE = "inconclusive"
# Claims that test our testbed (e.g. paths shaped to the paper's rates), not
# the paper: counted apart so they never pass for reproductions.
TESTBED_OK = "testbed ok"
TESTBED_OFF = "testbed off"
VERDICTS = (REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE, NOT_CHECKABLE, TESTBED_OK, TESTBED_OFF)
TESTBED_VERDICTS = {REPRODUCED: TESTBED_OK, NOT_REPRODUCED: TESTBED_OFF}
# Shown in every tally; the others only where some claim has them.
ALWAYS_SHOWN = (REPRODUCED, NOT_REPRODUCED, NOT_CHECKABLE)


def shown_verdicts(counts) -> list[str]:
    """The verdicts a tally shows, in VERDICTS order: the three of every
    chapter, and inconclusive or the testbed checks where `counts`
    ({verdict: number}) has any."""
    return [v for v in VERDICTS if v in ALWAYS_SHOWN or counts.get(v, 0)]
# Relations a paper states a value with: "=" as printed, "~" about, "<"/">"
# strict bounds ("less than"), "<="/">=" inclusive bounds ("at most").
RELATIONS = ("=", "~", "<", ">", "<=", ">=")

CLAIM_COLUMNS = [
    "study", "claim_id", "claim", "location", "paper_relation", "paper_value",
    "artifact_value", "unit", "tolerance", "verdict", "basis", "provenance", "section", "robustness",
]

# A modeled verdict whose assumed power coefficients were varied
# (mobitrace.energy.robustness): "robust" or "depends on <coefficient>"; empty
# for a claim with nothing assumed to vary (measured, published, not checkable).
NOT_VARIED = ""
ROBUST = "robust"
DEPENDS = "depends on "


def _is_robustness_label(s: pd.Series) -> pd.Series:
    return (s == ROBUST) | s.str.startswith(DEPENDS)

CLAIMS_SCHEMA = pa.DataFrameSchema(
    {
        "study": pa.Column(str),
        "claim_id": pa.Column(str, unique=True),
        "claim": pa.Column(str),
        "location": pa.Column(str),
        "paper_relation": pa.Column(str, pa.Check.isin(RELATIONS), nullable=True),
        "paper_value": pa.Column(float, nullable=True),
        "artifact_value": pa.Column(float, nullable=True),
        "unit": pa.Column(str),
        "tolerance": pa.Column(str),
        "verdict": pa.Column(str, pa.Check.isin(VERDICTS)),
        "basis": pa.Column(str),
        "provenance": pa.Column(str, pa.Check.isin(["measured", "published", "modeled"])),
        # The label of the book section that derives the claim (a MyST target
        # such as `(cpu-gbps-lines)=` in the chapter), for links from the ledger.
        "section": pa.Column(str, pa.Check.str_matches(r"^[a-z0-9][a-z0-9-]*\Z")),
        "robustness": pa.Column(str, pa.Check(lambda s: (s == NOT_VARIED) | _is_robustness_label(s),
                                              element_wise=False, error="robust, depends on <coefficient> or empty")),
    },
    strict=True,
    ordered=True,
)


# The robustness table of a chapter (mobitrace.energy.robustness.robustness_table).
ROBUSTNESS_SCHEMA = pa.DataFrameSchema(
    {
        "claim_id": pa.Column(str, unique=True),
        "claim": pa.Column(str),
        "unit": pa.Column(str),
        "value": pa.Column(float),
        "verdict": pa.Column(str, pa.Check.isin(VERDICTS)),
        "lowest": pa.Column(float),
        "highest": pa.Column(float),
        "value_moves": pa.Column(bool),
        "hypercube_kept_pct": pa.Column(float, pa.Check.in_range(0, 100)),
        "robustness": pa.Column(str, pa.Check(_is_robustness_label, element_wise=False,
                                              error="robust or depends on <coefficient>")),
    },
    checks=pa.Check(lambda f: (f["lowest"] <= f["value"]) & (f["value"] <= f["highest"]), element_wise=False,
                    error="lowest <= value <= highest"),
    strict=True,
    ordered=True,
)


def verdict(relation: str, paper_value: float, artifact_value: float | None,
            rel_tol: float = 0.0, abs_tol: float = 0.0) -> str:
    """Compare an artifact value with a paper's stated value.

    For "=" and "~" the claim is reproduced when
    |artifact - paper| <= max(rel_tol * |paper|, abs_tol);
    for a bound ("<", "<=", ">", ">=") when the artifact value satisfies it.
    A missing artifact value (None or NaN) means the claim is not checkable.
    """
    if relation not in RELATIONS:
        raise ValueError(f"relation must be one of {RELATIONS}, got {relation!r}")
    if artifact_value is None or (isinstance(artifact_value, float) and math.isnan(artifact_value)):
        return NOT_CHECKABLE
    # The tolerance is widened by one part in 1e9 so that a difference equal
    # to the tolerance (1.7 - 1.6 vs 0.1) is not lost to float rounding.
    allowed = max(rel_tol * abs(paper_value), abs_tol) * (1 + 1e-9)
    ok = {
        "=": lambda: abs(artifact_value - paper_value) <= allowed,
        "~": lambda: abs(artifact_value - paper_value) <= allowed,
        "<": lambda: artifact_value < paper_value,
        "<=": lambda: artifact_value <= paper_value,
        ">": lambda: artifact_value > paper_value,
        ">=": lambda: artifact_value >= paper_value,
    }[relation]()
    return REPRODUCED if ok else NOT_REPRODUCED


def bound_verdict(relation: str, paper_value: float, low: float, high: float) -> str:
    """A bound ("<", "<=", ">", ">=") judged on an interval of the artifact
    value: reproduced when the whole interval satisfies it, not reproduced
    when none of it does, else inconclusive. A missing end: not checkable."""
    if relation not in ("<", "<=", ">", ">="):
        raise ValueError(f"an interval decides only a bound, got relation {relation!r}")
    if _missing(low) or _missing(high):
        return NOT_CHECKABLE
    ends = [verdict(relation, paper_value, float(x)) for x in (low, high)]
    if ends == [REPRODUCED, REPRODUCED]:
        return REPRODUCED
    return NOT_REPRODUCED if ends == [NOT_REPRODUCED, NOT_REPRODUCED] else INCONCLUSIVE


def approx_interval_verdict(paper_value: float, low: float, high: float, rel_tol: float = 0.0,
                            abs_tol: float = 0.0) -> str:
    """"About x" judged on an interval of the artifact value: reproduced when
    the whole interval lies within the tolerance band around x, not
    reproduced when none of it does, else inconclusive. A missing end: not
    checkable."""
    if _missing(low) or _missing(high):
        return NOT_CHECKABLE
    allowed = max(rel_tol * abs(paper_value), abs_tol) * (1 + 1e-9)
    band_lo, band_hi = paper_value - allowed, paper_value + allowed
    if band_lo <= low and high <= band_hi:
        return REPRODUCED
    return NOT_REPRODUCED if high < band_lo or low > band_hi else INCONCLUSIVE


def tolerance_text(relation: str, rel_tol: float = 0.0, abs_tol: float = 0.0) -> str:
    """How a verdict was decided, in words for the claims table."""
    if relation in ("<", "<=", ">", ">="):
        return f"bound: artifact {relation} paper"
    parts = []
    if rel_tol:
        parts.append(f"±{rel_tol:.0%} of paper value")
    if abs_tol:
        parts.append(f"±{abs_tol:g} absolute")
    return " or ".join(parts) if parts else "exact"


def claims_frame(rows: list[dict]) -> pd.DataFrame:
    """Validated claims table with the columns in CLAIM_COLUMNS, in order."""
    frame = pd.DataFrame(rows, columns=CLAIM_COLUMNS)
    frame["robustness"] = frame["robustness"].fillna(NOT_VARIED)
    for col in ("paper_value", "artifact_value"):
        frame[col] = frame[col].astype(float)
    for col in set(CLAIM_COLUMNS) - {"paper_value", "artifact_value", "paper_relation"}:
        frame[col] = frame[col].astype(str)
    frame["paper_relation"] = frame["paper_relation"].astype(object)
    return CLAIMS_SCHEMA.validate(frame)


def with_robustness(frame: pd.DataFrame, labels: dict[str, str]) -> pd.DataFrame:
    """The claims table with the robustness label of each claim in `labels`
    ({claim_id: label}, mobitrace.energy.robustness.robustness_label)."""
    unknown = sorted(set(labels) - set(frame["claim_id"]))
    if unknown:
        raise ValueError(f"robustness of claims not in the table: {unknown}")
    return claims_frame(frame.assign(robustness=[labels.get(c, r) for c, r in
                                                 zip(frame["claim_id"], frame["robustness"])]).to_dict("records"))


def write_claims(frame: pd.DataFrame, path: str | Path) -> None:
    """Write a validated claims table as CSV (deterministic float format)."""
    CLAIMS_SCHEMA.validate(frame)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    write_csv(frame, path)


def read_claims(path: str | Path) -> pd.DataFrame:
    """Read a claims table written by write_claims, validated: empty text
    cells stay empty strings, an empty relation or number is missing."""
    text_cols = [c for c in CLAIM_COLUMNS if c not in ("paper_value", "artifact_value")]
    frame = pd.read_csv(path, dtype={c: str for c in text_cols}, keep_default_na=False,
                        na_values={"paper_value": [""], "artifact_value": [""]})
    frame["paper_relation"] = frame["paper_relation"].astype(object).where(frame["paper_relation"] != "", None)
    return claims_frame(frame.to_dict("records"))


_decide = verdict  # `Claims.add` takes a `verdict` argument of the same name


def _missing(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


class Claims:
    """The claims table of one chapter: one `add` per claim. The one claim
    helper every chapter uses, so that "checkable", the verdict and the
    tolerance text are decided the same way everywhere."""

    def __init__(self, study: str):
        self.study = study
        self.rows: list[dict] = []

    def add(self, claim_id: str, text: str, *, location: str, relation: str | None, paper, artifact,
            unit: str, basis: str, provenance: str, section: str, verdict: str | None = None,
            tolerance: str | None = None, rel_tol: float = 0.0, abs_tol: float = 0.0,
            interval: tuple | None = None, testbed: bool = False) -> str:
        """Record a claim and return its verdict. A claim is checkable when
        the paper states a relation and the artifact has a value; `verdict`
        and `tolerance` override the computed ones (a stated rule). A claim
        with an `interval` (low, high) of the artifact value is decided on
        the interval (`bound_verdict`, or `approx_interval_verdict` for "~"). `testbed` marks a claim that checks
        our set-up rather than the paper: its verdict reads testbed ok/off."""
        checkable = bool(relation) and not _missing(artifact)
        if verdict is None and checkable and interval is not None:
            if relation in ("~", "="):
                verdict = approx_interval_verdict(paper, *interval, rel_tol=rel_tol, abs_tol=abs_tol)
                if tolerance is None:
                    tolerance = f"whole 95% CI within {tolerance_text(relation, rel_tol, abs_tol)}"
            else:
                verdict = bound_verdict(relation, paper, *interval)
            if tolerance is None:
                tolerance = f"bound: whole 95% CI {relation} paper"
        if verdict is None:
            verdict = _decide(relation, paper, artifact, rel_tol, abs_tol) if checkable else NOT_CHECKABLE
        if testbed:
            verdict = TESTBED_VERDICTS.get(verdict, verdict)
        if tolerance is None:
            tolerance = tolerance_text(relation, rel_tol, abs_tol) if checkable else "n/a"
        self.rows.append({
            "study": self.study, "claim_id": claim_id, "claim": text, "location": location,
            "paper_relation": relation, "paper_value": paper, "artifact_value": None if _missing(artifact) else artifact,
            "unit": unit, "tolerance": tolerance, "verdict": verdict, "basis": basis, "provenance": provenance,
            "section": section, "robustness": NOT_VARIED,
        })
        return verdict

    def frame(self) -> pd.DataFrame:
        """The validated table (CLAIM_COLUMNS, in the order claims were added)."""
        return claims_frame(self.rows)

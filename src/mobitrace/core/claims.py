"""Claims tables: each claim a paper makes that a chapter addresses, the
paper's value, the artifact's value, and a verdict with its tolerance.

Every chapter writes one as CSV (data/results/<study>/claims.csv) with the
columns in CLAIM_COLUMNS, so a book-level page can collect them all.
"""

from __future__ import annotations

import fnmatch
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pandas as pd
import pandera.pandas as pa
import yaml

from mobitrace.core.io import write_csv
from mobitrace.core.numbers import level

REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
NOT_CHECKABLE = "not checkable"
# Neither: the interval holds values on both sides of the paper's relation.
INCONCLUSIVE = "inconclusive"
VERDICTS = (REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE, NOT_CHECKABLE)

# What a verdict is evidence of. Only EVIDENCE counts as reproduced or not:
# a testbed-bound claim asks for a magnitude this testbed cannot or was not
# built to reach; a claim that follows from the model is implied by the power
# model, the shaping or the grid. Which claims are which, and why, is data:
# data/published/claim-categories.yaml.
EVIDENCE = "evidence"
TESTBED_BOUND = "testbed-bound"
FOLLOWS_FROM_MODEL = "follows from the model"
CATEGORIES = (EVIDENCE, TESTBED_BOUND, FOLLOWS_FROM_MODEL)
# The labels every tally counts: a claim counts under its verdict when it is
# evidence, else under its category.
COUNTED = (*VERDICTS, TESTBED_BOUND, FOLLOWS_FROM_MODEL)
# Shown in every tally; the others only where some claim has them.
ALWAYS_SHOWN = (REPRODUCED, NOT_REPRODUCED, NOT_CHECKABLE)


def shown_verdicts(counts) -> list[str]:
    """The labels a tally shows, in COUNTED order: the three of every
    chapter, and inconclusive or a category where `counts` ({label: number})
    has any."""
    return [v for v in COUNTED if v in ALWAYS_SHOWN or counts.get(v, 0)]


def counted_as(claims: pd.DataFrame) -> pd.Series:
    """The label each claim counts under (COUNTED): its verdict when its
    category is evidence, else its category."""
    if "category" not in claims:
        return claims["verdict"]
    return claims["verdict"].where(claims["category"] == EVIDENCE, claims["category"])


def interval_direction(low, high, reference: float = 0.0, up: str = "higher", down: str = "lower",
                       neither: str = "not distinguishable") -> str:
    """A direction word from an interval, as the verdict rule reads one:
    `up` when the whole interval lies above `reference`, `down` when wholly
    below, `neither` when it holds the reference or is missing. So a
    difference the data cannot tell from none is never called higher."""
    if _missing(low) or _missing(high):
        return neither
    if float(low) > reference:
        return up
    return down if float(high) < reference else neither


def key(label: str) -> str:
    """A counted label as a name for metrics and glue: "not_reproduced",
    "testbed_bound", "follows_from_the_model"."""
    return re.sub(r"[^a-z0-9]+", "_", label.lower())


def keyed(counts: dict[str, int], prefix: str = "") -> dict[str, int]:
    """`counts` ({label: n}) under the names `prefix` + key(label)."""
    return {prefix + key(k): n for k, n in counts.items()}


def tally_text(counts: dict[str, int]) -> str:
    """A chapter's tally in words (`counts`: verdict_counts): the evidence
    by verdict, then the claims counted apart."""
    n = {k: counts.get(k, 0) for k in COUNTED}
    words = (f"Of the {sum(n.values())} claims, {n[REPRODUCED]} are reproduced, {n[NOT_REPRODUCED]} are not "
             f"reproduced, {n[INCONCLUSIVE]} are inconclusive and {n[NOT_CHECKABLE]} cannot be checked")
    apart = [f"{n[TESTBED_BOUND]} testbed-bound" if n[TESTBED_BOUND] else "",
             f"{n[FOLLOWS_FROM_MODEL]} that follow from the model" if n[FOLLOWS_FROM_MODEL] else ""]
    apart = [a for a in apart if a]
    return words + (f"; counted apart, not as evidence: {' and '.join(apart)}." if apart else ".")


def verdict_counts(claims: pd.DataFrame) -> dict[str, int]:
    """{label: number of claims} for every label of COUNTED (0 included):
    the one tally of a claims table."""
    counts = counted_as(claims).value_counts()
    return {k: int(counts.get(k, 0)) for k in COUNTED}


# Relations a paper states a value with: "=" as printed, "~" about, "<"/">"
# strict bounds ("less than"), "<="/">=" inclusive bounds ("at most").
RELATIONS = ("=", "~", "<", ">", "<=", ">=")

CLAIM_COLUMNS = [
    "study", "claim_id", "claim", "location", "paper_relation", "paper_value",
    "artifact_value", "ci_low", "ci_high", "unit", "tolerance", "verdict", "category", "basis", "provenance",
    "section", "robustness",
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
        # The interval the verdict was decided on (its kind is in `tolerance`);
        # empty for a claim decided on its point value (its basis says so).
        "ci_low": pa.Column(float, nullable=True),
        "ci_high": pa.Column(float, nullable=True),
        "unit": pa.Column(str),
        "tolerance": pa.Column(str),
        "verdict": pa.Column(str, pa.Check.isin(VERDICTS)),
        "category": pa.Column(str, pa.Check.isin(CATEGORIES)),
        "basis": pa.Column(str),
        "provenance": pa.Column(str, pa.Check.isin(["measured", "published", "modeled"])),
        # The label of the book section that derives the claim (a MyST target
        # such as `(cpu-gbps-lines)=` in the chapter), for links from the ledger.
        "section": pa.Column(str, pa.Check.str_matches(r"^[a-z0-9][a-z0-9-]*(#[a-z0-9][a-z0-9-]*)?\Z")),
        "robustness": pa.Column(str, pa.Check(lambda s: (s == NOT_VARIED) | _is_robustness_label(s),
                                              element_wise=False, error="robust, depends on <coefficient> or empty")),
    },
    checks=pa.Check(lambda f: f["ci_low"].isna() == f["ci_high"].isna(), element_wise=False,
                    error="an interval has both ends or neither"),
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


# How `decide` reads the interval it is given.
BAND = "band"  # an interval of the artifact value, judged against the paper's relation or band
ATTAINABLE = "attainable"  # the values the paper's own rounded inputs allow: its value must be one
RULES = (BAND, ATTAINABLE)
POINT_NOTE = "no interval: decided on the point value"
# A measured claim whose interval could not be computed (fewer runs than an
# interval needs: stats.intervals.MIN_N) is not evidence either way.
THIN_NOTE = "too few runs for an interval: inconclusive"


@dataclass(frozen=True)
class Decision:
    verdict: str
    tolerance: str  # the rule in words, for the claims table
    note: str = ""  # appended to the claim's basis


def band(relation: str, paper: float, rel_tol: float = 0.0, abs_tol: float = 0.0) -> tuple[float, float, bool]:
    """The values that satisfy the paper's relation: (low, high, closed).
    "=" and "~" are paper ± max(rel_tol * |paper|, abs_tol), ends included
    (widened by one part in 1e9 so that 1.7 - 1.6 vs 0.1 is not lost to
    float rounding); a bound is a half-line, `closed` False for "<" and ">"."""
    if relation not in RELATIONS:
        raise ValueError(f"relation must be one of {RELATIONS}, got {relation!r}")
    if relation in ("=", "~"):
        allowed = max(rel_tol * abs(paper), abs_tol) * (1 + 1e-9)
        return paper - allowed, paper + allowed, True
    if relation in ("<", "<="):
        return -math.inf, paper, relation == "<="
    return paper, math.inf, relation == ">="


def _inside(x: float, lo: float, hi: float, closed: bool) -> bool:
    if math.isinf(lo):
        return x <= hi if closed else x < hi
    if math.isinf(hi):
        return x >= lo if closed else x > lo
    return lo <= x <= hi


def decide(relation: str | None, paper, artifact, interval: tuple | None = None, *, rel_tol: float = 0.0,
           abs_tol: float = 0.0, rule: str = BAND, alpha: float | None = None) -> Decision:
    """The one verdict rule of the ledger.

    No relation, no paper value or no artifact value: not checkable. With an
    `interval` (low, high) of the artifact value (rule BAND): reproduced when
    the whole interval satisfies the paper's relation or lies in its band
    (`band`), not reproduced when the whole interval violates it, inconclusive
    otherwise; the interval is a 100(1 - `alpha`)% one, and its note says
    so. Without one, the point value decides and the note says so.
    Rule ATTAINABLE (an arithmetic check of the paper's own numbers): the
    interval is every value the paper's rounded inputs allow, and the claim
    is reproduced when one of them satisfies the paper's relation (for "="
    within `abs_tol`, half a unit of its last printed digit), else not.
    """
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
    if _missing(relation) or not relation or _missing(paper) or _missing(artifact):
        return Decision(NOT_CHECKABLE, "n/a")
    lo_b, hi_b, closed = band(relation, float(paper), rel_tol, abs_tol)
    words = tolerance_text(relation, rel_tol, abs_tol)
    if interval is None or any(_missing(x) for x in interval):
        ok = _inside(float(artifact), lo_b, hi_b, closed)
        return Decision(REPRODUCED if ok else NOT_REPRODUCED, words, POINT_NOTE)
    low, high = (float(x) for x in interval)
    if low > high:
        raise ValueError(f"interval ends out of order: {low} > {high}")
    ends = [_inside(x, lo_b, hi_b, closed) for x in (low, high)]
    # A closed band inside the interval leaves both ends outside but is not "wholly violated".
    disjoint = not any(ends) and (high < lo_b or low > hi_b or (not closed and (high <= lo_b or low >= hi_b)))
    if rule == ATTAINABLE:
        return Decision(NOT_REPRODUCED if disjoint else REPRODUCED,
                        "paper value among the values its own rounded inputs allow")
    verdict = REPRODUCED if all(ends) else NOT_REPRODUCED if disjoint else INCONCLUSIVE
    if alpha is None:
        raise ValueError("an interval decides this claim: give its alpha (the interval is 100(1 - alpha)%)")
    if relation in ("<", "<=", ">", ">="):
        text = f"bound: whole {level(alpha)} CI {relation} paper"
    else:
        text = f"whole {level(alpha)} CI within {words}"
    return Decision(verdict, text)


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


NUMBER_COLUMNS = ("paper_value", "artifact_value", "ci_low", "ci_high")


def claims_frame(rows: list[dict], validate: bool = True) -> pd.DataFrame:
    """Validated claims table with the columns in CLAIM_COLUMNS, in order
    (`validate` False: typed only, for a caller that validates the tables it
    joins once)."""
    frame = pd.DataFrame(rows, columns=CLAIM_COLUMNS)
    frame["robustness"] = frame["robustness"].astype(object).fillna(NOT_VARIED)
    frame["category"] = frame["category"].astype(object).fillna(EVIDENCE)
    for col in NUMBER_COLUMNS:
        frame[col] = frame[col].astype(float)
    for col in set(CLAIM_COLUMNS) - {*NUMBER_COLUMNS, "paper_relation"}:
        frame[col] = frame[col].astype(str)
    frame["paper_relation"] = frame["paper_relation"].astype(object)
    return CLAIMS_SCHEMA.validate(frame) if validate else frame


def with_robustness(frame: pd.DataFrame, labels: dict[str, str]) -> pd.DataFrame:
    """The claims table with the robustness label of each claim in `labels`
    ({claim_id: label}, mobitrace.energy.robustness.robustness_label)."""
    unknown = sorted(set(labels) - set(frame["claim_id"]))
    if unknown:
        raise ValueError(f"robustness of claims not in the table: {unknown}")
    return claims_frame(frame.assign(robustness=[labels.get(c, r) for c, r in
                                                 zip(frame["claim_id"], frame["robustness"])]).to_dict("records"))


UNGATED = "ungated (captured before the idle gate measured background load)"


def with_note(frame: pd.DataFrame, mask, note: str) -> pd.DataFrame:
    """The claims table with `note` added to the basis of the claims in
    `mask` (a boolean Series or list): a caveat of the captures behind them,
    such as UNGATED."""
    mask = pd.Series(mask, index=frame.index).astype(bool)
    basis = [f"{b}; {note}" if m else b for b, m in zip(frame["basis"], mask)]
    return claims_frame(frame.assign(basis=basis).to_dict("records"))


def write_claims(frame: pd.DataFrame, path: str | Path) -> None:
    """Write a validated claims table as CSV (deterministic float format)."""
    CLAIMS_SCHEMA.validate(frame)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    write_csv(frame, path)


def read_claims(path: str | Path, validate: bool = True) -> pd.DataFrame:
    """Read a claims table written by write_claims, validated (unless
    `validate` is False, see claims_frame): empty text cells stay empty
    strings, an empty relation or number is missing."""
    text_cols = [c for c in CLAIM_COLUMNS if c not in NUMBER_COLUMNS]
    frame = pd.read_csv(path, dtype={c: str for c in text_cols}, keep_default_na=False,
                        na_values={c: [""] for c in NUMBER_COLUMNS})
    frame["paper_relation"] = frame["paper_relation"].astype(object).where(frame["paper_relation"] != "", None)
    return claims_frame(frame.to_dict("records"), validate)


def _missing(x) -> bool:
    return x is None or (not isinstance(x, str) and bool(pd.isna(x)))


# Which claims are not evidence, and why: one record per group of claims.
CATEGORIES_FILE = Path(__file__).resolve().parents[3] / "data" / "published" / "claim-categories.yaml"


@lru_cache(maxsize=None)
def categories(path: str | Path = CATEGORIES_FILE) -> tuple[dict, ...]:
    """The records of the claim-categories file: each has `study`, `claims`
    (claim ids, shell patterns allowed), `category` (not evidence) and
    `reason`. A missing file: none."""
    path = Path(path)
    if not path.is_file():
        return ()
    records = yaml.safe_load(path.read_text(encoding="utf-8"))["categories"]
    for r in records:
        if set(r) != {"study", "claims", "category", "reason"} or r["category"] not in CATEGORIES[1:] \
                or not str(r["reason"]).strip():
            raise ValueError(f"{path}: a record needs study, claims, a category of {CATEGORIES[1:]} and a "
                             f"reason; found {r}")
    return tuple(records)


def category_of(study: str, claim_id: str, records=None) -> tuple[str, str]:
    """(category, reason) of a claim: the first record of its study whose
    patterns match its id, else (EVIDENCE, "")."""
    for r in categories() if records is None else records:
        if r["study"] == study and any(fnmatch.fnmatchcase(claim_id, pat) for pat in r["claims"]):
            return r["category"], r["reason"]
    return EVIDENCE, ""


class Claims:
    """The claims table of one chapter: one `add` per claim. The one claim
    helper every chapter uses, so that every verdict is decided by `decide`
    and every category comes from the categories file."""

    def __init__(self, study: str, records=None, *, alpha: float | None = None):
        self.study = study
        self.alpha = alpha  # of the claims' intervals, unless a claim gives its own
        self.records = records  # categories() when None
        self.rows: list[dict] = []

    def add(self, claim_id: str, text: str, *, location: str, relation: str | None, paper, artifact,
            unit: str, basis: str, provenance: str, section: str, checkable: bool = True,
            tolerance: str | None = None, rel_tol: float = 0.0, abs_tol: float = 0.0,
            interval: tuple | None = None, rule: str = BAND, alpha: float | None = None,
            possible: tuple[float, float] | None = None) -> str:
        """Record a claim and return its verdict (`decide`). `interval` is
        (low, high) of the artifact value, a 100(1 - `alpha`)% interval
        (the table's alpha unless given; or, for
        rule ATTAINABLE, the values the paper's inputs allow); `frame` can
        still supply it. `checkable` False: the data the claim needs are not
        in this artifact (the basis says why). `tolerance` words a rule more
        precisely than `decide` does (the rule itself is unchanged).
        `possible` (low, high): the values the quantity can take (a saving
        cannot exceed 100%); an interval is clipped to it. An interval of
        zero width is no interval (the point value decides); an interval
        given with a missing end (too few runs to compute one) makes the
        claim inconclusive."""
        self.rows.append({
            "study": self.study, "claim_id": claim_id, "claim": text, "location": location,
            "paper_relation": relation, "paper_value": paper, "artifact_value": None if _missing(artifact) else artifact,
            "unit": unit, "basis": basis, "provenance": provenance, "section": section, "robustness": NOT_VARIED,
            "_rule": dict(checkable=checkable, tolerance=tolerance, rel_tol=rel_tol, abs_tol=abs_tol,
                          interval=interval, rule=rule, alpha=self.alpha if alpha is None else alpha,
                          possible=possible),
        })
        return self._decided(self.rows[-1])["verdict"]

    def _decided(self, row: dict, interval: tuple | None = None) -> dict:
        r = row["_rule"]
        interval = r["interval"] if interval is None else interval
        thin = interval is not None and any(_missing(x) for x in interval) and r["rule"] == BAND
        if interval is not None and any(_missing(x) for x in interval):
            interval = None
        if interval is not None and r["possible"] is not None:
            interval = tuple(min(max(float(x), r["possible"][0]), r["possible"][1]) for x in interval)
        if interval is not None and r["rule"] == BAND and float(interval[0]) == float(interval[1]):
            interval = None  # every resample agreed, or n too small: not an interval
        if r["checkable"]:
            d = decide(row["paper_relation"], row["paper_value"], row["artifact_value"], interval,
                       rel_tol=r["rel_tol"], abs_tol=r["abs_tol"], rule=r["rule"], alpha=r["alpha"])
        else:
            d = Decision(NOT_CHECKABLE, "n/a")
        if thin and d.verdict != NOT_CHECKABLE:
            d = Decision(INCONCLUSIVE, d.tolerance, THIN_NOTE)
        # A claim nothing checks is not checkable whatever it would be evidence of.
        category, reason = (category_of(self.study, row["claim_id"], self.records) if d.verdict != NOT_CHECKABLE
                            else (EVIDENCE, ""))
        notes = [n for n in (d.note if d.verdict != NOT_CHECKABLE else "",
                             f"{category}: {reason}" if reason else "") if n]
        out = {k: v for k, v in row.items() if k != "_rule"}
        has_ci = d.verdict != NOT_CHECKABLE and interval is not None
        out.update(verdict=d.verdict, category=category,
                   tolerance=r["tolerance"] or d.tolerance,
                   basis="; ".join([row["basis"], *notes]),
                   ci_low=float(interval[0]) if has_ci else None, ci_high=float(interval[1]) if has_ci else None)
        return out

    def frame(self, intervals: dict | None = None) -> pd.DataFrame:
        """The validated table (CLAIM_COLUMNS, in the order claims were
        added), each verdict decided with its interval: the one given to
        `add`, else `intervals[claim_id]`."""
        intervals = intervals or {}
        return claims_frame([self._decided(row, None if row["_rule"]["interval"] is not None
                                           else intervals.get(row["claim_id"])) for row in self.rows])

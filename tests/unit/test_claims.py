import math

import pandas as pd
import pandera.pandas as pa
import pytest

from mobitrace.core import claims as cl


@pytest.mark.parametrize(
    "relation, paper, artifact, rel_tol, abs_tol, expected",
    [
        ("=", 100.0, 104.9, 0.05, 0.0, cl.REPRODUCED),
        ("=", 100.0, 105.1, 0.05, 0.0, cl.NOT_REPRODUCED),
        ("~", 400.0, 373.88, 0.10, 0.0, cl.REPRODUCED),
        ("=", 4.0, 3.36, 0.05, 0.0, cl.NOT_REPRODUCED),
        # A difference equal to the tolerance counts as inside it, float noise aside.
        ("=", 1.6, 1.7, 0.0, 0.1, cl.REPRODUCED),
        ("<", 50.0, 36.0, 0.0, 0.0, cl.REPRODUCED),
        ("<", 50.0, 50.0, 0.0, 0.0, cl.NOT_REPRODUCED),
        ("<=", 50.0, 50.0, 0.0, 0.0, cl.REPRODUCED),
        (">", 826.0, 900.0, 0.0, 0.0, cl.REPRODUCED),
        (">=", 826.0, 800.0, 0.0, 0.0, cl.NOT_REPRODUCED),
        ("=", 1.0, None, 0.05, 0.0, cl.NOT_CHECKABLE),
        ("=", 1.0, math.nan, 0.05, 0.0, cl.NOT_CHECKABLE),
    ],
)
def test_decide_on_a_point_value_says_so_synthetic(relation, paper, artifact, rel_tol, abs_tol, expected):
    d = cl.decide(relation, paper, artifact, rel_tol=rel_tol, abs_tol=abs_tol)
    assert d.verdict == expected
    assert d.note == ("" if expected == cl.NOT_CHECKABLE else cl.POINT_NOTE)


def test_decide_rejects_unknown_relation_and_rule():
    with pytest.raises(ValueError, match="relation"):
        cl.decide("!=", 1.0, 1.0)
    with pytest.raises(ValueError, match="rule"):
        cl.decide("=", 1.0, 1.0, (0.0, 2.0), rule="majority")


def test_tolerance_text():
    assert cl.tolerance_text("<") == "bound: artifact < paper"
    assert cl.tolerance_text("=", 0.05) == "±5% of paper value"
    assert cl.tolerance_text("=", 0.0, 0.1) == "±0.1 absolute"


def _row(**over):
    row = dict(study="s", claim_id="c1", claim="a claim", location="§1", paper_relation="=",
               paper_value=1.0, artifact_value=1.0, ci_low=None, ci_high=None, unit="x", tolerance="exact",
               verdict=cl.REPRODUCED, category=cl.EVIDENCE, basis="b", provenance="published", section="s-claims")
    row.update(over)
    return row


def test_claims_frame_round_trips_through_csv_synthetic(tmp_path):
    frame = cl.claims_frame([_row(), _row(claim_id="c2", paper_relation=None, paper_value=None,
                                          artifact_value=None, verdict=cl.NOT_CHECKABLE)])
    cl.write_claims(frame, tmp_path / "claims.csv")
    back = pd.read_csv(tmp_path / "claims.csv")
    assert list(back.columns) == cl.CLAIM_COLUMNS
    assert back["verdict"].tolist() == [cl.REPRODUCED, cl.NOT_CHECKABLE]


@pytest.mark.parametrize("over", [{"verdict": "maybe"}, {"provenance": "guessed"}, {"paper_relation": "!="},
                                  {"section": "§3.2"}, {"category": "testbed ok"}, {"ci_low": 0.5}])
def test_claims_frame_rejects_bad_rows_synthetic(over):
    with pytest.raises(pa.errors.SchemaError):
        cl.claims_frame([_row(**over)])


def test_claims_frame_rejects_duplicate_ids_synthetic():
    with pytest.raises(pa.errors.SchemaError):
        cl.claims_frame([_row(), _row()])


def test_read_claims_round_trips_empty_text_and_missing_values_synthetic(tmp_path):
    frame = cl.claims_frame([_row(unit=""), _row(claim_id="c2", paper_relation=None, paper_value=None,
                                                 artifact_value=None, verdict=cl.NOT_CHECKABLE)])
    cl.write_claims(frame, tmp_path / "claims.csv")
    back = cl.read_claims(tmp_path / "claims.csv")
    assert back["unit"].tolist() == ["", "x"]
    assert pd.isna(back.loc[1, "paper_relation"])
    assert back["paper_value"].isna().tolist() == [False, True]


def test_claims_helper_decides_checkable_verdict_and_tolerance_by_hand():
    from mobitrace.core.claims import Claims
    table = Claims("toy")
    common = dict(location="§1", unit="%", basis="b", provenance="measured", section="toy-s")
    # |1.05 - 1.0| = 0.05 <= 10% of 1.0: reproduced; 1.2 is not.
    assert table.add("near", "t", relation="~", paper=1.0, artifact=1.05, rel_tol=0.1, **common) == "reproduced"
    assert table.add("far", "t", relation="~", paper=1.0, artifact=1.2, rel_tol=0.1, **common) == "not reproduced"
    # No value (NaN) or no relation: not checkable, tolerance n/a, value stored as missing.
    assert table.add("nan", "t", relation="<", paper=5.0, artifact=float("nan"), **common) == "not checkable"
    assert table.add("norel", "t", relation=None, paper=None, artifact=3.0, **common) == "not checkable"
    # A rule's words may be stated; the verdict is still decide's.
    assert table.add("rule", "t", relation="=", paper=0.0, artifact=2.0, tolerance="no cell lower",
                     **common) == "not reproduced"
    frame = table.frame()
    assert list(frame["claim_id"]) == ["near", "far", "nan", "norel", "rule"]
    assert list(frame["tolerance"]) == ["±10% of paper value", "±10% of paper value", "n/a", "n/a", "no cell lower"]
    assert frame["artifact_value"].isna().tolist() == [False, False, True, False, False]
    assert frame["basis"].tolist() == [f"b; {cl.POINT_NOTE}"] * 2 + ["b"] * 2 + [f"b; {cl.POINT_NOTE}"]


@pytest.mark.parametrize("relation, paper, low, high, expected", [
    ("<", 1.0, 0.80, 0.95, cl.REPRODUCED),
    ("<", 1.0, 0.80, 1.10, cl.INCONCLUSIVE),  # transfer-tuning p8_html_reduces: 0.94 with a CI over 1
    ("<", 1.0, 1.20, 1.60, cl.NOT_REPRODUCED),
    (">", 1.0, 1.20, 3.00, cl.REPRODUCED),
    # A missing end: decided on the point value (1.0, which is not > 1).
    (">", 1.0, math.nan, 3.00, cl.NOT_REPRODUCED),
])
def test_decide_a_bound_on_an_interval_synthetic(relation, paper, low, high, expected):
    assert cl.decide(relation, paper, 1.0, (low, high), alpha=0.05).verdict == expected


def test_an_intervals_note_names_its_level_from_alpha_and_an_interval_needs_one_synthetic():
    """The level a note prints is the study's alpha's (params.yaml), never
    a fixed 95%: a 90% interval says 90%."""
    assert cl.decide(">", 1.0, 2.0, (1.5, 2.5), alpha=0.10).tolerance == "bound: whole 90% CI > paper"
    assert cl.decide("~", 1.0, 1.0, (0.9, 1.1), rel_tol=0.25, alpha=0.01).tolerance.startswith("whole 99% CI within")
    claims = cl.Claims("s", records=(), alpha=0.10)
    claims.add("a", "a", location="§1", relation=">", paper=1.0, artifact=2.0, unit="x", basis="b",
               provenance="measured", section="s", interval=(1.5, 2.5))
    claims.add("b", "b", location="§1", relation="=", paper=0.0, artifact=0.0, unit="%", basis="b",
               provenance="measured", section="s", interval=(-1.0, 1.0), abs_tol=2.0, alpha=0.2)  # a TOST's 2 alpha
    assert list(claims.frame()["tolerance"]) == ["bound: whole 90% CI > paper", "whole 80% CI within ±2 absolute"]
    with pytest.raises(ValueError, match="alpha"):
        cl.decide(">", 1.0, 2.0, (1.5, 2.5))


def test_decide_refuses_an_interval_out_of_order():
    with pytest.raises(ValueError, match="order"):
        cl.decide("=", 1.0, 1.0, (1.1, 0.9))


def test_claims_decide_bounds_on_intervals_synthetic():
    claims = cl.Claims("s", alpha=0.05)
    common = {"location": "§1", "unit": "x", "basis": "b", "provenance": "measured", "section": "s"}
    assert claims.add("p8", "reduces", relation="<", paper=1.0, artifact=0.94, interval=(0.8, 1.1),
                      **common) == cl.INCONCLUSIVE
    assert claims.add("p8_point", "reduces", relation="<", paper=1.0, artifact=0.94, **common) == cl.REPRODUCED
    frame = claims.frame().set_index("claim_id")
    assert frame.loc["p8", "tolerance"] == "bound: whole 95% CI < paper"
    assert frame.loc["p8", ["ci_low", "ci_high"]].tolist() == [0.8, 1.1]
    assert frame.loc["p8_point", ["ci_low", "ci_high"]].isna().all()
    assert set(frame["verdict"]) <= set(cl.VERDICTS)


@pytest.mark.parametrize("paper, low, high, expected", [
    (40.0, 32.0, 45.0, cl.REPRODUCED),       # inside 40 ± 25% = [30, 50]
    (40.0, -0.4, 35.7, cl.INCONCLUSIVE),     # stack-trim loopback one-copy saving, 8 reps: straddles 30
    (40.0, -0.4, 29.9, cl.NOT_REPRODUCED),   # wholly below the band
    (100.0, -9.6, 6.9, cl.NOT_REPRODUCED),   # the 100 mW power saving, wholly below 75
    (40.0, 30.0, 50.0, cl.REPRODUCED),       # the band's ends count as inside
    (0.229, 0.209, 0.479, cl.INCONCLUSIVE),  # the measured GRO-off ratio: the interval holds 0.229
])
def test_decide_an_about_claim_on_an_interval_synthetic(paper, low, high, expected):
    assert cl.decide("~", paper, (low + high) / 2, (low, high), rel_tol=0.25, alpha=0.05).verdict == expected


def test_claims_decide_about_claims_on_intervals_synthetic():
    claims = cl.Claims("s", alpha=0.05)
    common = {"location": "§1", "unit": "%", "basis": "b", "provenance": "modeled", "section": "s"}
    assert claims.add("a", "about 40", relation="~", paper=40.0, artifact=19.3, interval=(-0.4, 35.7),
                      rel_tol=0.25, **common) == cl.INCONCLUSIVE
    assert claims.frame()["tolerance"].iloc[0] == "whole 95% CI within ±25% of paper value"


# One synthetic claim per rule and category of the verdict rule (decide and
# the categories file): relation, paper value, point value, interval.
RULE_CASES = [
    # bounds on intervals: wholly satisfied, wholly violated, straddling
    ("bound_inside", ">=", 0.9, 0.95, (0.91, 0.98), cl.REPRODUCED),
    ("bound_outside", ">=", 0.9, 0.75, (0.70, 0.80), cl.NOT_REPRODUCED),
    ("bound_straddles", ">=", 0.9, 0.83, (0.65, 0.93), cl.INCONCLUSIVE),  # rps-cpu0 Total R² [0.651, 0.926]
    ("bound_strict_edge", "<", 5.0, 4.0, (3.0, 5.0), cl.INCONCLUSIVE),  # 5 is not < 5
    ("bound_strict_violated", "<", 5.0, 7.0, (5.0, 9.0), cl.NOT_REPRODUCED),
    ("marginal", "<", 5.0, 74.0, (-12.8, 160.7), cl.INCONCLUSIVE),  # priority-boost re-run's CPU marginal
    # bands ("=" and "~") on intervals
    ("band_inside", "~", 100.0, 101.0, (95.0, 105.0), cl.REPRODUCED),
    ("band_outside", "~", 100.0, 50.0, (40.0, 60.0), cl.NOT_REPRODUCED),
    ("band_contains_paper", "~", 0.229, 0.317, (0.209, 0.479), cl.INCONCLUSIVE),  # GRO-off ratio
    ("band_wider_than_interval_both_sides", "=", 10.0, 10.0, (0.0, 20.0), cl.INCONCLUSIVE),
    # no interval: the point decides, and the basis says so
    ("point_inside", "=", 4.0, 4.1, None, cl.REPRODUCED),
    ("point_outside", "=", 4.0, 3.36, None, cl.NOT_REPRODUCED),
    # nothing to check
    ("no_value", "<", 5.0, None, None, cl.NOT_CHECKABLE),
    ("no_relation", None, None, 3.0, (2.0, 4.0), cl.NOT_CHECKABLE),
]


@pytest.mark.parametrize("claim_id, relation, paper, artifact, interval, expected", RULE_CASES)
def test_every_rule_of_the_one_verdict_function_synthetic(claim_id, relation, paper, artifact, interval, expected):
    claims = cl.Claims("s", records=(), alpha=0.05)
    got = claims.add(claim_id, "synthetic", location="§1", relation=relation, paper=paper, artifact=artifact,
                     unit="x", basis="b", provenance="measured", section="s", interval=interval,
                     rel_tol=0.10, abs_tol=0.0)
    row = claims.frame().iloc[0]
    assert got == row["verdict"] == expected
    assert row["category"] == cl.EVIDENCE
    if expected != cl.NOT_CHECKABLE:
        assert (cl.POINT_NOTE in row["basis"]) == (interval is None)
        assert pd.isna(row["ci_low"]) == (interval is None)


def test_the_attainable_rule_checks_a_papers_own_rounding_synthetic():
    # p printed as 0.0031: reproduced when some p the rounded statistics allow rounds to it.
    assert cl.decide("=", 0.0031, 0.00304, (0.0014, 0.0069), abs_tol=0.00005, rule=cl.ATTAINABLE).verdict \
        == cl.REPRODUCED
    # p printed "< 0.0001" but every attainable p is above 0.01: not reproduced.
    assert cl.decide("<", 0.0001, 0.0125, (0.010, 0.016), rule=cl.ATTAINABLE).verdict == cl.NOT_REPRODUCED


def test_categories_count_apart_from_evidence_synthetic():
    records = ({"study": "s", "claims": ["x_*"], "category": cl.TESTBED_BOUND, "reason": "a 40 Mbit/s link"},
               {"study": "s", "claims": ["shaped"], "category": cl.FOLLOWS_FROM_MODEL, "reason": "set by htb"},
               {"study": "other", "claims": ["plain"], "category": cl.TESTBED_BOUND, "reason": "not this study"})
    claims = cl.Claims("s", records=records, alpha=0.05)
    common = {"location": "§1", "unit": "x", "basis": "b", "provenance": "measured", "section": "s"}
    claims.add("x_fold", "16x", relation="~", paper=16.0, artifact=2.6, interval=(2.5, 2.7), rel_tol=0.1, **common)
    claims.add("shaped", "73:27", relation="=", paper=73.0, artifact=73.0, interval=(73.0, 73.0), abs_tol=5,
               **common)
    claims.add("plain", "helps", relation=">", paper=1.0, artifact=2.6, interval=(2.5, 2.7), **common)
    claims.add("plain2", "hurts", relation="<", paper=1.0, artifact=2.6, interval=(2.5, 2.7), **common)
    frame = claims.frame().set_index("claim_id")
    # The rule's verdict is kept; the category says what it is evidence of, with the reason in the basis.
    assert frame["verdict"].tolist() == [cl.NOT_REPRODUCED, cl.REPRODUCED, cl.REPRODUCED, cl.NOT_REPRODUCED]
    assert frame["category"].tolist() == [cl.TESTBED_BOUND, cl.FOLLOWS_FROM_MODEL, cl.EVIDENCE, cl.EVIDENCE]
    assert frame.loc["x_fold", "basis"].endswith("testbed-bound: a 40 Mbit/s link")
    counts = cl.verdict_counts(frame.reset_index())
    assert counts == {cl.REPRODUCED: 1, cl.NOT_REPRODUCED: 1, cl.INCONCLUSIVE: 0, cl.NOT_CHECKABLE: 0,
                      cl.TESTBED_BOUND: 1, cl.FOLLOWS_FROM_MODEL: 1}
    assert cl.keyed(counts, "n_")["n_follows_from_the_model"] == 1
    assert cl.tally_text(counts).endswith("counted apart, not as evidence: 1 testbed-bound and 1 that follow "
                                          "from the model.")


def test_the_categories_file_names_real_categories_and_reasons():
    records = cl.categories()
    assert records, "data/published/claim-categories.yaml has no record"
    assert {r["category"] for r in records} <= set(cl.CATEGORIES) - {cl.EVIDENCE}
    assert all(r["reason"].strip() for r in records)


def test_a_measured_claim_with_too_few_runs_for_an_interval_is_inconclusive():
    """An interval with a missing end (stats.intervals gives NaN below MIN_N
    runs) is no evidence either way: the point value does not decide, even
    when it sits inside the band. A claim given no interval at all (a
    computation, not a sample) is still decided on its point value."""
    from mobitrace.core.claims import Claims
    table = Claims("toy")
    common = dict(location="§1", unit="%", basis="b", provenance="measured", section="toy-s",
                  relation="~", paper=1.0, rel_tol=0.1)
    assert table.add("two_runs_inside", "t", artifact=1.0, interval=(float("nan"), float("nan")), **common) \
        == cl.INCONCLUSIVE
    assert table.add("two_runs_outside", "t", artifact=3.0, interval=(float("nan"), float("nan")), **common) \
        == cl.INCONCLUSIVE
    assert table.add("computed", "t", artifact=1.0, **common) == cl.REPRODUCED
    frame = table.frame()
    assert frame["basis"].tolist() == [f"b; {cl.THIN_NOTE}"] * 2 + [f"b; {cl.POINT_NOTE}"]
    assert frame["ci_low"].isna().all()

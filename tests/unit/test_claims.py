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
def test_verdict(relation, paper, artifact, rel_tol, abs_tol, expected):
    assert cl.verdict(relation, paper, artifact, rel_tol, abs_tol) == expected


def test_verdict_rejects_unknown_relation():
    with pytest.raises(ValueError, match="relation"):
        cl.verdict("!=", 1.0, 1.0)


def test_tolerance_text():
    assert cl.tolerance_text("<") == "bound: artifact < paper"
    assert cl.tolerance_text("=", 0.05) == "±5% of paper value"
    assert cl.tolerance_text("=", 0.0, 0.1) == "±0.1 absolute"


def _row(**over):
    row = dict(study="s", claim_id="c1", claim="a claim", location="§1", paper_relation="=",
               paper_value=1.0, artifact_value=1.0, unit="x", tolerance="exact",
               verdict=cl.REPRODUCED, basis="b", provenance="published", section="s-claims")
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
                                  {"section": "§3.2"}])
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
    # A stated rule overrides the computed verdict and tolerance.
    assert table.add("rule", "t", relation="=", paper=0.0, artifact=2.0, verdict="reproduced",
                     tolerance="no cell lower", **common) == "reproduced"
    frame = table.frame()
    assert list(frame["claim_id"]) == ["near", "far", "nan", "norel", "rule"]
    assert list(frame["tolerance"]) == ["±10% of paper value", "±10% of paper value", "n/a", "n/a", "no cell lower"]
    assert frame["artifact_value"].isna().tolist() == [False, False, True, False, False]


@pytest.mark.parametrize("relation, paper, low, high, expected", [
    ("<", 1.0, 0.80, 0.95, cl.REPRODUCED),
    ("<", 1.0, 0.80, 1.10, cl.INCONCLUSIVE),  # transfer-tuning p8_html_reduces: 0.94 with a CI over 1
    ("<", 1.0, 1.20, 1.60, cl.NOT_REPRODUCED),
    (">", 1.0, 1.20, 3.00, cl.REPRODUCED),
    (">", 1.0, math.nan, 3.00, cl.NOT_CHECKABLE),
])
def test_bound_verdict_on_an_interval(relation, paper, low, high, expected):
    assert cl.bound_verdict(relation, paper, low, high) == expected


def test_bound_verdict_refuses_a_point_relation():
    with pytest.raises(ValueError, match="bound"):
        cl.bound_verdict("=", 1.0, 0.9, 1.1)


def test_claims_decide_bounds_on_intervals_and_mark_testbed_checks_synthetic():
    claims = cl.Claims("s")
    common = {"location": "§1", "unit": "x", "basis": "b", "provenance": "measured", "section": "s"}
    assert claims.add("p8", "reduces", relation="<", paper=1.0, artifact=0.94, interval=(0.8, 1.1),
                      **common) == cl.INCONCLUSIVE
    assert claims.add("p8_point", "reduces", relation="<", paper=1.0, artifact=0.94, **common) == cl.REPRODUCED
    assert claims.add("shaped", "ratio", relation="=", paper=73.0, artifact=73.0, abs_tol=5.0, testbed=True,
                      **common) == cl.TESTBED_OK
    assert claims.add("shaped_off", "ratio", relation="=", paper=73.0, artifact=50.0, abs_tol=5.0, testbed=True,
                      **common) == cl.TESTBED_OFF
    frame = claims.frame().set_index("claim_id")
    assert frame.loc["p8", "tolerance"] == "bound: whole 95% CI < paper"
    assert set(frame["verdict"]) <= set(cl.VERDICTS)


@pytest.mark.parametrize("paper, low, high, expected", [
    (40.0, 32.0, 45.0, cl.REPRODUCED),       # inside 40 ± 25% = [30, 50]
    (40.0, -0.4, 35.7, cl.INCONCLUSIVE),     # stack-trim loopback one-copy saving, 8 reps: straddles 30
    (40.0, -0.4, 29.9, cl.NOT_REPRODUCED),   # wholly below the band
    (100.0, -9.6, 6.9, cl.NOT_REPRODUCED),   # the 100 mW power saving, wholly below 75
    (40.0, 30.0, 50.0, cl.REPRODUCED),       # the band's ends count as inside
    (40.0, math.nan, 35.0, cl.NOT_CHECKABLE),
])
def test_approx_verdict_on_an_interval(paper, low, high, expected):
    assert cl.approx_interval_verdict(paper, low, high, rel_tol=0.25) == expected


def test_claims_decide_about_claims_on_intervals_synthetic():
    claims = cl.Claims("s")
    common = {"location": "§1", "unit": "%", "basis": "b", "provenance": "modeled", "section": "s"}
    assert claims.add("a", "about 40", relation="~", paper=40.0, artifact=19.3, interval=(-0.4, 35.7),
                      rel_tol=0.25, **common) == cl.INCONCLUSIVE
    assert claims.frame()["tolerance"].iloc[0] == "whole 95% CI within ±25% of paper value"

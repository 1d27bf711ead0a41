"""Audit of the published tables and measured comparisons."""

import numpy as np
import pandas as pd
import pytest

from mobitrace.studies.priority_boost import analysis as pba
from mobitrace.core import published
from mobitrace.stats import welch


@pytest.fixture(scope="module")
def stats(pb_repo):
    return published.load_stat_tables(pb_repo / "data" / "published" / "priority-boost.yaml")


def test_table_precision(stats):
    assert pba.table_precision(stats[stats.table == "transfer_cpu"]) == {"mean": 1, "sd": 2}


def test_audit_cpu_table_hand_values(stats):
    a = pba.audit_published(stats, "transfer_cpu", "transfer_cpu_p", alpha=0.05)
    assert len(a) == 10
    r = a[(a.policy == "incr") & (a.cpu_procs == 0)].iloc[0]
    # 80.0/0 vs 80.8/0.63, n = 10: t = -0.8 / (0.63 / sqrt(10)) = -4.0156, df = 9
    assert r.t == pytest.approx(-0.8 / (0.63 / np.sqrt(10)))
    assert r.df == pytest.approx(9.0)
    assert r.p == pytest.approx(0.00304, abs=1e-5)
    # The published "< 0.0001" at 20 and 30 processes are not attainable.
    flagged = a[~a.in_range_table.astype(bool)]
    assert sorted(flagged.cpu_procs) == [20, 30] and set(flagged.policy) == {"incr"}
    assert a.in_range_printed.astype(bool).sum() == 8
    # Holm over the ten recomputed p: only INCR at 0 processes stays below 0.05.
    assert list(a.loc[a.reject_holm, ["policy", "cpu_procs"]].itertuples(index=False, name=None)) == [("incr", 0)]


def test_compare_measured_synthetic():
    rng = np.random.default_rng(0)
    rows = []
    for pol, shift in (("original", 0.0), ("incr", -1.0), ("decr", 0.0)):
        for rep in range(10):
            rows.append({"table": "cpu", "cpu_procs": 30, "cross_pct": 0, "policy": pol,
                         "metric": 10 + shift + rng.normal(0, 0.2)})
    runs = pd.DataFrame(rows)
    c = pba.compare_measured(runs, alpha=0.05)
    incr = c[c.policy == "incr"].iloc[0]
    x = runs[runs.policy == "incr"].metric
    b = runs[runs.policy == "original"].metric
    assert incr.p == pytest.approx(welch.welch_samples(x, b).p)
    assert incr["reject_holm"] and incr["diff"] < 0 and incr["g"] < 0
    s = pba.cell_summary(runs)
    assert set(s.n) == {10}


def test_compare_paired_synthetic():
    from scipy import stats as st
    base = [10.0, 20.0, 5.0, 40.0, 8.0, 12.0]
    rows = []
    for rep, b in enumerate(base):
        rows.append({"table": "cpu", "cpu_procs": 30, "cross_pct": 0, "policy": "original", "session": "s",
                     "rep": rep, "metric": b})
        rows.append({"table": "cpu", "cpu_procs": 30, "cross_pct": 0, "policy": "incr", "session": "s",
                     "rep": rep, "metric": b / 2})
    c = pba.compare_paired(pd.DataFrame(rows), alpha=0.05).iloc[0]
    assert c["pairs"] == 6 and c["pairs_lower"] == 6 and c["median_ratio"] == pytest.approx(0.5)
    # All six differences negative: exact two-sided p = 2 / 2**6
    assert c["p_wilcoxon"] == pytest.approx(2 / 64)
    assert c["p_wilcoxon"] == pytest.approx(st.wilcoxon([b / 2 for b in base], base).pvalue)


def test_median_ratio_interval_brackets_the_median_and_is_nan_when_degenerate_synthetic():
    lo, hi = pba.median_ratio_ci([0.8, 0.9, 1.0, 1.1, 0.95, 0.85], 0.05)
    assert lo <= 0.925 <= hi and lo >= 0.8 and hi <= 1.1
    assert all(np.isnan(pba.median_ratio_ci([0.5] * 6, 0.05)))  # all pairs equal: no spread to resample
    assert all(np.isnan(pba.median_ratio_ci([0.5, 0.6], 0.05)))


def test_holm_family_names_the_table_and_its_number_of_tests_synthetic():
    frame = pd.DataFrame({"table": ["cpu", "cpu", "cpu", "net"], "p": [0.01, np.nan, 0.3, 0.2]})
    assert pba.holm_family(frame) == ["CPU-load table, 2 tests"] * 3 + ["network-load table, 1 test"]

"""Presentation helpers of the priority-boost chapter: intervals against
hand-computed values, labels and the paper's table layout."""

import numpy as np
import pandas as pd
import pytest

from mobitrace.studies.priority_boost import analysis as pba
from mobitrace.core import published
from mobitrace.stats import welch
from mobitrace.stats.intervals import mean_ci_from_stats


@pytest.fixture(scope="module")
def stats(pb_repo):
    return published.load_stat_tables(pb_repo / "data" / "published" / "priority-boost.yaml")


def test_welch_diff_ci_hand_values():
    # 10/2/4 vs 8/2/4: se = sqrt(4/4 + 4/4) = sqrt(2), df = 2**2 / (2 * 1**2 / 3) = 6,
    # t_{0.975, 6} = 2.446912, half = 2.446912 * sqrt(2) = 3.460462.
    lo, hi = welch.welch_diff_ci(10, 2, 4, 8, 2, 4, 0.05)
    assert lo == pytest.approx(2 - 3.460462, abs=1e-5)
    assert hi == pytest.approx(2 + 3.460462, abs=1e-5)
    assert all(np.isnan(welch.welch_diff_ci(1, 0, 10, 2, 0, 10, 0.05)))


def test_mean_ci_hand_values():
    # 10 ± t_{0.975, 3} * 2 / sqrt(4) = 10 ± 3.182446
    lo, hi = mean_ci_from_stats(10, 2, 4, 0.05)
    assert (lo, hi) == (pytest.approx(10 - 3.182446, abs=1e-5), pytest.approx(10 + 3.182446, abs=1e-5))
    lo, hi = mean_ci_from_stats([80.0], [0.0], [10], 0.05)
    assert lo[0] == hi[0] == 80.0


def test_gain_pct_ci_hand_values():
    # Baseline 10, policy 8: gain 20% of the baseline; interval (2 ± 3.460462) * 100 / 10.
    gain, lo, hi = pba.gain_pct_ci(8, 2, 4, 10, 2, 4, 0.05)
    assert gain == pytest.approx(20.0)
    assert lo == pytest.approx(-14.60462, abs=1e-4)
    assert hi == pytest.approx(54.60462, abs=1e-4)


def test_gain_pct_ci_never_above_100_synthetic():
    # policy 2 s vs baseline 10 s (sd 8, n 3): 80% faster, the Welch upper bound reaches past 100%
    lo_raw, hi_raw = welch.welch_diff_ci(10, 8, 3, 2, 1, 3, 0.05)
    assert hi_raw * 100 / 10 > 100
    gain, lo, hi = pba.gain_pct_ci(2, 1, 3, 10, 8, 3, 0.05)
    assert gain == pytest.approx(80.0) and hi == 100.0 and lo == pytest.approx(lo_raw * 10)


def test_interval_rows_and_extent_give_the_precomputed_interval():
    frame = pd.DataFrame({"label": ["a", "b"], "mean": [1.0, 5.0], "ci_lo": [0.5, 4.0], "ci_hi": [2.0, 7.0]})
    rows = pba.interval_rows(frame)
    assert len(rows) == 6 and set(rows.columns) == {"label", "value", "bound"}
    a = rows.loc[rows["label"] == "a", "value"]
    assert a.median() == 1.0 and pba.extent(a) == (0.5, 2.0)
    assert pba.extent(rows.loc[rows["label"] == "b", "value"]) == (4.0, 7.0)


def test_labels_and_printed_grid(stats):
    assert pba.condition_label(10.0, 0) == "10 proc, 0%"
    grid = pba.printed_grid(stats, "transfer_cpu")
    assert list(grid["policy"]) == ["Original", "INCR", "DECR"]
    assert list(grid.columns[1:]) == [f"{p} proc, 0%" for p in (0, 1, 10, 20, 30)]
    assert grid.loc[0, "0 proc, 0%"] == "80.8/0.63"
    assert published.table_location(stats, "transfer_cpu").startswith("§4")


def test_published_means_intervals(stats):
    m = pba.published_means(stats, "transfer_cpu", 0.05)
    row = m[(m["policy"] == "original") & (m["cpu_procs"] == 0)].iloc[0]
    # 80.8 ± t_{0.975, 9} * 0.63 / sqrt(10) = 80.8 ± 2.262157 * 0.199223
    assert row["ci_lo"] == pytest.approx(80.8 - 0.450675, abs=1e-5)
    assert row["policy_name"] == "Original" and row["condition"] == "0 proc, 0%"

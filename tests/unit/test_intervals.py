"""Which interval each kind of statistic gets (mobitrace.stats.intervals,
mobitrace.stats.resampling.bca_ci): hand-computed t intervals, scipy's BCa
on a fixed sample, the coverage at n = 5 on synthetic data, no interval at
n = 2, and bounds clipped to the possible range."""

import math

import numpy as np
import pytest
from scipy import stats

from mobitrace.stats import resampling as rs
from mobitrace.stats.intervals import MIN_N, PERCENTILE_MIN_N, clip, diff_ci, mean_ci, mean_ci_from_stats, ratio_ci


def test_mean_ci_textbook_t_interval():
    # 1..5: mean 3, s^2 = 2.5, se = sqrt(2.5 / 5) = 0.707107, t_{0.975, 4} = 2.776445:
    # 3 -+ 1.963243 (any t table; e.g. Moore, McCabe & Craig, Table D, df = 4).
    m, lo, hi = mean_ci([1, 2, 3, 4, 5], 0.05)
    assert m == 3.0
    assert lo == pytest.approx(3 - 1.963243, abs=1e-6) and hi == pytest.approx(3 + 1.963243, abs=1e-6)
    # 90%: t_{0.95, 4} = 2.131847 -> half 1.507443
    _, lo, hi = mean_ci([1, 2, 3, 4, 5], 0.10)
    assert hi - 3 == pytest.approx(1.507443, abs=1e-6)


def test_diff_ci_welch_hand_values():
    # a = 1..5 (mean 3, s^2 2.5), b = 2, 4, 6 (mean 4, s^2 4): se^2 = 0.5 + 4/3 = 1.833333,
    # Welch df = 1.833333^2 / (0.5^2 / 4 + (4/3)^2 / 2) = 3.532847.
    d, lo, hi = diff_ci([1, 2, 3, 4, 5], [2, 4, 6], 0.05)
    se = math.sqrt(2.5 / 5 + 4 / 3)
    df = se ** 4 / ((2.5 / 5) ** 2 / 4 + (4 / 3) ** 2 / 2)
    assert df == pytest.approx(3.532847, abs=1e-6)
    half = stats.t.ppf(0.975, df) * se
    assert d == -1.0 and lo == pytest.approx(-1 - half) and hi == pytest.approx(-1 + half)
    assert diff_ci([2, 2, 2], [1, 1, 1], 0.05) == (1.0, 1.0, 1.0)  # no spread: a degenerate interval


def test_bca_ci_is_scipys_bca_on_a_fixed_sample():
    x = np.array([0.81, 0.92, 1.04, 0.88, 1.21, 0.97, 0.79, 1.10])
    ref = stats.bootstrap((x,), np.median, method="BCa", n_resamples=2000, confidence_level=0.95,
                          rng=np.random.default_rng(rs.SEED)).confidence_interval
    lo, hi = rs.bca_ci((x,), np.median, 0.05, 2000, rs.SEED)
    assert (lo, hi) == (ref.low, ref.high)
    assert lo < np.median(x) < hi and x.min() <= lo and hi <= x.max()
    assert rs.bca_ci((x,), np.median, 0.05) == rs.bca_ci((x,), np.median, 0.05)  # seeded


def _percentile_mean(x, rng, n_boot=1000):
    return rs.percentile_ci(x[rng.integers(0, len(x), size=(n_boot, len(x)))].mean(axis=1), 0.05)


def _ratio(a, b, axis=-1):
    return np.mean(a, axis=axis) / np.mean(b, axis=axis)


@pytest.mark.parametrize("dist", ["normal", "lognormal"])
def test_synthetic_coverage_at_n5_t_forms_cover_bootstraps_do_not(dist):
    # 400 synthetic experiments of n = 5 runs per condition (fixed seed): the share
    # whose 95% interval holds the true mean / ratio of means.
    rng, reps, n = np.random.default_rng(20261128), 400, 5
    mu_a, mu_b, s = 10.0, 12.0, 0.3
    hits = dict.fromkeys(["t_mean", "pct_mean", "t_ratio", "pct_ratio", "bca_ratio"], 0)
    for _ in range(reps):
        if dist == "normal":
            a, b, true_a, true_b = rng.normal(mu_a, s * mu_a, n), rng.normal(mu_b, s * mu_b, n), mu_a, mu_b
        else:  # E[lognormal(log mu, s)] = mu exp(s^2 / 2)
            a, b = rng.lognormal(math.log(mu_a), s, n), rng.lognormal(math.log(mu_b), s, n)
            true_a, true_b = mu_a * math.exp(s * s / 2), mu_b * math.exp(s * s / 2)
        _, lo, hi = mean_ci(a, 0.05)
        hits["t_mean"] += lo <= true_a <= hi
        lo, hi = _percentile_mean(a, rng)
        hits["pct_mean"] += lo <= true_a <= hi
        _, lo, hi = ratio_ci(a, b, 0.05)
        hits["t_ratio"] += lo <= true_a / true_b <= hi
        for name, method in (("pct_ratio", "percentile"), ("bca_ratio", "BCa")):
            ci = stats.bootstrap((a, b), _ratio, paired=False, method=method, n_resamples=1000,
                                 rng=np.random.default_rng(rs.SEED)).confidence_interval
            hits[name] += ci.low <= true_a / true_b <= ci.high
    cover = {k: v / reps for k, v in hits.items()}
    assert cover["t_mean"] >= 0.93 and cover["t_ratio"] >= 0.93, cover
    assert cover["pct_mean"] < 0.91 and cover["pct_ratio"] < 0.91 and cover["bca_ratio"] < 0.92, cover


def test_no_interval_below_min_n():
    assert MIN_N == 3 and PERCENTILE_MIN_N > MIN_N
    assert all(math.isnan(v) for v in mean_ci([73.0, 73.0], 0.05)[1:])
    assert all(math.isnan(v) for v in mean_ci([70.0, 76.0], 0.05)[1:])
    assert all(math.isnan(v) for v in ratio_ci([2.0, 4.0], [1.0, 1.5, 2.0], 0.05)[1:])
    assert all(math.isnan(v) for v in diff_ci([2.0, 4.0], [1.0, 1.5, 2.0], 0.05)[1:])
    assert all(math.isnan(v) for v in rs.bca_ci(([0.5, 0.6],), np.median, 0.05))
    assert not any(math.isnan(v) for v in mean_ci([70.0, 73.0, 76.0], 0.05))


def test_intervals_are_clipped_to_the_possible_range():
    # a saving in % of 96, 99, 100.5 (a rounding overshoot): the t interval reaches past 100
    m, lo, hi = mean_ci([96.0, 99.0, 100.5], 0.05)
    assert hi > 100
    m, lo, hi = mean_ci([96.0, 99.0, 100.5], 0.05, possible=(-math.inf, 100.0))
    assert hi == 100.0 and lo < m
    lo, hi = mean_ci_from_stats([0.1, -0.5], [0.5, 0.5], [3, 3], 0.05, possible=(-0.9, math.inf))
    assert list(lo) == [-0.9, -0.9] and hi[0] == pytest.approx(0.1 + stats.t.ppf(0.975, 2) * 0.5 / math.sqrt(3))
    assert clip(1.0, 2.0) == (1.0, 2.0)
    assert all(math.isnan(v) for v in clip(math.nan, math.nan, (0.0, 1.0)))
    # a ratio of positive means has positive bounds: a saving 1 - R never exceeds 100%
    r, lo, hi = ratio_ci([0.01, 0.2, 3.0], [5.0, 9.0, 40.0], 0.05)
    assert 0 < lo < r < hi

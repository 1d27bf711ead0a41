"""Welch t, Satterthwaite df, Hedges' g, rounding ranges and Holm against
published and hand-computed values."""

import math

import numpy as np
import pytest

from mobitrace.stats import welch

# R's documented example: t.test(extra ~ group, data = sleep) (Welch Two Sample
# t-test, R `stats` package, ?t.test): t = -1.8608, df = 17.776, p-value = 0.07939.
SLEEP_1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0]
SLEEP_2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4]


def test_welch_samples_matches_r_sleep_example():
    r = welch.welch_samples(SLEEP_1, SLEEP_2)
    assert r.t == pytest.approx(-1.8608, abs=1e-4)
    assert r.df == pytest.approx(17.776, abs=1e-3)
    assert r.p == pytest.approx(0.07939, abs=1e-5)


def test_welch_from_stats_matches_r_sleep_example():
    a, b = np.array(SLEEP_1), np.array(SLEEP_2)
    r = welch.welch_from_stats(a.mean(), a.std(ddof=1), 10, b.mean(), b.std(ddof=1), 10)
    assert (r.t, r.df, r.p) == pytest.approx((-1.8608, 17.776, 0.07939), abs=1e-3)


def test_welch_df_hand_cases():
    # Equal SDs and n: df = 2 (n - 1); one SD zero: df = n - 1 of the other group.
    assert float(welch.welch_df(1.0, 10, 1.0, 10)) == pytest.approx(18.0)
    assert float(welch.welch_df(0.63, 10, 0.0, 10)) == pytest.approx(9.0)
    # s1 = 2, n1 = 5; s2 = 1, n2 = 10: v1 = 0.8, v2 = 0.1 ->
    # df = 0.81 / (0.64/4 + 0.01/9) = 0.81 / 0.161111... = 5.02758...
    assert float(welch.welch_df(2.0, 5, 1.0, 10)) == pytest.approx(0.81 / (0.16 + 0.01 / 9))
    assert math.isnan(float(welch.welch_df(0.0, 10, 0.0, 10)))


def test_welch_hand_case_t():
    # m1 - m2 = 1, s = 1, n = 10: t = 1 / sqrt(0.2) = 2.2360680
    r = welch.welch_from_stats(1.0, 1.0, 10, 0.0, 1.0, 10)
    assert r.t == pytest.approx(math.sqrt(5))
    assert r.df == pytest.approx(18.0)


def test_hedges_g_hand_case():
    # d = 1, J = 1 - 3/(4*20 - 9) = 68/71; Var = 20/100 + g^2 / (2 (20 - 3.94))
    g, lo, hi = welch.hedges_g(1.0, 1.0, 10, 0.0, 1.0, 10, 0.05)
    J = 1 - 3 / 71
    assert g == pytest.approx(J)
    half = 1.959963985 * math.sqrt(0.2 + J**2 / (2 * 16.06))
    assert (lo, hi) == pytest.approx((J - half, J + half))


def test_hedges_g_samples_sign_and_zero_sd():
    g, lo, hi = welch.hedges_g_samples([2, 3, 4], [1, 2, 3], 0.05)
    assert g > 0 and lo < g < hi
    assert all(math.isnan(x) for x in welch.hedges_g(1, 0, 10, 0, 0, 10, 0.05))


def test_holm_hand_case():
    # Sorted p = 0.01, 0.03, 0.04 with m = 3: 0.03, 0.06, 0.06 (monotone).
    reject, adj = welch.holm([0.01, 0.04, 0.03, float("nan")], alpha=0.05)
    assert adj[:3] == pytest.approx([0.03, 0.06, 0.06])
    assert list(reject[:3]) == [True, False, False]
    assert math.isnan(adj[3]) and not reject[3]


def test_holm_matches_statsmodels_multipletests_synthetic():
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(7)
    for m in (1, 2, 5, 9, 40):
        p = rng.uniform(0, 0.2, m)
        p[: m // 3] = p[0]  # ties
        for alpha in (0.05, 0.1):
            reject, adj = welch.holm(p, alpha)
            ref_reject, ref_adj, _, _ = multipletests(p, alpha=alpha, method="holm")
            assert list(reject) == list(ref_reject)
            assert adj.tobytes() == ref_adj.tobytes()  # the same floats, bit for bit


def test_rounding_box():
    assert welch.rounding_box(80.8, 1) == pytest.approx((80.75, 80.85))
    assert welch.rounding_box(0.0, 2, nonnegative=True) == pytest.approx((0.0, 0.005))
    assert welch.rounding_box(81.0, 0) == pytest.approx((80.5, 81.5))


def test_p_range_contains_point_estimate_synthetic():
    p = welch.welch_from_stats(82.4, 2.55, 10, 80.1, 0.32, 10).p
    lo, hi = welch.p_range(82.4, 1, 2.55, 2, 10, 80.1, 1, 0.32, 2, 10)
    assert lo < p < hi
    # Extremes are attained at the box's corners for the means: largest
    # difference with smallest SDs gives the smallest p (hand check).
    corner = welch.welch_from_stats(82.45, 2.545, 10, 80.05, 0.315, 10).p
    assert lo == pytest.approx(corner, rel=1e-3)


def test_p_range_overlapping_means_reach_one_synthetic():
    lo, hi = welch.p_range(81.0, 0, 0.82, 2, 10, 80.8, 1, 0.79, 2, 10)
    assert hi == 1.0 and lo < 0.6


@pytest.mark.parametrize("stats", [(82.4, 1, 2.55, 2, 10, 80.1, 1, 0.32, 2, 10),   # equal mean precisions
                                   (81.0, 0, 3.0, 0, 5, 75.3, 1, 0.0, 0, 5),     # an SD box clipped at 0
                                   (5.0, 0, 0.0, 0, 4, 5.0, 0, 0.0, 0, 4)])      # both SDs can be 0
def test_p_lattice_equals_p_grid_on_the_meshgrid_synthetic(stats):
    m1, d1, s1, e1, n1, m2, d2, s2, e2, n2 = stats
    boxes = [welch.rounding_box(m1, d1), welch.rounding_box(s1, e1, True), welch.rounding_box(m2, d2), welch.rounding_box(s2, e2, True)]
    axes = [np.linspace(lo, hi, 21) for lo, hi in boxes]
    M1, S1, M2, S2 = np.meshgrid(*axes, indexing="ij")
    np.testing.assert_array_equal(welch._p_lattice(axes, n1, n2), welch._p_grid(M1, S1, n1, M2, S2, n2))  # bit for bit


def test_p_consistent():
    assert welch.p_consistent("=", 0.0031, 4, 0.0014, 0.0069)
    assert not welch.p_consistent("<", 0.0001, 4, 0.015, 0.024)
    assert welch.p_consistent("<", 0.0001, 4, 0.00005, 0.01)
    assert not welch.p_consistent("=", 0.5, 1, 0.0, 0.44)
    assert welch.p_consistent("=", 0.5, 1, 0.0, 0.45)

"""OLS, intervals and inverse prediction (mobitrace.stats.cpufit) against
published values, hand computation and statsmodels on synthetic data."""

import math

import numpy as np
import pytest
from scipy import stats

from mobitrace.stats import cpufit
from mobitrace.stats.intervals import mean_ci
from mobitrace.stats.welch import welch_samples

# Anscombe (1973), "Graphs in statistical analysis", Am. Stat. 27:17-21,
# data set I: fitted line y = 3.00 + 0.500 x, r^2 = 0.67, n = 11.
ANSCOMBE_X = [10, 8, 13, 9, 11, 14, 6, 4, 12, 7, 5]
ANSCOMBE_Y1 = [8.04, 6.95, 7.58, 8.81, 8.33, 9.96, 7.24, 4.26, 10.84, 4.82, 5.68]


def test_ols_anscombe_published_values():
    s = cpufit.fit_summary(cpufit.fit_line(ANSCOMBE_X, ANSCOMBE_Y1), alpha=0.05)
    assert s["intercept"] == pytest.approx(3.0001, abs=1e-4)
    assert s["slope"] == pytest.approx(0.5001, abs=1e-4)
    assert s["r2"] == pytest.approx(0.6665, abs=1e-4)
    assert s["n"] == 11
    # Residual standard error 1.2366 (Anscombe's table: "standard error of
    # estimate of b" 0.118 -> s = 0.118 * sqrt(Sxx = 110)).
    assert s["resid_sd"] == pytest.approx(1.2366, abs=1e-4)
    assert s["resid_sd"] / math.sqrt(110) == pytest.approx(0.118, abs=1e-3)


def test_bands_match_textbook_formula_synthetic():
    rng = np.random.default_rng(3)
    x = np.linspace(0.1, 5, 20)
    y = 2 + 3 * x + rng.normal(0, 0.5, x.size)
    res = cpufit.fit_line(x, y)
    x0 = np.array([1.0, 6.0, 12.8])
    b = cpufit.bands(res, x0, alpha=0.05)
    n, xbar, sxx = x.size, x.mean(), ((x - x.mean()) ** 2).sum()
    s = math.sqrt(res.mse_resid)
    t = stats.t.ppf(0.975, n - 2)
    yhat = res.params[0] + res.params[1] * x0
    half_mean = t * s * np.sqrt(1 / n + (x0 - xbar) ** 2 / sxx)
    half_obs = t * s * np.sqrt(1 + 1 / n + (x0 - xbar) ** 2 / sxx)
    np.testing.assert_allclose(b["mean"], yhat)
    np.testing.assert_allclose(b["mean_ci_upper"] - b["mean"], half_mean)
    np.testing.assert_allclose(b["obs_ci_upper"] - b["mean"], half_obs)


def test_inverse_prediction_exact_line_hand_case():
    # y = 1 + 2x exactly: s = 0, so g = 0 and the interval is the point
    # x0 = (y0 - 1) / 2 = 24.5 for y0 = 50.
    res = cpufit.fit_line([0, 1, 2, 3], [1, 3, 5, 7])
    inv = cpufit.inverse_predict(res, 50.0, alpha=0.05)
    assert inv.x0 == pytest.approx(24.5)
    assert inv.bounded and inv.g == pytest.approx(0, abs=1e-20)
    assert inv.lower == pytest.approx(24.5) and inv.upper == pytest.approx(24.5)


@pytest.mark.parametrize("m,lower_col,upper_col", [(math.inf, "mean_ci_upper", "mean_ci_lower"),
                                                   (1, "obs_ci_upper", "obs_ci_lower")])
@pytest.mark.parametrize("slope", [4.0, -4.0])
def test_inverse_prediction_inverts_statsmodels_bands_synthetic(m, lower_col, upper_col, slope):
    """The interval's ends are where statsmodels' band crosses y0."""
    rng = np.random.default_rng(11)
    x = np.repeat([0.1, 0.25, 0.5, 1, 2.5, 5, 10], 3)
    y = 5 + slope * x + rng.normal(0, 1.5, x.size) + (60 if slope < 0 else 0)
    res = cpufit.fit_line(x, y)
    y0 = 50.0 if slope > 0 else 30.0
    inv = cpufit.inverse_predict(res, y0, alpha=0.05, m=m)
    assert inv.bounded and inv.lower < inv.x0 < inv.upper
    b = cpufit.bands(res, [inv.lower, inv.upper], alpha=0.05)
    if slope > 0:
        assert b[lower_col].iloc[0] == pytest.approx(y0, abs=1e-9)
        assert b[upper_col].iloc[1] == pytest.approx(y0, abs=1e-9)
    else:
        assert b[upper_col].iloc[0] == pytest.approx(y0, abs=1e-9)
        assert b[lower_col].iloc[1] == pytest.approx(y0, abs=1e-9)


def test_inverse_prediction_prediction_band_is_wider_synthetic():
    rng = np.random.default_rng(5)
    x = np.linspace(0, 10, 30)
    y = 3 + 2 * x + rng.normal(0, 1, x.size)
    res = cpufit.fit_line(x, y)
    mean = cpufit.inverse_predict(res, 15.0, alpha=0.05)
    new = cpufit.inverse_predict(res, 15.0, m=1, alpha=0.05)
    assert new.lower < mean.lower < mean.x0 < mean.upper < new.upper


def test_inverse_prediction_unbounded_when_slope_not_significant_synthetic():
    rng = np.random.default_rng(7)
    x = np.linspace(0, 1, 10)
    y = 20 + 0.01 * x + rng.normal(0, 5, x.size)
    inv = cpufit.inverse_predict(cpufit.fit_line(x, y), 50.0, alpha=0.05)
    assert inv.g >= 1 and not inv.bounded
    assert math.isnan(inv.lower) and math.isnan(inv.upper)


def test_fit_line_rejects_degenerate_input():
    with pytest.raises(ValueError):
        cpufit.fit_line([1, 2], [1, 2])
    with pytest.raises(ValueError):
        cpufit.fit_line([1, 1, 1], [1, 2, 3])


def test_mean_ci_hand_case():
    # mean 2, sd 1, n 3: 2 +- t_{0.975,2} / sqrt(3) = 2 +- 4.302653 * 0.577350
    mean, lo, hi = mean_ci([1, 2, 3], 0.05)
    assert mean == 2
    assert hi - mean == pytest.approx(4.302653 / math.sqrt(3), rel=1e-6)
    assert mean - lo == pytest.approx(hi - mean)
    assert math.isnan(mean_ci([4.0], 0.05)[1])


def test_welch_hand_case():
    # a = (1,2,3), b = (4,5,6,7,8): means 2 and 6, diff -4,
    # se^2 = 1/3 + 2.5/5 = 0.8333, t = -4 / 0.912871 = -4.381780,
    # Satterthwaite df = 0.8333^2 / ((1/3)^2/2 + 0.5^2/4) = 5.882353.
    r = welch_samples([1, 2, 3], [4, 5, 6, 7, 8])
    assert r.t == pytest.approx(-4.381780, rel=1e-6)
    assert r.df == pytest.approx(5.882353, rel=1e-6)


def test_r2_ci_fisher_z_hand_case():
    # R^2 = 0.81, n = 28, positive slope: r = 0.9, z = atanh(0.9) = 1.47222,
    # half-width 1.95996 / sqrt(25) = 0.391993 -> r in [tanh(1.08023),
    # tanh(1.86421)] = [0.79328, 0.95306], R^2 in [0.62930, 0.90834].
    lo, hi = cpufit.r2_ci(0.81, 28, slope=2.0, alpha=0.05)
    assert lo == pytest.approx(0.62930, abs=1e-4)
    assert hi == pytest.approx(0.90834, abs=1e-4)
    # The sign of the slope does not change the interval of R^2.
    assert cpufit.r2_ci(0.81, 28, slope=-2.0, alpha=0.05) == pytest.approx((lo, hi))


def test_r2_ci_lower_bound_zero_when_r_interval_contains_zero():
    # R^2 = 0.04, n = 10: r = 0.2, z = 0.20273 +- 1.95996 / sqrt(7) = 0.74080
    # -> r in [tanh(-0.53807), tanh(0.94353)] = [-0.49152, 0.73684].
    lo, hi = cpufit.r2_ci(0.04, 10, slope=1.0, alpha=0.05)
    assert lo == 0.0
    assert hi == pytest.approx(0.73684 ** 2, abs=1e-4)
    assert all(math.isnan(v) for v in cpufit.r2_ci(0.5, 3, slope=1.0, alpha=0.05))


def test_ratio_ci_hand_case():
    # numerator [2, 4]: mean 3, s^2 = 2 -> v = 2 / (2 * 9) = 1/9; denominator
    # [1, 1, 1]: mean 1, s^2 = 0 -> v = 0. se(log R) = 1/3, Welch df = 1,
    # t_{0.975, 1} = 12.7062: R = 3, interval 3 exp(-+12.7062 / 3).
    ratio, lo, hi = cpufit.ratio_ci([2, 4], [1, 1, 1], alpha=0.05, min_n=2)  # the formula at n = 2
    assert all(math.isnan(v) for v in cpufit.ratio_ci([2, 4], [1, 1, 1], alpha=0.05)[1:])  # the default: none
    assert ratio == pytest.approx(3.0)
    assert lo == pytest.approx(3 * math.exp(-12.7062 / 3), rel=1e-4)
    assert hi == pytest.approx(3 * math.exp(12.7062 / 3), rel=1e-4)
    assert lo < ratio < hi


def test_ratio_ci_symmetric_on_log_scale_synthetic():
    a, b = [10.0, 11.0, 12.0], [5.0, 5.5, 6.0]
    r, lo, hi = cpufit.ratio_ci(a, b, alpha=0.05)
    ri, loi, hii = cpufit.ratio_ci(b, a, alpha=0.05)
    assert r * ri == pytest.approx(1.0)
    assert lo * hii == pytest.approx(1.0) and hi * loi == pytest.approx(1.0)
    assert math.log(hi / r) == pytest.approx(math.log(r / lo))
    assert all(math.isnan(v) for v in cpufit.ratio_ci([1.0], [1.0, 2.0], alpha=0.05)[1:])

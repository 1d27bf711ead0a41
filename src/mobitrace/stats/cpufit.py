"""Straight-line fits of CPU utilization on throughput, with intervals,
extrapolation and inverse prediction (the cpu-gbps study's Figure 1 and §3.2).

Model (ordinary least squares, one regressor): y_i = a + b x_i + e_i,
e_i ~ N(0, s^2) independent, with x the TCP throughput (Gbps) and y a CPU
utilization (%). With n points, xbar the mean of x, Sxx = sum (x_i - xbar)^2,
s^2 = SSE / (n - 2) and t = t_{1 - alpha/2, n - 2}:

    confidence interval of the mean at x0:  yhat(x0) +- t s sqrt(1/n + (x0 - xbar)^2 / Sxx)
    prediction interval of one new y at x0: yhat(x0) +- t s sqrt(1 + 1/n + (x0 - xbar)^2 / Sxx)

(Draper & Smith, Applied Regression Analysis, 3rd ed., 1998, §3.1; the
intervals are statsmodels' `get_prediction().summary_frame()` mean_ci and
obs_ci, which this module uses rather than re-implementing them.)

Inverse prediction (calibration): the throughput x at which CPU reaches y0.
The point estimate is x0 = (y0 - a) / b. Its 100(1 - alpha)% interval is the
set of x whose band at x contains y0 (inverting the band; Fieller's theorem
for the ratio (y0 - a) / b). Solving

    (y0 - a - b x)^2 = t^2 s^2 (c + 1/n + (x - xbar)^2 / Sxx)

with c = 0 for the mean CPU (confidence band, Fieller 1954) or c = 1/m for the
mean of m new observations (c = 1: the prediction band), and
g = t^2 s^2 / (b^2 Sxx), gives

    x_L, x_U = xbar + [ (x0 - xbar) -+ (t s / |b|) sqrt( (x0 - xbar)^2 / Sxx + (1 - g)(c + 1/n) ) ] / (1 - g)

(Draper & Smith 1998, §3.2, eq. 3.2.6; Fieller, J. R. Stat. Soc. B 16:175-185,
1954; Brown, Measurement, Regression, and Calibration, 1993, §2.1). When
g >= 1 the slope is not significantly different from zero at level alpha
and the set is not a finite interval: the bounds are reported as NaN and
`bounded` is False.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

# The two names used, from their modules: statsmodels.api would also import its
# formula, graphics and time-series packages in every stage using this.
from statsmodels.regression.linear_model import OLS
from statsmodels.tools.tools import add_constant

from mobitrace.stats.intervals import ratio_ci  # noqa: F401  (cpufit.ratio_ci: its callers' name)


def fit_line(x, y):
    """OLS fit of y = a + b x (statsmodels RegressionResults); params are
    [const, x]. Needs at least 3 points with two distinct x."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if len(x) != len(y) or len(x) < 3:
        raise ValueError(f"need >= 3 paired points, got {len(x)} x and {len(y)} y")
    if np.ptp(x) == 0:
        raise ValueError("all x are equal: no line can be fitted")
    return OLS(y, add_constant(x, has_constant="add")).fit()


def bands(res, x_new, alpha: float) -> pd.DataFrame:
    """Fitted mean with confidence (mean_ci_*) and prediction (obs_ci_*)
    intervals at x_new, from statsmodels (formulas in the module docstring)."""
    x_new = np.atleast_1d(np.asarray(x_new, dtype=float))
    frame = res.get_prediction(add_constant(x_new, has_constant="add")).summary_frame(alpha=alpha)
    frame.insert(0, "x", x_new)
    return frame.reset_index(drop=True)


@dataclass(frozen=True)
class InversePrediction:
    """x at which the line reaches y0, with its interval."""

    y0: float
    x0: float
    lower: float
    upper: float
    bounded: bool
    g: float


def inverse_predict(res, y0: float, alpha: float, m: float = math.inf) -> InversePrediction:
    """Inverse prediction of x at y0 by inverting the confidence band
    (m = inf: the mean CPU reaches y0; Fieller's interval) or the prediction
    band for the mean of m new observations (m = 1: one new run).
    Formula and references in the module docstring."""
    a, b = (float(v) for v in res.params)
    x = np.asarray(res.model.exog[:, 1], dtype=float)
    n = len(x)
    xbar = x.mean()
    sxx = float(((x - xbar) ** 2).sum())
    s = math.sqrt(float(res.mse_resid))
    t = float(stats.t.ppf(1 - alpha / 2, res.df_resid))
    c = 0.0 if math.isinf(m) else 1.0 / m
    if b == 0:
        return InversePrediction(y0, math.nan, math.nan, math.nan, False, math.inf)
    x0 = (y0 - a) / b
    g = t * t * s * s / (b * b * sxx)
    if g >= 1:
        return InversePrediction(y0, x0, math.nan, math.nan, False, g)
    u0 = x0 - xbar
    half = (t * s / abs(b)) * math.sqrt(u0 * u0 / sxx + (1 - g) * (c + 1.0 / n))
    lo, hi = xbar + (u0 - half) / (1 - g), xbar + (u0 + half) / (1 - g)
    return InversePrediction(y0, x0, min(lo, hi), max(lo, hi), True, g)


def fit_summary(res, alpha: float) -> dict:
    """Slope and intercept with their 100(1 - alpha)% confidence intervals
    (t-based, statsmodels conf_int), R^2, residual s, n."""
    ci = np.asarray(res.conf_int(alpha=alpha))
    x = res.model.exog[:, 1]
    return {
        "n": int(res.nobs),
        "intercept": float(res.params[0]), "intercept_lo": float(ci[0, 0]), "intercept_hi": float(ci[0, 1]),
        "slope": float(res.params[1]), "slope_lo": float(ci[1, 0]), "slope_hi": float(ci[1, 1]),
        "slope_p": float(res.pvalues[1]),
        "r2": float(res.rsquared), "resid_sd": math.sqrt(float(res.mse_resid)),
        "x_min": float(np.min(x)), "x_max": float(np.max(x)),
    }


def r2_ci(r2: float, n: int, slope: float, alpha: float) -> tuple[float, float]:
    """Interval for the R^2 of a one-regressor line from Fisher's z of the
    correlation r = sign(slope) sqrt(R^2): z = atanh(r) +- z_{1-alpha/2} / sqrt(n - 3),
    back-transformed with tanh and squared (Fisher 1921; Sokal & Rohlf,
    Biometry, 3rd ed., 1995, §15.5). When the interval of r contains 0 the
    lower bound of R^2 is 0. Needs n > 3."""
    if n <= 3:
        return math.nan, math.nan
    r = math.copysign(math.sqrt(max(min(r2, 1.0), 0.0)), slope)
    if abs(r) >= 1:
        return 1.0, 1.0
    z, half = math.atanh(r), float(stats.norm.ppf(1 - alpha / 2)) / math.sqrt(n - 3)
    lo_r, hi_r = math.tanh(z - half), math.tanh(z + half)
    if lo_r <= 0 <= hi_r:
        return 0.0, max(lo_r * lo_r, hi_r * hi_r)
    lo, hi = sorted((lo_r * lo_r, hi_r * hi_r))
    return lo, hi

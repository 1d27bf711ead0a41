"""Confidence intervals: the one place that says which interval a chapter
gets, and when it gets none.

* A mean of n runs: the Student-t interval (`mean_ci`, `mean_ci_from_stats`).
* A ratio of two means (a saving, an x-fold, a % change): the t interval of
  the log ratio (`ratio_ci`); a difference of two means: Welch's t interval
  (`diff_ci`). At the few runs a condition has here a bootstrap interval,
  percentile or BCa alike, is too narrow (the synthetic coverage test in
  tests/unit/test_intervals.py measures it at n = 5); these are not.
* A statistic with no t form (a median of paired ratios): the BCa bootstrap
  (`mobitrace.stats.resampling.bca_ci`, scipy.stats.bootstrap).
* The plain percentile bootstrap only from `PERCENTILE_MIN_N` runs on, and
  for optima on a grid (an argmax, which no t form or BCa fits).
* Fewer than `MIN_N` runs: no interval (NaN).
* Bounds outside the values the quantity can take are clipped to them
  (`clip`): a saving cannot exceed 100%.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

# Two runs give the spread one degree of freedom and a bootstrap of them
# three distinct means: "73.0 [73.0, 73.0]" or [min, max] is not an interval.
MIN_N = 3
# From 30 runs on, the bootstrap distribution of a mean or ratio of means is
# near enough to normal for the plain percentile interval (the usual
# large-sample rule); below it, the t forms above.
PERCENTILE_MIN_N = 30


def clip(low, high, possible: tuple[float, float] | None = None):
    """(low, high) clipped to `possible` = (least, greatest) value the
    quantity can take; unchanged when `possible` is None. NaN stays NaN."""
    if possible is None:
        return low, high
    lo, hi = possible
    return np.clip(low, lo, hi), np.clip(high, lo, hi)


def mean_ci_from_stats(mean, sd, n, alpha: float, possible: tuple[float, float] | None = None):
    """mean ± t_{1-alpha/2, n-1} · sd / sqrt(n), elementwise (arrays or
    scalars): (low, high), clipped to `possible`. For published summaries,
    whose n is as printed."""
    half = stats.t.ppf(1 - alpha / 2, np.asarray(n, float) - 1) * np.asarray(sd, float) / np.sqrt(n)
    return clip(np.asarray(mean, float) - half, np.asarray(mean, float) + half, possible)


def mean_ci(values, alpha: float, possible: tuple[float, float] | None = None,
            min_n: int = MIN_N) -> tuple[float, float, float]:
    """Mean of `values` and its 100(1 - alpha)% t interval (`mean_ci_from_stats`
    with the sample SD), clipped to `possible`: (mean, low, high), NaN
    bounds below `min_n` values."""
    x = np.asarray(values, dtype=float)
    m = float(x.mean()) if len(x) else math.nan
    if len(x) < max(min_n, 2):
        return m, math.nan, math.nan
    low, high = mean_ci_from_stats(m, x.std(ddof=1), len(x), alpha, possible)
    return m, float(low), float(high)


def ratio_ci(numerator, denominator, alpha: float, min_n: int = MIN_N) -> tuple[float, float, float]:
    """Ratio of two independent sample means, mean(numerator) / mean(denominator),
    with a 100(1 - alpha)% interval from the delta method on the log scale:
    log R +- t_{1-alpha/2, df} sqrt(v_n + v_d), v = s^2 / (k mean^2) for each
    sample of k values, df by Welch-Satterthwaite on v_n and v_d (Welch 1947;
    the delta method for a log ratio of means, e.g. Casella & Berger,
    Statistical Inference, 2nd ed., 2002, §5.5.4). The bounds are positive,
    as a ratio of positive means is. NaN bounds when a mean is not positive
    or a sample has fewer than `min_n` values; the ratio twice when neither
    sample varies."""
    a, b = np.asarray(numerator, dtype=float), np.asarray(denominator, dtype=float)
    ma, mb = float(a.mean()), float(b.mean())
    ratio = ma / mb
    if min(len(a), len(b)) < max(min_n, 2) or ma <= 0 or mb <= 0:
        return ratio, math.nan, math.nan
    va = float(a.var(ddof=1)) / (len(a) * ma * ma)
    vb = float(b.var(ddof=1)) / (len(b) * mb * mb)
    se = math.sqrt(va + vb)
    if se == 0:
        return ratio, ratio, ratio
    df = (va + vb) ** 2 / (va * va / (len(a) - 1) + vb * vb / (len(b) - 1))
    t = float(stats.t.ppf(1 - alpha / 2, df))
    return ratio, ratio * math.exp(-t * se), ratio * math.exp(t * se)


def diff_ci(a, b, alpha: float, min_n: int = MIN_N) -> tuple[float, float, float]:
    """mean(a) - mean(b) with Welch's 100(1 - alpha)% t interval
    (scipy.stats.ttest_ind, equal_var=False): (difference, low, high). NaN
    bounds below `min_n` values in a sample; the difference twice when
    neither sample varies."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    d = float(a.mean() - b.mean())
    if min(len(a), len(b)) < max(min_n, 2):
        return d, math.nan, math.nan
    if np.ptp(a) == 0 and np.ptp(b) == 0:
        return d, d, d
    ci = stats.ttest_ind(a, b, equal_var=False).confidence_interval(1 - alpha)
    return d, float(ci.low), float(ci.high)

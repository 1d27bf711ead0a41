"""Student-t confidence interval of a mean: the one definition every chapter
uses, from raw values or from a sample's mean, SD and n."""

from __future__ import annotations

import numpy as np
from scipy import stats


def mean_ci_from_stats(mean, sd, n, level: float):
    """mean ± t_{(1+level)/2, n-1} · sd / sqrt(n), elementwise (arrays or
    scalars): (low, high)."""
    half = stats.t.ppf(0.5 + level / 2, np.asarray(n, float) - 1) * np.asarray(sd, float) / np.sqrt(n)
    return np.asarray(mean, float) - half, np.asarray(mean, float) + half


def mean_ci(values, level: float) -> tuple[float, float, float]:
    """Mean of `values` and its t interval at `level` (`mean_ci_from_stats`
    with the sample SD): (mean, low, high), NaN bounds below two values."""
    x = np.asarray(values, dtype=float)
    m = float(x.mean())
    if len(x) < 2:
        return m, float("nan"), float("nan")
    low, high = mean_ci_from_stats(m, x.std(ddof=1), len(x), level)
    return m, float(low), float(high)

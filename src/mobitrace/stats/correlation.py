"""Spearman's rho with its p-value and a confidence interval, so that a
correlation test is reported with its effect size and interval."""

from __future__ import annotations

import numpy as np
from scipy import stats


def spearman_ci(x, y, alpha: float) -> tuple[float, float, float, float]:
    """(rho, p, low, high): scipy's Spearman rho and two-sided p, and the
    100(1 - alpha)% Fisher-z interval of rho with the Bonett-Wright standard error
    sqrt((1 + rho²/2) / (n - 3)) (Bonett & Wright, Psychometrika 65 (2000)
    23-28). Fewer than 4 points: NaN interval."""
    res = stats.spearmanr(x, y)
    rho, p, n = float(res.statistic), float(res.pvalue), len(x)
    if n < 4 or not np.isfinite(rho):
        return rho, p, float("nan"), float("nan")
    z = np.arctanh(np.clip(rho, -1 + 1e-12, 1 - 1e-12))
    half = stats.norm.ppf(1 - alpha / 2) * np.sqrt((1 + rho ** 2 / 2) / (n - 3))
    return rho, p, float(np.tanh(z - half)), float(np.tanh(z + half))

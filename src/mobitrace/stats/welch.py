"""Welch (Satterthwaite) t-tests, Hedges' g, rounding-interval p ranges and
family-wise correction, for the priority-boost study.

The computations are scipy's and statsmodels' (Holm's steps are written out,
see `holm`); this module chooses them,
adds the Welch-Satterthwaite degrees of freedom that
scipy.stats.ttest_ind_from_stats does not return, and derives the range of
p-values that rounded summary statistics allow.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cache

import numpy as np
from scipy import optimize, stats
from statsmodels.stats.meta_analysis import effectsize_smd


@dataclass(frozen=True)
class Welch:
    t: float
    df: float
    p: float


def welch_df(sd1, n1, sd2, n2):
    """Welch-Satterthwaite degrees of freedom.

    With v_i = s_i**2 / n_i,

        df = (v1 + v2)**2 / (v1**2 / (n1 - 1) + v2**2 / (n2 - 1)).

    References: B. L. Welch, Biometrika 34 (1947) 28-35; F. E. Satterthwaite,
    Biometrics Bulletin 2 (1946) 110-114; Neter, Kutner, Nachtsheim et al.,
    Applied Linear Statistical Models, 4th ed., pp. 971-973 (the paper's [5]).
    NaN when both standard deviations are zero.
    """
    v1 = np.asarray(sd1, float) ** 2 / np.asarray(n1, float)
    v2 = np.asarray(sd2, float) ** 2 / np.asarray(n2, float)
    den = v1**2 / (np.asarray(n1, float) - 1) + v2**2 / (np.asarray(n2, float) - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, (v1 + v2) ** 2 / np.where(den > 0, den, 1.0), np.nan)


def welch_from_stats(mean1, sd1, n1, mean2, sd2, n2) -> Welch:
    """Welch's two-sided t-test from summary statistics.

    t = (m1 - m2) / sqrt(s1**2/n1 + s2**2/n2), df by `welch_df`, p = 2 P(T_df > |t|);
    computed by scipy.stats.ttest_ind_from_stats(..., equal_var=False).
    Reference: Welch (1947); scipy.stats.ttest_ind_from_stats documentation.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        res = stats.ttest_ind_from_stats(mean1, sd1, n1, mean2, sd2, n2, equal_var=False)
    return Welch(float(res.statistic), float(welch_df(sd1, n1, sd2, n2)), float(res.pvalue))


def welch_diff_ci(mean1, sd1, n1, mean2, sd2, n2, alpha: float) -> tuple[float, float]:
    """Welch's 100(1 - alpha)% confidence interval of m1 - m2 from summary statistics:
    (m1 - m2) ± t_{1-alpha/2, df} sqrt(s1**2/n1 + s2**2/n2), df by `welch_df`.
    NaN when both SDs are zero."""
    se = float(np.sqrt(sd1**2 / n1 + sd2**2 / n2))
    df = float(welch_df(sd1, n1, sd2, n2))
    if not np.isfinite(df):
        return (float("nan"), float("nan"))
    half = float(stats.t.ppf(1 - alpha / 2, df)) * se
    return (mean1 - mean2 - half, mean1 - mean2 + half)


def welch_samples(a, b) -> Welch:
    """Welch's two-sided t-test on two raw samples (scipy.stats.ttest_ind,
    equal_var=False); t, Welch-Satterthwaite df and p as in `welch_from_stats`."""
    res = stats.ttest_ind(np.asarray(a, float), np.asarray(b, float), equal_var=False)
    return Welch(float(res.statistic), float(res.df), float(res.pvalue))


def _p_grid(m1, s1, n1, m2, s2, n2):
    """Two-sided Welch p for arrays of statistics (vectorised)."""
    v = s1**2 / n1 + s2**2 / n2
    diff = np.abs(m1 - m2)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(v > 0, diff / np.sqrt(np.where(v > 0, v, 1.0)), np.where(diff > 0, np.inf, np.nan))
        df = welch_df(s1, n1, s2, n2)
        # With both SDs zero the t statistic is infinite (p = 0) unless the means are equal.
        p = np.where(np.isfinite(t), 2 * stats.t.sf(t, np.where(np.isnan(df), 1.0, df)),
                     np.where(np.isinf(t), 0.0, np.nan))
    return p


def _p_lattice(axes, n1, n2):
    """`_p_grid` over the lattice of `axes` (mean1, sd1, mean2, sd2), indexed
    [i, j, k, l] as np.meshgrid(*axes, indexing="ij"). Each distinct
    |mean1 - mean2| is evaluated once against every (sd1, sd2) pair: the same
    elementwise operations give the same values, and equal printed
    precisions repeat most differences (~70 of 441 distinct)."""
    m1, s1, m2, s2 = axes
    diff, inv = np.unique(np.abs(m1[:, None] - m2[None, :]), return_inverse=True)
    S1, S2 = np.meshgrid(s1, s2, indexing="ij")
    p = _p_grid(diff[:, None, None], S1, n1, 0.0, S2, n2)  # [distinct difference, j, l]
    return p[inv.reshape(len(m1), len(m2))].transpose(0, 2, 1, 3)


def rounding_box(value: float, decimals: int, nonnegative: bool = False) -> tuple[float, float]:
    """Interval of true values that print as `value` with `decimals` digits
    after the point: value ± 0.5 * 10**-decimals (clipped at 0 if nonnegative)."""
    half = 0.5 * 10.0 ** (-decimals)
    lo = value - half
    return (max(0.0, lo) if nonnegative else lo, value + half)


# A pure function of printed numbers, called again for the same box: a cell printed at its
# table's precision, and the methods page in the chapter's kernel.
@cache
def p_range(mean1, mean_dec1, sd1, sd_dec1, n1, mean2, mean_dec2, sd2, sd_dec2, n2,
            grid: int = 21) -> tuple[float, float]:
    """Smallest and largest two-sided Welch p over the rounding intervals of
    the four reported statistics (each mean and SD in value ± half a unit of
    its last printed digit; SDs clipped at 0; n exact).

    Method: p is evaluated on a `grid`**4 lattice spanning the box (corners
    included), then each extreme is polished with L-BFGS-B inside the box
    (scipy.optimize.minimize). The max p is 1 when the mean intervals overlap
    (the difference can be 0).
    """
    boxes = [rounding_box(mean1, mean_dec1), rounding_box(sd1, sd_dec1, True),
             rounding_box(mean2, mean_dec2), rounding_box(sd2, sd_dec2, True)]
    axes = [np.linspace(lo, hi, grid) for lo, hi in boxes]
    P = _p_lattice(axes, n1, n2)
    finite = np.isfinite(P)
    if not finite.any():
        return (float("nan"), float("nan"))

    def f(x, sign):
        return sign * float(_p_grid(x[0], x[1], n1, x[2], x[3], n2))

    out = []
    for sign, pick in ((1.0, np.nanargmin), (-1.0, np.nanargmax)):
        idx = np.unravel_index(pick(np.where(finite, P, np.nan)), P.shape)
        x0 = np.array([axes[k][idx[k]] for k in range(4)])
        best = sign * float(P[idx])
        res = optimize.minimize(f, x0, args=(sign,), method="L-BFGS-B", bounds=boxes)
        if res.success and np.isfinite(res.fun):
            best = min(best, float(res.fun))
        out.append(sign * best)
    lo, hi = out
    if boxes[0][0] <= boxes[2][1] and boxes[2][0] <= boxes[0][1]:
        hi = 1.0  # the difference of the means can be zero
    return (max(0.0, lo), min(1.0, hi))


def p_consistent(relation: str, p_value: float, p_decimals: int, lo: float, hi: float) -> bool:
    """Whether a reported p (printed with `p_decimals` digits, or a bound
    "<"/">") is attainable by any statistics inside the rounding box, whose
    p-values span [lo, hi]."""
    if relation in ("<", "<="):
        return lo < p_value or (relation == "<=" and lo <= p_value)
    if relation in (">", ">="):
        return hi > p_value or (relation == ">=" and hi >= p_value)
    plo, phi = rounding_box(p_value, p_decimals, True)
    return plo <= hi and lo <= phi


def hedges_g(mean1, sd1, n1, mean2, sd2, n2, alpha: float) -> tuple[float, float, float]:
    """Hedges' g of (1 - 2) with a normal-approximation confidence interval.

    d = (m1 - m2) / s_p, s_p**2 = ((n1-1) s1**2 + (n2-1) s2**2) / (n1 + n2 - 2);
    g = J d with J = 1 - 3 / (4 (n1 + n2) - 9);
    Var(g) = (n1 + n2) / (n1 n2) + g**2 / (2 (n1 + n2 - 3.94));
    interval g ± z_{1-alpha/2} sqrt(Var(g)).
    Computed by statsmodels.stats.meta_analysis.effectsize_smd. References:
    L. V. Hedges, J. Educ. Stat. 6 (1981) 107-128; Borenstein et al.,
    Introduction to Meta-Analysis (Wiley, 2009), ch. 4; Chen & Peace, Applied
    Meta-Analysis with R (2013). NaN when both SDs are zero.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        g, var = effectsize_smd(np.float64(mean1), np.float64(sd1), np.float64(n1),
                                np.float64(mean2), np.float64(sd2), np.float64(n2))
    g, var = float(g), float(var)
    if not np.isfinite(g):
        return (float("nan"),) * 3
    half = stats.norm.ppf(1 - alpha / 2) * np.sqrt(var)
    return (g, g - half, g + half)


def hedges_g_samples(a, b, alpha: float) -> tuple[float, float, float]:
    """Hedges' g of sample a versus sample b (see `hedges_g`), SDs with ddof=1."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    return hedges_g(a.mean(), a.std(ddof=1), len(a), b.mean(), b.std(ddof=1), len(b), alpha)


def holm(pvalues, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Holm's step-down family-wise correction: sorted p_(i) is compared
    with alpha / (m - i + 1), and every hypothesis before the first that
    fails is rejected; adjusted p_(i) = max_{j<=i} min(1, (m - j + 1) p_(j)).
    Reference: S. Holm, Scand. J. Statist. 6 (1979) 65-70.
    Returns (reject, adjusted p) in the input order; NaNs are left out of the
    family and stay NaN.

    The steps of statsmodels' multipletests(method="holm"), which the tests
    check it against value for value: that function also runs gc.collect()
    on every call, which is slow in a notebook's large heap, and a chapter
    calls this once per table."""
    p = np.asarray(pvalues, float)
    reject = np.zeros(p.shape, bool)
    adjusted = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    if ok.size:
        order = ok[np.argsort(p[ok])]
        steps = np.arange(ok.size, 0, -1)
        fails = np.flatnonzero(p[order] > alpha / steps)
        reject[order[:fails[0] if fails.size else ok.size]] = True
        adjusted[order] = np.minimum(np.maximum.accumulate(p[order] * steps), 1)
    return reject, adjusted

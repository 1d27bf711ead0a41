"""Bootstrap intervals over repetitions, for the chapters' ratios and
optima (mptcp-dualband, transfer-tuning); which interval a statistic gets
at which n is decided in mobitrace.stats.intervals.

`boot_means` resamples the runs of each configuration (a group) with
replacement and keeps the bootstrap distribution of the group's mean; the
same draws serve every value column, so statistics that combine columns of
one configuration (throughput and energy per bit of the same runs) stay
paired. Statistics of several configurations (a ratio of two means, the
configuration with the highest mean) are then computed draw by draw, and
`percentile_ci` reads the interval off their distribution. Everything is
seeded (default `SEED`), so the intervals are the same on every run.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy import stats

from mobitrace.stats.intervals import MIN_N, PERCENTILE_MIN_N, clip, mean_ci, ratio_ci

# The seed of every random draw in the book: bootstrap intervals here and
# seaborn's error bars in the figures.
SEED = 20261123
N_BOOT = 2000


def boot_means(frame: pd.DataFrame, by: list[str], values: list[str], n_boot: int = N_BOOT,
               seed: int = SEED, min_n: int = 1) -> dict[str, pd.DataFrame]:
    """For each group of `by` (sorted), the bootstrap distribution of the
    mean of every column in `values`: {column: frame indexed by the group,
    one column per draw}. Within a group every column uses the same draws.
    A group of fewer than `min_n` rows gets NaN draws (no distribution)."""
    rng = np.random.default_rng(seed)
    draws = {v: [] for v in values}
    keys = []
    for key, g in frame.groupby(by, sort=True):
        idx = rng.integers(0, len(g), size=(n_boot, len(g)))
        for v in values:
            d = g[v].to_numpy(dtype=float)[idx].mean(axis=1)
            draws[v].append(d if len(g) >= min_n else np.full(n_boot, np.nan))
        keys.append(key)
    index = (pd.MultiIndex.from_tuples(keys, names=by) if len(by) > 1
             else pd.Index([k[0] if isinstance(k, tuple) else k for k in keys], name=by[0]))
    return {v: pd.DataFrame(np.vstack(d), index=index) for v, d in draws.items()}


def mean_ci_errorbar(alpha: float, n_boot: int = N_BOOT, seed: int = SEED):
    """A seaborn `errorbar=` callable for a group's mean: its t interval
    (`intervals.mean_ci`) below `PERCENTILE_MIN_N` values, none below
    `MIN_N`, from there on the percentile bootstrap interval (what
    errorbar=("ci", 100 (1 - alpha)) draws), with the resamples drawn at once in
    numpy (seaborn draws them one by one in Python: 12x slower on a sweep
    figure) from a generator seeded with `seed`, so the figure is the same
    bytes on every run."""
    def interval(values) -> tuple[float, float]:
        v = np.asarray(values, dtype=float)
        v = v[np.isfinite(v)]
        if len(v) < PERCENTILE_MIN_N:
            return mean_ci(v, alpha)[1:]
        idx = np.random.default_rng(seed).integers(0, len(v), size=(n_boot, len(v)))
        return percentile_ci(v[idx].mean(axis=1), alpha)
    return interval


def percentile_ci(draws, alpha: float, discrete: bool = False) -> tuple[float, float]:
    """The central 100(1 - alpha)% percentile interval of bootstrap `draws` (NaN
    draws ignored). `discrete`: bounds are values that occur among the draws
    (for an optimum on a grid of ratios)."""
    d = np.asarray(draws, dtype=float)
    d = d[np.isfinite(d)]
    if not len(d):
        return float("nan"), float("nan")
    a = (1 - (1 - alpha)) / 2  # through the level: the same quantiles, to the bit, as intervals made at 1 - alpha
    method = "inverted_cdf" if discrete else "linear"
    return float(np.quantile(d, a, method=method)), float(np.quantile(d, 1 - a, method=method))


def bca_ci(samples, statistic, alpha: float, n_resamples: int = N_BOOT, seed: int = SEED,
           possible: tuple[float, float] | None = None, min_n: int = MIN_N) -> tuple[float, float]:
    """The 100(1 - alpha)% BCa bootstrap interval of `statistic(*samples,
    axis=-1)` (vectorized), each sample resampled on its own
    (scipy.stats.bootstrap, method="BCa", paired=False, seeded), clipped to
    `possible`. NaN values are dropped. No interval (NaN, NaN) when a sample
    has fewer than `min_n` values; the estimate twice when no sample varies
    (every resample agrees: a degenerate interval, which no verdict uses)."""
    xs = [np.asarray(s, dtype=float) for s in samples]
    xs = [x[np.isfinite(x)] for x in xs]
    if min(len(x) for x in xs) < max(min_n, 2):
        return float("nan"), float("nan")
    if all(np.ptp(x) == 0 for x in xs):
        est = float(statistic(*xs, axis=-1))
        return est, est
    with warnings.catch_warnings():
        # A jackknife with ties (a median of few values) can leave BCa
        # undefined: scipy warns and returns NaN, which means no interval.
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        ci = stats.bootstrap(xs, statistic, paired=False, vectorized=True, axis=-1, n_resamples=n_resamples,
                             confidence_level=1 - alpha, method="BCa", rng=np.random.default_rng(seed)).confidence_interval
    low, high = clip(float(ci.low), float(ci.high), possible)
    return float(low), float(high)


def ratio_of_means_ci(num, den, alpha: float, n_boot: int = N_BOOT,
                      seed: int = SEED) -> tuple[float, float]:
    """100(1 - alpha)% interval of mean(num) / mean(den), two independent
    samples (NaN values dropped): the t interval of the log ratio
    (`intervals.ratio_ci`) below `PERCENTILE_MIN_N` values in a sample, the
    percentile bootstrap (each sample resampled on its own, seeded) from
    there on; none below `MIN_N`."""
    a, b = (np.asarray(x, dtype=float) for x in (num, den))
    a, b = a[np.isfinite(a)], b[np.isfinite(b)]
    if min(len(a), len(b)) < PERCENTILE_MIN_N:
        return ratio_ci(a, b, 1 - (1 - alpha))[1:]  # through the level, as `percentile_ci`
    rng = np.random.default_rng(seed)
    draws = (a[rng.integers(0, len(a), (n_boot, len(a)))].mean(axis=1)
             / b[rng.integers(0, len(b), (n_boot, len(b)))].mean(axis=1))
    return percentile_ci(draws, alpha)


def change_pct(num, den):
    """100 (num / den - 1): how much larger num is than den, in %."""
    return 100 * (np.asarray(num, dtype=float) / np.asarray(den, dtype=float) - 1)


def saving_pct(variant, baseline):
    """100 (1 - variant / baseline): how much less variant is than baseline, in %."""
    return 100 * (1 - np.asarray(variant, dtype=float) / np.asarray(baseline, dtype=float))


def arg_best(draws: pd.DataFrame, level: str, maximize: bool = True, allowed: pd.DataFrame | None = None):
    """Per bootstrap draw (column), the value of index `level` at the row with
    the highest (`maximize`) or lowest mean, among the rows `allowed` (a
    boolean frame like `draws`) where given; NaN where no row is allowed."""
    d = draws.to_numpy(dtype=float)
    if allowed is not None:
        d = np.where(allowed.to_numpy(dtype=bool), d, np.nan)
    none = np.isnan(d).all(axis=0)
    fill = -np.inf if maximize else np.inf
    d = np.where(np.isnan(d), fill, d)
    pos = d.argmax(axis=0) if maximize else d.argmin(axis=0)
    labels = draws.index.get_level_values(level).to_numpy(dtype=float)[pos]
    return np.where(none, np.nan, labels)


def ratio_points(frame: pd.DataFrame, label: str = "comparison", value: str = "ratio", low: str = "low",
                 high: str = "high", paper: str | None = "paper", hue: str | None = None, ax=None,
                 xlabel: str = "ratio (1 = no change)", palette=None, *, alpha: float):
    """Ratios as points with their intervals (horizontal error bars from
    `low` to `high`), one row per `label`, a reference line at 1 and, where
    `paper` is given, the paper's ratio as a cross. Drawn with seaborn on
    `ax` (a new figure if None); returns the axes. Rows keep `frame`'s order."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    if ax is None:
        _, ax = plt.subplots(figsize=(7.0, 0.45 * len(frame) + 1.4))
    f = frame.reset_index(drop=True)
    y = np.arange(len(f))
    ax.axvline(1.0, color="grey", ls="--", lw=1, zorder=1)
    ax.errorbar(f[value], y, xerr=[f[value] - f[low], f[high] - f[value]], fmt="none", ecolor="k", elinewidth=1.2,
                capsize=3, zorder=2)
    sns.scatterplot(x=f[value].to_numpy(), y=y, hue=None if hue is None else f[hue].to_numpy(), palette=palette,
                    color=None if hue is not None else "k", s=50, zorder=3, ax=ax,
                    label=None if hue is not None else f"this artifact [{1 - alpha:.0%} CI]")
    if paper is not None and f[paper].notna().any():
        sns.scatterplot(x=f[paper].to_numpy(), y=y, marker="X", color="C3", s=70, zorder=4, ax=ax,
                        label="paper")
    ax.set_yticks(y, f[label])
    ax.set_ylim(len(f) - 0.5, -0.5)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("")
    return ax

"""Intervals of the mptcp-dualband chapter: bootstrap over the repetitions
of the ratio sweep (mobitrace.stats.resampling) for the optimal ratios and for the
paper's "x% more throughput at y% more energy per bit" comparisons.

Kept apart from mobitrace.studies.mptcp_dualband.ingest (which the ingest stage depends on)
so that changing the chapter's statistics does not re-run the ingest.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from mobitrace.stats import resampling as rs
from mobitrace.book.figures import SEED

CELL = ["direction", "demand", "ratio_a_pct"]


def sweep_runs(energy: pd.DataFrame) -> pd.DataFrame:
    """The striped runs of the ratio sweep, one row per run, with `demand`
    (0 = backlogged), as mobitrace.studies.mptcp_dualband.ingest.ratio_summary groups them."""
    s = energy[(energy["transport"] == "striped") & (energy["part"] == "sweep")].copy()
    s["demand"] = s["demand_mbps"].fillna(0.0)
    return s.reset_index(drop=True)


def boot(runs: pd.DataFrame, n_boot: int = rs.N_BOOT, seed: int = SEED) -> dict[str, pd.DataFrame]:
    """Bootstrap distributions of the mean throughput and nJ/bit per
    direction x demand x ratio (paired: the same resampled runs)."""
    return rs.boot_means(runs, CELL, ["tput_eq_mbps", "nj_per_bit"], n_boot, seed)


def optima_ci(draws: dict[str, pd.DataFrame], satisfied_frac: float = 0.95,
              level: float = 0.95) -> pd.DataFrame:
    """Per direction x demand, percentile intervals (on the ratio grid) of
    the throughput-optimal ratio, the energy-optimal ratio among two-path
    ratios and the energy-optimal ratio among the ratios that meet
    `satisfied_frac` of the demand (all ratios when backlogged), with the
    share of draws that agree with the point estimate's choice left to the
    caller. Same definitions as mobitrace.studies.mptcp_dualband.ingest.optima."""
    tput, nj = draws["tput_eq_mbps"], draws["nj_per_bit"]
    rows = []
    for (direction, demand), t in tput.groupby(level=["direction", "demand"], sort=True):
        e = nj.loc[t.index]
        ratio = t.index.get_level_values("ratio_a_pct").to_numpy(dtype=float)
        both = pd.DataFrame(np.repeat(((ratio > 0) & (ratio < 100))[:, None], t.shape[1], axis=1), index=t.index)
        ok = t >= satisfied_frac * demand if demand > 0 else pd.DataFrame(True, index=t.index, columns=t.columns)
        row = {"direction": direction, "demand": demand}
        for name, d, maximize, allowed in (("tput_opt_ratio", t, True, None),
                                           ("energy_opt_both_ratio", e, False, both),
                                           ("energy_opt_satisfying_ratio", e, False, ok)):
            lo, hi = rs.percentile_ci(rs.arg_best(d, "ratio_a_pct", maximize, allowed), level, discrete=True)
            row[f"{name}_low"], row[f"{name}_high"] = lo, hi
        rows.append(row)
    return pd.DataFrame(rows)


def change_ci(draws: dict[str, pd.DataFrame], column: str, direction: str, demand: float,
              ratio: float, against: float, level: float = 0.95) -> tuple[float, float]:
    """Interval of 100 (mean at `ratio` / mean at `against` - 1) for
    `column` (tput_eq_mbps or nj_per_bit) in one direction and demand."""
    d = draws[column]
    return rs.percentile_ci(rs.change_pct(d.loc[(direction, demand, ratio)], d.loc[(direction, demand, against)]),
                            level)


SERIES_TPUT = {"tput_eq_mbps": "total", "tput_a_eq_mbps": "path a", "tput_b_eq_mbps": "path b"}
SERIES_NJ = {"nj_per_bit": "radio + CPU", "radio_nj_per_bit": "radio only"}


def sweep_figure(runs: pd.DataFrame, opt: pd.DataFrame, demand: dict[str, float], title: str,
                 colors: dict[str, object], n_boot: int = rs.N_BOOT, seed: int = SEED):
    """Throughput (top) and modeled nJ/bit (bottom) against the share of
    packets on path a, per direction (columns), at one demand per direction
    (0 = backlogged): means over runs with 95% bootstrap CI bands (seaborn),
    the demand, and vertical lines at the throughput-optimal and the
    energy-optimal ratio of `opt` (mobitrace.studies.mptcp_dualband.ingest.optima). Returns
    the figure."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    from mobitrace.book.figures import legend_outside

    fig, axes = plt.subplots(2, 2, figsize=(9, 5.6), sharex=True)
    o = opt.set_index(["direction", "demand"])
    palette_t = {"total": colors["total"], "path a": colors["a"], "path b": colors["b"]}
    for j, direction in enumerate(("downlink", "uplink")):
        g = runs[(runs["direction"] == direction) & (runs["demand"] == demand[direction])]
        best = o.loc[(direction, demand[direction])]
        long_t = g.melt(id_vars=["ratio_a_pct"], value_vars=list(SERIES_TPUT), var_name="series",
                        value_name="y").replace({"series": SERIES_TPUT})
        long_e = g.melt(id_vars=["ratio_a_pct"], value_vars=list(SERIES_NJ), var_name="series",
                        value_name="y").replace({"series": SERIES_NJ})
        top, bottom = axes[0, j], axes[1, j]
        sns.lineplot(data=long_t, x="ratio_a_pct", y="y", hue="series", palette=palette_t, marker="o",
                     markersize=4, errorbar=("ci", 95), n_boot=n_boot, seed=seed, ax=top)
        sns.lineplot(data=long_e, x="ratio_a_pct", y="y", style="series", color="k", marker="o", markersize=4,
                     errorbar=("ci", 95), n_boot=n_boot, seed=seed, ax=bottom)
        if demand[direction] > 0:
            top.axhline(demand[direction], ls=":", color="grey", lw=1, label="demand")
        e_ratio = best["energy_opt_satisfying_ratio"]
        for ax in (top, bottom):
            ax.axvline(best["tput_opt_ratio"], color=colors["total"], ls="--", lw=1, label="throughput-optimal ratio")
            ax.axvline(e_ratio, color="k", ls="-.", lw=1, label="energy-optimal ratio")
        d_label = "backlogged" if demand[direction] == 0 else f"demand {demand[direction]:g} Mbps"
        top.set(title=f"{direction}, {d_label}", xlabel="", ylabel="throughput (Mbps)")
        bottom.set(xlabel="packets on path a (%)", ylabel="modeled energy (nJ/bit)")
        for ax in (top, bottom):
            if j == 0:
                ax.get_legend().remove()
            else:
                ax.legend()
                legend_outside(ax)
    fig.suptitle(title)
    return fig


OPTIMA_SHOWN = {"tput_opt_ratio": "throughput-optimal (% on a)", "tput_opt_mbps": "throughput there (Mbps)",
                "energy_opt_satisfying_ratio": "energy-optimal (% on a)",
                "energy_opt_satisfying_nj": "energy there (nJ/bit)",
                "energy_opt_both_ratio": "energy-optimal, two paths (% on a)"}


def optima_shown(opt: pd.DataFrame, oci: pd.DataFrame) -> pd.DataFrame:
    """The optima (mobitrace.studies.mptcp_dualband.ingest.optima) for people: each optimal
    ratio with its bootstrap interval (`optima_ci`) as "73 [70, 73]", units
    in the headers."""
    from mobitrace.book.build import with_interval

    f = opt.merge(oci, on=["direction", "demand"])
    for col in ("tput_opt_ratio", "energy_opt_satisfying_ratio", "energy_opt_both_ratio"):
        f = with_interval(f, col, f"{col}_low", f"{col}_high")
    return (f[["direction", "demand", *OPTIMA_SHOWN]]
            .rename(columns={"demand": "demand (Mbps, 0 = backlogged)", **OPTIMA_SHOWN}))

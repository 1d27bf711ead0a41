"""Intervals of the transfer-tuning chapter: bootstrap over repetitions
(mobitrace.stats.resampling) of the x-fold throughput and the energy ratio of a
knob's level against its level 1, the quantities behind the paper's
"x-fold" and "saves y%" statements.

Kept apart from mobitrace.studies.transfer_tuning.ingest (which the ingest stage depends
on) so that changing the chapter's statistics does not re-run the ingest.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from mobitrace.stats import resampling as rs
from mobitrace.book.figures import SEED

VALUES = ["throughput_mbps", "energy_per_100mb_j"]


def knob_runs(table: pd.DataFrame, factor: str, fixed: dict) -> pd.DataFrame:
    """The sweep runs along one knob with the others held at `fixed`, one
    row per run, with the knob's value as `level` (the runs
    mobitrace.studies.transfer_tuning.ingest.sweep_summary averages)."""
    sel = table[table["kind"] == "sweep"]
    for k, v in fixed.items():
        sel = sel[sel[k] == v]
    return sel.assign(factor=factor, level=sel[factor]).reset_index(drop=True)


def ratio_ci(runs: pd.DataFrame, by: list[str], level: str = "level", baseline: dict | None = None,
             n_boot: int = rs.N_BOOT, seed: int = SEED, ci: float = 0.95) -> pd.DataFrame:
    """Per group of `by` + [`level`]: the throughput ratio to the group's
    baseline (`x_fold`) and the energy ratio (`energy_ratio`, E / E_base,
    below 1 saves energy), each with a percentile bootstrap interval over
    repetitions (`*_low`, `*_high`), and the saving 100 (1 - energy ratio)
    with its interval. The baseline is the row where the columns of
    `baseline` have the given values, or, by default, the lowest `level`.
    Means are resampled per configuration, independently."""
    draws = rs.boot_means(runs, [*by, level] if isinstance(level, str) else [*by, *level], VALUES, n_boot, seed)
    means = runs.groupby([*by, level] if isinstance(level, str) else [*by, *level])[VALUES].mean()
    rows = []
    for key, g in means.groupby(level=list(range(len(by))), sort=True):
        if baseline is None:
            base_key = g.index[0]
        else:
            idx = g.index.to_frame(index=False)
            mask = np.logical_and.reduce([idx[k] == v for k, v in baseline.items()])
            base_key = g.index[np.flatnonzero(mask)[0]]
        for k in g.index:
            t = draws["throughput_mbps"].loc[[k]].to_numpy()[0] / draws["throughput_mbps"].loc[[base_key]].to_numpy()[0]
            e = (draws["energy_per_100mb_j"].loc[[k]].to_numpy()[0]
                 / draws["energy_per_100mb_j"].loc[[base_key]].to_numpy()[0])
            row = dict(zip(means.index.names, k))
            row["x_fold"] = means.loc[k, "throughput_mbps"] / means.loc[base_key, "throughput_mbps"]
            row["x_fold_low"], row["x_fold_high"] = rs.percentile_ci(t, ci)
            row["energy_ratio"] = means.loc[k, "energy_per_100mb_j"] / means.loc[base_key, "energy_per_100mb_j"]
            row["energy_ratio_low"], row["energy_ratio_high"] = rs.percentile_ci(e, ci)
            row["saving_pct"] = 100 * (1 - row["energy_ratio"])
            row["saving_pct_low"], row["saving_pct_high"] = 100 * (1 - row["energy_ratio_high"]), 100 * (1 - row["energy_ratio_low"])
            rows.append(row)
    return pd.DataFrame(rows)


XLABEL = {"concurrency": "concurrency (files at once)", "parallelism": "parallelism (streams per file)",
          "io_kib": "I/O request size (KiB)"}
DATASETS = ["html", "image", "video"]


def sweep_figure(runs: pd.DataFrame, energy_kind: str, n_boot: int = rs.N_BOOT, seed: int = SEED):
    """Figure 2 analog: throughput (top) and energy per 100 MB (bottom)
    against each knob (columns, `factor` of `knob_runs`), one line per
    dataset: means over repetitions with 95% bootstrap CI bands (seaborn),
    log2 x axes. Returns the figure."""
    import matplotlib.pyplot as plt
    import seaborn as sns
    from matplotlib.ticker import FormatStrFormatter

    from mobitrace.book.figures import legend_outside

    factors = list(dict.fromkeys(runs["factor"]))
    fig, axes = plt.subplots(2, len(factors), figsize=(11, 6), sharex="col", squeeze=False)
    order = [d for d in DATASETS if d in set(runs["dataset"])]
    for j, factor in enumerate(factors):
        g = runs[runs["factor"] == factor]
        for i, (col, label) in enumerate((("throughput_mbps", "throughput (Mbit/s), measured"),
                                          ("energy_per_100mb_j", f"energy per 100 MB (J), {energy_kind}"))):
            ax = axes[i, j]
            sns.lineplot(data=g, x="level", y=col, hue="dataset", hue_order=order, marker="o", markersize=5,
                         errorbar=("ci", 95), n_boot=n_boot, seed=seed, ax=ax, legend=(i == 0 and j == len(factors) - 1))
            ax.set_xscale("log", base=2)
            ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))
            ax.set_xlabel(XLABEL.get(factor, factor) if i == 1 else "")
            ax.set_ylabel(label if j == 0 else "")
    legend_outside(axes[0, -1], title="dataset")
    fig.tight_layout()
    return fig


def grid_figure(grid: pd.DataFrame, energy_kind: str):
    """Figure 7 analog: heat maps of mean throughput (top) and energy per
    100 MB (bottom) over concurrency x parallelism, one column per dataset,
    each cell annotated (seaborn heatmap). Returns the figure."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    order = [d for d in DATASETS if d in set(grid["dataset"])]
    fig, axes = plt.subplots(2, len(order), figsize=(11, 6.5), squeeze=False)
    for j, ds in enumerate(order):
        for i, (col, label, cmap) in enumerate((("throughput_mbps", "throughput (Mbit/s), measured", "viridis"),
                                                ("energy_per_100mb_j", f"J per 100 MB, {energy_kind}", "magma_r"))):
            m = grid[grid["dataset"] == ds].pivot(index="parallelism", columns="concurrency", values=col)
            ax = axes[i, j]
            sns.heatmap(m, annot=True, fmt=".1f", cmap=cmap, cbar_kws={"label": label, "shrink": 0.8},
                        annot_kws={"fontsize": 8}, ax=ax)
            ax.invert_yaxis()
            ax.set(xlabel="concurrency (files at once)", ylabel="parallelism (streams per file)", title=ds)
    fig.tight_layout()
    return fig


def power_trace(row, power_logs: pd.DataFrame, samples: pd.DataFrame, cpu, radio, base_w: float):
    """The power trace (t, P) of one run (a row of
    mobitrace.studies.transfer_tuning.ingest.energy_table): the measured power log where
    the run has one, else the modeled trace from its samples."""
    from mobitrace.studies.transfer_tuning.ingest import modeled_power

    if row.energy_source == "measured":
        g = power_logs[(power_logs["device"] == row.device) & (power_logs["run_id"] == row.run_id)]
        return g["t_s"].to_numpy(), g["power_w"].to_numpy()
    s = samples[(samples["device"] == row.device) & (samples["run_id"] == row.run_id)]
    return modeled_power(s, cpu, radio, base_w)


def power_panel(ax, row, t, p, title: str) -> None:
    """One run's power trace as the energy functions read it (piecewise
    linear through the samples), time from the first request; shaded: the
    dynamic energy E_d from the first request to the last byte, and the tail
    until power returns to base + tolerance; dashed: the base power."""
    import seaborn as sns

    from mobitrace.book.figures import PALETTE

    x = np.asarray(t) - row.t_start_s
    end = row.t_end_s - row.t_start_s
    sns.lineplot(x=x, y=np.asarray(p), color="k", lw=0.8, errorbar=None, ax=ax)
    for a, b, color, label in ((0.0, end, PALETTE[3], "transfer (E_d)"), (end, end + row.tail_s, PALETTE[2], "tail")):
        if b > a:
            xs = np.linspace(a, b, 200)
            ax.fill_between(xs, row.base_w, np.interp(xs, x, p), color=color, alpha=0.55, lw=0, label=label)
    ax.axhline(row.base_w, color="grey", ls="--", lw=0.7, label="base power")
    ax.set_title(title, fontsize=10)
    ax.set_xlabel("time from first request (s)")

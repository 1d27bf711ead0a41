"""The transfer-tuning chapter's figures (seaborn, the book's theme): the
knob sweeps (Figure 2 analog), the concurrency x parallelism grid (Figure 7),
the power traces (Figures 8 and 9) and the gains against the paper's. The
numbers they draw come from mobitrace.studies.transfer_tuning.analysis."""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.ticker import FormatStrFormatter, FuncFormatter
import numpy as np
import pandas as pd
import seaborn as sns

from mobitrace.book.figures import PALETTE, layout_only_draws, legend_outside
from mobitrace.stats import resampling as rs
from mobitrace.stats.resampling import SEED
from mobitrace.studies.transfer_tuning.analysis import DATASETS, TAIL_CASES, power_trace


XLABEL = {"concurrency": "concurrency (files at once)", "parallelism": "parallelism (streams per file)",
          "io_kib": "I/O request size (kB)"}


def sweep_figure(runs: pd.DataFrame, energy_kind: str, alpha: float, n_boot: int = rs.N_BOOT, seed: int = SEED):
    """Figure 2 analog: throughput (top) and energy per 100 MB (bottom)
    against each knob (columns, `factor` of `knob_runs`), one line per
    dataset: means over repetitions with 100(1 - alpha)% CI bands (seaborn, `rs.mean_ci_errorbar`),
    log2 x axes. Returns the figure."""
    factors = list(dict.fromkeys(runs["factor"]))
    fig, axes = plt.subplots(2, len(factors), figsize=(11, 6), sharex="col", squeeze=False)
    order = [d for d in DATASETS if d in set(runs["dataset"])]
    for j, factor in enumerate(factors):
        g = runs[runs["factor"] == factor]
        for i, (col, label) in enumerate((("throughput_mbps", "throughput (Mbps), measured"),
                                          ("energy_per_100mb_j", f"energy per 100 MB (J), {energy_kind}"))):
            ax = axes[i, j]
            sns.lineplot(data=g, x="level", y=col, hue="dataset", hue_order=order, marker="o", markersize=5,
                         errorbar=rs.mean_ci_errorbar(alpha, n_boot, seed), ax=ax, legend=(i == 0 and j == len(factors) - 1))
            ax.set_xscale("log", base=2)
            # I/O sizes are powers of two KiB; the book's unit is the SI kB (1 KiB = 1.024 kB)
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v * 1.024:.3g}") if factor == "io_kib"
                                         else FormatStrFormatter("%g"))
            ax.set_xlabel(XLABEL.get(factor, factor) if i == 1 else "")
            ax.set_ylabel(label if j == 0 else "")
    legend_outside(axes[0, -1], title="dataset")
    fig.tight_layout()
    return fig


def grid_figure(grid: pd.DataFrame, energy_kind: str):
    """Figure 7 analog: heat maps of mean throughput (top) and energy per
    100 MB (bottom) over concurrency x parallelism, one column per dataset,
    each cell annotated (seaborn heatmap). Returns the figure."""
    order = [d for d in DATASETS if d in set(grid["dataset"])]
    fig, axes = plt.subplots(2, len(order), figsize=(11, 6.5), squeeze=False)
    for j, ds in enumerate(order):
        for i, (col, label, cmap) in enumerate((("throughput_mbps", "throughput (Mbps), measured", "viridis"),
                                                ("energy_per_100mb_j", f"J per 100 MB, {energy_kind}",
                                                 "magma_r"))):
            m = grid[grid["dataset"] == ds].pivot(index="parallelism", columns="concurrency", values=col)
            ax = axes[i, j]
            with layout_only_draws(fig, ax):
                sns.heatmap(m, annot=True, fmt=".1f", cmap=cmap, cbar_kws={"label": label, "shrink": 0.8},
                            annot_kws={"fontsize": 8}, ax=ax)
            ax.invert_yaxis()
            ax.set(xlabel="concurrency (files at once)", ylabel="parallelism (streams per file)", title=ds)
    fig.tight_layout()
    return fig


def power_panel(ax, row, t, p, title: str) -> None:
    """One run's power trace as the energy functions read it (piecewise
    linear through the samples), time from the first request; shaded: the
    dynamic energy E_d from the first request to the last byte, and the tail
    until power returns to base + tolerance; dashed: the base power."""
    x = np.asarray(t) - row.t_start_s
    end = row.t_end_s - row.t_start_s
    sns.lineplot(x=x, y=np.asarray(p), color="k", lw=0.8, errorbar=None, ax=ax)
    for a, b, color, label in ((0.0, end, PALETTE[1], "transfer (E_d)"), (end, end + row.tail_s, PALETTE[9], "tail")):
        if b > a:
            xs = np.linspace(a, b, 200)
            ax.fill_between(xs, row.base_w, np.interp(xs, x, p), color=color, alpha=0.55, lw=0, label=label)
    ax.axhline(row.base_w, color="grey", ls="--", lw=0.7, label="base power")
    ax.set_title(title, fontsize=10)
    ax.set_xlabel("time from first request (s)")


def concurrency_power_figure(runs: pd.DataFrame, measured: dict, samples: pd.DataFrame, cpu, radio,
                             base_w: float, energy_kind: str):
    """Figure 9 analog: one `power_panel` per run of `concurrency_runs`
    (three per row), titled with its concurrency, throughput and energy per
    100 MB. Returns the figure."""
    n_rows = -(-len(runs) // 3)
    fig, axes = plt.subplots(n_rows, min(3, len(runs)), figsize=(8, 2.8 * n_rows), sharey=True, squeeze=False)
    for ax in axes.flat[len(runs):]:
        ax.set_axis_off()
    for ax, row in zip(axes.flat, runs.itertuples()):
        t, p = power_trace(row, measured, samples, cpu, radio, base_w)
        power_panel(ax, row, t, p, f"cc={row.concurrency}: {row.throughput_mbps:.0f} Mbps\n"
                                   f"{row.energy_per_100mb_j:.1f} J/100MB")
    for ax in axes[:, 0]:
        ax.set_ylabel(f"power (W), {energy_kind}")
    for ax in axes.flat[1:]:
        ax.set_xlabel("")
    axes[0, -1].legend()
    legend_outside(axes[0, -1])
    fig.tight_layout()
    return fig


def tail_power_figure(tails: pd.DataFrame, measured: dict, samples: pd.DataFrame, cpu, radio,
                      base_w: float, energy_kind: str):
    """Figure 8 analog: one `power_panel` per tail run of the first
    repetition (`tail_runs`), titled with its TAIL_CASES name. Returns the figure."""
    first = tails[tails["rep"] == tails["rep"].min()]
    fig, axes = plt.subplots(1, len(first), figsize=(3.3 * len(first), 3.0), sharey=True, squeeze=False)
    for ax, row in zip(axes[0], first.itertuples()):
        t, p = power_trace(row, measured, samples, cpu, radio, base_w)
        power_panel(ax, row, t, p, TAIL_CASES.get((row.files, row.concurrency), row.run_id))
    axes[0, 0].set_ylabel(f"power (W), {energy_kind}")
    for ax in axes[0, 1:]:
        ax.set_xlabel("")
    axes[0, -1].legend()
    legend_outside(axes[0, -1])
    fig.tight_layout()
    return fig


def ratio_figure(comp: pd.DataFrame, energy_kind: str, alpha: float):
    """Ratios against level 1 as points with their intervals, the paper's as
    crosses (`comp`: `gains_vs_paper`): throughput (left, log2) and energy
    per 100 MB (right). Returns the figure."""
    lab = [f"{d}, {k}" for d, k in zip(comp["dataset"], comp["knob"])]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(8, 0.5 * len(comp) + 1.6), sharey=True)
    rs.ratio_points(pd.DataFrame({"comparison": lab, "ratio": comp["artifact x-fold"], "low": comp["x_fold_low"],
                                  "high": comp["x_fold_high"], "paper": comp["paper x-fold"]}),
                    ax=ax1, xlabel="throughput ratio (x-fold, measured)", alpha=alpha)
    rs.ratio_points(pd.DataFrame({"comparison": lab, "ratio": comp["energy_ratio"], "low": comp["energy_ratio_low"],
                                  "high": comp["energy_ratio_high"], "paper": 1 - comp["paper saving %"] / 100}),
                    ax=ax2, xlabel=f"energy per 100 MB ratio ({energy_kind})", alpha=alpha)
    ax1.get_legend().remove()
    legend_outside(ax2)
    ax1.set_xscale("log", base=2)
    ax1.xaxis.set_major_formatter(FormatStrFormatter("%g"))
    return fig

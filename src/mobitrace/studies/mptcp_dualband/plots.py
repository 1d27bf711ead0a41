"""Figures of the mptcp-dualband chapter (seaborn, the book's theme): each
function draws one figure from tables made by
mobitrace.studies.mptcp_dualband.analysis and returns it (the notebook saves
it with its alt text and caption)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from mobitrace.book.figures import PALETTE, SEED, legend_outside
from mobitrace.stats import resampling as rs
from mobitrace.studies.mptcp_dualband.schema import DIRECTIONS

COLORS = {"a": PALETTE[0], "b": PALETTE[1], "total": PALETTE[2]}


def fig1_bars(mp_ref: pd.DataFrame, r: pd.DataFrame, colors: dict = COLORS, n_boot: int = rs.N_BOOT,
              seed: int = SEED):
    """Figure 1: backlogged MPTCP throughput per direction, bars for path a,
    path b and the total (means over the runs `mp_ref`, 95% bootstrap CI),
    and a dashed line at each direction's sum of path rates (`r`, indexed by
    direction in DIRECTIONS order, column "sum of path rates")."""
    long1 = (mp_ref
             .melt(id_vars=["direction"], value_vars=["tput_a_eq_mbps", "tput_b_eq_mbps", "tput_eq_mbps"],
                   var_name="series", value_name="throughput (Mbps)")
             .replace({"series": {"tput_a_eq_mbps": "path a (802.11ad analog)",
                                  "tput_b_eq_mbps": "path b (802.11ac analog)", "tput_eq_mbps": "MPTCP total"}}))
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    sns.barplot(data=long1, x="direction", y="throughput (Mbps)", hue="series", order=list(DIRECTIONS),
                palette=[colors["a"], colors["b"], colors["total"]], errorbar=("ci", 95), n_boot=n_boot, seed=seed,
                capsize=0.1, err_kws={"linewidth": 1}, ax=ax)
    ax.hlines(r["sum of path rates"], np.arange(len(r)) - 0.4, np.arange(len(r)) + 0.4, colors="k",
              linestyles="--", linewidth=1, label="sum of path rates")
    ax.legend()
    ax.set(xlabel="direction", ylabel="throughput (Mbps)")
    legend_outside(ax)
    return fig


def cdf_lines(dl_ref: pd.DataFrame, medians: list[tuple[float, str, str]]):
    """Figure 2: ECDFs of downlink MPTCP throughput (Gbps, column tput_gbps)
    per configuration, and a vertical line per (value, label, linestyle) in
    `medians` (the paper's medians)."""
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    sns.ecdfplot(data=dl_ref, x="tput_gbps", hue="configuration",
                 hue_order=sorted(dl_ref["configuration"].unique()), ax=ax)
    handles, labels = ax.get_legend().legend_handles, [t.get_text() for t in ax.get_legend().get_texts()]
    for value, label, ls in medians:
        handles.append(ax.axvline(value, ls=ls, color="k", lw=1))
        labels.append(label)
    ax.legend(handles, labels, title="configuration")
    ax.set(xlabel="downlink MPTCP throughput (Gbps)", ylabel="share of runs (ECDF)")
    legend_outside(ax)
    return fig


def ratio_dots(ratios: pd.DataFrame):
    """The paper's comparisons as ratios with their intervals
    (mobitrace.stats.resampling.ratio_points), legend outside."""
    ax = rs.ratio_points(ratios, xlabel="ratio (1 = the same; throughput measured, nJ/bit and power modeled)")
    legend_outside(ax)
    return ax.figure


def optima_dots(long_o: pd.DataFrame, cases: list[str], colors: dict = COLORS):
    """Throughput-optimal, energy-optimal and the paper's energy-optimal
    ratio per case (direction and demand, rows `cases`), with interval lines
    (`long_o`: analysis.optima_long)."""
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    sns.scatterplot(data=long_o, x="ratio", y="case", hue="optimum", style="optimum", s=70,
                    palette=[colors["total"], "k", PALETTE[3]], markers=["o", "s", "X"], ax=ax)
    for (name, g), dy in zip(long_o.groupby("optimum", sort=False), (-0.12, 0.12, 0.0)):
        y = np.array([cases.index(c) for c in g["case"]]) + dy
        ax.hlines(y, g["low"], g["high"], colors=["k" if "energy" in name else colors["total"]], lw=1.5)
    ax.set(xlabel="packets on path a (%)", ylabel="", xlim=(-5, 105))
    legend_outside(ax)
    return fig


def backup_lines(bk: pd.DataFrame, colors: dict = COLORS, n_boot: int = rs.N_BOOT, seed: int = SEED):
    """Figure 8: modeled power against the demand for the runs `bk`
    (analysis.backup_runs), one hue per path, one style per mode."""
    bk_plot = bk.assign(path=lambda f: "path " + f["on path"])
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    sns.lineplot(data=bk_plot, x="demand_mbps", y="power_mw", hue="path", style="mode", markers=True, dashes=True,
                 palette=[colors["a"], colors["b"]], hue_order=["path a", "path b"], errorbar=("ci", 95),
                 n_boot=n_boot, seed=seed, ax=ax)
    ax.set(xlabel="source data rate (Mbps)", ylabel="modeled power above base (mW)")
    legend_outside(ax)
    return fig


SERIES_TPUT = {"tput_eq_mbps": "total", "tput_a_eq_mbps": "path a", "tput_b_eq_mbps": "path b"}
SERIES_NJ = {"nj_per_bit": "radio + CPU", "radio_nj_per_bit": "radio only"}


def sweep_figure(runs: pd.DataFrame, opt: pd.DataFrame, demand: dict[str, float], title: str,
                 colors: dict[str, object], n_boot: int = rs.N_BOOT, seed: int = SEED):
    """Throughput (top) and modeled nJ/bit (bottom) against the share of
    packets on path a, per direction (columns), at one demand per direction
    (0 = backlogged): means over runs with 95% bootstrap CI bands (seaborn),
    the demand, and vertical lines at the throughput-optimal and the
    energy-optimal ratio of `opt` (optima). Returns
    the figure."""
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



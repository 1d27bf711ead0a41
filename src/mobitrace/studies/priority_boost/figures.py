"""Figures of the priority-boost chapter (seaborn, the book's theme).

Each function draws one figure from a table the chapter has already computed
and returns the matplotlib figure; the chapter saves and shows it with its
alt text and caption (`ChapterOutputs.figure`).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from mobitrace.book.figures import PALETTE, SEED, legend_outside
from mobitrace.studies.priority_boost.analysis import (POLICY_NAMES, POLICY_ORDER, TABLE_TITLES, UNITS,
                                                       condition_label, extent, interval_rows)

CONDITION_AXIS = "competing processes, cross traffic (% of NIC)"


def published_means(pub_means: pd.DataFrame):
    """The paper's means with their t intervals (`published_means_both`), one
    panel per load, one hue per policy."""
    fig, axes = plt.subplots(1, 2, figsize=(9.0, 4.0), sharey=True, width_ratios=(5, 6))
    for ax, (load, part) in zip(axes, pub_means.groupby("load", sort=False)):
        sns.pointplot(data=interval_rows(part), x="condition", y="value", hue="policy_name",
                      hue_order=[POLICY_NAMES[p] for p in ("original", "incr", "decr")], estimator="median",
                      errorbar=extent, dodge=0.4, linestyle="none", capsize=0.15, err_kws={"linewidth": 1.2},
                      marker="o", markersize=5, ax=ax, legend=ax is axes[1])
        ax.set(title=load, xlabel=CONDITION_AXIS, ylabel="file transfer time (s)")
        ax.tick_params(axis="x", labelrotation=30)
    legend_outside(axes[1], title="policy")
    return fig


def p_ranges(audit: pd.DataFrame, alpha: float):
    """Per comparison of an audit with published p-values (`audit_published`):
    the attainable p ranges (as printed, at table precision) as bars, the
    recomputed p as a tick, the paper's p as a marker (a triangle when it is
    outside the range), on a log scale with a dashed line at `alpha`."""
    ranked = audit.sort_values(["policy", "cpu_procs"], ascending=[False, True], ignore_index=True)
    colors = dict(zip(("printed", "table", "paper", "outside"), (PALETTE[7], PALETTE[0], PALETTE[2], PALETTE[3])))
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    ax.hlines(ranked.index, ranked["p_lo_printed"].clip(lower=1e-6), ranked["p_hi_printed"],
              color=colors["printed"], lw=7, label="attainable p, as printed")
    ax.hlines(ranked.index, ranked["p_lo_table"], ranked["p_hi_table"], color=colors["table"], lw=7,
              label="attainable p, table precision")
    ax.scatter(ranked["p"], ranked.index, marker="|", s=220, color="black", zorder=3, label="recomputed p")
    inside = ranked["in_range_table"].astype(bool)
    ax.scatter(ranked.loc[inside, "p_published"], ranked.index[inside], marker="o", s=45, color=colors["paper"],
               zorder=4, label="paper's p (attainable)")
    ax.scatter(ranked.loc[~inside, "p_published"], ranked.index[~inside], marker="<", s=60,
               color=colors["outside"], zorder=4, label="paper's \"< 0.0001\" (not attainable)")
    ax.axvline(alpha, color="grey", ls="--", lw=0.8)
    ax.set_xscale("log")
    ax.set(xlim=(1e-5, 1.5), xlabel="two-sided Welch p (log scale, dashed: α)")
    ax.set_yticks(ranked.index, [f"{POLICY_NAMES[r.policy]}, {r.cpu_procs} proc" for r in ranked.itertuples()])
    ax.legend()
    legend_outside(ax, below=True)
    return fig


def effect_sizes(audit_cpu: pd.DataFrame, audit_net: pd.DataFrame, level: float):
    """Hedges' g with its interval of every comparison of the two audited
    tables, INCR and DECR side by side, with a line at zero."""
    both = pd.concat([audit_cpu.assign(load="CPU load"), audit_net.assign(load="network load")], ignore_index=True)
    both["comparison"] = both["load"] + ": " + [condition_label(c, x)
                                                for c, x in zip(both["cpu_procs"], both["cross_pct"])]
    both["policy_name"] = both["policy"].map(POLICY_NAMES)
    fig, ax = plt.subplots(figsize=(7.5, 5.2))
    sns.pointplot(data=interval_rows(both[["comparison", "policy_name", "g", "g_lo", "g_hi"]], "g", "g_lo", "g_hi"),
                  x="value", y="comparison", hue="policy_name", hue_order=["INCR", "DECR"], estimator="median",
                  errorbar=extent, dodge=0.4, linestyle="none", capsize=0.15, marker="o", markersize=4,
                  err_kws={"linewidth": 1.2}, palette=[PALETTE[1], PALETTE[2]], ax=ax)
    ax.axvline(0, color="grey", lw=0.8)
    ax.set(xlabel=f"Hedges' g, policy − original, with {100 * level:.0f}% interval (negative: faster)", ylabel="")
    legend_outside(ax, title="policy")
    return fig


def measured_runs(runs: pd.DataFrame, level: float):
    """Measured runs of one device: per experiment (panel), condition and
    policy, the mean with its bootstrap interval (fixed SEED) over every run.
    None when no run has a metric."""
    ok = runs.dropna(subset=["metric"]).assign(
        policy_name=lambda f: f["policy"].map(POLICY_NAMES),
        condition=lambda f: [condition_label(c, x) for c, x in zip(f["cpu_procs"], f["cross_pct"])])
    panels = [t for t in ("cpu", "net", "audio") if (ok["table"] == t).any()]
    if not panels:
        return None
    hue_order = [POLICY_NAMES[p] for p in POLICY_ORDER if p in set(ok["policy"])]
    fig, axes = plt.subplots(len(panels), 1, figsize=(7.5, 3.3 * len(panels)), squeeze=False)
    for ax, table in zip(axes[:, 0], panels):
        t = ok[ok["table"] == table].sort_values(["cpu_procs", "cross_pct"])
        sns.stripplot(data=t, x="condition", y="metric", hue="policy_name", hue_order=hue_order, dodge=True,
                      jitter=False, size=2.5, alpha=0.35, legend=False, ax=ax)
        sns.pointplot(data=t, x="condition", y="metric", hue="policy_name", hue_order=hue_order,
                      errorbar=("ci", 100 * level), seed=SEED, n_boot=2000, dodge=0.53, linestyle="none",
                      capsize=0.1, marker="D", markersize=5, err_kws={"linewidth": 1.4}, ax=ax,
                      legend=ax is axes[0, 0])
        ax.set(title=TABLE_TITLES[table], xlabel=CONDITION_AXIS,
               ylabel=f"{'jitter SD' if table == 'audio' else 'transfer time'} ({UNITS[table]})",
               yscale="linear" if table == "audio" else "log")
    legend_outside(axes[0, 0], title="policy")
    fig.tight_layout()
    return fig

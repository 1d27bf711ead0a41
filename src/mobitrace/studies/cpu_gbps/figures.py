"""The measured cpu-gbps chapter's figures across devices (seaborn, the
book's theme): throughput per device, /proc/stat against precise CPU time,
and the fitted lines beside the published phones'. Each device's Figure 1 is
drawn by its own stage (device_analysis)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from mobitrace.book.figures import OTHERS, device_colours, legend_outside, others_label
from mobitrace.core.numbers import level
from mobitrace.stats.intervals import mean_ci
from mobitrace.studies.cpu_gbps.device_analysis import CI_ALPHA, draw_fit, line_with_bands, saturation_gbps
from mobitrace.studies.cpu_gbps.measured_analysis import DIRECTION_NAMES


def throughput_figure(runs: pd.DataFrame, devices: list[str], alpha: float):
    """Mean TCP throughput at the unlimited rate per device (rows) and
    direction (colour), with its 100(1 - alpha)% t interval as error bars
    (mean_ci, the tables' interval), drawn with seaborn pointplot."""
    data = runs[runs["device"].isin(devices) & (runs["target_rate_bps"] == 0)].copy()
    data["direction"] = data["direction"].map(DIRECTION_NAMES)
    fig, ax = plt.subplots(figsize=(7.0, 0.55 * len(devices) + 1.3))
    sns.pointplot(data=data, x="throughput_gbps", y="device", hue="direction", order=devices,
                  hue_order=["downlink", "uplink"], errorbar=lambda v: mean_ci(v, alpha)[1:],
                  dodge=0.3, linestyle="none", markers=["o", "s"], capsize=0.15, err_kws={"linewidth": 1.4},
                  ax=ax)
    ax.set(xlabel="TCP throughput at the unlimited rate (Gbps)", ylabel="", xlim=(0, None))
    legend_outside(ax, title=f"mean, {level(alpha)} CI")
    return fig


def procstat_figure(runs: pd.DataFrame, devices: list[str], highlight: list[str] = ()):
    """Per run: tick-sampled /proc/stat Total against the precise Total (with
    the line of equality) and their gap against throughput (seaborn
    scatterplot, one colour and marker per device; beyond
    figures.MOST_COLOURED devices, the `highlight`ed ones and the rest grey)."""
    colours = device_colours(devices, list(highlight))
    others = others_label(colours)
    groups = [d for d in devices if colours[d] != OTHERS] + ([others] if others else [])
    palette = {**{d: c for d, c in colours.items() if c != OTHERS}, **({others: OTHERS} if others else {})}
    data = runs[runs["device"].isin(devices)].assign(
        gap_pp=runs["stat_all_total_pct"] - runs["precise_total_pct"],
        group=lambda f: [d if colours[d] != OTHERS else others for d in f["device"]])
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    style = {"hue": "group", "style": "group", "hue_order": groups, "style_order": groups, "palette": palette,
             "s": 30, "alpha": 0.8}
    sns.scatterplot(data=data, x="precise_total_pct", y="stat_all_total_pct", ax=axes[0], legend=False, **style)
    top = float(max(data["precise_total_pct"].max(), data["stat_all_total_pct"].max())) * 1.05
    axes[0].plot([0, top], [0, top], color="grey", lw=0.9, ls="--")
    axes[0].annotate("equal", (top * 0.8, top * 0.8), xytext=(-4, 8), textcoords="offset points", color="grey",
                     ha="right", fontsize=9)
    axes[0].set(xlabel="precise Total CPU (% of all CPUs)", ylabel="/proc/stat Total CPU (% of all CPUs)",
                xlim=(0, top), ylim=(0, top))
    sns.scatterplot(data=data, x="throughput_gbps", y="gap_pp", ax=axes[1], **style)
    axes[1].axhline(0, color="grey", lw=0.9, ls="--")
    axes[1].set(xlabel="TCP throughput (Gbps)", ylabel="/proc/stat minus precise (percentage points)")
    legend_outside(axes[1])
    fig.subplots_adjust(wspace=0.3)
    return fig


def lines_figure(runs: pd.DataFrame, phones: pd.DataFrame, devices: list[str], targets: list[float],
                 threshold: float, alpha: float, highlight: list[str] = ()):
    """Each measured device's downlink /proc/stat Total OLS line with its
    100(1 - alpha)% confidence band (solid up to the device's saturation
    point, dashed beyond: the one limit of the tables' range flags), and the published phones' implied lines (black, dotted and
    dash-dotted); the CPU threshold and the target rates as grey guides.
    Beyond figures.MOST_COLOURED devices only the `highlight`ed ones have a
    colour and a band; the others are thin grey lines (one legend entry)."""
    x_top = max(max(targets) * 1.05, float(runs["throughput_gbps"].max()) * 1.02)
    xs = np.linspace(0, x_top, 300)
    fig, ax = plt.subplots(figsize=(7.0, 4.4))
    handles = []
    colours = device_colours(devices, list(highlight))
    for device in devices:
        g = runs[(runs["device"] == device) & (runs["direction"] == "down")]
        if colours[device] == OTHERS:  # drawn first below the coloured ones, without a band
            b = line_with_bands(g["throughput_gbps"], g["stat_all_total_pct"], xs, alpha)
            ax.plot(b["x"], b["mean"], color=OTHERS, lw=0.7, alpha=0.6, zorder=1)
            continue
        draw_fit(ax, g["throughput_gbps"], g["stat_all_total_pct"], xs, colours[device], device, alpha,
                 prediction=False, measured_max=saturation_gbps(g))
        handles.append(Line2D([], [], color=colours[device], lw=1.6, label=f"{device} (measured)"))
    if others_label(colours):
        handles.append(Line2D([], [], color=OTHERS, lw=0.7, label=f"{others_label(colours)} (measured)"))
    for j, (_, p) in enumerate(phones.iterrows()):
        ls = [":", "-."][j % 2]
        sns.lineplot(x=xs, y=p["intercept_pct"] + p["slope_pct_per_gbps"] * xs, color="black", lw=1.3, ls=ls,
                     ax=ax, legend=False)
        handles.append(Line2D([], [], color="black", lw=1.3, ls=ls, label=f"{p['device']} (published line)"))
    handles.append(Line2D([], [], color="grey", lw=1.3, ls="--", label="extrapolated (beyond the saturation point)"))
    handles.append(Patch(color="grey", alpha=CI_ALPHA, lw=0, label=f"{level(alpha)} confidence band"))
    ax.axhline(threshold, color="grey", lw=0.8, ls="--")
    for rate in targets:
        ax.axvline(rate, color="grey", lw=0.5, ls=":")
    ax.set(xlim=(0, x_top), ylim=(0, 100), xlabel="TCP downlink throughput (Gbps)",
           ylabel="Total CPU utilization (%)")
    ax.legend(handles=handles)
    legend_outside(ax)
    return fig

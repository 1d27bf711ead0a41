"""The stack-trim chapter's figures (seaborn, the book's theme): estimates
with their precomputed bootstrap intervals against the CBR rate.

Each function returns the matplotlib figure; the chapter saves and shows it
with its alt text and caption (mobitrace.book.chapter.ChapterOutputs.figure).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns
from matplotlib.ticker import FuncFormatter, NullFormatter

from mobitrace.book.figures import legend_outside
from mobitrace.studies.stack_trim.analysis import interval_extent, interval_long, series_label

SUSTAINED = {True: "yes", False: "no"}


def plain_ticks() -> FuncFormatter:
    """Tick labels as plain numbers (1, 10, 100), not powers of ten."""
    return FuncFormatter(lambda x, _: f"{x:g}")


def _intervals(data: pd.DataFrame, hue: str, ax, legend="auto") -> None:
    sns.lineplot(data=data, x="rate_mbps", y="value", hue=hue, style="rate sustained", style_order=["yes", "no"],
                 markers={"yes": "o", "no": "X"}, dashes=False, estimator="median", errorbar=interval_extent,
                 err_style="bars", err_kws={"capsize": 3}, ax=ax, legend=legend)


def onecopy_figure(table: pd.DataFrame, cpu_basis: str) -> plt.Figure:
    """Two panels against the rate (log scale): the normalized CPU energy
    saving of one-copy (%) and the modeled CPU power saving (mW), one curve
    per link and direction, crosses at rates not sustained; `table` is
    analysis.onecopy_table, drawn for the CPU-time basis `cpu_basis`."""
    t = table[table["basis"] == cpu_basis].assign(**{
        "link, direction": lambda f: [series_label(k, d) for k, d in zip(f["link"], f["direction"])],
        "rate sustained": lambda f: f["sustained"].map(SUSTAINED)})
    keep = ["link, direction", "rate_mbps", "rate sustained"]
    fig, axes = plt.subplots(2, 1, figsize=(7.5, 7.0), sharex=True)
    for ax, (est, lo, hi, scale, ylabel) in zip(axes, (
            ("saving", "saving_lo", "saving_hi", 100, "CPU energy saving (%)"),
            ("power_saving_mw", "power_saving_lo_mw", "power_saving_hi_mw", 1, "CPU power saving (mW, modeled)"))):
        _intervals(interval_long(t, est, lo, hi, keep, scale), "link, direction", ax, legend=ax is axes[0])
        ax.axhline(0, color="grey", lw=0.8)
        ax.set(xscale="log", xlabel="CBR rate (Mbps, log scale)", ylabel=ylabel)
    axes[0].set_ylabel("CPU energy saving (%)\n1 − E(one-copy)/E(two-copy)")
    axes[1].xaxis.set_major_formatter(plain_ticks())
    legend_outside(axes[0])
    return fig


def transport_figure(table: pd.DataFrame) -> plt.Figure:
    """E(UDP)/E(TCP) against the rate (log-log), one curve per link and UDP
    datagram size, a dashed line at 1; `table` is analysis.transport_table."""
    t = table.assign(**{
        "link, datagram": lambda f: [series_label(k, udp_size=z) for k, z in zip(f["link"], f["udp_size"])],
        "rate sustained": lambda f: f["sustained"].map(SUSTAINED)})
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    _intervals(interval_long(t, "ratio", "ratio_lo", "ratio_hi", ["link, datagram", "rate_mbps", "rate sustained"]),
               "link, datagram", ax)
    ax.axhline(1, color="grey", lw=0.8, ls="--")
    ax.set(xscale="log", yscale="log", xlabel="CBR rate (Mbps, log scale)",
           ylabel="CPU energy ratio E(UDP)/E(TCP) (log scale)")
    ax.xaxis.set_major_formatter(plain_ticks())
    ax.set_yticks([0.5, 1, 2, 5, 10])
    ax.yaxis.set_major_formatter(plain_ticks())
    ax.yaxis.set_minor_formatter(NullFormatter())
    legend_outside(ax)
    return fig

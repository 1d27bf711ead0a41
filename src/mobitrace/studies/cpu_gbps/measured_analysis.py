"""The cpu-gbps-measured chapter across devices: comparisons of two device
configurations at the unlimited rate (means with t intervals, Welch's test,
the ratio of means with its interval) and the chapter's figures (seaborn, book
theme). Per-device fits come from mobitrace.studies.cpu_gbps.device_analysis; the statistics
from mobitrace.stats.cpufit (formulas and references there).
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from mobitrace.stats import cpufit
from mobitrace.stats.intervals import mean_ci
from mobitrace.stats.welch import welch_samples
from mobitrace.stats.welch import holm
from mobitrace.core import numbers
from mobitrace.core.escape import md_text
from mobitrace.studies.cpu_gbps.device_analysis import CI_ALPHA, draw_fit, saturation_gbps
from mobitrace.book.figures import PALETTE, legend_outside

# CPU sources for people (column headers and legends).
SOURCE_NAMES = {"stat_total": "/proc/stat Total", "stat_softirq": "/proc/stat SoftIRQ",
                "precise_total": "precise Total", "iperf3_total": "iperf3's own report"}
DIRECTION_NAMES = {"down": "downlink", "up": "uplink"}
# Claim-id prefix -> the section (MyST target cpu-gbps-measured-<name>) deriving it.
ANCHORS = {"measured_linear": "fig1", "measured_1p6gbps": "extrapolation", "measured_sirq": "procstat",
           "measured_gro": "offloads", "measured_affinity": "rps", "measured_fig1c": "slow",
           "measured_max_tput": "slow"}


def anchor_of(claim_id: str) -> str:
    """The MyST target of the section that derives a claim (for the ledger)."""
    for prefix, name in ANCHORS.items():
        if claim_id.startswith(prefix):
            return f"cpu-gbps-measured-{name}"
    return "cpu-gbps-measured-claims"


def claim_key(device: str) -> str:
    """A device name as it appears in claim ids (vm-veth-default -> vm_veth_default)."""
    return device.replace("-", "_")


def r6(value):
    """A metric value: rounded to 6 decimals, None when missing."""
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else round(float(value), 6)


def fit_of(fits: pd.DataFrame, device: str, direction: str, source: str) -> pd.Series:
    """The fits.csv row of one device, direction and CPU source."""
    hit = np.flatnonzero((fits["device"] == device) & (fits["direction"] == direction) & (fits["source"] == source))
    if not len(hit):
        raise KeyError(f"no fit for {device} {direction} {source}")
    return fits.iloc[hit[0]]  # the first row alone: a chapter asks ~100 times, filtering every column each time


def max_runs(runs: pd.DataFrame, device: str, direction: str) -> pd.DataFrame:
    """The runs of one device and direction at the unlimited rate (target 0)."""
    return runs[(runs["device"] == device) & (runs["direction"] == direction) & (runs["target_rate_bps"] == 0)]


def compare(runs: pd.DataFrame, fits: pd.DataFrame, dev_a: str, dev_b: str, label: str,
            alpha: float = 0.05) -> pd.DataFrame:
    """Device b against device a at the unlimited rate, per direction: mean
    throughput of each with its t interval, the ratio of means b / a with
    its interval (cpufit.ratio_ci), Welch's t-test of b - a, mean CPU at
    that rate and the slopes of both devices' lines."""
    rows = []
    for direction in ("down", "up"):
        a, b = max_runs(runs, dev_a, direction), max_runs(runs, dev_b, direction)
        if a.empty or b.empty:
            continue
        ma = mean_ci(a["throughput_gbps"], 1 - alpha)
        mb = mean_ci(b["throughput_gbps"], 1 - alpha)
        test = welch_samples(b["throughput_gbps"], a["throughput_gbps"])
        _, ratio_lo, ratio_hi = cpufit.ratio_ci(b["throughput_gbps"], a["throughput_gbps"], alpha)
        slope = {(dev, source): fit_of(fits, dev, direction, source)["slope"]
                 for dev in (dev_a, dev_b) for source in ("precise_total", "stat_total")}
        rows.append({
            "comparison": label, "direction": direction, "a": dev_a, "b": dev_b,
            "a_max_gbps": ma[0], "a_lo": ma[1], "a_hi": ma[2],
            "b_max_gbps": mb[0], "b_lo": mb[1], "b_hi": mb[2],
            "ratio_b_over_a": mb[0] / ma[0], "welch_t": test.t, "welch_df": test.df, "welch_p": test.p,
            "a_stat_total_at_max": float(a["stat_all_total_pct"].mean()),
            "b_stat_total_at_max": float(b["stat_all_total_pct"].mean()),
            "a_precise_total_at_max": float(a["precise_total_pct"].mean()),
            "b_precise_total_at_max": float(b["precise_total_pct"].mean()),
            "a_precise_slope": slope[dev_a, "precise_total"], "b_precise_slope": slope[dev_b, "precise_total"],
            "a_stat_slope": slope[dev_a, "stat_total"], "b_stat_slope": slope[dev_b, "stat_total"],
            "ratio_lo": ratio_lo, "ratio_hi": ratio_hi,
        })
    return pd.DataFrame(rows)


FAMILY = "device comparisons at the unlimited rate"


def holm_family(frames: dict[str, pd.DataFrame], alpha: float = 0.05) -> dict[str, pd.DataFrame]:
    """The compare() frames with the Welch p-values of all of them corrected
    together as one family (FAMILY, Holm; mobitrace.stats.welch.holm):
    columns family, family_size and welch_p_holm added to each non-empty frame."""
    keys = [k for k, f in frames.items() if not f.empty]
    if not keys:
        return frames
    pvalues = pd.concat([frames[k]["welch_p"] for k in keys], ignore_index=True)
    _, adjusted = holm(pvalues.to_numpy(), alpha)
    out, start = dict(frames), 0
    for k in keys:
        n = len(frames[k])
        out[k] = frames[k].assign(family=FAMILY, family_size=len(pvalues), welch_p_holm=adjusted[start:start + n])
        start += n
    return out


def comparison_shown(frame: pd.DataFrame, a_name: str, b_name: str) -> pd.DataFrame:
    """A compare() frame for people: throughput of a and b with intervals,
    the ratio with its interval, Welch's p and the precise CPU per Gbps."""
    return pd.DataFrame({
        "direction": frame["direction"].map(DIRECTION_NAMES),
        f"{a_name} (Gbps) [95% CI]": [numbers.interval(*v) for v in zip(frame["a_max_gbps"], frame["a_lo"],
                                                                          frame["a_hi"])],
        f"{b_name} (Gbps) [95% CI]": [numbers.interval(*v) for v in zip(frame["b_max_gbps"], frame["b_lo"],
                                                                          frame["b_hi"])],
        "ratio b / a [95% CI]": [numbers.interval(*v) for v in zip(frame["ratio_b_over_a"], frame["ratio_lo"],
                                                                   frame["ratio_hi"])],
        "p (Welch)": frame["welch_p"],
        f"p (Holm over the {frame['family_size'].iloc[0]} tests of the {FAMILY})": frame["welch_p_holm"],
        f"precise CPU per Gbps, {a_name} (%/Gbps)": frame["a_precise_slope"],
        f"precise CPU per Gbps, {b_name} (%/Gbps)": frame["b_precise_slope"],
    })


def not_captured_text(what: str, names: list[str]) -> str:
    """The sentence a comparison shows when its devices are not in the build."""
    return (f"*No {what} in this build: {', '.join(md_text(n) for n in names)} not all listed in "
            "`params.yaml` (`cpu-gbps-measured.devices`).*")


def throughput_figure(runs: pd.DataFrame, devices: list[str], alpha: float = 0.05):
    """Mean TCP throughput at the unlimited rate per device (rows) and
    direction (colour), with its 100(1 - alpha)% t interval as error bars
    (mean_ci, the tables' interval), drawn with seaborn pointplot."""
    data = runs[runs["device"].isin(devices) & (runs["target_rate_bps"] == 0)].copy()
    data["direction"] = data["direction"].map(DIRECTION_NAMES)
    fig, ax = plt.subplots(figsize=(7.0, 0.55 * len(devices) + 1.3))
    sns.pointplot(data=data, x="throughput_gbps", y="device", hue="direction", order=devices,
                  hue_order=["downlink", "uplink"], errorbar=lambda v: mean_ci(v, 1 - alpha)[1:],
                  dodge=0.3, linestyle="none", markers=["o", "s"], capsize=0.15, err_kws={"linewidth": 1.4},
                  ax=ax)
    ax.set(xlabel="TCP throughput at the unlimited rate (Gbps)", ylabel="", xlim=(0, None))
    legend_outside(ax, title=f"mean, {1 - alpha:.0%} CI")
    return fig


def procstat_figure(runs: pd.DataFrame, devices: list[str]):
    """Per run: tick-sampled /proc/stat Total against the precise Total (with
    the line of equality) and their gap against throughput (seaborn
    scatterplot, one colour and marker per device)."""
    data = runs[runs["device"].isin(devices)].assign(gap_pp=runs["stat_all_total_pct"] - runs["precise_total_pct"])
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    style = {"hue": "device", "style": "device", "hue_order": devices, "style_order": devices, "s": 30,
             "alpha": 0.8}
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
                 threshold: float, alpha: float = 0.05):
    """Each measured device's downlink /proc/stat Total OLS line with its
    100(1 - alpha)% confidence band (solid up to the device's saturation
    point, dashed beyond: the one limit of the tables' range flags), and the published phones' implied lines (black, dotted and
    dash-dotted); the CPU threshold and the target rates as grey guides."""
    x_top = max(max(targets) * 1.05, float(runs["throughput_gbps"].max()) * 1.02)
    xs = np.linspace(0, x_top, 300)
    fig, ax = plt.subplots(figsize=(7.0, 4.4))
    handles = []
    for i, device in enumerate(devices):
        g = runs[(runs["device"] == device) & (runs["direction"] == "down")]
        colour = PALETTE[i % len(PALETTE)]
        draw_fit(ax, g["throughput_gbps"], g["stat_all_total_pct"], xs, colour, device, alpha, prediction=False,
                 measured_max=saturation_gbps(g))
        handles.append(Line2D([], [], color=colour, lw=1.6, label=f"{device} (measured)"))
    for j, (_, p) in enumerate(phones.iterrows()):
        ls = [":", "-."][j % 2]
        sns.lineplot(x=xs, y=p["intercept_pct"] + p["slope_pct_per_gbps"] * xs, color="black", lw=1.3, ls=ls,
                     ax=ax, legend=False)
        handles.append(Line2D([], [], color="black", lw=1.3, ls=ls, label=f"{p['device']} (published line)"))
    handles.append(Line2D([], [], color="grey", lw=1.3, ls="--", label="extrapolated (beyond the saturation point)"))
    handles.append(Patch(color="grey", alpha=CI_ALPHA, lw=0, label=f"{1 - alpha:.0%} confidence band"))
    ax.axhline(threshold, color="grey", lw=0.8, ls="--")
    for rate in targets:
        ax.axvline(rate, color="grey", lw=0.5, ls=":")
    ax.set(xlim=(0, x_top), ylim=(0, 100), xlabel="TCP downlink throughput (Gbps)",
           ylabel="Total CPU utilization (%)")
    ax.legend(handles=handles)
    legend_outside(ax)
    return fig

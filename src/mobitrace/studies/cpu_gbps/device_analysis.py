"""Per-device analysis of measured cpu-gbps captures: the paper's Figure 1
(CPU vs throughput), the OLS lines with intervals, extrapolation to target
rates and the throughput at a CPU threshold, for one device.

Input: data/interim/cpu-gbps/<device>/runs.parquet (ingest.ingest).
Output folder: fits.csv, extrapolations.csv, rate_summary.csv, figure1.svg,
metrics.json. Statistics in mobitrace.stats.cpufit (formulas and references there).
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from mobitrace.core.io import replacing_dir, write_csv, write_metrics
from mobitrace.core.numbers import level
from mobitrace.stats import cpufit
from mobitrace.stats.intervals import mean_ci
from mobitrace.book.figures import PALETTE, legend_outside, save_svg
from mobitrace.studies.cpu_gbps.schema import EXTRAPOLATIONS_SCHEMA, FITS_SCHEMA, RATE_SUMMARY_SCHEMA

# CPU sources: column in runs.parquet -> label.
SOURCES = {
    "stat_total": ("stat_all_total_pct", "/proc/stat Total (tick-sampled, as the paper)"),
    "stat_softirq": ("stat_all_softirq_pct", "/proc/stat SoftIRQ (tick-sampled, as the paper)"),
    "precise_total": ("precise_total_pct", "precise Total (rusage of both iperf3 + ksoftirqd run time)"),
    "iperf3_total": ("iperf3_total_pct", "iperf3 cpu_utilization_percent (client + server)"),
}
DIRECTION_LABEL = {"down": "downlink (peer -> device)", "up": "uplink (device -> peer)"}
DIRECTION_TITLE = {"down": "Downlink", "up": "Uplink"}


def _csv(frame: pd.DataFrame, path: Path) -> None:
    write_csv(frame, path)


def saturation_gbps(group: pd.DataFrame) -> float:
    """A device's saturation point: the highest mean throughput over its
    target rates (at the unlimited rate, what it sustains when nothing paces
    it). Chosen over a segmented fit because a capture has only a handful of
    rate levels, too few to place a breakpoint, and the mean is measured."""
    return float(group.groupby("target_rate_bps")["throughput_gbps"].mean().max())


def beyond_range(x: float, saturation: float) -> bool:
    """Whether a rate lies beyond the measured range, i.e. above the rate the
    device sustains (saturation_gbps; a single faster run is not sustained).
    NaN (the line never crosses): not beyond."""
    return bool(pd.notna(x) and x > saturation)


# The one definition of "measured range" the book uses (prose, tables, figures).
MEASURED_RANGE = ("the measured range: up to the device's saturation point, its fastest mean throughput over its "
                  "target rates (a single faster run is not a rate it sustains)")


def saturation_words(saturation: float) -> str:
    """The saturation point in words that a single faster run or the mean at
    one rate cannot contradict."""
    return f"its fastest mean over its target rates is {saturation:.1f} Gbps"


def beyond_text(saturation: float) -> str:
    """The flag of an estimate beyond the measured range, with the device's
    saturation point."""
    return f"beyond the measured range ({saturation_words(saturation)})"


def clean_runs(runs: pd.DataFrame, limit_pp: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(kept, left out): a run whose host-wide background load, the host's
    precise CPU minus the experiment's (percentage points), exceeds
    `limit_pp` is left out of fits and comparisons. A run without the host
    record (no number to judge) is kept."""
    if "host_precise_total_pct" not in runs:
        return runs, runs.iloc[:0]
    background = runs["host_precise_total_pct"] - runs["precise_total_pct"]
    out = background > limit_pp
    return runs[~out], runs[out]


def fit_table(runs: pd.DataFrame, alpha: float, targets: list[float], threshold: float
              ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """OLS of every CPU source on throughput per (device, config, direction):
    (fits, extrapolations)."""
    fits, extra = [], []
    for (device, config, direction), g in runs.groupby(["device", "config", "direction"], sort=True):
        for source, (col, label) in SOURCES.items():
            res = cpufit.fit_line(g["throughput_gbps"], g[col])
            row = {"device": device, "config": config, "direction": direction, "source": source,
                   "source_label": label, **cpufit.fit_summary(res, alpha)}
            mean_inv = cpufit.inverse_predict(res, threshold, alpha)
            new_inv = cpufit.inverse_predict(res, threshold, alpha, m=1)
            row.update({
                "threshold_pct": threshold,
                "gbps_at_threshold": mean_inv.x0,
                "gbps_at_threshold_lo": mean_inv.lower, "gbps_at_threshold_hi": mean_inv.upper,
                "gbps_at_threshold_bounded": mean_inv.bounded,
                "gbps_at_threshold_pred_lo": new_inv.lower, "gbps_at_threshold_pred_hi": new_inv.upper,
                "gbps_at_threshold_pred_bounded": new_inv.bounded,
                "fieller_g": mean_inv.g,
                "saturation_gbps": saturation_gbps(g),
            })
            row["gbps_at_threshold_beyond_range"] = beyond_range(mean_inv.x0, row["saturation_gbps"])
            fits.append(row)
            b = cpufit.bands(res, targets, alpha)
            for _, r in b.iterrows():
                extra.append({"device": device, "config": config, "direction": direction, "source": source,
                              "target_gbps": r["x"], "cpu_pct": r["mean"],
                              "mean_ci_lo": r["mean_ci_lower"], "mean_ci_hi": r["mean_ci_upper"],
                              "pred_lo": r["obs_ci_lower"], "pred_hi": r["obs_ci_upper"],
                              "extrapolated": beyond_range(r["x"], row["saturation_gbps"])})
    return pd.DataFrame(fits), pd.DataFrame(extra)


def rate_summary(runs: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """Mean (t interval) throughput and CPU per direction and target rate."""
    rows = []
    for (device, config, direction, rate), g in runs.groupby(
            ["device", "config", "direction", "target_rate_bps"], sort=True):
        tput = mean_ci(g["throughput_gbps"], alpha)
        row = {"device": device, "config": config, "direction": direction,
               "target_rate": "max" if rate == 0 else f"{rate / 1e6:g}M", "target_rate_bps": rate,
               "n": len(g), "throughput_gbps": tput[0], "throughput_lo": tput[1], "throughput_hi": tput[2]}
        for source, (col, _) in SOURCES.items():
            row[f"{source}_pct"] = g[col].mean()
        for col in sorted(c for c in g.columns if c.startswith("stat_cpu") and c.endswith("_pct")):
            row[col] = g[col].mean()
        row["precise_device_pct"] = g["precise_device_pct"].mean()
        row["precise_peer_pct"] = g["precise_peer_pct"].mean()
        row["precise_ksoftirqd_pct"] = g["precise_ksoftirqd_pct"].mean()
        row["retransmits"] = g["retransmits"].mean()
        rows.append(row)
    frame = pd.DataFrame(rows)
    # Unlimited ("max") last within each direction.
    frame["_order"] = frame["target_rate_bps"].where(frame["target_rate_bps"] > 0, np.iinfo("int64").max)
    return frame.sort_values(["direction", "_order"]).drop(columns="_order").reset_index(drop=True)


# Figure 1: one colour and marker per CPU source; panels: Total and SoftIRQ.
SOURCE_STYLE = {"stat_total": (0, "o", "/proc/stat Total"),
                "precise_total": (5, "^", "precise Total"),
                "stat_softirq": (1, "s", "/proc/stat SoftIRQ")}
PANELS = {"Total CPU": ("stat_total", "precise_total"), "SoftIRQ CPU": ("stat_softirq",)}
CI_ALPHA, PRED_ALPHA = 0.30, 0.12  # band opacity: confidence band darker, prediction band lighter


def line_with_bands(x, y, xs, alpha: float) -> pd.DataFrame:
    """The OLS line of y on x evaluated at xs with its 100(1 - alpha)%
    confidence band of the mean (mean_ci_*) and prediction band of one new
    run (obs_ci_*), from statsmodels' get_prediction (cpufit.bands)."""
    return cpufit.bands(cpufit.fit_line(x, y), xs, alpha)


def draw_fit(ax, x, y, xs, color, label: str, alpha: float, prediction: bool = True,
             measured_max: float | None = None) -> pd.DataFrame:
    """Draw the OLS line (seaborn lineplot) with its confidence band and, if
    `prediction`, its prediction band (fill_between). Beyond `measured_max`
    the line is dashed (extrapolated). Returns the band frame."""
    b = line_with_bands(x, y, xs, alpha)
    if prediction:
        ax.fill_between(b["x"], b["obs_ci_lower"], b["obs_ci_upper"], color=color, alpha=PRED_ALPHA, lw=0)
    ax.fill_between(b["x"], b["mean_ci_lower"], b["mean_ci_upper"], color=color, alpha=CI_ALPHA, lw=0)
    inside = b["x"] <= (np.inf if measured_max is None else measured_max)
    sns.lineplot(x=b.loc[inside, "x"], y=b.loc[inside, "mean"], color=color, lw=1.6, ax=ax, label=label,
                 legend=False)
    if not inside.all():
        sns.lineplot(x=b.loc[~inside, "x"], y=b.loc[~inside, "mean"], color=color, lw=1.3, ls="--", ax=ax,
                     legend=False)
    return b


def band_handles(entries: list[tuple[str, object, str]], alpha: float, prediction: bool = True) -> list:
    """Legend handles: one line (and marker) per (label, colour, marker)
    entry, then the two kinds of band."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    handles = [Line2D([], [], color=c, marker=m, lw=1.6, label=lab) for lab, c, m in entries]
    handles.append(Patch(color="grey", alpha=CI_ALPHA + PRED_ALPHA, lw=0,
                         label=f"{level(alpha)} confidence band (fitted mean)"))
    if prediction:
        handles.append(Patch(color="grey", alpha=PRED_ALPHA, lw=0, label=f"{level(alpha)} prediction band (one run)"))
    return handles


def band_legend(ax, entries: list[tuple[str, object, str]], alpha: float, prediction: bool = True) -> None:
    """A legend outside the axes (right of it) with band_handles."""
    ax.legend(handles=band_handles(entries, alpha, prediction))
    legend_outside(ax)


def figure1(runs: pd.DataFrame, alpha: float, device: str, path: Path) -> Path:
    """Save figure1_fig(runs, alpha, device) as deterministic SVG at `path`."""
    fig = figure1_fig(runs, alpha, device)
    save_svg(fig, path)
    plt.close(fig)
    return path


def figure1_fig(runs: pd.DataFrame, alpha: float, device: str):
    """The paper's Figure 1 for one measured device (seaborn, book theme):
    rows downlink and uplink, columns Total and SoftIRQ CPU; points are runs,
    lines OLS fits with their 100(1 - alpha)% confidence band (darker) and
    prediction band (lighter), /proc/stat and the precise source. Returns
    the matplotlib figure (the chapter saves and shows it)."""
    directions = [d for d in ("down", "up") if (runs["direction"] == d).any()]
    fig, axes = plt.subplots(len(directions), len(PANELS), figsize=(10, 3.4 * len(directions) + 0.4),
                             sharex=True, squeeze=False)
    for row, direction in zip(axes, directions):
        g = runs[runs["direction"] == direction]
        xs = np.linspace(0, float(g["throughput_gbps"].max()) * 1.02, 120)
        for ax, (panel, sources) in zip(row, PANELS.items()):
            top = 0.0
            for source in sources:
                colour, marker, label = SOURCE_STYLE[source]
                col = SOURCES[source][0]
                sns.scatterplot(x=g["throughput_gbps"], y=g[col], color=PALETTE[colour], marker=marker, s=28,
                                alpha=0.8, ax=ax, legend=False)
                draw_fit(ax, g["throughput_gbps"], g[col], xs, PALETTE[colour], label, alpha)
                top = max(top, float(g[col].max()))
            ax.set(title=f"{DIRECTION_TITLE[direction]}: {panel}", xlabel="TCP throughput (Gbps)",
                   ylabel="CPU utilization (% of all CPUs)", xlim=(0, xs.max()), ylim=(0, top * 1.15 + 1))
    # One legend for all panels, below them (outside the data; the panels keep the full width).
    fig.legend(handles=band_handles([(SOURCE_STYLE[s][2], PALETTE[SOURCE_STYLE[s][0]], SOURCE_STYLE[s][1])
                                     for s in SOURCE_STYLE], alpha),
               loc="upper center", bbox_to_anchor=(0.5, 0.02), ncol=3, frameon=False)
    fig.suptitle(f"{device}: CPU vs throughput, one point per run, OLS lines", y=0.99)
    fig.subplots_adjust(hspace=0.3, wspace=0.28, top=0.9)
    return fig


def direction_word(ratio: float, higher: str = "higher", lower: str = "lower", same: str = "the same",
                   rel_tol: float = 0.0) -> str:
    """A direction word from the sign of log(ratio): `higher` when ratio > 1
    (beyond rel_tol), `lower` when ratio < 1, `same` otherwise. For prose
    computed from data (a ratio of two readings)."""
    if ratio is None or not np.isfinite(ratio) or ratio <= 0:
        raise ValueError(f"a direction needs a positive finite ratio, got {ratio!r}")
    if ratio > 1 + rel_tol:
        return higher
    if ratio < 1 / (1 + rel_tol):
        return lower
    return same


def analyze(interim_dir: str | Path, out_dir: str | Path, params: dict) -> None:
    """Write one device's fits, extrapolations, rate summary, Figure 1 and
    metrics to out_dir (replaced as a whole; nothing left on failure).
    `params`: alpha, target_rates_gbps, cpu_threshold_pct, background_max_pp
    (params.yaml); runs above the background limit are left out (`clean_runs`)."""
    alpha, threshold = float(params["alpha"]), float(params["cpu_threshold_pct"])
    targets = [float(t) for t in params["target_rates_gbps"]]
    interim_dir, out_dir = Path(interim_dir), Path(out_dir)
    runs, _ = clean_runs(pd.read_parquet(interim_dir / "runs.parquet"), float(params["background_max_pp"]))
    device = str(runs["device"].iloc[0])
    fits, extra = fit_table(runs, alpha, targets, threshold)
    summary = rate_summary(runs, alpha)
    FITS_SCHEMA.validate(fits)
    EXTRAPOLATIONS_SCHEMA.validate(extra)
    RATE_SUMMARY_SCHEMA.validate(summary)
    with replacing_dir(out_dir) as tmp:
        _csv(fits, tmp / "fits.csv")
        _csv(extra, tmp / "extrapolations.csv")
        _csv(summary, tmp / "rate_summary.csv")
        figure1(runs, alpha, device, tmp / "figure1.svg")
        metrics = {}
        for _, r in fits.iterrows():
            key = f"{r['direction']}.{r['source']}"
            metrics[key] = {
                "slope_pct_per_gbps": round(r["slope"], 6), "intercept_pct": round(r["intercept"], 6),
                "r2": round(r["r2"], 6),
                f"gbps_at_{threshold:g}pct": round(r["gbps_at_threshold"], 6),
                f"gbps_at_{threshold:g}pct_lo": None if math.isnan(r["gbps_at_threshold_lo"]) else round(r["gbps_at_threshold_lo"], 6),
                f"gbps_at_{threshold:g}pct_hi": None if math.isnan(r["gbps_at_threshold_hi"]) else round(r["gbps_at_threshold_hi"], 6),
            }
        max_rate = summary[summary["target_rate"] == "max"]
        for _, r in max_rate.iterrows():
            metrics[f"{r['direction']}.max_throughput_gbps"] = round(r["throughput_gbps"], 6)
        write_metrics(tmp / "metrics.json", {device: metrics})

"""Per-device analysis of measured cpu-gbps captures: the paper's Figure 1
(CPU vs throughput), the OLS lines with intervals, extrapolation to target
rates and the throughput at a CPU threshold, for one device.

Input: data/interim/cpu-gbps/<device>/runs.parquet (captures.ingest_device).
Output folder: fits.csv, extrapolations.csv, rate_summary.csv, figure1.svg,
metrics.json. Statistics in mobitrace.cpufit (formulas and references there).
"""

from __future__ import annotations

import json
import math
import shutil
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from . import cpufit
from .figures import save_svg

# CPU sources: column in runs.parquet -> label.
SOURCES = {
    "stat_total": ("stat_all_total_pct", "/proc/stat Total (tick-sampled, as the paper)"),
    "stat_softirq": ("stat_all_softirq_pct", "/proc/stat SoftIRQ (tick-sampled, as the paper)"),
    "precise_total": ("precise_total_pct", "precise Total (rusage of both iperf3 + ksoftirqd run time)"),
    "iperf3_total": ("iperf3_total_pct", "iperf3 cpu_utilization_percent (client + server)"),
}
DIRECTION_LABEL = {"down": "downlink (peer -> device)", "up": "uplink (device -> peer)"}


def _csv(frame: pd.DataFrame, path: Path) -> None:
    frame.to_csv(path, index=False, float_format="%.6g", lineterminator="\n")


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
            })
            fits.append(row)
            b = cpufit.bands(res, targets, alpha)
            for _, r in b.iterrows():
                extra.append({"device": device, "config": config, "direction": direction, "source": source,
                              "target_gbps": r["x"], "cpu_pct": r["mean"],
                              "mean_ci_lo": r["mean_ci_lower"], "mean_ci_hi": r["mean_ci_upper"],
                              "pred_lo": r["obs_ci_lower"], "pred_hi": r["obs_ci_upper"],
                              "extrapolated": bool(r["x"] > row["x_max"])})
    return pd.DataFrame(fits), pd.DataFrame(extra)


def rate_summary(runs: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """Mean (t interval) throughput and CPU per direction and target rate."""
    rows = []
    for (device, config, direction, rate), g in runs.groupby(
            ["device", "config", "direction", "target_rate_bps"], sort=True):
        tput = cpufit.mean_ci(g["throughput_gbps"], alpha)
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


def figure1(runs: pd.DataFrame, alpha: float, device: str, path: Path) -> Path:
    """The paper's Figure 1 for one measured device: Total and SoftIRQ CPU vs
    throughput (points: runs; lines: OLS fits with 95% confidence bands),
    downlink and uplink, /proc/stat and the precise source."""
    styles = {"stat_total": ("#d95f02", "o", "/proc/stat Total"),
              "stat_softirq": ("#7570b3", "s", "/proc/stat SoftIRQ"),
              "precise_total": ("#1b9e77", "^", "precise Total")}
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, direction in zip(axes, ("down", "up")):
        g = runs[runs["direction"] == direction]
        if g.empty:
            ax.set_visible(False)
            continue
        xs = np.linspace(0, g["throughput_gbps"].max() * 1.02, 100)
        for source, (color, marker, label) in styles.items():
            col = SOURCES[source][0]
            ax.plot(g["throughput_gbps"], g[col], marker, color=color, ms=4, alpha=0.7, mfc="none")
            res = cpufit.fit_line(g["throughput_gbps"], g[col])
            b = cpufit.bands(res, xs, alpha)
            ax.plot(xs, b["mean"], color=color, lw=1.2, label=label)
            ax.fill_between(xs, b["mean_ci_lower"], b["mean_ci_upper"], color=color, alpha=0.2, lw=0)
        ax.set_title(DIRECTION_LABEL[direction])
        ax.set_xlabel("TCP throughput (Gbps)")
        ax.set_xlim(left=0)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("CPU utilization (% of all CPUs)")
    axes[0].set_ylim(bottom=0)
    axes[0].legend(loc="upper left", frameon=False, fontsize=8)
    fig.suptitle(f"{device}: CPU vs throughput (measured runs; OLS with {1 - alpha:.0%} confidence bands)")
    save_svg(fig, path)
    plt.close(fig)
    return path


def analyze(interim_dir: str | Path, out_dir: str | Path, alpha: float, targets: list[float],
            threshold: float) -> None:
    """Write one device's fits, extrapolations, rate summary, Figure 1 and
    metrics to out_dir (replaced as a whole; nothing left on failure)."""
    interim_dir, out_dir = Path(interim_dir), Path(out_dir)
    runs = pd.read_parquet(interim_dir / "runs.parquet")
    device = str(runs["device"].iloc[0])
    fits, extra = fit_table(runs, alpha, targets, threshold)
    summary = rate_summary(runs, alpha)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
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
        (tmp / "metrics.json").write_text(json.dumps({device: metrics}, indent=2, sort_keys=True) + "\n")
        shutil.rmtree(out_dir, ignore_errors=True)
        tmp.rename(out_dir)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

"""The cpu-gbps-measured chapter across devices: comparisons of two device
configurations at the unlimited rate (means with t intervals, Welch's test,
the ratio of means with its interval); the chapter's figures are in
mobitrace.studies.cpu_gbps.figures. Per-device fits come from mobitrace.studies.cpu_gbps.device_analysis; the statistics
from mobitrace.stats.cpufit (formulas and references there).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from mobitrace.stats import cpufit
from mobitrace.stats.intervals import mean_ci
from mobitrace.stats.welch import welch_samples
from mobitrace.stats.welch import holm
from mobitrace.core import numbers
from mobitrace.core.escape import md_text

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
    hit = np.flatnonzero((fits["device"].to_numpy() == device) & (fits["direction"].to_numpy() == direction)
                         & (fits["source"].to_numpy() == source))  # numpy: a tenth of the time of pandas' masks
    if not len(hit):
        raise KeyError(f"no fit for {device} {direction} {source}")
    return fits.iloc[hit[0]]  # the first row alone: a chapter asks ~100 times, filtering every column each time


def max_runs(runs: pd.DataFrame, device: str, direction: str) -> pd.DataFrame:
    """The runs of one device and direction at the unlimited rate (target 0)."""
    return runs[(runs["device"] == device) & (runs["direction"] == direction) & (runs["target_rate_bps"] == 0)]


def compare(runs: pd.DataFrame, fits: pd.DataFrame, dev_a: str, dev_b: str, label: str,
            alpha: float) -> pd.DataFrame:
    """Device b against device a at the unlimited rate, per direction: mean
    throughput of each with its t interval, the ratio of means b / a with
    its interval (cpufit.ratio_ci), Welch's t-test of b - a, mean CPU at
    that rate and the slopes of both devices' lines."""
    rows = []
    for direction in ("down", "up"):
        a, b = max_runs(runs, dev_a, direction), max_runs(runs, dev_b, direction)
        if a.empty or b.empty:
            continue
        ma = mean_ci(a["throughput_gbps"], alpha)
        mb = mean_ci(b["throughput_gbps"], alpha)
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


def holm_family(frames: dict[str, pd.DataFrame], alpha: float) -> dict[str, pd.DataFrame]:
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


def comparison_shown(frame: pd.DataFrame, a_name: str, b_name: str, alpha: float) -> pd.DataFrame:
    """A compare() frame for people: throughput of a and b with intervals,
    the ratio with its interval, Welch's p and the precise CPU per Gbps."""
    return pd.DataFrame({
        "direction": frame["direction"].map(DIRECTION_NAMES),
        f"{a_name} (Gbps) [{numbers.level(alpha)} CI]": [numbers.interval(*v) for v in zip(frame["a_max_gbps"], frame["a_lo"],
                                                                          frame["a_hi"])],
        f"{b_name} (Gbps) [{numbers.level(alpha)} CI]": [numbers.interval(*v) for v in zip(frame["b_max_gbps"], frame["b_lo"],
                                                                          frame["b_hi"])],
        f"ratio b / a [{numbers.level(alpha)} CI]": [numbers.interval(*v) for v in zip(frame["ratio_b_over_a"], frame["ratio_lo"],
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



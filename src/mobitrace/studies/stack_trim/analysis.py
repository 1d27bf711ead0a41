"""Stack-trim analysis: CPU energy of one-copy vs two-copy and of TCP vs UDP
at constant bit rates, with bootstrap intervals over repetitions.

Energies are *modeled*: the precise CPU time a run used (getrusage of the
data phase, measured) priced with a componentized CPU power model
(:class:`mobitrace.energy.power_models.CpuPowerModel`, P_c = u_c (k_f f_c + k_0) above
idle, so E = CPU seconds x (k_f f + k_0) at the run's mean frequency f).
The idle baseline is subtracted by construction, as Zhu et al. subtract E_bk.

Definitions (Zhu et al., HotNets'16, §4.1):

* normalized CPU energy saving  S = 1 - E(one-copy) / E(two-copy)
* absolute CPU power saving     dP = P(two-copy) - P(one-copy)  [mW]

Both are estimated from the mean over the repetitions of each condition
(ratio of means) and carry a percentile bootstrap interval that resamples the
repetitions of each condition independently (scipy.stats.bootstrap,
paired=False, seeded, fixed number of resamples).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from mobitrace.energy.power_models import CpuPowerModel

CPU_BASES = {"both": "both_cpu_s", "device": "device_cpu_s"}


def price(runs: pd.DataFrame, model: CpuPowerModel) -> pd.DataFrame:
    """Add modeled energies (mJ) and mean powers (mW) above idle for the CPU
    time of both endpoints and of the device-side process, at each run's mean
    frequency (MHz from /proc/cpuinfo)."""
    out = runs.copy()
    ghz = out["mean_mhz"].to_numpy() / 1000.0
    for basis, col in CPU_BASES.items():
        e = model.energy_from_cpu_seconds_mj(out[col].to_numpy(), ghz)
        out[f"energy_{basis}_mj"] = e
        out[f"power_{basis}_mw"] = e / out["elapsed_s"].to_numpy()
    return out


def _saving(a, b, axis=-1):
    return 1.0 - np.mean(a, axis=axis) / np.mean(b, axis=axis)


def _ratio(a, b, axis=-1):
    return np.mean(a, axis=axis) / np.mean(b, axis=axis)


def _difference(a, b, axis=-1):
    return np.mean(b, axis=axis) - np.mean(a, axis=axis)


STATISTICS = {"saving": _saving, "ratio": _ratio, "difference": _difference}


def bootstrap_ci(a, b, statistic: str = "saving", level: float = 0.95, n_resamples: int = 2000,
                 seed: int = 0) -> tuple[float, float, float]:
    """(estimate, low, high) of a two-sample statistic of the means:

    * "saving":     1 - mean(a) / mean(b)
    * "ratio":      mean(a) / mean(b)
    * "difference": mean(b) - mean(a)

    with a percentile bootstrap interval at `level` that resamples a and b
    independently (scipy.stats.bootstrap, paired=False) with a fixed seed.
    Needs at least two values in each sample; constant samples give a
    degenerate interval equal to the estimate."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if len(a) < 2 or len(b) < 2:
        raise ValueError("bootstrap needs at least two repetitions per condition")
    fn = STATISTICS[statistic]
    est = float(fn(a, b))
    if np.ptp(a) == 0 and np.ptp(b) == 0:
        return est, est, est
    res = stats.bootstrap((a, b), fn, paired=False, vectorized=True, axis=-1, n_resamples=n_resamples,
                          confidence_level=level, method="percentile", rng=np.random.default_rng(seed))
    return est, float(res.confidence_interval.low), float(res.confidence_interval.high)


def compare(runs: pd.DataFrame, by: list[str], variant: dict, baseline: dict, basis: str = "both",
            level: float = 0.95, n_resamples: int = 2000, seed: int = 0, min_delivered: float = 0.95) -> pd.DataFrame:
    """Variant vs baseline in each group of `by` (e.g. link, direction,
    rate): n, mean energy and power of each, the energy saving
    1 - E_v/E_b, the energy ratio E_v/E_b and the power saving P_b - P_v,
    each with its bootstrap interval. `variant` and `baseline` select runs
    by column values. A group is `sustained` when every run of both delivered
    at least `min_delivered` of the nominal rate (see :func:`delivered`)."""
    e_col, p_col = f"energy_{basis}_mj", f"power_{basis}_mw"

    def pick(frame, sel):
        m = np.ones(len(frame), dtype=bool)
        for k, v in sel.items():
            m &= (frame[k] == v).to_numpy()
        return frame[m]

    va, ba = pick(runs, variant), pick(runs, baseline)
    rows = []
    keys = sorted(set(map(tuple, va[by].to_numpy().tolist())) & set(map(tuple, ba[by].to_numpy().tolist())))
    for key in keys:
        a = va[(va[by] == pd.Series(key, index=by)).all(axis=1)]
        b = ba[(ba[by] == pd.Series(key, index=by)).all(axis=1)]
        s, s_lo, s_hi = bootstrap_ci(a[e_col], b[e_col], "saving", level, n_resamples, seed)
        r, r_lo, r_hi = bootstrap_ci(a[e_col], b[e_col], "ratio", level, n_resamples, seed)
        d, d_lo, d_hi = bootstrap_ci(a[p_col], b[p_col], "difference", level, n_resamples, seed)
        delivered = float(np.min(delivered_share(pd.concat([a, b]))))
        rows.append({**dict(zip(by, key)), "n_variant": len(a), "n_baseline": len(b),
                     "energy_variant_mj": a[e_col].mean(), "energy_baseline_mj": b[e_col].mean(),
                     "power_variant_mw": a[p_col].mean(), "power_baseline_mw": b[p_col].mean(),
                     "cv_variant_pct": 100 * a[e_col].std(ddof=1) / a[e_col].mean(),
                     "cv_baseline_pct": 100 * b[e_col].std(ddof=1) / b[e_col].mean(),
                     "saving": s, "saving_lo": s_lo, "saving_hi": s_hi,
                     "ratio": r, "ratio_lo": r_lo, "ratio_hi": r_hi,
                     "power_saving_mw": d, "power_saving_lo_mw": d_lo, "power_saving_hi_mw": d_hi,
                     "goodput_variant_mbps": a["goodput_mbps"].mean(), "goodput_baseline_mbps": b["goodput_mbps"].mean(),
                     "min_delivered": float(delivered), "sustained": bool(delivered >= min_delivered)})
    return pd.DataFrame(rows)


def delivered_share(runs: pd.DataFrame):
    """Share of the nominal rate each run delivered: (received bytes + one
    write) / (rate x data-phase time / 8). One write (`size` bytes) is added
    because the pacer sends whole writes: at 1 Mbps a 1 s run offers 7 writes
    of 16384 B (114688 B), not 125000 B."""
    nominal = runs["rate_mbps"].to_numpy() * 1e6 * runs["elapsed_s"].to_numpy() / 8
    return (runs["receiver_bytes"].to_numpy() + runs["size"].to_numpy()) / nominal


def crossover_rate(rates, ratio, ratio_lo=None) -> tuple[float, float]:
    """The lowest rate from which the ratio stays above 1 at every higher
    rate, and the rate below it (the crossover lies between them; NaN when
    the ratio is above 1 at the lowest rate, or never ends above 1).
    With `ratio_lo` (the intervals' lower bounds) the condition is that the
    whole interval is above 1."""
    r = np.asarray(rates, dtype=float)
    v = np.asarray(ratio if ratio_lo is None else ratio_lo, dtype=float)
    order = np.argsort(r)
    r, v = r[order], v[order]
    above = v > 1.0
    if not above[-1]:
        return float("nan"), float("nan")
    k = len(above) - 1
    while k > 0 and above[k - 1]:
        k -= 1
    return float(r[k]), (float(r[k - 1]) if k > 0 else float("nan"))


def breakdown(runs: pd.DataFrame) -> pd.DataFrame:
    """A Table 1 analog per condition and rate: CPU utilization in % of one
    core over the data phase. Endpoint user and kernel time are precise
    (getrusage); host softirq and host busy time are tick-sampled /proc/stat
    over the sampled interval and include every process of the (shared)
    host, so `other` (host busy minus the endpoints) is an upper bound on
    the background."""
    g = runs.assign(
        app_user_pct=100 * (runs["sender_user_s"] + runs["receiver_user_s"]) / runs["elapsed_s"],
        endpoint_kernel_pct=100 * (runs["sender_sys_s"] + runs["receiver_sys_s"]) / runs["elapsed_s"],
        endpoints_pct=100 * runs["both_cpu_s"] / runs["elapsed_s"],
        host_softirq_pct=100 * runs["stat_softirq_s"] / runs["stat_interval_s"],
        host_busy_pct=100 * runs["stat_busy_s"] / runs["stat_interval_s"],
    )
    g["other_pct"] = g["host_busy_pct"] - g["endpoints_pct"] * g["elapsed_s"] / g["stat_interval_s"]
    cols = ["app_user_pct", "endpoint_kernel_pct", "endpoints_pct", "host_softirq_pct", "host_busy_pct", "other_pct"]
    return (g.groupby(["condition", "link", "direction", "proto", "size", "rate_mbps"], as_index=False)[cols]
            .mean().sort_values(["condition", "rate_mbps"]).reset_index(drop=True))


# ---------------------------------------------------------------------------
# Presentation helpers of the chapter: labels, tables for people, and the
# long form seaborn draws precomputed intervals from.

LINK_NAMES = {"lo": "loopback", "veth": "veth pair"}


def series_label(link: str, direction: str | None = None, udp_size: int | None = None) -> str:
    """A curve's name in the figures: ``loopback, uplink`` or ``loopback, UDP 1472 B``."""
    parts = [LINK_NAMES.get(link, link)]
    if direction is not None:
        parts.append(f"{direction}link")
    if udp_size is not None:
        parts.append(f"UDP {int(udp_size)} B")
    return ", ".join(parts)


def interval_long(frame: pd.DataFrame, estimate: str, low: str, high: str, keep: list[str],
                  scale: float = 1.0) -> pd.DataFrame:
    """Three rows per estimate (low, estimate, high; times `scale`) in a
    column `value`, with the `keep` columns: `sns.lineplot(..., estimator="median",
    errorbar=interval_extent)` then draws each estimate with exactly its
    precomputed interval."""
    parts = [frame[keep].assign(value=scale * frame[c].astype(float), bound=c) for c in (low, estimate, high)]
    return pd.concat(parts, ignore_index=True)


def interval_extent(values) -> tuple[float, float]:
    """A seaborn errorbar function: the smallest and largest value."""
    values = np.asarray(values, dtype=float)
    return float(values.min()), float(values.max())


def _interval_text(est, lo, hi, scale=1.0, digits=3):
    from mobitrace.core import numbers
    return [numbers.interval(scale * e, scale * a, scale * b, sig=digits) for e, a, b in zip(est, lo, hi)]


def onecopy_shown(table: pd.DataFrame) -> pd.DataFrame:
    """The one-copy comparison (compare) for people: intervals in one cell,
    savings in %, units in the headers."""
    return pd.DataFrame({
        "CPU time of": table["basis"].map({"both": "both endpoints", "device": "device"}),
        "link": table["link"].map(LINK_NAMES), "direction": table["direction"] + "link",
        "rate (Mbps)": table["rate_mbps"], "runs (one-copy / two-copy)": [f"{a} / {b}" for a, b in
                                                                        zip(table["n_variant"], table["n_baseline"])],
        "energy two-copy (mJ)": table["energy_baseline_mj"], "energy one-copy (mJ)": table["energy_variant_mj"],
        "saving (%) [95% CI]": _interval_text(table["saving"], table["saving_lo"], table["saving_hi"], 100),
        "power saving (mW) [95% CI]": _interval_text(table["power_saving_mw"], table["power_saving_lo_mw"],
                                                     table["power_saving_hi_mw"]),
        "goodput two-copy (Mbps)": table["goodput_baseline_mbps"],
        "sustained": table["sustained"].map({True: "yes", False: "no"}),
    })


def transport_shown(table: pd.DataFrame) -> pd.DataFrame:
    """The UDP-vs-TCP comparison (compare) for people."""
    return pd.DataFrame({
        "link": table["link"].map(LINK_NAMES), "UDP datagram (B)": table["udp_size"],
        "rate (Mbps)": table["rate_mbps"], "runs (UDP / TCP)": [f"{a} / {b}" for a, b in
                                                             zip(table["n_variant"], table["n_baseline"])],
        "energy TCP (mJ)": table["energy_baseline_mj"], "energy UDP (mJ)": table["energy_variant_mj"],
        "E(UDP)/E(TCP) [95% CI]": _interval_text(table["ratio"], table["ratio_lo"], table["ratio_hi"]),
        "power saving (mW)": table["power_saving_mw"], "goodput UDP (Mbps)": table["goodput_variant_mbps"],
        "lowest delivered share": table["min_delivered"],
        "sustained": table["sustained"].map({True: "yes", False: "no"}),
    })

"""The stack-trim chapter's tables and labels for people: series labels,
the long form seaborn draws precomputed intervals from, and each results
table as the book shows it (mobitrace.studies.stack_trim.analysis makes the
tables)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from mobitrace.core import numbers
from mobitrace.studies.stack_trim.analysis import sequential_rule_text

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
    return [numbers.interval(scale * e, scale * a, scale * b, sig=digits) for e, a, b in zip(est, lo, hi)]


def onecopy_shown(table: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """The one-copy comparison (compare) for people: intervals in one cell,
    savings in %, units in the headers."""
    return pd.DataFrame({
        "CPU time of": table["basis"].map({"both": "both endpoints", "device": "device"}),
        "link": table["link"].map(LINK_NAMES), "direction": table["direction"] + "link",
        "rate (Mbps)": table["rate_mbps"], "runs (one-copy / two-copy)": [f"{a} / {b}" for a, b in
                                                                        zip(table["n_variant"], table["n_baseline"])],
        "energy two-copy (mJ)": table["energy_baseline_mj"], "energy one-copy (mJ)": table["energy_variant_mj"],
        f"saving (%) [{numbers.level(alpha)} CI]": _interval_text(table["saving"], table["saving_lo"], table["saving_hi"], 100),
        f"power saving (mW) [{numbers.level(alpha)} CI]": _interval_text(table["power_saving_mw"], table["power_saving_lo_mw"],
                                                     table["power_saving_hi_mw"]),
        "goodput two-copy (Mbps)": table["goodput_baseline_mbps"],
        "sustained": table["sustained"].map({True: "yes", False: "no"}),
    })


def transport_shown(table: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """The UDP-vs-TCP comparison (compare) for people."""
    return pd.DataFrame({
        "link": table["link"].map(LINK_NAMES), "UDP datagram (B)": table["udp_size"],
        "rate (Mbps)": table["rate_mbps"], "runs (UDP / TCP)": [f"{a} / {b}" for a, b in
                                                             zip(table["n_variant"], table["n_baseline"])],
        "energy TCP (mJ)": table["energy_baseline_mj"], "energy UDP (mJ)": table["energy_variant_mj"],
        f"E(UDP)/E(TCP) [{numbers.level(alpha)} CI]": _interval_text(table["ratio"], table["ratio_lo"], table["ratio_hi"]),
        "power saving (mW)": table["power_saving_mw"], "goodput UDP (Mbps)": table["goodput_variant_mbps"],
        "lowest delivered share": table["min_delivered"],
        "sustained": table["sustained"].map({True: "yes", False: "no"}),
    })


def sessions_shown(sessions: pd.DataFrame) -> pd.DataFrame:
    """The capture sessions for people."""
    shown = sessions.assign(rule=[sequential_rule_text(r) for r in sessions.to_dict("records")])
    return shown[["device", "session", "runs", "left_out", "reps_done", "rule", "duration_s", "kernel", "cpu_model",
                  "cpu_count", "cpufreq", "lock_seconds", "background_load", "md5"]].rename(columns={
        "left_out": "runs left out (idle gate flagged)",
        "reps_done": "repetitions", "rule": "repetition rule", "duration_s": "run length (s)", "cpu_model": "CPU",
        "cpu_count": "cores", "lock_seconds": "capture lock held (s)",
        "background_load": "background load (idle gate)", "md5": "md5 of the session's files"})


def conditions_shown(conds: pd.DataFrame) -> pd.DataFrame:
    """The conditions table for people."""
    return conds.rename(columns={
        "proto": "protocol", "size": "write / datagram (B)", "mtu": "MTU (B)", "sender_mode": "sender",
        "receiver_mode": "receiver", "rates": "rates", "reps_min": "repetitions"})


def crossover_shown(crossover: pd.DataFrame) -> pd.DataFrame:
    """The crossover table for people."""
    return crossover.assign(link=crossover["link"].map(LINK_NAMES)).rename(columns={
        "udp_size": "UDP datagram (B)", "crossover_mbps": "UDP costs more from (Mbps)",
        "last_rate_below_mbps": "last rate below (Mbps)",
        "crossover_interval_above_1_mbps": "interval above 1 from (Mbps)",
        "max_ratio": "largest E(UDP)/E(TCP)", "ratio_at_max_rate": "E(UDP)/E(TCP) at the top rate"})


def breakdown_shown(b: pd.DataFrame) -> pd.DataFrame:
    """The CPU-time breakdown for people."""
    return b.drop(columns=["condition", "proto", "size"]).assign(link=b["link"].map(LINK_NAMES)).rename(columns={
        "rate_mbps": "rate (Mbps)", "app_user_pct": "application, user (%)",
        "endpoint_kernel_pct": "endpoints, kernel (%)", "endpoints_pct": "endpoints (%)",
        "host_softirq_pct": "host softirq (%)", "host_busy_pct": "host busy (%)", "other_pct": "other (%)"})


def table1_shown(text_tables: pd.DataFrame) -> pd.DataFrame:
    """The paper's Table 1 (text_tables of the published file) as printed."""
    t1 = text_tables[text_tables["table"] == "table1"].pivot(index="row", columns="column", values="text")
    return t1[["Logging", "OS Proc.", "WiFi Driver", "Network Stack"]].reset_index(names="CBR rate")

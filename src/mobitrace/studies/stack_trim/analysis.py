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
(ratio of means). Their intervals follow mobitrace.stats.intervals: below
PERCENTILE_MIN_N repetitions per condition the t interval of the log ratio
(saving, ratio) and Welch's t interval (power difference); from there on a
percentile bootstrap that resamples the repetitions of each condition
independently (scipy.stats.bootstrap, paired=False, seeded, fixed number of
resamples).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pandera.pandas as pa
from scipy import stats

from mobitrace.core import claims as cl
from mobitrace.core.numbers import metric
from mobitrace.core.published import Values
from mobitrace.energy.power_models import CpuPowerModel
from mobitrace.stats.correlation import spearman_ci
from mobitrace.stats.intervals import PERCENTILE_MIN_N, diff_ci, ratio_ci
from mobitrace.studies.stack_trim.schema import (BREAKDOWN_SCHEMA, CONDITIONS_SCHEMA, CROSSOVER_SCHEMA,
                                                 ONECOPY_SCHEMA, POWER_MODEL_SCHEMA, TRANSPORT_SCHEMA)

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


@cache  # the same few sizes, for every group at every robustness coefficient set (1344 draws a chapter)
def _resamples(n_a: int, n_b: int, n_resamples: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The index arrays scipy.stats.bootstrap(paired=False) draws for two
    samples of sizes n_a and n_b with np.random.default_rng(seed); read-only,
    as every caller shares them."""
    rng = np.random.default_rng(seed)
    ia, ib = rng.integers(0, n_a, (n_resamples, n_a)), rng.integers(0, n_b, (n_resamples, n_b))
    ia.setflags(write=False)
    ib.setflags(write=False)
    return ia, ib


def _percentile_intervals(draws: list[np.ndarray], alpha: float) -> np.ndarray:
    """(low, high) rows of the 100(1 - alpha)% percentile interval of each array
    of bootstrap draws, in one scipy.stats.quantile call."""
    tail = np.asarray((1 - (1 - alpha)) / 2)  # through the level, as stats.resampling.percentile_ci
    return stats.quantile(np.stack(draws), np.stack((tail, 1 - tail)), axis=-1)


def bootstrap_ci(a, b, statistic: str, alpha: float, n_resamples: int = 2000,
                 seed: int = 0) -> tuple[float, float, float]:
    """(estimate, low, high) of a two-sample statistic of the means:

    * "saving":     1 - mean(a) / mean(b)
    * "ratio":      mean(a) / mean(b)
    * "difference": mean(b) - mean(a)

    with a percentile 100(1 - alpha)% bootstrap interval that resamples a and b
    independently with a fixed seed. It draws and reduces exactly as
    scipy.stats.bootstrap(paired=False, vectorized=True, method="percentile")
    does (the same index stream, scipy.stats.quantile), so the interval is
    bit-identical to it (tests/stack_trim); :func:`compare` draws each
    condition's indices once and takes every interval in one quantile call.
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
    ia, ib = _resamples(len(a), len(b), n_resamples, seed)
    (low, high), = _percentile_intervals([fn(a[ia], b[ib], axis=-1)], alpha)
    return est, float(low), float(high)


def t_interval(a, b, statistic: str, alpha: float, ratio_bounds: tuple[float, float] | None = None
               ) -> tuple[float, float]:
    """(low, high), 100(1 - alpha)%, of a two-sample statistic of the means (see
    :func:`bootstrap_ci`) from t: the ratio's log-ratio t interval
    (`intervals.ratio_ci`, or `ratio_bounds` when already computed for the
    same samples), the saving 1 - ratio from it, the difference
    mean(b) - mean(a) from Welch (`intervals.diff_ci`); NaN below MIN_N
    values in a sample."""
    if statistic == "difference":
        return diff_ci(b, a, alpha)[1:]
    low, high = ratio_bounds if ratio_bounds is not None else ratio_ci(a, b, 1 - (1 - alpha))[1:]
    return (low, high) if statistic == "ratio" else (1 - high, 1 - low)


# compare(): (output column, statistic, energy or power)
COMPARED = (("saving", "saving", "energy"), ("ratio", "ratio", "energy"), ("power_saving", "difference", "power"))


def compare(runs: pd.DataFrame, by: list[str], variant: dict, baseline: dict, basis: str = "both",
            *, alpha: float, n_resamples: int = 2000, seed: int = 0, min_delivered: float = 0.95) -> pd.DataFrame:
    """Variant vs baseline in each group of `by` (e.g. link, direction,
    rate): n, mean energy and power of each, the energy saving
    1 - E_v/E_b, the energy ratio E_v/E_b and the power saving P_b - P_v,
    each with its interval (:func:`t_interval` below PERCENTILE_MIN_N runs
    per condition, else :func:`bootstrap_ci`). `variant` and
    `baseline` select runs by column values. A group is `sustained` when
    every run of both delivered at least `min_delivered` of the nominal rate
    (see :func:`delivered`)."""
    cols = {"energy": f"energy_{basis}_mj", "power": f"power_{basis}_mw"}
    share = delivered_share(runs)

    def groups(sel) -> dict:
        """{group key: {column: values}} of the runs `sel` selects, in the
        runs' order (numpy arrays: per-group DataFrames cost more than the bootstrap)."""
        m = np.ones(len(runs), dtype=bool)
        for k, v in sel.items():
            m &= (runs[k] == v).to_numpy()
        picked = runs[m]
        arrays = {c: picked[c].to_numpy(float) for c in {*cols.values(), "goodput_mbps"}}
        arrays["delivered"] = share[m]
        return {key if isinstance(key, tuple) else (key,): {c: x[pos] for c, x in arrays.items()}
                for key, pos in picked.groupby(by, sort=False).indices.items()}

    va, ba = groups(variant), groups(baseline)
    rows, draws, drawn = [], [], []
    for key in sorted(set(va) & set(ba)):
        a, b = va[key], ba[key]
        n_a, n_b = len(a["delivered"]), len(b["delivered"])
        if n_a < 2 or n_b < 2:
            raise ValueError("bootstrap needs at least two repetitions per condition")
        large = min(n_a, n_b) >= PERCENTILE_MIN_N
        ia, ib = _resamples(n_a, n_b, n_resamples, seed) if large else (None, None)
        row = {**dict(zip(by, key)), "n_variant": n_a, "n_baseline": n_b}
        ratio_bounds = {}  # per kind: the log-ratio t interval, which the saving and the ratio share
        for name, statistic, kind in COMPARED:
            x, y = a[cols[kind]], b[cols[kind]]
            fn = STATISTICS[statistic]
            row[name] = float(fn(x, y))
            if np.ptp(x) == 0 and np.ptp(y) == 0:
                row[f"{name}_lo"] = row[f"{name}_hi"] = row[name]
            elif not large:
                if statistic != "difference" and kind not in ratio_bounds:
                    ratio_bounds[kind] = ratio_ci(x, y, 1 - (1 - alpha))[1:]
                row[f"{name}_lo"], row[f"{name}_hi"] = t_interval(x, y, statistic, alpha, ratio_bounds.get(kind))
            else:
                draws.append(fn(x[ia], y[ib], axis=-1))
                drawn.append((len(rows), name))
        delivered = float(min(np.min(a["delivered"]), np.min(b["delivered"])))
        energy_a, energy_b = a[cols["energy"]], b[cols["energy"]]
        # nanmean / nanstd: pandas' skipna means, as the tables always had.
        row.update({"energy_variant_mj": np.nanmean(energy_a), "energy_baseline_mj": np.nanmean(energy_b),
                    "power_variant_mw": np.nanmean(a[cols["power"]]), "power_baseline_mw": np.nanmean(b[cols["power"]]),
                    "cv_variant_pct": 100 * np.nanstd(energy_a, ddof=1) / np.nanmean(energy_a),
                    "cv_baseline_pct": 100 * np.nanstd(energy_b, ddof=1) / np.nanmean(energy_b),
                    "goodput_variant_mbps": np.nanmean(a["goodput_mbps"]),
                    "goodput_baseline_mbps": np.nanmean(b["goodput_mbps"]),
                    "min_delivered": float(delivered), "sustained": bool(delivered >= min_delivered)})
        rows.append(row)
    if draws:
        for (i, name), (low, high) in zip(drawn, _percentile_intervals(draws, alpha)):
            rows[i][f"{name}_lo"], rows[i][f"{name}_hi"] = float(low), float(high)
    order = ["n_variant", "n_baseline", "energy_variant_mj", "energy_baseline_mj", "power_variant_mw",
             "power_baseline_mw", "cv_variant_pct", "cv_baseline_pct", "saving", "saving_lo", "saving_hi", "ratio",
             "ratio_lo", "ratio_hi", "power_saving", "power_saving_lo", "power_saving_hi", "goodput_variant_mbps",
             "goodput_baseline_mbps", "min_delivered", "sustained"]
    names = {"power_saving": "power_saving_mw", "power_saving_lo": "power_saving_lo_mw",
             "power_saving_hi": "power_saving_hi_mw"}
    return pd.DataFrame(rows, columns=[*by, *order]).rename(columns=names)


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
    the background. Where the tick-sampled host time reads below the
    endpoints' precise time (paced load, which /proc/stat misreports here),
    no share is left for `other`: it is NaN, not a negative share."""
    g = runs.assign(
        app_user_pct=100 * (runs["sender_user_s"] + runs["receiver_user_s"]) / runs["elapsed_s"],
        endpoint_kernel_pct=100 * (runs["sender_sys_s"] + runs["receiver_sys_s"]) / runs["elapsed_s"],
        endpoints_pct=100 * runs["both_cpu_s"] / runs["elapsed_s"],
        host_softirq_pct=100 * runs["stat_softirq_s"] / runs["stat_interval_s"],
        host_busy_pct=100 * runs["stat_busy_s"] / runs["stat_interval_s"],
    )
    g["other_pct"] = g["host_busy_pct"] - g["endpoints_pct"] * g["elapsed_s"] / g["stat_interval_s"]
    cols = ["app_user_pct", "endpoint_kernel_pct", "endpoints_pct", "host_softirq_pct", "host_busy_pct", "other_pct"]
    out = (g.groupby(["condition", "link", "direction", "proto", "size", "rate_mbps"], as_index=False)[cols]
           .mean().sort_values(["condition", "rate_mbps"]).reset_index(drop=True))
    return out.assign(other_pct=out["other_pct"].where(out["other_pct"] >= 0))


# ---------------------------------------------------------------------------
# The chapter's steps (notebooks/stack-trim.py calls these in order; each
# results table is validated against mobitrace.studies.stack_trim.schema
# before the chapter writes it).

ONECOPY_BY = ["link", "direction", "rate_mbps"]
UDP_SIZES = (1472, 20000)  # the capture kit's datagrams: MTU 1500 minus headers, and 20000 B at MTU 21000
TCP_WRITE = 16384  # the capture kit's TCP write size (B)


def validated(schema: pa.DataFrameSchema, frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` checked against `schema`; a table with no rows (no device
    captured) gets the schema's columns and is not checked."""
    if frame.empty:
        return frame.reindex(columns=list(schema.columns))
    return schema.validate(frame)


def load_measured(interim_dir: str | Path, devices: list[str],
                  model: CpuPowerModel) -> dict[str, tuple[pd.DataFrame, pd.DataFrame]]:
    """{device: (runs priced with `model` (:func:`price`), sessions)} from
    the ingested tables under interim_dir/<device>/, without the runs the
    idle gate flagged (the host was busy outside the experiment); each
    session's `left_out` counts them."""
    measured = {}
    for device in devices:
        folder = Path(interim_dir) / device
        runs = pd.read_parquet(folder / "runs.parquet")
        sessions = pd.read_parquet(folder / "sessions.parquet")
        runs, sessions = without_flagged(runs, sessions)
        measured[device] = (price(runs, model), sessions)
    return measured


def without_flagged(runs: pd.DataFrame, sessions: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """`runs` less those the idle gate flagged, and `sessions` with
    `left_out`, how many of each session's runs that left out."""
    flagged = runs["gate_flagged"]
    left_out = runs[flagged].groupby("session").size()
    return (runs[~flagged].reset_index(drop=True),
            sessions.assign(left_out=sessions["session"].map(left_out).fillna(0).astype(int)))


def gate_numbers(sessions: pd.DataFrame) -> dict:
    """How many runs of a device the idle gate left out, of how many."""
    return {"n_gate_left_out": int(sessions["left_out"].sum()), "n_runs_ingested": int(sessions["runs"].sum())}


def sequential_rule_text(session: dict) -> str:
    """One session's repetition rule in words: fixed, or sequential with
    its target, cap and outcome (the manifest's record, via ingest)."""
    if session["stopped_by"] == "fixed":
        return "fixed"
    outcome = ("target reached" if session["stopped_by"] == "target"
               else f"cap reached: {session['n_at_target']} of {session['n_halfwidths']} conditions within the "
                    f"target, widest {session['widest_halfwidth_pp']:.1f} pp")
    return (f"add repetitions until each one-copy saving's 95% CI half-width is ≤ {session['target_pp']:g} pp; "
            f"{outcome}")


def sequential_summary(sessions: pd.DataFrame) -> dict:
    """The glue numbers of the one-copy precision sentence: the rule's
    outcome over the reference device's sessions. oc_seq_text says whether
    the one-copy comparison reached its precision target (computed from
    the sessions' records, never typed)."""
    seq = sessions[sessions["stopped_by"] != "fixed"]
    if seq.empty:
        return {"oc_seq_text": f"The repetitions were fixed in advance "
                               f"({int(sessions['reps_done'].min())} per condition at least); no precision "
                               f"target was set."}
    s = seq.iloc[-1]
    if s["stopped_by"] == "target":
        text = (f"The capture added repetitions until every one-copy condition's 95% interval half-width (device-side CPU time) was at "
                f"most {s['target_pp']:g} percentage points, which it reached after {s['reps_done']} repetitions.")
    else:
        text = (f"The capture added repetitions until every one-copy condition's 95% interval half-width (device-side CPU time) was at "
                f"most {s['target_pp']:g} percentage points, or {s['reps_done']} repetitions: it stopped at that "
                f"cap with {s['n_at_target']} of {s['n_halfwidths']} conditions within the target and the widest "
                f"half-width at {s['widest_halfwidth_pp']:.1f} points. The one-copy comparison is therefore "
                f"inconclusive wherever an interval straddles a claim's threshold, and the claims below are "
                f"decided on the whole interval.")
    return {"oc_seq_text": text}


def conditions(runs: pd.DataFrame) -> pd.DataFrame:
    """The conditions captured: per condition, the number of rates, of runs
    and the smallest number of repetitions (CONDITIONS_SCHEMA)."""
    conds = (runs.groupby(["condition", "experiment", "link", "direction", "proto", "size", "mtu",
                           "sender_mode", "receiver_mode"], as_index=False)
             .agg(rates=("rate_mbps", "nunique"), runs=("run_id", "count"), reps_min=("rep", "nunique")))
    return validated(CONDITIONS_SCHEMA, conds)


def power_model_table(model: CpuPowerModel) -> pd.DataFrame:
    """The CPU power model's coefficients, one row (POWER_MODEL_SCHEMA)."""
    return validated(POWER_MODEL_SCHEMA, pd.DataFrame([{
        "model": model.name, "k_f (mW/GHz)": model.mw_per_ghz, "k_0 (mW)": model.mw_at_zero_ghz,
        "idle (mW, subtracted)": model.idle_mw, "nominal GHz": model.nominal_ghz,
        "provenance": model.provenance, "source": model.source}]))


def host_numbers(runs: pd.DataFrame, sessions: pd.DataFrame, model: CpuPowerModel) -> dict:
    """The numbers of the text about the capture host, in the order the
    chapter glues them: range of the reported MHz, the modeled power of a
    fully busy core at the mean MHz, the median ratio of data-phase CPU time
    to wait4's whole-process CPU time, the median host busy share
    (/proc/stat) and endpoints' share of the host's capacity (% of all
    cores), the median 1-min load average and the number of runs."""
    n_cpu = int(sessions["cpu_count"].iloc[0])
    host_busy = 100 * runs["stat_busy_s"] / runs["stat_interval_s"] / n_cpu
    endpoints = 100 * runs["both_cpu_s"] / runs["elapsed_s"] / n_cpu
    return {
        "mhz_min": float(runs["mean_mhz"].min()),
        "mhz_max": float(runs["mean_mhz"].max()),
        "busy_core_mw": float(model.busy_core_mw(runs["mean_mhz"].mean() / 1000)),
        "cpu_time_ratio_wait4": float((runs["both_cpu_s"] / (runs["sender_cpu_wait4_s"]
                                                             + runs["receiver_cpu_wait4_s"])).median()),
        "host_busy_median": float(host_busy.median()),
        "endpoints_busy_median": float(endpoints.median()),
        "loadavg_median": float(runs["loadavg_1min"].median()),
        "n_runs_ref": int(len(runs)),
    }


def onecopy_table(runs: pd.DataFrame, alpha: float, n_resamples: int, seed: int,
                  min_delivered: float, bases: tuple[str, ...] = tuple(CPU_BASES)) -> pd.DataFrame:
    """One-copy (variant) against two-copy (baseline) per link, direction
    and rate (:func:`compare`), for the CPU time of both endpoints and of
    the device alone (column `basis`, one part per basis of `bases`;
    ONECOPY_SCHEMA)."""
    oc = runs[runs["experiment"] == "onecopy"]
    parts = []
    for basis in bases:
        t = compare(oc, ONECOPY_BY, {"device_mode": "onecopy"}, {"device_mode": "copy"}, basis=basis, alpha=alpha,
                    n_resamples=n_resamples, seed=seed, min_delivered=min_delivered)
        parts.append(t.assign(basis=basis))
    return validated(ONECOPY_SCHEMA, pd.concat(parts, ignore_index=True))


def sustained_points(onecopy: pd.DataFrame, cpu_basis: str) -> pd.DataFrame:
    """The one-copy rows of one CPU-time basis at sustained rates."""
    t = onecopy[onecopy["basis"] == cpu_basis]
    return t[t["sustained"]]


def saving_phrase(saving_lo_pct: float, saving_hi_pct: float) -> str:
    """How one-copy compares with two-copy, from the interval of the saving
    (%), not its point estimate: "costs less CPU energy than" when the whole
    interval is above zero, "costs more CPU energy than" when below, "is not
    distinguishable in CPU energy from" when it holds zero or is missing."""
    return cl.interval_direction(saving_lo_pct, saving_hi_pct, up="costs less CPU energy than",
                                 down="costs more CPU energy than", neither="is not distinguishable in CPU energy from")


READING = ("A plausible reading: a 16.4 kB copy costs little next to the per-call and per-packet work of the stack on "
           "a server-class core (the paper's phones had far less memory bandwidth), and downlink splice() needs "
           "two calls (socket to pipe, pipe to file) as recv()+write() does, and still copies into the tmpfs "
           "page cache.")


def onecopy_summary(onecopy: pd.DataFrame, cpu_basis: str) -> dict:
    """Counts of sustained points whose saving interval contains zero, lies
    above or below it; the median saving (%) and the median coefficient of
    variation (%) of a condition's energy; a sentence for the verdict."""
    t = sustained_points(onecopy, cpu_basis)
    n_pos = int((t["saving_lo"] > 0).sum())
    return {
        "oc_n_points": int(len(t)),
        "oc_n_zero_in": int(((t["saving_lo"] <= 0) & (t["saving_hi"] >= 0)).sum()),
        "oc_n_pos": n_pos,
        "oc_n_neg": int((t["saving_hi"] < 0).sum()),
        "oc_median_saving": float(100 * t["saving"].median()),
        "oc_cv_median": float(pd.concat([t["cv_variant_pct"], t["cv_baseline_pct"]]).median()),
        "oc_verdict_text": "On this host one-copy saves no CPU energy distinguishable from the run-to-run spread."
        if n_pos == 0 else f"One-copy saves CPU energy beyond the spread at {n_pos} of {len(t)} points.",
        # Why the saving is small: said only when at most half the points show one beyond the spread.
        "oc_reading_text": READING if 2 * n_pos <= len(t) else "",
    }


def transport_table(runs: pd.DataFrame, cpu_basis: str, alpha: float, n_resamples: int, seed: int,
                    min_delivered: float) -> pd.DataFrame:
    """UDP (variant, each datagram size of UDP_SIZES) against TCP (baseline),
    uplink two-copy, per link and rate (:func:`compare`; TRANSPORT_SCHEMA)."""
    up = runs[(runs["direction"] == "up") & (runs["sender_mode"] == "copy")]
    parts = []
    for size in UDP_SIZES:
        t = compare(up, ["link", "rate_mbps"], {"proto": "udp", "size": size}, {"proto": "tcp"}, basis=cpu_basis,
                    alpha=alpha, n_resamples=n_resamples, seed=seed, min_delivered=min_delivered)
        parts.append(t.assign(udp_size=size))
    return validated(TRANSPORT_SCHEMA, pd.concat(parts, ignore_index=True))


def crossover_table(transport: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Per device, link and UDP size: the crossover rate of E(UDP)/E(TCP)
    (:func:`crossover_rate`, from the estimates and from the intervals'
    lower bounds), the largest ratio and the ratio at the top rate
    (CROSSOVER_SCHEMA)."""
    rows = []
    for device, table in transport.items():
        for (link, size), g in table.groupby(["link", "udp_size"]):
            g = g.sort_values("rate_mbps")
            r, below = crossover_rate(g["rate_mbps"], g["ratio"])
            r_sig, _ = crossover_rate(g["rate_mbps"], g["ratio"], g["ratio_lo"])
            rows.append({"device": device, "link": link, "udp_size": size, "crossover_mbps": r,
                         "last_rate_below_mbps": below, "crossover_interval_above_1_mbps": r_sig,
                         "max_ratio": g["ratio"].max(), "ratio_at_max_rate": g["ratio"].iloc[-1]})
    return validated(CROSSOVER_SCHEMA, pd.DataFrame(rows))


def _crossover_of(crossover: pd.DataFrame, device: str, link: str, size: int, column: str) -> float:
    hit = crossover[(crossover["device"] == device) & (crossover["link"] == link) & (crossover["udp_size"] == size)]
    return float(hit[column].iloc[0]) if len(hit) else float("nan")


def transport_numbers(runs: pd.DataFrame, transport: pd.DataFrame, crossover: pd.DataFrame, device: str,
                      paper_crossover_mbps: float) -> dict:
    """The numbers of the text under the UDP-vs-TCP figure, in the order the
    chapter glues them: the sender's system calls per MB (median over the
    uplink two-copy runs) for TCP and each UDP size, the lowest loopback rate
    and the E(UDP 1472 B)/E(TCP) ratio there, and a sentence on the
    loopback crossover against the paper's (`paper_crossover_mbps`)."""
    up = runs[(runs["direction"] == "up") & (runs["sender_mode"] == "copy")]
    calls_per_mb = (up["sender_calls"] / (up["sender_bytes"] / 1e6)).groupby([up["proto"], up["size"]]).median()
    lo_rates = transport[(transport["link"] == "lo") & (transport["udp_size"] == UDP_SIZES[0])]
    # "Costs more" only where the whole interval of E(UDP)/E(TCP) lies above 1.
    c_rate = _crossover_of(crossover, device, "lo", UDP_SIZES[0], "crossover_interval_above_1_mbps")
    if np.isnan(c_rate):
        text = ("Over loopback UDP with 1472-byte datagrams is not shown to cost more than TCP at the top rates "
                "(no interval there lies wholly above 1).")
    elif c_rate == lo_rates["rate_mbps"].min():
        text = ("Over loopback UDP with 1472-byte datagrams costs more CPU energy than TCP at every rate measured "
                f"(each interval above 1): the crossover the paper places at {paper_crossover_mbps:g} Mbps lies "
                "below the lowest rate here.")
    else:
        text = (f"Over loopback UDP with 1472-byte datagrams costs more CPU energy than TCP from {c_rate:g} Mbps up "
                f"(each interval above 1; paper: from {paper_crossover_mbps:g} Mbps).")
    return {
        "calls_tcp": float(calls_per_mb.loc[("tcp", TCP_WRITE)]),
        "calls_udp1": float(calls_per_mb.loc[("udp", UDP_SIZES[0])]),
        "calls_udp20": float(calls_per_mb.loc[("udp", UDP_SIZES[1])]),
        "udp1_min_rate": float(lo_rates["rate_mbps"].min()),
        "udp1_ratio_lowest": float(lo_rates.sort_values("rate_mbps")["ratio"].iloc[0]),
        "cross_text": text,
    }


def tcp_uplink_breakdown(runs: pd.DataFrame) -> pd.DataFrame:
    """:func:`breakdown` of the TCP two-copy uplink runs (BREAKDOWN_SCHEMA)."""
    b = breakdown(runs[(runs["proto"] == "tcp") & (runs["direction"] == "up") & (runs["sender_mode"] == "copy")])
    return validated(BREAKDOWN_SCHEMA, b)


def largest_saving(t: pd.DataFrame) -> pd.Series | None:
    """The row with the largest saving (None for no rows)."""
    return t.loc[t["saving"].idxmax()] if len(t) else None


def wifi_best(onecopy: pd.DataFrame, cpu_basis: str, wifi_link: str, wifi_max_mbps: float) -> pd.Series | None:
    """The sustained point with the largest saving on the link standing in
    for WiFi at rates up to `wifi_max_mbps`."""
    t = sustained_points(onecopy, cpu_basis)
    return largest_saving(t[(t["link"] == wifi_link) & (t["rate_mbps"] <= wifi_max_mbps)])


def power_rates(values: Values) -> dict[str, float]:
    """The loopback rates (Mbps) at which the paper states a one-copy power
    saving (Figure 3(c)), keyed by the chapter's number name (oc_p100, ...)."""
    rates = {}
    for vid in ("onecopy_power_100", "onecopy_power_240"):
        rate = round(1000 * float(values.row(vid)["throughput_gbps"]), 6)
        rates[f"oc_p{rate:g}"] = rate
    return rates


def key_numbers(onecopy: pd.DataFrame, transport: pd.DataFrame, crossover: pd.DataFrame, device: str,
                values: Values, cpu_basis: str, wifi_link: str, wifi_max_mbps: float, alpha: float) -> dict:
    """The chapter's key numbers on the reference device (the `numbers` of
    metrics.json), in the order the chapter glues them:

    * oc_lo_max*: the largest sustained loopback saving (%), its interval,
      rate and direction; oc_wifi_*: the same on the WiFi stand-in link up to
      `wifi_max_mbps`;
    * oc_p<rate>[_lo, _hi]: the loopback uplink power saving (mW) at the
      rates of the paper's Figure 3(c) (:func:`power_rates`), NaN if absent;
    * oc_lo_spearman[_p, _lo, _hi]: Spearman's rho of saving against rate on
      loopback, its p and 95% interval;
      oc_lo_min_rate_saving: the saving (%) at the lowest loopback rate;
    * cross_lo, cross_lo_sig, cross_veth: crossover rates of UDP 1472 B;
    * udp_top_rate and udp{1,20}_ratio_top[_lo, _hi]: E(UDP)/E(TCP) at the
      highest loopback rate both UDP sizes sustained;
    * udp1_ratio_below_40: the smallest E(UDP 1472 B)/E(TCP) on loopback
      below the paper's crossover (udp_crossover, 40 Mbps);
    * cv_median: the median coefficient of variation (%) of the energies;
      sustained_tcp_max: the highest sustained loopback one-copy rate."""
    nums = {}
    t = sustained_points(onecopy, cpu_basis)
    lo_ = largest_saving(t[t["link"] == "lo"])
    nums.update(oc_lo_max=100 * lo_["saving"], oc_lo_max_lo=100 * lo_["saving_lo"],
                oc_lo_max_hi=100 * lo_["saving_hi"], oc_lo_max_rate=lo_["rate_mbps"], oc_lo_max_dir=lo_["direction"],
                oc_lo_n=int((t["link"] == "lo").sum()))
    w = wifi_best(onecopy, cpu_basis, wifi_link, wifi_max_mbps)
    nums.update(oc_wifi_max=100 * w["saving"], oc_wifi_max_lo=100 * w["saving_lo"], oc_wifi_max_hi=100 * w["saving_hi"],
                oc_wifi_rate=w["rate_mbps"])
    up_lo = t[(t["link"] == "lo") & (t["direction"] == "up")].set_index("rate_mbps")
    for key, r in power_rates(values).items():
        nums[key] = float(up_lo.loc[r, "power_saving_mw"]) if r in up_lo.index else float("nan")
        nums[key + "_lo"] = float(up_lo.loc[r, "power_saving_lo_mw"]) if r in up_lo.index else float("nan")
        nums[key + "_hi"] = float(up_lo.loc[r, "power_saving_hi_mw"]) if r in up_lo.index else float("nan")
    oc_all = t[t["link"] == "lo"]
    (nums["oc_lo_spearman"], nums["oc_lo_spearman_p"], nums["oc_lo_spearman_lo"],
     nums["oc_lo_spearman_hi"]) = spearman_ci(oc_all["rate_mbps"], oc_all["saving"], alpha)
    nums["oc_lo_min_rate_saving"] = float(100 * oc_all.loc[oc_all["rate_mbps"].idxmin(), "saving"])
    small, large = UDP_SIZES
    nums["cross_lo"] = _crossover_of(crossover, device, "lo", small, "crossover_mbps")
    nums["cross_lo_sig"] = _crossover_of(crossover, device, "lo", small, "crossover_interval_above_1_mbps")
    nums["cross_veth"] = _crossover_of(crossover, device, "veth", small, "crossover_mbps")
    tr = transport
    both_sus = tr[tr["sustained"] & (tr["link"] == "lo")]
    common = sorted(set(both_sus.loc[both_sus["udp_size"] == small, "rate_mbps"])
                    & set(both_sus.loc[both_sus["udp_size"] == large, "rate_mbps"]))
    top = common[-1] if common else float("nan")
    nums["udp_top_rate"] = top
    for size, key in ((small, "udp1_ratio_top"), (large, "udp20_ratio_top")):
        row = tr[(tr["link"] == "lo") & (tr["udp_size"] == size) & (tr["rate_mbps"] == top)]
        nums[key] = float(row["ratio"].iloc[0]) if len(row) else float("nan")
        nums[key + "_lo"] = float(row["ratio_lo"].iloc[0]) if len(row) else float("nan")
        nums[key + "_hi"] = float(row["ratio_hi"].iloc[0]) if len(row) else float("nan")
    below = tr[(tr["link"] == "lo") & (tr["udp_size"] == small) & (tr["rate_mbps"] < values("udp_crossover"))]
    nums["udp1_ratio_below_40"] = float(below["ratio"].min()) if len(below) else float("nan")
    cv = pd.concat([onecopy[onecopy["basis"] == cpu_basis][["cv_variant_pct", "cv_baseline_pct"]].stack(),
                    tr[["cv_variant_pct"]].stack()])
    nums["cv_median"] = float(cv.median())
    nums["sustained_tcp_max"] = float(t.loc[t["link"] == "lo", "rate_mbps"].max())
    return nums


# The paper's values the chapter's prose quotes: glue name -> published id.
PAPER_GLUE = {"p_oc_max": "onecopy_loopback_saving_max", "p_oc_wifi": "onecopy_wifi_saving",
              "p_p100": "onecopy_power_100", "p_p240": "onecopy_power_240", "p_cross": "udp_crossover"}


def paper_numbers(values: Values) -> dict:
    """{glue name: the paper's value} for PAPER_GLUE."""
    return {key: values(vid) for key, vid in PAPER_GLUE.items()}


def chapter_claims(nums: dict, values: Values, *, study: str, device: str | None, wifi_link: str,
                   wifi_max_mbps: float, rel_tol_approx: float, alpha: float) -> pd.DataFrame:
    """The chapter's claims table (mobitrace.core.claims.Claims): the paper's
    values from `values`, ours from `nums` (:func:`key_numbers`; empty when
    no device was captured, which makes the measured claims not checkable).
    "About x" is reproduced within `rel_tol_approx` of x; the growth of the
    saving with rate and the 20 kB-vs-1.5 kB comparison have stated rules."""
    c = cl.Claims(study, alpha=alpha)
    g = nums.get
    src = f"measured on {device}, modeled energy" if device else "no capture"
    c.add("onecopy_wifi_small", "One-copy saves <10% of CPU energy at WiFi rates (<24 Mbps)",
          location="§4.1, Fig. 3(a)", relation="<", paper=values("onecopy_wifi_saving"), artifact=g("oc_wifi_max"),
          interval=(g("oc_wifi_max_lo"), g("oc_wifi_max_hi")), possible=(-np.inf, 100.0),
          unit="%", basis=f"largest saving on the {wifi_link} link at rates <= {wifi_max_mbps} Mbps (both endpoints), "
                          f"{src}", provenance="modeled", section="stack-trim-onecopy")
    c.add("onecopy_loopback_max", "One-copy achieves up to 40% CPU energy reduction on loopback",
          location="§4.1, Fig. 3(b)", relation="~", paper=values("onecopy_loopback_saving_max"),
          artifact=g("oc_lo_max"), unit="%", interval=(g("oc_lo_max_lo"), g("oc_lo_max_hi")),
          basis=f"selected: the largest of {g('oc_lo_n', 0)} sustained loopback savings (rates and directions, both "
                f"endpoints), its interval that condition's alone, not adjusted for the selection, {src}",
          provenance="modeled", section="stack-trim-onecopy", rel_tol=rel_tol_approx, possible=(-np.inf, 100.0))
    c.add("onecopy_grows_with_rate", "The one-copy saving grows with the streaming rate (loopback)",
          location="§4.1, Fig. 3(b)", relation=">", paper=0.0, artifact=g("oc_lo_spearman"), unit="rho",
          interval=(g("oc_lo_spearman_lo"), g("oc_lo_spearman_hi")),
          basis=f"Spearman correlation of saving with rate over the sustained loopback points, both directions "
                f"(p = {g('oc_lo_spearman_p', np.nan):.2f}; one test, no family), {src}", provenance="modeled",
          section="stack-trim-onecopy")
    c.add("onecopy_power_100", "One-copy power saving about 100 mW at 100 Mbps", location="§4.1, Fig. 3(c)",
          relation="~", paper=values("onecopy_power_100"), artifact=g("oc_p100"), unit="mW",
          interval=(g("oc_p100_lo"), g("oc_p100_hi")),
          basis=f"loopback uplink at 100 Mbps, assumed model coefficients (scale with them), {src}",
          provenance="modeled", section="stack-trim-onecopy", rel_tol=rel_tol_approx)
    c.add("onecopy_power_240", "One-copy power saving about 300 mW at 240 Mbps", location="§4.1, Fig. 3(c)",
          relation="~", paper=values("onecopy_power_240"), artifact=g("oc_p240"), unit="mW",
          interval=(g("oc_p240_lo"), g("oc_p240_hi")),
          basis=f"loopback uplink at 240 Mbps, assumed model coefficients (scale with them), {src}",
          provenance="modeled", section="stack-trim-onecopy", rel_tol=rel_tol_approx)
    c.add("udp_crossover", "UDP (1.5 kB) costs more CPU energy than TCP at 40 Mbps and higher (loopback)",
          location="§5.1, Fig. 5(c)", relation="<=", paper=values("udp_crossover"), artifact=g("cross_lo"),
          unit="Mbps", basis=f"lowest rate from which E(UDP 1472 B)/E(TCP) > 1 at every higher rate, {src}",
          provenance="modeled", section="stack-trim-transport")
    c.add("udp_not_above_below_40", "Below 40 Mbps UDP (1.5 kB) does not cost more than TCP (loopback)",
          location="§5.1, Fig. 5(c) (implied by 'at 40Mbps and higher')", relation="<=", paper=1.0,
          artifact=g("udp1_ratio_below_40"), unit="x",
          basis=f"smallest E(UDP 1472 B)/E(TCP) on loopback at rates below 40 Mbps, {src}", provenance="modeled",
          section="stack-trim-transport")
    # E(20000 B)/E(1472 B) as the ratio of the two ratios to TCP; its interval
    # joins the ends of theirs (conservative: the 20000 B interval wholly below
    # the 1472 B one is this interval wholly below 1).
    u20, u1 = g("udp20_ratio_top", np.nan), g("udp1_ratio_top", np.nan)
    c.add("udp20_more_efficient", "UDP with 20 kB datagrams (raised MTU) is much more efficient than with 1.5 kB",
          location="§5.1, Fig. 5(c)", relation="<", paper=1.0, artifact=u20 / u1, unit="x",
          interval=(g("udp20_ratio_top_lo", np.nan) / g("udp1_ratio_top_hi", np.nan),
                    g("udp20_ratio_top_hi", np.nan) / g("udp1_ratio_top_lo", np.nan)),
          basis=f"E(UDP 20000 B)/E(UDP 1472 B) at {g('udp_top_rate')} Mbps on loopback ({u20:.2f} and {u1:.2f} "
                f"of TCP); 'much more efficient' read as a ratio below 1, {src}", provenance="modeled",
          section="stack-trim-transport",
          tolerance="bound: E(20000 B)/E(1472 B) < 1, interval from the ends of the two intervals")
    c.add("sd_low", "Standard deviation across repetitions below 2.5%", location="§2.1", relation="<",
          paper=values("sd_across_runs"), artifact=g("cv_median"), unit="%",
          basis=f"median coefficient of variation of the energy over conditions and rates, {src}",
          provenance="measured", section="stack-trim-numbers")
    c.add("stack_share", "Network stack processing is more than 50% of CPU activity (WiFi streaming)",
          location="§2.2, Table 1", relation=">", paper=values("stack_share"), artifact=None, unit="%",
          basis="needs per-process logging on a phone with a WiFi driver; not captured", provenance="published",
          section="stack-trim-breakdown")
    for vid, text, loc in (
            ("offload_wifi_saving", "TCP offload saves about 40% CPU energy beyond 20 Mbps (WiFi)", "§5.1, Fig. 5(a)"),
            ("offload_loopback_saving", "TCP offload saves more than 60% CPU energy above 100 Mbps", "§5.1, Fig. 5(c)"),
            ("cpu_share_wifi_max", "CPU is more than 60% of networking energy on WiFi", "§2.2, Fig. 1")):
        c.add(vid, text, location=loc, relation=values.row(vid)["relation"], paper=values(vid), artifact=None,
              unit="%", basis="not re-run: needs an offloading AP / a WiFi radio model", provenance="published",
              section="stack-trim-claims")
    return c.frame()


def analysis_at(runs: pd.DataFrame, model: CpuPowerModel, values: Values, *, study: str, device: str,
                cpu_basis: str, alpha: float, n_resamples: int, seed: int, min_delivered: float, wifi_link: str,
                wifi_max_mbps: float, rel_tol_approx: float, claims_only: bool = False) -> dict:
    """The one path from a device's measured CPU time (`runs`, ingested) to
    its claims, with the energy priced by `model`: the priced runs, the
    one-copy and UDP-vs-TCP tables, the crossover table, the key numbers and
    the claims table. The chapter calls it at the assumed coefficients, the
    robustness analysis at others, `claims_only`: its one-copy table then
    has the basis the claims use (`cpu_basis`) alone."""
    priced = price(runs, model)
    onecopy = onecopy_table(priced, alpha, n_resamples, seed, min_delivered,
                            (cpu_basis,) if claims_only else tuple(CPU_BASES))
    transport = transport_table(priced, cpu_basis, alpha, n_resamples, seed, min_delivered)
    crossover = crossover_table({device: transport})
    nums = key_numbers(onecopy, transport, crossover, device, values, cpu_basis, wifi_link, wifi_max_mbps, alpha)
    claims = chapter_claims(nums, values, study=study, device=device, wifi_link=wifi_link,
                            wifi_max_mbps=wifi_max_mbps, rel_tol_approx=rel_tol_approx, alpha=alpha)
    return {"runs": priced, "onecopy": onecopy, "transport": transport, "crossover": crossover, "nums": nums,
            "claims": claims}


def findings_intervals(nums: dict) -> dict:
    """The intervals shown with the headline claims of the key findings."""
    g = nums.get
    return {"onecopy_wifi_small": (g("oc_wifi_max_lo"), g("oc_wifi_max_hi")),
            "onecopy_loopback_max": (g("oc_lo_max_lo"), g("oc_lo_max_hi")),
            "onecopy_power_100": (g("oc_p100_lo"), g("oc_p100_hi")),
            "udp20_more_efficient": (g("udp20_ratio_top_lo"), g("udp20_ratio_top_hi"))}


def metrics(device: str | None, model: CpuPowerModel, nums: dict, claims_table: pd.DataFrame) -> dict:
    """metrics.json: the reference device, the power model, the key
    numbers (rounded by mobitrace.core.numbers.metric; text kept) and the
    verdict counts."""
    doc = {
        "reference_device": device,
        "power_model": {"name": model.name, "provenance": model.provenance},
        "numbers": {k: x if isinstance(x, str) else metric(x) for k, x in sorted(nums.items())},
        "claims": cl.keyed(cl.verdict_counts(claims_table)),
    }
    return doc

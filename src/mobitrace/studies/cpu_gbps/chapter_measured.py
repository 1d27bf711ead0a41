"""The cpu-gbps-measured chapter (notebooks/cpu-gbps-measured.py): its
tables, prose values, claims and metrics, and the `Chapter` whose methods (one
per code cell, in the order the chapter reads) show them.

Inputs: the interim runs/sessions of each device, its fits, extrapolations
and rate summary (mobitrace.studies.cpu_gbps.device_analysis), the phones'
implied lines (cpu-gbps chapter) and the paper's stated numbers
(mobitrace.core.published.Values). Statistics from mobitrace.stats.cpufit;
comparisons and figures in mobitrace.studies.cpu_gbps.measured_analysis.
"""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import pandas as pd
from IPython.display import Markdown, display

from mobitrace.book.build import format_column, link, with_interval
from mobitrace.book.chapter import ChapterOutputs, DevicePage, NotebookChapter, site_href
from mobitrace.core import claims as cl
from mobitrace.core import numbers
from mobitrace.core.io import write_metrics
from mobitrace.core.published import Values
from mobitrace.stats import cpufit
from mobitrace.stats.intervals import mean_ci
from mobitrace.studies import registry
from mobitrace.studies.cpu_gbps import figures as cpu_figures
from mobitrace.studies.cpu_gbps import measured_analysis
from mobitrace.studies.cpu_gbps.device_analysis import SOURCES, beyond_text, clean_runs, saturation_words
from mobitrace.studies.cpu_gbps.measured_analysis import DIRECTION_NAMES, SOURCE_NAMES, fit_of
from mobitrace.studies.cpu_gbps.measured_claims import (
    chapter_metrics, claims_for_people, device_claim_ids, headline, measured_claims, paper_gro_ratio,
    with_capture_notes,
)

STAGE = "analyze_cpu_gbps_measured"
CHAPTER = "cpu-gbps-measured"
STUDY = "cpu-gbps"
# The manifest fields the captures table shows, with their names for people.
CAPTURE_COLUMNS = ["device", "config", "kind", "session", "hostname", "kernel", "cpu_model", "n_cpus", "hypervisor",
                   "config_hz", "irq_time_accounting", "gro_device", "gso_device", "tso_device", "rps_device",
                   "device_cpus", "cpu_quota", "repetitions", "duration_s", "sample_period_ms", "n_runs",
                   "iperf3_version", "capture_md5", "bytes", "background_load"]
CAPTURE_FIELDS = {"session": "session", "hostname": "host", "kernel": "kernel", "cpu_model": "CPU model",
                  "n_cpus": "CPUs", "hypervisor": "virtualized", "config_hz": "CONFIG_HZ",
                  "irq_time_accounting": "IRQ time accounting", "gro_device": "GRO", "gso_device": "GSO",
                  "tso_device": "TSO", "rps_device": "RPS mask", "device_cpus": "device's iperf3 CPUs",
                  "repetitions": "repetitions per rate", "duration_s": "run length (s)", "n_runs": "runs",
                  "iperf3_version": "iperf3", "capture_md5": "capture hash (md5)", "bytes": "raw size (bytes)",
                  "background_load": "background load (idle gate)"}


def load(interim_dir, devices_dir, devices: list[str]) -> dict[str, pd.DataFrame]:
    """The chapter's inputs for `devices`, concatenated in that order:
    sessions, runs (interim parquet), fits, extra(polations), rates."""
    def cat(folder, name, read):
        return pd.concat([read(Path(folder) / d / name) for d in devices], ignore_index=True)
    return {"sessions": cat(interim_dir, "sessions.parquet", pd.read_parquet),
            "runs": cat(interim_dir, "runs.parquet", pd.read_parquet),
            "fits": cat(devices_dir, "fits.csv", pd.read_csv),
            "extra": cat(devices_dir, "extrapolations.csv", pd.read_csv),
            "rates": cat(devices_dir, "rate_summary.csv", pd.read_csv)}


def captures(sessions: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(captures table, its display: one column per device, one row per field)."""
    cap = sessions[CAPTURE_COLUMNS].copy()
    cap["cpu_quota"] = cap["cpu_quota"].astype(float)
    # The manifest's CPU list as ingest keeps it ("None", "[1]"), in words.
    pinned = cap.assign(device_cpus=cap["device_cpus"].map(
        lambda x: "not pinned" if x in ("None", "", "[]") else "CPU " + str(x).strip("[]")))
    shown = pd.DataFrame([format_column(pinned[c], c) for c in CAPTURE_FIELDS], index=list(CAPTURE_FIELDS.values()),
                         columns=list(cap["device"]))
    return cap, shown.rename_axis("field")


def fits_table(fits: pd.DataFrame, alpha: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The OLS lines of the shown CPU sources with the 100(1 - alpha)% CI of
    R² (cpufit.r2_ci), and the downlink display with intervals joined."""
    cols = ["device", "direction", "source", "n", "slope", "slope_lo", "slope_hi", "intercept", "intercept_lo",
            "intercept_hi", "r2", "resid_sd", "x_min", "x_max"]
    table = fits[fits["source"].isin(["stat_total", "stat_softirq", "precise_total", "iperf3_total"])][cols].rename(
        columns={"slope": "slope_pct_per_gbps", "x_min": "min_gbps", "x_max": "max_gbps"})
    bounds = [cpufit.r2_ci(r2, n, b, alpha) for r2, n, b in
              zip(table["r2"], table["n"], table["slope_pct_per_gbps"])]
    table["r2_lo"], table["r2_hi"] = [lo for lo, _ in bounds], [hi for _, hi in bounds]
    return table, fits_shown(table, alpha)


def fits_shown(table: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """The downlink display of a fits_table table (or of its rows of some
    devices: a device page shows its own), intervals joined."""
    shown = table[table["direction"] == "down"].assign(source=lambda f: f["source"].map(SOURCE_NAMES))
    shown = with_interval(shown, "slope_pct_per_gbps", "slope_lo", "slope_hi", label="slope (% per Gbps)")
    shown = with_interval(shown, "intercept", "intercept_lo", "intercept_hi", label="intercept (%)")
    shown = with_interval(shown, "r2", "r2_lo", "r2_hi", label=f"R² [{numbers.level(alpha)} CI]")
    shown = shown.drop(columns="direction").rename(columns={
        "source": "CPU source", "n": "runs", "resid_sd": "residual SD (%)", "min_gbps": "lowest (Gbps)",
        "max_gbps": "highest (Gbps)"})
    return shown


def extrapolations(extra: pd.DataFrame, devices: list[str], targets: list[float], alpha: float
                   ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the extrapolations of the /proc/stat and precise lines, the downlink
    display: one row per device and source, one column per target rate)."""
    shown_sources = ("stat_total", "stat_softirq", "precise_total")
    ext = extra[extra["source"].isin(shown_sources)].copy()
    ext = ext[["device", "direction", "source", "target_gbps", "cpu_pct", "mean_ci_lo", "mean_ci_hi", "pred_lo",
               "pred_hi", "extrapolated"]]
    down = ext[ext["direction"] == "down"].assign(
        cell=lambda f: [numbers.interval(c, lo, hi) + (" (extrapolated)" if x else "") for c, lo, hi, x in
                        zip(f["cpu_pct"], f["mean_ci_lo"], f["mean_ci_hi"], f["extrapolated"])],
        column=lambda f: [f"CPU at {t:g} Gbps (%) [{numbers.level(alpha)} CI]" for t in f["target_gbps"]],
        source=lambda f: f["source"].map(SOURCE_NAMES))
    shown = (down.pivot(index=["device", "source"], columns="column", values="cell")
             .reindex(columns=[f"CPU at {t:g} Gbps (%) [{numbers.level(alpha)} CI]" for t in targets])
             .reindex(pd.MultiIndex.from_product([devices, [SOURCE_NAMES[s] for s in shown_sources]]))
             .reset_index(names=["device", "CPU source"]))
    return ext, shown


def inverse_predictions(fits: pd.DataFrame, thr: str, alpha: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(throughput at the CPU threshold with its confidence- and
    prediction-band intervals per device, direction and source; display)."""
    cols = ["device", "direction", "source", "gbps_at_threshold", "gbps_at_threshold_lo", "gbps_at_threshold_hi",
            "gbps_at_threshold_pred_lo", "gbps_at_threshold_pred_hi", "x_max", "saturation_gbps",
            "gbps_at_threshold_beyond_range"]
    inv = fits[fits["source"].isin(["stat_total", "precise_total"])][cols].rename(columns={
        "gbps_at_threshold": f"gbps_at_{thr}pct", "gbps_at_threshold_lo": "ci_lo", "gbps_at_threshold_hi": "ci_hi",
        "gbps_at_threshold_pred_lo": "pred_lo", "gbps_at_threshold_pred_hi": "pred_hi",
        "x_max": "max_measured_gbps", "gbps_at_threshold_beyond_range": "beyond_measured_range"})
    shown = pd.DataFrame({
        "device": inv["device"], "direction": inv["direction"].map(DIRECTION_NAMES),
        "CPU source": inv["source"].map(SOURCE_NAMES),
        f"Gbps at {thr}% CPU [{numbers.level(alpha)} CI]": [numbers.interval(x, lo, hi) + ("" if pd.notna(lo) else " [unbounded]")
                                         for x, lo, hi in zip(inv[f"gbps_at_{thr}pct"], inv["ci_lo"], inv["ci_hi"])],
        "prediction-band interval (Gbps)": [f"{numbers.number(lo)} to {numbers.number(hi)}" if pd.notna(lo)
                                            else "unbounded" for lo, hi in zip(inv["pred_lo"], inv["pred_hi"])],
        "fastest single run (Gbps)": inv["max_measured_gbps"],
        "measured range": [range_flag(b, sat) for b, sat in zip(inv["beyond_measured_range"],
                                                                  inv["saturation_gbps"])]})
    return inv, shown


def range_flag(beyond: bool, saturation: float) -> str:
    """The table cell saying whether an inverse prediction is inside the
    measured range (up to the device's saturation point)."""
    return beyond_text(saturation) if beyond else "within"


def range_sentence(fits: pd.DataFrame, device: str, thr: str) -> str:
    """The prose saying which of the device's downlink inverse predictions
    (/proc/stat, precise) lie beyond its measured range (above its
    saturation point), from fits.csv."""
    rows = {label: fit_of(fits, device, "down", source)
            for label, source in (("/proc/stat", "stat_total"), ("precise", "precise_total"))}
    beyond = [label for label, f in rows.items() if bool(f["gbps_at_threshold_beyond_range"])]
    sat = rows["/proc/stat"]["saturation_gbps"]
    if not beyond:
        return f"Both estimates lie within the measured range ({saturation_words(sat)})."
    which = "Both estimates lie" if len(beyond) == 2 else f"The {beyond[0]} estimate lies"
    return f"{which} {beyond_text(sat)}: the {thr}% point is an extrapolation of the line, not a rate it reached."


def reference_glue(fits: pd.DataFrame, reference_device: str) -> dict:
    """Glue values of the reference device's downlink throughput at the
    threshold (estimate, CI) for /proc/stat and precise Total, then its name."""
    glue = {}
    for src, source in (("stat", "stat_total"), ("precise", "precise_total")):
        f = fit_of(fits, reference_device, "down", source)
        glue[f"ref_{src}_x50"] = f["gbps_at_threshold"]
        glue[f"ref_{src}_x50_lo"] = f["gbps_at_threshold_lo"]
        glue[f"ref_{src}_x50_hi"] = f["gbps_at_threshold_hi"]
    glue["reference_device"] = reference_device
    glue["ref_x50_range"] = range_sentence(fits, reference_device, f"{fits['threshold_pct'].iloc[0]:g}")
    return glue


def add_gap_columns(runs: pd.DataFrame) -> pd.DataFrame:
    """Add per-run columns to `runs` (in place, and return it):
    gap_pp = /proc/stat - precise Total; ratio = /proc/stat / precise;
    low_rate = target in (0, 1 Gbps]; tick_error_pp = /proc/stat - host-wide
    precise; background_pp = host-wide precise - precise."""
    runs["gap_pp"] = runs["stat_all_total_pct"] - runs["precise_total_pct"]
    runs["ratio"] = runs["stat_all_total_pct"] / runs["precise_total_pct"]
    runs["low_rate"] = (runs["target_rate_bps"] > 0) & (runs["target_rate_bps"] <= 1e9)
    runs["tick_error_pp"] = runs["stat_all_total_pct"] - runs["host_precise_total_pct"]
    runs["background_pp"] = runs["host_precise_total_pct"] - runs["precise_total_pct"]
    return runs


def procstat_gaps(runs: pd.DataFrame, fits: pd.DataFrame, alpha: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per device and direction (runs with add_gap_columns): the /proc/stat
    minus precise gap (mean, t interval, median; all rates and <= 1 Gbps),
    the ratios, tick error and background, and the ratio of the two
    sources' slopes. Returns (table, display)."""
    rows = []
    for (device, direction), g in runs.groupby(["device", "direction"], sort=True):
        all_gap = mean_ci(g["gap_pp"], alpha)
        low = g[g["low_rate"]]
        low_gap = mean_ci(low["gap_pp"], alpha)
        at_max = g[g["target_rate_bps"] == 0]
        rows.append({
            "device": device, "direction": direction, "n": len(g),
            "gap_pp": all_gap[0], "gap_lo": all_gap[1], "gap_hi": all_gap[2],
            "low_rate_gap_pp": low_gap[0], "low_rate_gap_lo": low_gap[1], "low_rate_gap_hi": low_gap[2],
            "median_gap_pp": float(g["gap_pp"].median()),
            "low_rate_median_gap_pp": float(low["gap_pp"].median()),
            "low_rate_ratio": float(low["ratio"].median()),
            "n_host_precise": int(g["host_precise_total_pct"].notna().sum()),
            "tick_error_pp": float(g["tick_error_pp"].mean()),
            "low_rate_tick_error_pp": float(low["tick_error_pp"].mean()),
            "background_pp": float(g["background_pp"].mean()),
            "median_background_pp": float(g["background_pp"].median()),
            "max_rate_ratio": float(at_max["ratio"].median()),
            "max_abs_gap_pp": float(g["gap_pp"].abs().max()),
            "stat_slope": fit_of(fits, device, direction, "stat_total")["slope"],
            "precise_slope": fit_of(fits, device, direction, "precise_total")["slope"],
            "stat_softirq_share_at_max": float((at_max["stat_all_softirq_pct"]
                                                / at_max["stat_all_total_pct"]).mean()),
        })
    gaps = pd.DataFrame(rows)
    gaps["slope_ratio"] = gaps["stat_slope"] / gaps["precise_slope"]
    return gaps, procstat_gaps_shown(gaps, alpha)


def procstat_gaps_shown(gaps: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """The display of a procstat_gaps table (or of its rows of some devices:
    each row is one device and direction, computed from its runs alone)."""
    shown = with_interval(gaps, "gap_pp", "gap_lo", "gap_hi", label=f"gap, all rates (pp) [{numbers.level(alpha)} CI]")
    shown = with_interval(shown, "low_rate_gap_pp", "low_rate_gap_lo", "low_rate_gap_hi",
                          label=f"gap, ≤ 1 Gbps (pp) [{numbers.level(alpha)} CI]")
    shown = shown.assign(direction=gaps["direction"].map(DIRECTION_NAMES))[[
        "device", "direction", "n", f"gap, all rates (pp) [{numbers.level(alpha)} CI]", "median_gap_pp", f"gap, ≤ 1 Gbps (pp) [{numbers.level(alpha)} CI]",
        "low_rate_ratio", "max_rate_ratio", "low_rate_tick_error_pp", "median_background_pp", "slope_ratio"]].rename(
        columns={"n": "runs", "median_gap_pp": "median gap (pp)", "low_rate_ratio": "ratio, ≤ 1 Gbps (median)",
                 "max_rate_ratio": "ratio, unlimited rate (median)",
                 "low_rate_tick_error_pp": "tick error, ≤ 1 Gbps (pp)",
                 "median_background_pp": "background, median (pp)", "slope_ratio": "slope ratio"})
    return shown


# Device-directions named one by one in the prose; beyond, their range.
MOST_LISTED = 8


def procstat_direction(low: pd.DataFrame, alpha: float) -> dict:
    """How tick-sampled /proc/stat reads paced load against the precise
    source, per device AND direction (downlink and uplink can differ within
    a device): the median ratio of the runs (`low`: device, direction,
    ratio), and a direction only where the Wilcoxon signed-rank test of the
    log ratios rejects 1 at `alpha` (scipy.stats.wilcoxon); the phrase for
    the prose counts the device-directions each way."""
    from scipy import stats as st

    rows = []
    for (device, direction), g in low.groupby(["device", "direction"], sort=True):
        logs = np.log(g["ratio"].astype(float).to_numpy())
        p = float(st.wilcoxon(logs).pvalue) if len(logs) >= 2 and np.any(logs != 0) else 1.0
        median = float(np.median(np.exp(logs)))
        word = "not distinguishable" if p >= alpha else "higher" if median > 1 else "lower"
        rows.append((f"{device} {DIRECTION_NAMES.get(direction, direction)}", median, word))
    n = len(rows)
    up, down = sum(w == "higher" for _, _, w in rows), sum(w == "lower" for _, _, w in rows)
    unclear = n - up - down
    if up == n or down == n:
        reading = f"reads it {'higher' if up else 'lower'} than the precise source on every device and direction"
    else:
        parts = [f"higher on {up}" if up else "", f"lower on {down}" if down else "",
                 f"not distinguishably different on {unclear}" if unclear else ""]
        reading = (f"reads it {', '.join(x for x in parts if x)} of {n} device-directions (Wilcoxon, "
                   f"alpha {alpha:g})" + (": the direction depends on the device and direction" if up and down
                                           else ""))
    listed = [f"{name} {numbers.number(r)} ({w})" for name, r, w in rows]
    if len(listed) > MOST_LISTED:  # the range: each device's own value is on its page
        lo, hi = min(rows, key=lambda row: row[1]), max(rows, key=lambda row: row[1])
        listed = [f"from {numbers.number(lo[1])} ({lo[0]}) to {numbers.number(hi[1])} ({hi[0]}) "
                  f"over {len(rows)} device-directions"]
    return {"ratio_low_by_device": "; ".join(listed), "low_rate_reading": reading}


def procstat_glue(runs: pd.DataFrame, gaps: pd.DataFrame, alpha: float) -> dict:
    """The prose's numbers about /proc/stat versus the precise source, in
    the order the chapter glues them (a str value is a phrase)."""
    low, at_max = runs["low_rate"], runs["target_rate_bps"] == 0
    ratio_low = float(runs.loc[low, "ratio"].median())
    has_host = runs["host_precise_total_pct"].notna()
    return {
        "gap_mean_all": float(runs["gap_pp"].mean()),
        "gap_abs_max": float(runs["gap_pp"].abs().max()),
        "ratio_low_median": ratio_low,
        "ratio_max_median": float(runs.loc[at_max, "ratio"].median()),
        "gap_median_low": float(runs.loc[low, "gap_pp"].median()),
        **procstat_direction(runs.loc[low], alpha),
        "n_host_precise": int(has_host.sum()),
        "tick_error_low_median": float(runs.loc[has_host & low, "tick_error_pp"].median()),
        "tick_error_all_median": float(runs.loc[has_host, "tick_error_pp"].median()),
        "tick_ratio_low_median": float((runs.loc[has_host & low, "stat_all_total_pct"]
                                        / runs.loc[has_host & low, "host_precise_total_pct"]).median()),
        "background_median": float(runs.loc[has_host, "background_pp"].median()),
        "background_max": float(runs.loc[has_host, "background_pp"].max()),
        "slope_ratio_min": float(gaps["slope_ratio"].min()),
        "slope_ratio_max": float(gaps["slope_ratio"].max()),
    }


def slope_word(a: pd.Series, b: pd.Series, more: str = "more", less: str = "less",
               neither: str = "not distinguishably more or less") -> str:
    """Whether line b costs more CPU per Gbps than line a (fits rows), from
    their slopes' confidence intervals: a direction only when they do not
    overlap (conservative), never from the point estimates alone."""
    return cl.interval_direction(b["slope_lo"] - a["slope_hi"], b["slope_hi"] - a["slope_lo"], up=more, down=less,
                                 neither=neither)


def offloads_glue(gro: pd.DataFrame, values, fits: pd.DataFrame) -> dict:
    """The prose's numbers about offloads off vs on (downlink), with the
    paper's GRO-off / GRO-on throughput ratio from its stated values, and
    whether offloads off cost more CPU per Gbps (slope_word, precise lines)."""
    d = gro.set_index("direction").loc["down"]
    glue = {f"gro_{name}": d[name] for name in ("a_max_gbps", "b_max_gbps", "ratio_b_over_a", "ratio_lo",
                                                 "ratio_hi")}
    glue["gro_p"] = numbers.p_value(d["welch_p"])
    glue["gro_p_holm"] = numbers.p_value(d["welch_p_holm"])
    glue["gro_paper_ratio"] = paper_gro_ratio(values)
    glue["gro_cost_ratio"] = d["b_precise_slope"] / d["a_precise_slope"]
    glue["gro_cost_word"] = slope_word(fit_of(fits, d["a"], "down", "precise_total"),
                                       fit_of(fits, d["b"], "down", "precise_total"))
    return glue


def per_cpu_at_max(rates: pd.DataFrame, devices: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-CPU /proc/stat Total and SoftIRQ at the unlimited rate of
    `devices` (rate summaries), and its display."""
    per_cpu = rates[rates["device"].isin(devices) & (rates["target_rate"] == "max")]
    cpu_cols = [c for c in per_cpu.columns if c.startswith("stat_cpu") and c.endswith("_pct")]
    per_cpu = per_cpu[["device", "direction", "throughput_gbps", *cpu_cols]]
    shown = per_cpu.assign(direction=per_cpu["direction"].map(DIRECTION_NAMES)).rename(columns={
        "throughput_gbps": "throughput (Gbps)",
        **{c: "CPU {} {} (%)".format(c.split("_")[1][3:], "Total" if "total" in c else "SoftIRQ")
           for c in cpu_cols}})
    return per_cpu, shown


def rps_glue(rps: pd.DataFrame, rps_devices: list[str]) -> dict:
    """The prose's numbers about the RPS pair (downlink)."""
    d = rps.set_index("direction").loc["down"]
    glue = {f"rps_{name}": d[name] for name in ("a_max_gbps", "b_max_gbps", "ratio_b_over_a", "ratio_lo",
                                                 "ratio_hi")}
    glue.update({"rps_p": numbers.p_value(d["welch_p"]), "rps_p_holm": numbers.p_value(d["welch_p_holm"]),
                 "rps_a": rps_devices[0], "rps_b": rps_devices[1],
                 "rps_word": cl.interval_direction(np.log(d["ratio_lo"]), np.log(d["ratio_hi"]), 0.0,
                                                   "higher", "lower", "not distinguishable")})
    return glue


def slow_text(slow: pd.DataFrame, alpha: float) -> str:
    """The sentence on the CPU-quota device against the reference (downlink)."""
    d = slow.set_index("direction").loc["down"]
    return (f"Limited to its quota, the device's downlink averages {d['b_max_gbps']:.1f} Gbps at the unlimited rate, "
            f"{d['ratio_b_over_a']:.2f} of the reference ({numbers.level(alpha)} CI {d['ratio_lo']:.2f} to {d['ratio_hi']:.2f}; "
            f"Welch p = {numbers.p_value(d['welch_p'])}, Holm-adjusted {numbers.p_value(d['welch_p_holm'])}); "
            f"its precise slope is "
            f"{d['b_precise_slope'] / d['a_precise_slope']:.2f} times the reference's.")


def comparison_with_phones(phones: pd.DataFrame, fits: pd.DataFrame, extra: pd.DataFrame, devices: list[str],
                           targets: list[float], thr: str, alpha: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Downlink lines of the phones (implied by published points) and of the
    measured devices (/proc/stat and precise OLS): slope, intercept,
    throughput at the threshold with CI, CPU at each target. (table, display)."""
    rows = []
    for _, p in phones.iterrows():
        row = {"device": p["device"], "provenance": "published (implied line, modeled)",
               "source": "/proc/stat (paper)", "slope_pct_per_gbps": p["slope_pct_per_gbps"],
               "intercept_pct": p["intercept_pct"], f"gbps_at_{thr}pct": p[f"gbps_at_{thr}pct_cpu"],
               "ci_lo": np.nan, "ci_hi": np.nan, "max_measured_gbps": np.nan}
        for r in targets:
            row[f"cpu_pct_at_{r:g}gbps"] = p[f"cpu_pct_at_{r:g}gbps"]
        row["measured_range"] = "not measured (published line)"
        rows.append(row)
    for device in devices:
        for source, label in (("stat_total", "/proc/stat"), ("precise_total", "precise")):
            f = fit_of(fits, device, "down", source)
            row = {"device": device, "provenance": "measured (OLS line, modeled)", "source": label,
                   "slope_pct_per_gbps": f["slope"], "intercept_pct": f["intercept"],
                   f"gbps_at_{thr}pct": f["gbps_at_threshold"], "ci_lo": f["gbps_at_threshold_lo"],
                   "ci_hi": f["gbps_at_threshold_hi"], "max_measured_gbps": f["x_max"]}
            e = extra[(extra["device"] == device) & (extra["direction"] == "down") & (extra["source"] == source)]
            for r in targets:
                row[f"cpu_pct_at_{r:g}gbps"] = float(e.loc[np.isclose(e["target_gbps"], r), "cpu_pct"].iloc[0])
            row["measured_range"] = range_flag(bool(f["gbps_at_threshold_beyond_range"]), f["saturation_gbps"])
            rows.append(row)
    comparison = pd.DataFrame(rows)
    shown = with_interval(comparison, f"gbps_at_{thr}pct", "ci_lo", "ci_hi",
                          label=f"Gbps at {thr}% CPU [{numbers.level(alpha)} CI]").rename(columns={
        "provenance": "line", "source": "CPU source", "slope_pct_per_gbps": "slope (% per Gbps)",
        "intercept_pct": "intercept (%)", "max_measured_gbps": "fastest single run (Gbps)",
        "measured_range": f"Gbps at {thr}% CPU: measured range",
        **{f"cpu_pct_at_{r:g}gbps": f"CPU at {r:g} Gbps (%)" for r in targets}})
    return comparison, shown


def down_total_r2(runs: pd.DataFrame, device: str) -> float:
    """The R² that fit_table gives the /proc/stat Total line of `device`'s
    downlink (its first config, the row fit_of reads), fitting that line alone."""
    down = runs[(runs["device"] == device) & (runs["direction"] == "down")]
    g = down[down["config"] == down["config"].min()]
    return float(cpufit.fit_line(g["throughput_gbps"], g[SOURCES["stat_total"][0]]).rsquared)


class Chapter(NotebookChapter):
    """The chapter's state: the notebook's parameters, each device's runs,
    fits and extrapolations, the phones' lines, and what later sections reuse
    (the /proc/stat gaps, the comparisons, the claims)."""

    def __init__(self, *, study: str, devices: list[str], interim_dir: str, devices_dir: str, results_dir: str,
                 published_lines: str, published_dir: str, reference_device: str, offloads_off_device: str,
                 rps_devices: list[str], slow_device: str, alpha: float, target_rates_gbps: list[float],
                 cpu_threshold_pct: float, linear_r2_min: float, sharp_drop_max_ratio: float, rel_tol_approx: float,
                 background_max_pp: float, superseded: dict | None = None):
        self.devices, self.reference_device, self.offloads_off_device = devices, reference_device, offloads_off_device
        self.rps_devices, self.slow_device, self.alpha = rps_devices, slow_device, alpha
        self.target_rates_gbps, self.cpu_threshold_pct = target_rates_gbps, cpu_threshold_pct
        self.claim_params = {
            "devices": devices, "reference_device": reference_device, "offloads_off_device": offloads_off_device,
            "rps_devices": rps_devices, "slow_device": slow_device, "alpha": alpha, "linear_r2_min": linear_r2_min,
            "sharp_drop_max_ratio": sharp_drop_max_ratio, "rel_tol_approx": rel_tol_approx}
        self.superseded = superseded or {}
        self.results, self.devices_dir = Path(results_dir), Path(devices_dir)
        self.out = ChapterOutputs(self.results, STAGE, registry.by_slug()[STUDY].device_sources_stage)
        self.out.put("ci_pct", 100 * (1 - alpha))  # the prose's interval level
        self.data = load(interim_dir, devices_dir, devices)
        # Runs with host-wide background above the limit are left out of fits (the device
        # stage) and comparisons (here); all_runs keeps them for the with-and-without table.
        self.background_max_pp, self.all_runs = background_max_pp, self.data["runs"]
        self.data["runs"], self.left_out = clean_runs(self.all_runs, background_max_pp)
        self.sessions, self.runs, self.fits, self.extra, self.rates = (
            self.data[k] for k in ("sessions", "runs", "fits", "extra", "rates"))
        self.phones, self.paper = pd.read_csv(published_lines), Values(published_dir)
        self.thr, self.have = f"{cpu_threshold_pct:g}", set(devices)
        # The devices the chapter names: in colour in the cross-device figures, whatever their number.
        self.highlight = [reference_device, offloads_off_device, *rps_devices, slow_device]
        self.shown_device = reference_device if reference_device in self.have else devices[0]
        self.gro, self.rps, self.slow = self._comparisons()
        self.out.put_all({"n_devices": len(devices), "n_runs": len(self.runs),
                          "raw_mb": self.sessions["bytes"].sum() / 1e6, "n_sessions": len(self.sessions)})

    def _comparisons(self) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
        """(offloads off vs on, the RPS pair, the CPU-quota device vs the
        reference), each empty when its devices are not in the build. Their
        Welch tests form one family ("device comparisons at the unlimited
        rate"), Holm-corrected together (measured_analysis.holm_family)."""
        ref, runs, fits, have = self.reference_device, self.runs, self.fits, self.have
        pairs = {"gro": (ref, self.offloads_off_device, "offloads off vs on"),
                 "rps": (*self.rps_devices, "RPS to the second vs the first CPU") if len(self.rps_devices) == 2
                 else None,
                 "slow": (ref, self.slow_device, "CPU-quota device vs reference")}
        self.pairs = pairs
        frames = {key: measured_analysis.compare(runs, fits, a, b, label, self.alpha) if pair and {a, b} <= have
                  else pd.DataFrame()
                  for key, pair in pairs.items() for a, b, label in [pair or (None, None, None)]}
        frames = measured_analysis.holm_family(frames, self.alpha)
        self.out.put("n_welch", int(sum(len(f) for f in frames.values())))
        return frames["gro"], frames["rps"], frames["slow"]

    def background_sensitivity(self) -> None:
        """How many runs the background limit leaves out, and each headline
        (the /proc/stat Total R² of each device, the comparisons' throughput
        ratios) with and without them."""
        out, alpha = self.out, self.alpha
        rows = []
        for device in self.devices:
            n_all = int((self.all_runs["device"] == device).sum())
            n_out = int((self.left_out["device"] == device).sum())
            rows.append({"headline": f"R² of /proc/stat Total, {device}, downlink", "runs": n_all, "left out": n_out,
                         "without them": down_total_r2(self.runs, device),
                         "with them": down_total_r2(self.all_runs, device)})
        clean = {"gro": self.gro, "rps": self.rps, "slow": self.slow}  # _comparisons, on the clean runs
        for key, pair in self.pairs.items():
            if not pair or not set(pair[:2]) <= self.have:
                continue
            a, b, label = pair
            ratio = {"clean": clean[key].set_index("direction").loc["down"],
                     "all": measured_analysis.compare(self.all_runs, self.fits, a, b, label, alpha)
                     .set_index("direction").loc["down"]}
            rows.append({"headline": f"throughput ratio {b} / {a}, downlink",
                         "runs": int(self.all_runs["device"].isin([a, b]).sum()),
                         "left out": int(self.left_out["device"].isin([a, b]).sum()),
                         "without them": float(ratio["clean"]["ratio_b_over_a"]),
                         "with them": float(ratio["all"]["ratio_b_over_a"])})
        self.sensitivity = out.save_table(pd.DataFrame(rows), "background_sensitivity")
        out.put_all({"n_left_out": len(self.left_out), "n_runs_all": len(self.all_runs),
                     "background_max_pp": self.background_max_pp})

    def background_sensitivity_table(self) -> None:
        """The table of background_sensitivity (the methods page)."""
        self.out.show(self.sensitivity, f"Headlines without and with the runs whose host-wide background exceeded "
                      f"{self.background_max_pp:g} percentage points (left out of fits and comparisons)",
                      csv_href=self.out.href("background_sensitivity"))
        self.out.provenance("measured: host-wide and experiment precise CPU of every run; fits and ratios computed "
                            "here.")

    def captures_table(self) -> None:
        out = self.out
        cap, cap_shown = captures(self.sessions)
        out.table(cap, "captures", "Capture sessions and their hosts, one column per device (from manifest.yaml)",
                  shown=cap_shown, index=True)
        out.provenance("measured (capture manifests).")

    def superseded_table(self) -> None:
        """The sessions kept in data/raw but left out (params.yaml superseded), and why."""
        self.out.superseded(self.superseded, "data/raw/cpu-gbps")

    def figure1_text(self, device: str) -> tuple[str, str]:
        """(alt text, caption) of a device's Figure 1."""
        f_stat = measured_analysis.fit_of(self.fits, device, "down", "stat_total")
        f_prec = measured_analysis.fit_of(self.fits, device, "down", "precise_total")
        return (f"{device}: four scatter plots of CPU utilization (% of all CPUs) against TCP throughput (Gbps), "
                "downlink on top and uplink below, Total CPU on the left and SoftIRQ CPU on the right, one point "
                "per run, each source with a straight OLS line and shaded confidence and prediction bands.",
                f"{device}. Look at how closely the points follow each line: on the downlink R² is "
                f"{f_stat['r2']:.2f} for /proc/stat Total and {f_prec['r2']:.2f} for the precise Total. "
                "Where the /proc/stat points scatter far from the precise ones, tick sampling or background "
                "work is at play.")

    def figure1(self) -> None:
        """Figure 1 of the reference device (every device's is on its own
        page): CPU against throughput, both sources, with OLS lines. The
        device's stage drew it (device_analysis.figure1, from the same runs
        and alpha): its file is shown, not drawn again."""
        device = self.shown_device
        alt, caption = self.figure1_text(device)
        self.out.figure(self.devices_dir / device / "figure1.svg", f"figure1_{device}", alt=alt, caption=caption)
        self.out.device_provenance("measured runs; lines and bands modeled (OLS of the runs).", device)
        self.out.put_text("figure1_device", device)

    def fits_section(self) -> None:
        self.fit_table, fit_shown = fits_table(self.fits, self.alpha)
        self.out.table(self.fit_table, "fits", f"Downlink OLS lines of CPU (%) on throughput (Gbps), with {numbers.level(self.alpha)} CIs",
                       shown=fit_shown)
        self.out.provenance("modeled (OLS fitted to measured runs).")

    def extrapolations_section(self) -> None:
        """The extrapolations of every device (the CSV), shown for the
        reference device; each device's are on its page."""
        device = self.shown_device
        ext, ext_shown = extrapolations(self.extra, self.devices, self.target_rates_gbps, self.alpha)
        self.out.table(ext, "extrapolations", f"Downlink, {device}: fitted CPU (%) at the paper's target rates, "
                       f"with {numbers.level(self.alpha)} CI of the mean (the CSV has every device)",
                       shown=ext_shown[ext_shown["device"] == device])
        self.out.device_provenance("modeled (OLS extrapolation of measured runs).", device)

    def inverse_section(self) -> None:
        out, thr = self.out, self.thr
        inv, inv_shown = inverse_predictions(self.fits, thr, self.alpha)
        out.table(inv, f"throughput_at_{thr}pct_cpu", f"Throughput (Gbps) at {thr}% CPU: estimate with {numbers.level(self.alpha)} CI "
                  "(confidence band) and the interval from the prediction band", shown=inv_shown)
        out.provenance("modeled (inverse prediction from OLS of measured runs).")
        out.put_all(reference_glue(self.fits, self.reference_device))

    def procstat_table(self) -> None:
        out = self.out
        self.gaps, gaps_shown = procstat_gaps(add_gap_columns(self.runs), self.fits, self.alpha)
        out.table(self.gaps, "procstat_vs_precise", "/proc/stat Total minus precise Total (pp, percentage points of "
                  "all CPUs), the ratio /proc/stat ÷ precise, and the ratio of their slopes", shown=gaps_shown)
        out.provenance("measured (both sources per run); slopes modeled (OLS).")
        out.put_all(procstat_glue(self.runs, self.gaps, self.alpha))

    def procstat_figure(self) -> None:
        self.out.figure(
            lambda: cpu_figures.procstat_figure(self.runs, self.devices, self.highlight), "procstat_vs_precise",
            alt="Two scatter plots, one point per run and one colour per named device (any others grey). Left: "
                "/proc/stat Total CPU (%) "
                "against precise Total CPU (%) with a dashed line of equality. Right: /proc/stat minus precise "
                "(percentage points) against TCP throughput (Gbps) with a dashed line at zero.",
            caption="Tick-sampled /proc/stat against the precise CPU time, per run. Points on the dashed lines mean "
                    "the two sources agree; look for the device whose points sit far above them (background work on "
                    "the shared host during its capture) and for the spread at low throughput (tick sampling).")
        self.out.provenance("measured (each point one run, both sources).")

    def offloads(self) -> None:
        out, runs, ref, off = self.out, self.runs, self.reference_device, self.offloads_off_device
        if not self.gro.empty:
            out.save_table(self.gro, "offloads_off_vs_on")
            out.figure(
                lambda: cpu_figures.throughput_figure(runs, [ref, off], self.alpha), "offloads_throughput",
                alt=f"Mean TCP throughput (Gbps) at the unlimited rate with {numbers.level(self.alpha)} confidence error bars, for the "
                    "offloads-on and offloads-off configurations, downlink and uplink.",
                caption=f"Throughput at the unlimited rate with offloads on and off (mean of the repetitions, {numbers.level(self.alpha)} t "
                        "interval). Look at the gap between the two rows and at how wide the intervals are with "
                        "only a few repetitions.")
            out.provenance("measured (mean of the runs at the unlimited rate).")
            out.put_all(offloads_glue(self.gro, self.paper, self.fits))
        else:
            display(Markdown(measured_analysis.not_captured_text("offloads-off comparison", [ref, off])))

    def comparison_tables(self) -> None:
        """The tables of the offloads, RPS and slower-device comparisons
        (the methods page; their sections show the figures and numbers)."""
        out, rps_devices = self.out, self.rps_devices
        if not self.gro.empty:
            out.show(measured_analysis.comparison_shown(self.gro, "offloads on", "offloads off", self.alpha),
                     "Offloads on (a) against GRO/GSO/TSO off (b): throughput at the unlimited rate",
                     csv_href=out.href("offloads_off_vs_on"))
            out.provenance("measured (throughput and CPU per run); slopes modeled (OLS).")
        if not self.rps.empty:
            out.show(measured_analysis.comparison_shown(self.rps, rps_devices[0], rps_devices[1], self.alpha),
                     f"SoftIRQ steered as in {rps_devices[0]} (a) against {rps_devices[1]} (b): throughput at the "
                     "unlimited rate", csv_href=out.href("rps_affinity"))
            out.provenance("measured (throughput and CPU per run); slopes modeled (OLS).")
            _, per_cpu_shown = per_cpu_at_max(self.rates, rps_devices + [self.reference_device])
            out.show(per_cpu_shown, "Per-CPU /proc/stat Total and SoftIRQ (% of that CPU) at the unlimited rate",
                     csv_href=out.href("per_cpu_at_max"))
            out.provenance("measured (per-CPU /proc/stat, mean of the runs).")
        if not self.slow.empty:
            out.show(measured_analysis.comparison_shown(self.slow, "reference", "CPU quota", self.alpha),
                     "Reference (a) against the CPU-quota-limited device (b): throughput at the unlimited rate",
                     csv_href=out.href("slow_vs_reference"))
            out.provenance("measured; slopes modeled (OLS).")

    def rps_section(self) -> None:
        out, runs, rps_devices = self.out, self.runs, self.rps_devices
        if not self.rps.empty:
            rps = out.save_table(self.rps, "rps_affinity")
            out.figure(
                lambda: cpu_figures.throughput_figure(runs, [self.reference_device, *rps_devices], self.alpha),
                "rps_throughput",
                alt=f"Mean TCP throughput (Gbps) at the unlimited rate with {numbers.level(self.alpha)} confidence error bars for the "
                    "reference configuration and the two RPS configurations, downlink and uplink.",
                caption="Throughput at the unlimited rate with SoftIRQ steered to either CPU, next to the reference "
                        f"(mean of the repetitions, {numbers.level(self.alpha)} t interval). Look at whether the two RPS rows differ by more "
                        "than their intervals.")
            out.provenance("measured (mean of the runs at the unlimited rate).")
            out.save_table(per_cpu_at_max(self.rates, rps_devices + [self.reference_device])[0], "per_cpu_at_max")
            out.put_all(rps_glue(rps, rps_devices))
        else:
            display(Markdown(measured_analysis.not_captured_text("RPS pair", rps_devices)))

    def slow_section(self) -> None:
        out, ref, slow_device = self.out, self.reference_device, self.slow_device
        if not self.slow.empty:
            slow = out.save_table(self.slow, "slow_vs_reference")
            display(Markdown(slow_text(slow, self.alpha)))
        else:
            display(Markdown(measured_analysis.not_captured_text("slower emulated device", [ref, slow_device])))

    def comparison_figure(self) -> None:
        thr = self.thr
        self.out.figure(
            cpu_figures.lines_figure(self.runs, self.phones, self.devices, self.target_rates_gbps, self.cpu_threshold_pct,
                                  self.alpha, self.highlight), "comparison",
            alt="Total CPU utilization (%) against TCP downlink throughput (Gbps): one straight line with a shaded "
                "confidence band per measured device, and two black lines for the published phones; a dashed grey "
                f"line at {thr}% CPU and dotted grey lines at the target rates.",
            caption=f"Downlink /proc/stat Total lines of the measured hosts (OLS, {numbers.level(self.alpha)} confidence band; dashed beyond "
                    "the measured range) and the lines the paper's extrapolations imply for the two phones. Look at "
                    f"where each line crosses the dashed {thr}% line and how steep the hosts' lines are next to the "
                    "phones'.")
        self.out.provenance("measured devices: OLS lines (modeled) of measured runs; phones: lines implied by "
                            "published points (modeled, cpu-gbps chapter).")

    def comparison_table(self) -> None:
        thr = self.thr
        comparison, comparison_shown = comparison_with_phones(self.phones, self.fits, self.extra, self.devices,
                                                              self.target_rates_gbps, thr, self.alpha)
        # One row per device (its /proc/stat line, the paper's source), with a link to its page;
        # the precise lines are on the device pages and in the CSV.
        shown = comparison_shown[comparison_shown["CPU source"] != "precise"].copy()
        pages = {d: link(d, DevicePage.href(CHAPTER, d)) for d in self.devices}
        shown["device"] = [pages.get(d, html.escape(d, quote=False)) for d in shown["device"]]
        self.out.save_table(comparison, "comparison_with_phones")
        self.out.show(shown, "Downlink lines: measured devices (each links to its page) and published phones "
                      f"(CPU % at the target rates; Gbps at {thr}% CPU with {numbers.level(self.alpha)} CI)",
                      csv_href=self.out.href("comparison_with_phones"), html_columns=("device",))
        self.out.provenance("measured devices: OLS lines (modeled); phones: lines through published points "
                            "(modeled).")

    def claims(self) -> None:
        """The claims table, its verdicts and the key findings."""
        out = self.out
        self.comparisons = {"gro": self.gro, "rps": self.rps, "slow": self.slow}
        self.claims_table, intervals = measured_claims(self.paper, self.data, self.comparisons, self.claim_params)
        # Captures made before the idle gate, and comparisons across kernel builds, say so.
        self.claims_table = with_capture_notes(self.claims_table, self.sessions, self.claim_params)
        cl.write_claims(self.claims_table, self.results / "claims.csv")
        claims_display, claims_shown = claims_for_people(self.claims_table, intervals, self.alpha)
        self.intervals, self.claims_shown = intervals, claims_shown
        elsewhere = self.claims_table["claim_id"].isin(
            [c for d in self.devices if d != self.shown_device for c in device_claim_ids(d)])
        out.show(claims_shown[~elsewhere.to_numpy()], f"Claims of the paper and their verdicts ({self.shown_device} "
                 f"and the comparisons; each other device's on its page, all {len(claims_shown)} in the CSV)",
                 csv_href=site_href(self.results / "claims.csv"))
        out.provenance("published (paper values); measured or modeled (artifact values, per the provenance column).")
        top = headline(self.claims_table, self.reference_device)
        out.findings(claims_display, headline=top, intervals={c: intervals[c] for c in top if c in intervals})

    def metrics(self) -> None:
        counts = cl.verdict_counts(self.claims_table)
        self.out.put_counts(counts)
        metrics = chapter_metrics(self.data, self.gaps, self.comparisons, self.devices, self.thr, counts)
        write_metrics(self.results / "metrics.json", metrics)

    def device_pages(self) -> None:
        """A page per device (registry.Chapter.device_pages), linked from the
        comparison table: its Figure 1, lines, extrapolations, throughput at
        the threshold, /proc/stat against the precise source, capture and
        claims, each box naming only the device's own stage."""
        folder = next(c for c in registry.chapters() if c.name == CHAPTER).device_pages
        methods = f"{{doc}}`../{CHAPTER}-methods`"
        _, ext_shown = extrapolations(self.extra, self.devices, self.target_rates_gbps, self.alpha)
        for device in self.devices:
            stage, own = registry.by_slug()[STUDY].device_sources_stage(device), self.devices_dir / device
            fits = self.fits[self.fits["device"] == device]
            page = DevicePage(CHAPTER, device, "CPU versus throughput, measured",
                              "Its Figure 1, fitted lines, extrapolations to the paper's target rates, throughput "
                              f"at {self.thr}% CPU, `/proc/stat` against the precise source, its capture and its "
                              f"claims. How each is made: {methods}.")
            page.heading("Figure 1")
            alt, caption = self.figure1_text(device)
            page.figure(own / "figure1.svg", f"figure1_{device}", alt, caption)
            page.provenance("measured runs; lines and bands modeled (OLS of the runs).", [stage])
            page.heading("Fitted lines (downlink)")
            # The chapter's tables cut to the device (each row is computed from its own lines and runs).
            page.table(fits_shown(self.fit_table[self.fit_table["device"] == device], self.alpha).drop(columns="device"),
                       f"Downlink OLS lines of CPU (%) on throughput (Gbps), with {numbers.level(self.alpha)} CIs", csv=own / "fits.csv")
            page.provenance("modeled (OLS fitted to measured runs).", [stage])
            page.table(ext_shown[ext_shown["device"] == device].drop(columns="device"),
                       f"Downlink: fitted CPU (%) at the paper's target rates, with {numbers.level(self.alpha)} CI of the mean",
                       csv=own / "extrapolations.csv")
            page.provenance("modeled (OLS extrapolation of measured runs).", [stage])
            page.heading(f"Throughput at {self.thr}% CPU")
            page.table(inverse_predictions(fits, self.thr, self.alpha)[1].drop(columns="device"),
                       f"Throughput (Gbps) at {self.thr}% CPU: estimate with {numbers.level(self.alpha)} CI (confidence band) and the "
                       "interval from the prediction band", csv=own / "fits.csv")
            page.provenance("modeled (inverse prediction from OLS of measured runs).", [stage])
            page.heading("/proc/stat versus the precise source")
            page.table(procstat_gaps_shown(self.gaps[self.gaps["device"] == device], self.alpha).drop(columns="device"),
                       "/proc/stat Total minus precise Total (pp), the ratio /proc/stat ÷ precise, and the ratio "
                       "of their slopes", csv=self.out.tables_dir / "procstat_vs_precise.csv")
            page.provenance("measured (both sources per run); slopes modeled (OLS).", [stage])
            page.heading("Capture")
            page.table(captures(self.sessions[self.sessions["device"] == device])[1],
                       "Capture session and host (from manifest.yaml)", index=True,
                       csv=self.out.tables_dir / "captures.csv")
            page.provenance("measured (capture manifests).", [stage])
            page.heading("Claims")
            mine = self.claims_table["claim_id"].isin(device_claim_ids(device)).to_numpy()
            page.table(self.claims_shown[mine], f"The paper's claims checked on {device}",
                       csv=self.results / "claims.csv")
            page.provenance("published (paper values); measured or modeled (artifact values).",
                            [stage, "ingest_published"])
            page.write(folder)

"""Everything the mptcp-dualband chapter derives from the ingested runs:
which runs it uses, the chapter's tables (validated by
mobitrace.studies.mptcp_dualband.schema) and glued values. The claims and
metrics made from them are in .claims.

Energy per bit is in mobitrace.studies.mptcp_dualband.energy, the ratio
sweep's optima, guideline and bootstrap intervals in .ratios, the figures
and tables for people in .chapter. Kept apart from mobitrace.studies.mptcp_dualband.ingest (which the
ingest stage depends on) so that changing the chapter's analysis does not
re-run the ingest.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from mobitrace.stats.intervals import MIN_N, mean_ci
from mobitrace.core import capture_reader
from mobitrace.core import claims as cl
from mobitrace.core.numbers import level, number
from mobitrace.stats import resampling as rs
from mobitrace.studies.mptcp_dualband import energy as energy_per_bit
from mobitrace.studies.mptcp_dualband import schema as sc
from mobitrace.studies.mptcp_dualband.ratios import (change_ci, ecdf, floor_sensitivity, guideline_vs_search,
                                                     ratio_summary)
from mobitrace.studies.mptcp_dualband.schema import DIRECTIONS, PATHS

# --------------------------------------------------------------------------- #
# Which runs the chapter uses

MPTCP_PARTS = ("mptcp", "gro", "sirq", "backup")


def paths_used(frame: pd.DataFrame, min_share: float = 0.01) -> np.ndarray:
    """2 where each path carried more than `min_share` of a run's bytes, else 1."""
    share = np.minimum(frame["bytes_a"], frame["bytes_b"]) / (frame["bytes_a"] + frame["bytes_b"])
    return np.where(share > min_share, 2, 1)


def select_runs(frame: pd.DataFrame, manifests: dict[str, dict[str, dict]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(used, set aside): a device's MPTCP-part runs (mptcp, gro, sirq,
    backup) from sessions captured before the kit kept its MPTCP listener
    open are set aside when the device has a session captured with the fixed
    kit (its manifest config records `mptcp_subflow_wait_ms`). The first
    kit closed the listener after accept(), and Linux MPTCP resets an MP_JOIN
    that arrives after that, so many of its MPTCP runs used one path.
    `manifests` is {device: {session: manifest}} (manifests.json per device)."""
    fixed = {(d, s) for d, ms in manifests.items() for s, m in ms.items()
             if "mptcp_subflow_wait_ms" in (m.get("config") or {})}
    is_fixed = pd.MultiIndex.from_arrays([frame["device"], frame["session"]]).isin(list(fixed))
    part = frame["part"].isin(MPTCP_PARTS)
    device_has_fixed = frame["device"].isin({d for d, _ in fixed})
    aside = part & device_has_fixed & ~is_fixed
    return frame[~aside].reset_index(drop=True), frame[aside].reset_index(drop=True)


# --------------------------------------------------------------------------- #
# The chapter: runs used, tables (validated by schema.TABLES) and glued values


def validated(frame: pd.DataFrame, name: str) -> pd.DataFrame:
    """`frame` validated by the schema of results table `name` (schema.TABLES)."""
    return sc.TABLES[name].validate(frame)


@dataclass
class Runs:
    """The runs the chapter uses. `runs`: every ingested run; `energy`: the
    runs used, with modeled power and nJ/bit (energy.energy_table) and
    `paths_used`; `aside`/`early`: the runs set aside (select_runs) and their
    MPTCP ones; `ref`: the reference device (the first listed) and
    `ref_runs` its runs used; `ref_manifest` its first session's manifest,
    whose config gives `scale` and the paper's path rates `rates_paper`."""
    runs: pd.DataFrame
    manifests: dict
    energy: pd.DataFrame
    aside: pd.DataFrame
    early: pd.DataFrame
    ref: str
    ref_runs: pd.DataFrame
    ref_manifest: dict
    scale: float
    rates_paper: dict

    def ref_energy(self) -> pd.DataFrame:
        """The runs used of the reference device."""
        return self.energy[self.energy["device"] == self.ref]

    def on(self, device: str) -> "Runs":
        """The runs of `device` alone, with `device` as the reference: every
        figure, table and claim made from it is that device's."""
        mine = lambda f: f[f["device"] == device].reset_index(drop=True)  # noqa: E731
        manifest = next(iter(self.manifests[device].values()))
        return Runs(runs=mine(self.runs), manifests={device: self.manifests[device]}, energy=mine(self.energy),
                    aside=mine(self.aside), early=mine(self.early), ref=device, ref_runs=mine(self.energy),
                    ref_manifest=manifest, scale=float(manifest["config"]["scale"]),
                    rates_paper=manifest["config"]["paper_path_rates_mbps"])


def load_runs(interim_dir: str | Path, devices: list[str], radio, cpu) -> Runs:
    """Read each device's runs.parquet and manifests.json (the ingest's
    output) and price them (:func:`priced_runs`). SystemExit when no device
    is listed."""
    frames, manifests = [], {}
    for device in devices:
        folder = Path(interim_dir) / device
        frames.append(pd.read_parquet(folder / "runs.parquet"))
        manifests[device] = json.loads((folder / "manifests.json").read_text())
    if not frames:
        raise SystemExit("no mptcp-dualband device listed in params.yaml")
    return priced_runs(pd.concat(frames, ignore_index=True), manifests, devices, radio, cpu)


def priced_runs(runs: pd.DataFrame, manifests: dict, devices: list[str], radio, cpu) -> Runs:
    """The ingested runs priced with the radio and CPU models
    (energy.energy_table), the paths each used marked, and the MPTCP runs of
    sessions before the kit's listener fix set aside (select_runs)."""
    e = energy_per_bit.energy_table(runs, radio, cpu)
    e["paths_used"] = paths_used(e)
    e, aside = select_runs(e, manifests)
    ref = devices[0]
    ref_manifest = next(iter(manifests[ref].values()))
    return Runs(runs=runs, manifests=manifests, energy=e, aside=aside, early=aside[aside["transport"] == "mptcp"],
                ref=ref, ref_runs=e[e["device"] == ref], ref_manifest=ref_manifest,
                scale=float(ref_manifest["config"]["scale"]),
                rates_paper=ref_manifest["config"]["paper_path_rates_mbps"])


def capture_facts(r: Runs) -> dict:
    """Values the capture section's prose shows: runs captured and used,
    the path rates, the scale, repetitions and run durations."""
    facts = {"n_captured": int((r.runs["device"] == r.ref).sum()), "ref_device": r.ref}
    for d in DIRECTIONS:
        for p in PATHS:
            facts[f"rate_{d[0]}l_{p}"] = f"{r.rates_paper[d][p]:g}"
    counts = r.ref_runs.groupby(["part", "config", "direction", "ratio_a_pct", "demand_mbps"], dropna=False).size()
    facts.update({
        "scale": f"{r.scale:g}", "n_runs": int(len(r.ref_runs)), "reps_mptcp": int(counts.loc["mptcp"].min()),
        "reps_extra": int(counts.loc[["gro", "sirq"]].min()) if {"gro", "sirq"} <= set(r.ref_runs["part"]) else 0,
        "reps_sweep": int(counts.loc["sweep"].min()),
        "dur_cdf": f"{r.ref_manifest['config']['duration_cdf_s']:g}",
        "dur_sweep": f"{r.ref_manifest['config']['duration_sweep_s']:g}"})
    return facts


def captures_table(r: Runs, devices: list[str]) -> pd.DataFrame:
    """One row per captured session: runs used, scale, host and kit settings."""
    rows = []
    for device in devices:
        for session, m in r.manifests[device].items():
            c, h = m["config"], m["host"]
            rows.append({"device": device, "session": session,
                         "runs": int(((r.energy["device"] == device) & (r.energy["session"] == session)).sum()),
                         "scale": c["scale"], "kernel": h.get("kernel"), "CPU": ", ".join(h.get("cpu_model", [])),
                         "cores": h.get("cpu_count"), "congestion control": c.get("congestion_control"),
                         "s/run CDF": c.get("duration_cdf_s"), "s/run sweep": c.get("duration_sweep_s"),
                         "lock held (s)": (m.get("lock") or {}).get("held_s"),
                         "background load (idle gate)": capture_reader.background_text(
                             capture_reader.background_load(m))})
    return validated(pd.DataFrame(rows), "captures")


def load_facts(r: Runs) -> dict:
    """Median and maximum 1-min load average at the start of the reference runs."""
    load = r.ref_runs["loadavg1"]
    return {"load_median": f"{load.median():.2f}", "load_max": f"{load.max():.2f}"}


def set_aside_table(early: pd.DataFrame) -> pd.DataFrame:
    """Per device, session, configuration and direction: the MPTCP runs set
    aside, how many used both paths, and their median throughput."""
    if not len(early):
        return early.iloc[:0]
    ea = (early.groupby(["device", "session", "config", "direction"])
          .agg(runs=("run_id", "size"), both_paths=("paths_used", lambda x: int((x == 2).sum())),
               median_mbps=("tput_eq_mbps", "median")).reset_index())
    return validated(ea, "mptcp_runs_set_aside")


def set_aside_facts(r: Runs) -> dict:
    """MPTCP runs on both paths among those set aside and those used."""
    mp = r.energy["transport"] == "mptcp"
    return {"early_both": int((r.early["paths_used"] == 2).sum()), "early_n": int(len(r.early)),
            "late_both": int((r.energy.loc[mp, "paths_used"] == 2).sum()), "late_n": int(mp.sum())}


def mptcp_runs(r: Runs) -> pd.DataFrame:
    """The backlogged MPTCP runs (part "mptcp") of every device."""
    return r.energy[(r.energy["part"] == "mptcp")]


def fig1_table(mp: pd.DataFrame, rates_paper: dict, alpha: float) -> pd.DataFrame:
    """Per device and direction: mean and SD of the total and per-path
    throughput of backlogged MPTCP, the sum of the paper's path rates, the
    total as % of it, and the total's Student-t 100(1 - alpha)% CI (mean_ci)."""
    fig1 = (mp.groupby(["device", "direction"])
            .agg(n=("tput_eq_mbps", "size"), total=("tput_eq_mbps", "mean"), total_sd=("tput_eq_mbps", "std"),
                 path_a=("tput_a_eq_mbps", "mean"), path_a_sd=("tput_a_eq_mbps", "std"),
                 path_b=("tput_b_eq_mbps", "mean"), path_b_sd=("tput_b_eq_mbps", "std")).reset_index())
    fig1["sum of path rates"] = [rates_paper[d]["a"] + rates_paper[d]["b"] for d in fig1["direction"]]
    fig1["% of sum"] = 100 * fig1["total"] / fig1["sum of path rates"]
    ci = {k: mean_ci(g["tput_eq_mbps"], alpha) for k, g in mp.groupby(["device", "direction"])}
    fig1["total_ci_low"] = [ci[k][1] for k in zip(fig1["device"], fig1["direction"])]
    fig1["total_ci_high"] = [ci[k][2] for k in zip(fig1["device"], fig1["direction"])]
    return validated(fig1, "fig1_mptcp_throughput")


def fig1_ref(fig1: pd.DataFrame, ref: str) -> pd.DataFrame:
    """The reference device's rows of fig1_table, indexed by direction (DIRECTIONS order)."""
    return fig1[fig1["device"] == ref].set_index("direction").loc[list(DIRECTIONS)]


def fig1_facts(r1: pd.DataFrame, values) -> dict:
    """Figure 1's glued values: % of the sum, total and sum per direction,
    and the paper's expected sums and pre-fix downlink throughput."""
    facts = {}
    for d in DIRECTIONS:
        # Under or over the sum: from the total's interval, not its mean.
        facts[f"fig1_{d}_vs_sum"] = cl.interval_direction(
            r1.loc[d, "total_ci_low"], r1.loc[d, "total_ci_high"], r1.loc[d, "sum of path rates"],
            "above", "below", "not distinguishable from")
        facts[f"fig1_{d}_pct"] = f"{r1.loc[d, '% of sum']:.1f}"
        facts[f"fig1_{d}_total"] = f"{r1.loc[d, 'total']:.0f}"
        facts[f"fig1_{d}_sum"] = f"{r1.loc[d, 'sum of path rates']:.0f}"
    for vid in ("expected_dl", "expected_ul", "mptcp_dl_default"):
        facts[f"p_{vid}"] = f"{values(vid):g}"
    return facts


def downlink_mptcp(r: Runs) -> pd.DataFrame:
    """Downlink MPTCP runs of the GRO/RPS comparison (parts mptcp, gro,
    sirq) with a `configuration` label ("GRO on (default)" for default)."""
    e = r.energy
    dl = e[(e["direction"] == "downlink") & (e["transport"] == "mptcp") & e["part"].isin(["mptcp", "gro", "sirq"])].copy()
    dl["configuration"] = dl["config"].replace({"default": "GRO on (default)"})
    return dl


def downlink_ref(dl: pd.DataFrame, ref: str) -> pd.DataFrame:
    """The reference device's rows of downlink_mptcp, with throughput in Gbps (tput_gbps)."""
    return dl[dl["device"] == ref].assign(tput_gbps=lambda f: f["tput_eq_mbps"] / 1000)


def cdf_table(dl_ref: pd.DataFrame, rates_paper: dict, threshold_gbps: float) -> pd.DataFrame:
    """Per configuration (ECDF of throughput in Gbps): runs, median, min,
    max, runs below `threshold_gbps` (the paper's 2 Gbps), the median as % of
    the downlink sum of path rates, and median CPU seconds per Gbit of the
    phone and AP processes."""
    rows = []
    for conf, g in dl_ref.groupby("configuration", sort=True):
        xs, _ = ecdf(g["tput_eq_mbps"] / 1000)
        rows.append({"configuration": conf, "n": len(g), "median_gbps": float(np.median(xs)),
                     "min_gbps": float(xs.min()), "max_gbps": float(xs.max()),
                     "below_2gbps": int((xs < threshold_gbps).sum()),
                     "pct_of_sum": 100 * float(np.median(xs)) * 1000 / (rates_paper["downlink"]["a"]
                                                                        + rates_paper["downlink"]["b"]),
                     "phone_cpu_s_per_gbit": float((g["phone_cpu_s"] / (g["payload_bytes"] * 8 / 1e9)).median()),
                     "ap_cpu_s_per_gbit": float((g["ap_cpu_s"] / (g["payload_bytes"] * 8 / 1e9)).median())})
    return validated(pd.DataFrame(rows), "fig2_cdf_summary")


CDF_SHOWN = {"n": "runs", "median_gbps": "median (Gbps)", "min_gbps": "min (Gbps)", "max_gbps": "max (Gbps)",
             "below_2gbps": "runs below 2 Gbps", "pct_of_sum": "median, % of the sum of path rates",
             "phone_cpu_s_per_gbit": "phone CPU (s/Gbit)", "ap_cpu_s_per_gbit": "AP CPU (s/Gbit)"}


def cdf_spread_pct(cdf: pd.DataFrame) -> float:
    """How far apart the configurations' medians are: 100 (max / min - 1)."""
    meds = list(cdf["median_gbps"])
    return 100 * (max(meds) / min(meds) - 1)


def gro_gain_pct(cdf: pd.DataFrame) -> float:
    """Median with GRO on (default) over GRO off on path b, as % change."""
    c = cdf.set_index("configuration")
    return 100 * (c.loc["GRO on (default)", "median_gbps"] / c.loc["gro-off-b", "median_gbps"] - 1)


def gro_gain_ci(dl_ref: pd.DataFrame, alpha: float, n_boot: int = rs.N_BOOT,
                seed: int = rs.SEED) -> tuple[float, float]:
    """100(1 - alpha)% BCa bootstrap interval of :func:`gro_gain_pct` (a ratio of
    medians: BCa, as for every median at small n, stats.resampling.bca_ci),
    the runs of the two configurations resampled independently; none below
    stats.intervals.MIN_N runs per configuration."""
    on = dl_ref.loc[dl_ref["configuration"] == "GRO on (default)", "tput_eq_mbps"].to_numpy(dtype=float)
    off = dl_ref.loc[dl_ref["configuration"] == "gro-off-b", "tput_eq_mbps"].to_numpy(dtype=float)
    return rs.bca_ci((on, off), lambda a, b, axis=-1: 100 * (np.median(a, axis=axis) / np.median(b, axis=axis) - 1),
                     alpha=alpha, n_resamples=n_boot, seed=seed)


def change_phrase(pct: float, ci: tuple[float, float], quantity: str, digits: int = 0) -> str:
    """A % change in words whose direction comes from its interval
    (claims.interval_direction), never from the point estimate: "32% more
    throughput", "4% less energy per bit", or, when the interval holds 0 or
    there is none (too few runs), "a change in energy per bit of 1.4% that
    the data cannot tell from none"."""
    word = "" if any(np.isnan(ci)) else cl.interval_direction(*ci, 0.0, "more", "less", "")
    if not word:
        return f"a change in {quantity} of {number(pct, decimals=digits)}% that the data cannot tell from none"
    return f"{number(abs(pct), decimals=digits)}% {word} {quantity}"


def ci_text(ci: tuple[float, float], alpha: float, digits: int = 1) -> str:
    """An interval of a % for prose: "95% CI −0.6 to 0.2%" at alpha 0.05
    (true minus signs), or why there is none."""
    if any(np.isnan(ci)):
        return f"no interval: fewer than {MIN_N} runs"
    return f"{level(alpha)} CI {number(ci[0], decimals=digits)} to {number(ci[1], decimals=digits)}%"


def cdf_facts(cdf: pd.DataFrame, dl_ref: pd.DataFrame, gro_ci: tuple[float, float], alpha: float) -> dict:
    """Figure 2's glued values: default median and runs below the threshold,
    the GRO gain in words (its direction from its interval `gro_ci`), and
    the median share of a core used by each process."""
    c = cdf.set_index("configuration")
    d = dl_ref[dl_ref["config"] == "default"]
    return {"cdf_default_median": f"{c.loc['GRO on (default)', 'median_gbps']:.2f}",
            "cdf_default_below2": int(c.loc["GRO on (default)", "below_2gbps"]),
            "gro_gain": change_phrase(gro_gain_pct(cdf), gro_ci, "median throughput", 1),
            "gro_gain_ci": ci_text(gro_ci, alpha),
            "phone_core_pct": f"{100 * (d['phone_cpu_s'] / d['rx_seconds']).median():.0f}",
            "ap_core_pct": f"{100 * (d['ap_cpu_s'] / d['rx_seconds']).median():.0f}"}


def cpu_sources_table(ref_energy: pd.DataFrame) -> pd.DataFrame:
    """Mean CPU seconds per run and part x direction: per process (precise)
    and from /proc/stat (whole host, tick-sampled), and the run length."""
    t = (ref_energy.groupby(["part", "direction"])
         .agg(runs=("run_id", "size"), phone_cpu_s=("phone_cpu_s", "mean"), ap_cpu_s=("ap_cpu_s", "mean"),
              procstat_busy_s=("procstat_busy_s", "mean"), procstat_softirq_s=("procstat_softirq_s", "mean"),
              seconds=("rx_seconds", "mean")).reset_index())
    return validated(t, "cpu_sources")


CPU_SHOWN = {"phone_cpu_s": "phone process CPU (s)", "ap_cpu_s": "AP process CPU (s)",
             "procstat_busy_s": "/proc/stat busy (s)", "procstat_softirq_s": "/proc/stat softirq (s)",
             "seconds": "run length (s)"}


def power_models_table(radio_all: dict, cpu) -> pd.DataFrame:
    """The study's radio models (names starting mptcp-dualband) and the CPU model."""
    rows = [{"model": m.name, "Tx backlogged (mW)": m.tx_active_mw, "Rx backlogged (mW)": m.rx_active_mw,
             "full at (Mbps)": m.max_rate_mbps, "idle (mW)": m.idle_mw, "provenance": m.provenance,
             "source": m.source} for m in radio_all.values() if m.name.startswith("mptcp-dualband")]
    rows.append({"model": cpu.name, "Tx backlogged (mW)": np.nan, "Rx backlogged (mW)": np.nan,
                 "full at (Mbps)": np.nan, "idle (mW)": cpu.idle_mw, "provenance": cpu.provenance,
                 "source": f"busy core {cpu.busy_core_mw():.0f} mW at {cpu.nominal_ghz} GHz; {cpu.source}"})
    return validated(pd.DataFrame(rows), "power_models")


def power_table(mp: pd.DataFrame) -> pd.DataFrame:
    """Modeled power of backlogged MPTCP per device and direction (means, SD, nJ/bit)."""
    g = mp.groupby(["device", "direction"])
    mean = g[["radio_mw", "cpu_mw", "power_mw", "nj_per_bit"]].mean()  # one pass, not one per named aggregation
    pw = pd.DataFrame({"radio_mw": mean["radio_mw"], "cpu_mw": mean["cpu_mw"], "power_mw": mean["power_mw"],
                       "power_sd": g["power_mw"].std(), "nj_per_bit": mean["nj_per_bit"]}).reset_index()
    return validated(pw, "fig3_power")


POWER_SHOWN = {"radio_mw": "radio (mW)", "cpu_mw": "CPU (mW)", "power_mw": "total (mW)", "power_sd": "SD total (mW)",
               "nj_per_bit": "energy per bit (nJ/bit)"}


def uplink_power_change(pw: pd.DataFrame, ref: str) -> float:
    """Uplink over downlink modeled power of backlogged MPTCP on `ref`, as % change."""
    pwr = pw[pw["device"] == ref].set_index("direction")
    return 100 * (pwr.loc["uplink", "power_mw"] / pwr.loc["downlink", "power_mw"] - 1)


def uplink_power_excess(pw: pd.DataFrame, mp_ref: pd.DataFrame, ref: str,
                        alpha: float) -> tuple[float, tuple[float, float]]:
    """:func:`uplink_power_change` with its 100(1 - alpha)% interval over runs
    (`rs.ratio_of_means_ci` of the runs' mean powers)."""
    excess = uplink_power_change(pw, ref)
    power = mp_ref.groupby("direction")["power_mw"]
    lo, hi = rs.ratio_of_means_ci(power.get_group("uplink"), power.get_group("downlink"), alpha)
    return excess, (100 * (lo - 1), 100 * (hi - 1))


def power_facts(excess: float, excess_ci: tuple[float, float], values) -> dict:
    """The power section's glued values."""
    return {"ul_excess": f"{abs(excess):.0f}", "ul_excess_ci": f"{excess_ci[0]:.0f} to {excess_ci[1]:.0f}",
            "ul_excess_dir": cl.interval_direction(*excess_ci, 0.0, "above", "below", "not distinguishable from"),
            "p_ul_excess": f"{values('ul_power_excess'):g}"}


def optima_table(opt: pd.DataFrame, oci: pd.DataFrame) -> pd.DataFrame:
    """The optima with their bootstrap intervals (tables/optima.csv)."""
    return validated(opt.merge(oci, on=["direction", "demand"]), "optima")


def coincide(opt: pd.DataFrame) -> dict[str, str]:
    """Per direction, whether the backlogged throughput- and energy-optimal ratios coincide (words)."""
    bl = opt[opt["demand"] == 0].set_index("direction")
    return {d: "coincide" if bl.loc[d, "tput_opt_ratio"] == bl.loc[d, "energy_opt_satisfying_ratio"]
            else "do not coincide" for d in DIRECTIONS}


def at(summary: pd.DataFrame, direction: str, demand: float, ratio: float, col: str) -> float:
    """`col` of the ratio summary at one direction, demand and ratio (NaN if not measured)."""
    hit = np.flatnonzero((summary["direction"].to_numpy() == direction) & (summary["demand"].to_numpy() == demand)
                         & (summary["ratio_a_pct"].to_numpy() == ratio))
    return float(summary[col].to_numpy()[hit[0]]) if len(hit) else float("nan")


def change_pct(summary: pd.DataFrame, direction: str, ratio: float, against: float, col: str) -> float:
    """100 (mean at `ratio` / mean at `against` - 1) of `col`, backlogged."""
    return 100 * (at(summary, direction, 0.0, ratio, col) / at(summary, direction, 0.0, against, col) - 1)


@dataclass
class Comparisons:
    """The paper's backlogged comparisons (§4.2): downlink, the
    throughput-optimal ratio `dl_t` against `dl_against` (100:0); uplink,
    `ul_a` (70:30) against `ul_b` (90:10); % changes of throughput and
    nJ/bit and the optimal ratios found (`dl_ratio`, `ul_t`, `ul_e`:
    energy-optimal among two-path ratios)."""
    dl_t: float
    dl_ratio: float
    dl_against: float
    ul_t: float
    ul_e: float
    ul_a: float
    ul_b: float
    dl_tput_gain: float
    dl_energy_cost: float
    ul_tput_gain: float
    ul_energy_cost: float


def comparisons(summary: pd.DataFrame, opt: pd.DataFrame, values) -> Comparisons:
    """The paper's comparisons on the measured ratio sweep, at the ratios
    the paper compares (published: 100:0, 70:30 and 90:10)."""
    o = opt.set_index(["direction", "demand"])
    dl_best, ul_best = o.loc[("downlink", 0.0)], o.loc[("uplink", 0.0)]
    dl_t = float(dl_best["tput_opt_ratio"])
    against, ul_a, ul_b = values("dl_single_ad_ratio"), values("ul_tput_opt_ratio"), values("ul_energy_opt_ratio")
    return Comparisons(
        dl_t=dl_t, dl_ratio=float(dl_best["energy_opt_both_ratio"]), dl_against=against,
        ul_t=float(ul_best["tput_opt_ratio"]), ul_e=float(ul_best["energy_opt_both_ratio"]), ul_a=ul_a, ul_b=ul_b,
        dl_tput_gain=change_pct(summary, "downlink", dl_t, against, "tput_mbps"),
        dl_energy_cost=change_pct(summary, "downlink", dl_t, against, "nj_per_bit"),
        ul_tput_gain=change_pct(summary, "uplink", ul_a, ul_b, "tput_mbps"),
        ul_energy_cost=change_pct(summary, "uplink", ul_a, ul_b, "nj_per_bit"))


def comparison_facts(c: Comparisons, opt: pd.DataFrame, radio: dict, values) -> dict:
    """Glued values of the backlogged comparisons: the paper's numbers, the
    radio models' per-bit costs, which path the model prefers, and ours."""
    o = opt.set_index(["direction", "demand"])
    facts = {k: f"{values(vid):g}" for k, vid in (("p_dl_gain", "dl_tput_gain_pct"), ("p_dl_cost", "dl_energy_cost_pct"),
                                                 ("p_ul_gain", "ul_tput_gain_pct"), ("p_ul_cost", "ul_energy_cost_pct"))}
    for path, p in (("ad", "a"), ("ac", "b")):
        facts[f"nj_{path}_rx"] = f"{radio['downlink'][p].rx_active_mw / radio['downlink'][p].max_rate_mbps:.1f}"
        facts[f"nj_{path}_tx"] = f"{radio['uplink'][p].tx_active_mw / radio['uplink'][p].max_rate_mbps:.1f}"
    per_bit = {d: {p: (m.rx_active_mw if d == "downlink" else m.tx_active_mw) / m.max_rate_mbps
                   for p, m in radio[d].items()} for d in DIRECTIONS}
    cheaper = {d: min(per_bit[d], key=per_bit[d].get) for d in DIRECTIONS}
    facts["cheaper_path"] = (f"path {cheaper['downlink']} in both directions" if len(set(cheaper.values())) == 1
                             else f"path {cheaper['downlink']} to receive and path {cheaper['uplink']} to send")
    facts.update({"dl_tput_opt": f"{o.loc[('downlink', 0.0), 'tput_opt_ratio']:g}", "dl_energy_opt_both": f"{c.dl_ratio:g}",
                  "dl_energy_opt": f"{o.loc[('downlink', 0.0), 'energy_opt_ratio']:g}",
                  "dl_tput_gain": f"{abs(c.dl_tput_gain):.0f}", "dl_energy_cost": f"{abs(c.dl_energy_cost):.1f}",
                  "ul_tput_opt": f"{c.ul_t:g}", "ul_energy_opt_both": f"{c.ul_e:g}",
                  "ul_energy_opt": f"{o.loc[('uplink', 0.0), 'energy_opt_ratio']:g}",
                  "ul_tput_gain": f"{abs(c.ul_tput_gain):.0f}", "ul_energy_cost": f"{abs(c.ul_energy_cost):.0f}"})
    return facts


def comparison_phrases(c: Comparisons, cis: dict, alpha: float) -> dict:
    """The backlogged comparisons in words (:func:`change_phrase`): each
    direction from its interval in `cis` (:func:`comparison_cis`)."""
    quantity = {"dl_tput_gain": "throughput", "dl_energy_cost": "energy per bit", "ul_tput_gain": "throughput",
                "ul_energy_cost": "energy per bit"}
    facts = {"dl_tput_opt_rest": f"{100 - c.dl_t:g}"}
    for k, q in quantity.items():
        facts[f"{k}_phrase"] = change_phrase(getattr(c, k), cis[k], q, 1)
        facts[f"{k}_ci"] = ci_text(cis[k], alpha)
    return facts


def comparison_cis(sweep: pd.DataFrame, c: Comparisons,
                   ul_excess_ci: tuple[float, float], alpha: float) -> dict[str, tuple[float, float]]:
    """100(1 - alpha)% intervals of the comparisons over the sweep's runs (change_ci) and of the uplink power excess."""
    return {"dl_tput_gain": change_ci(sweep, "tput_eq_mbps", "downlink", 0.0, c.dl_t, c.dl_against, alpha),
            "dl_energy_cost": change_ci(sweep, "nj_per_bit", "downlink", 0.0, c.dl_t, c.dl_against, alpha),
            "ul_tput_gain": change_ci(sweep, "tput_eq_mbps", "uplink", 0.0, c.ul_a, c.ul_b, alpha),
            "ul_energy_cost": change_ci(sweep, "nj_per_bit", "uplink", 0.0, c.ul_a, c.ul_b, alpha),
            "ul_power_excess": ul_excess_ci}


def pair(ratio: float) -> str:
    """A packet ratio as the paper writes it: 73 -> "73:27"."""
    return f"{ratio:g}:{100 - ratio:g}"




def ratios_table(c: Comparisons, ul_excess: float, cis: dict, values) -> pd.DataFrame:
    """The paper's comparisons as ratios (1 + % / 100), ours with its
    interval and the paper's; `key` names each row (dropped when saved)."""
    dl, ul = f"{pair(c.dl_t)} / {pair(c.dl_against)}", f"{pair(c.ul_a)} / {pair(c.ul_b)}"
    ratios = pd.DataFrame([
        {"comparison": f"downlink throughput, {dl}", "key": "dl_tput_gain", "pct": c.dl_tput_gain,
         "paper_pct": values("dl_tput_gain_pct"), "provenance": "measured"},
        {"comparison": f"downlink nJ/bit, {dl}", "key": "dl_energy_cost", "pct": c.dl_energy_cost,
         "paper_pct": values("dl_energy_cost_pct"), "provenance": "modeled"},
        {"comparison": f"uplink throughput, {ul}", "key": "ul_tput_gain", "pct": c.ul_tput_gain,
         "paper_pct": values("ul_tput_gain_pct"), "provenance": "measured"},
        {"comparison": f"uplink nJ/bit, {ul}", "key": "ul_energy_cost", "pct": c.ul_energy_cost,
         "paper_pct": values("ul_energy_cost_pct"), "provenance": "modeled"},
        {"comparison": "power, uplink / downlink (backlogged MPTCP)", "key": "ul_power_excess", "pct": ul_excess,
         "paper_pct": values("ul_power_excess"), "provenance": "modeled"}])
    ratios["ratio"] = 1 + ratios["pct"] / 100
    ratios["low"] = [1 + cis[k][0] / 100 for k in ratios["key"]]
    ratios["high"] = [1 + cis[k][1] / 100 for k in ratios["key"]]
    ratios["paper"] = 1 + ratios["paper_pct"] / 100
    validated(ratios.drop(columns=["key"]), "ratios_vs_paper")
    return ratios


def n_outside(ratios: pd.DataFrame) -> int:
    """Rows whose paper ratio lies outside our interval."""
    return int(((ratios["paper"] < ratios["low"]) | (ratios["paper"] > ratios["high"])).sum())


def demands(summary: pd.DataFrame) -> list[dict[str, float]]:
    """The paced demands of the sweep paired across directions, highest
    first: [{direction: demand}, ...] (as many as the shorter direction has)."""
    per = {d: sorted(x for x in summary.loc[summary["direction"] == d, "demand"].unique() if x > 0)[::-1]
           for d in DIRECTIONS}
    return [{d: per[d][k] for d in DIRECTIONS} for k in range(min(len(x) for x in per.values()))]


PAPER_ENERGY_OPT = (  # (direction, demand value id or None = backlogged, energy-optimal ratio value id)
    ("downlink", "demand_high", "dl_1750_energy_opt"), ("downlink", "demand_mid_dl", "dl_1500_energy_opt"),
    ("downlink", "demand_low", "dl_500_energy_opt"), ("uplink", "demand_high", "ul_1750_energy_opt"),
    ("uplink", "demand_mid_ul", "ul_1400_energy_opt"), ("uplink", "demand_low", "ul_500_energy_opt"))


def paper_energy_optima(values) -> dict[tuple[str, float], float]:
    """The paper's energy-optimal ratio per (direction, demand), 0 = backlogged (§4.2)."""
    paper = {(d, values(dem)): values(vid) for d, dem, vid in PAPER_ENERGY_OPT}
    paper.update({("downlink", 0.0): values("ratio_dl_tput_opt"), ("uplink", 0.0): values("ul_energy_opt_ratio")})
    return paper


def optima_long(opt: pd.DataFrame, oci: pd.DataFrame, paper_e: dict) -> tuple[pd.DataFrame, list[str]]:
    """(long table, cases) for the optima figure: per case (direction and
    demand) the throughput-optimal ratio, the energy-optimal one (two-path
    ratios when backlogged, demand-meeting ones otherwise) with intervals,
    and the paper's energy-optimal ratio."""
    oo = opt.merge(oci, on=["direction", "demand"])
    oo["case"] = [f"{d}, {'backlogged' if m == 0 else f'{m:g} Mbps'}" for d, m in zip(oo["direction"], oo["demand"])]
    long_o = pd.concat([
        oo.assign(optimum="throughput-optimal (measured)", ratio=oo["tput_opt_ratio"], low=oo["tput_opt_ratio_low"],
                  high=oo["tput_opt_ratio_high"]),
        oo.assign(optimum="energy-optimal (modeled)",
                  **{k: np.where(oo["demand"] == 0, oo[f"energy_opt_both_ratio{sfx}"],
                                 oo[f"energy_opt_satisfying_ratio{sfx}"])
                     for k, sfx in (("ratio", ""), ("low", "_low"), ("high", "_high"))}),
        oo.assign(optimum="energy-optimal, paper",
                  ratio=[paper_e.get((d, m), np.nan) for d, m in zip(oo["direction"], oo["demand"])],
                  low=np.nan, high=np.nan)], ignore_index=True)
    return long_o, list(dict.fromkeys(oo["case"]))


def guideline_table(summary: pd.DataFrame, opt: pd.DataFrame, rates_paper: dict,
                    satisfied_frac: float) -> pd.DataFrame:
    """guideline_vs_search at the paper's path rates (from the manifest)."""
    rates_eq = {d: {p: float(rates_paper[d][p]) for p in PATHS} for d in DIRECTIONS}
    return validated(guideline_vs_search(summary, opt, rates_eq, satisfied_frac), "guideline_vs_search")


GUIDELINE_SHOWN = {"demand": "demand (Mbps, 0 = backlogged)", "guideline_ratio": "guideline (% on a)",
                   "grid_ratio": "nearest measured (% on a)", "guideline_mbps": "guideline throughput (Mbps)",
                   "guideline_nj": "guideline energy (nJ/bit)", "meets_demand": "meets the demand",
                   "search_ratio": "search (% on a)", "search_nj": "search energy (nJ/bit)",
                   "search_mbps": "search throughput (Mbps)", "excess_energy_pct": "energy above search (%)",
                   "tput_shortfall_pct": "throughput short of best (%)"}


def guideline_shown(gl: pd.DataFrame) -> pd.DataFrame:
    """guideline_table for people (yes/no, units in headers)."""
    return gl.assign(meets_demand=gl["meets_demand"].map({True: "yes", False: "no"})).rename(columns=GUIDELINE_SHOWN)


def guideline_facts(gl: pd.DataFrame) -> dict:
    """The guideline section's glued values."""
    return {"gl_max_excess": f"{gl.loc[gl['demand'] > 0, 'excess_energy_pct'].max():.0f}",
            "gl_bl_excess": ", ".join(f"{r.direction} {r.excess_energy_pct:.0f}%"
                                      for r in gl[gl["demand"] == 0].itertuples()),
            "gl_max_shortfall": f"{gl['tput_shortfall_pct'].max():.1f}",
            "gl_met": int(gl["meets_demand"].sum()), "gl_n": int(len(gl))}


def floor_table(summary: pd.DataFrame, radio: dict, floors, satisfied_frac: float) -> pd.DataFrame:
    """floor_sensitivity as a wide table: one column "f = <floor>" per floor."""
    sens = floor_sensitivity(summary, radio, [float(f) for f in floors], satisfied_frac)
    wide = sens.pivot(index=["direction", "demand"], columns="floor_frac", values="energy_opt_ratio")
    wide.columns = [f"f = {c:g}" for c in wide.columns]
    return validated(wide.reset_index(), "floor_sensitivity")


def backup_runs(ref_energy: pd.DataFrame) -> pd.DataFrame:
    """The backup-mode comparison's runs with the path carrying the traffic
    ("on path"), the mode, and the other path's throughput."""
    bk = ref_energy[ref_energy["part"] == "backup"].copy()
    bk["on path"] = np.where(((bk["transport"] == "mptcp") & (bk["primary"] == "a")) | (bk["ratio_a_pct"] == 100),
                             "a", "b")
    bk["mode"] = np.where(bk["transport"] == "mptcp", "MPTCP, other path backup", "0 packets on the other path")
    bk["other_path_mbps"] = np.where(bk["on path"] == "a", bk["tput_b_eq_mbps"], bk["tput_a_eq_mbps"])
    return bk


def backup_table(bk: pd.DataFrame) -> pd.DataFrame:
    """Per path, demand and mode: runs, throughput, the other path's mean and
    max throughput, modeled radio and total power."""
    g = bk.groupby(["on path", "demand_mbps", "mode"])
    mean = g[["tput_eq_mbps", "other_path_mbps", "radio_mw", "power_mw"]].mean()  # one pass for the means
    t = pd.DataFrame({"n": g.size(), "tput_mbps": mean["tput_eq_mbps"], "other_path_mbps": mean["other_path_mbps"],
                      "other_path_max_mbps": g["other_path_mbps"].max(), "radio_mw": mean["radio_mw"],
                      "power_mw": mean["power_mw"]}).reset_index()
    return validated(t, "fig8_backup")


BACKUP_SHOWN = {"demand_mbps": "demand (Mbps)", "n": "runs", "tput_mbps": "throughput (Mbps)",
                "other_path_mbps": "other path, mean (Mbps)", "other_path_max_mbps": "other path, max (Mbps)",
                "radio_mw": "radio (mW)", "power_mw": "total power (mW)"}


def backup_diff_pct(bk_sum: pd.DataFrame) -> float:
    """Largest power difference between the two modes of a path and demand, %."""
    power = bk_sum.groupby(["on path", "demand_mbps"])["power_mw"]
    return float((100 * (power.max() / power.min() - 1)).max())


def backup_leak_max(bk_sum: pd.DataFrame) -> str:
    """The most the backup path carried in backup mode (Mbps, 2 decimals)."""
    return f"{bk_sum.loc[bk_sum['mode'].str.startswith('MPTCP'), 'other_path_max_mbps'].max():.2f}"


def sweep_summary(ref_energy: pd.DataFrame) -> pd.DataFrame:
    """ratio_summary validated as tables/ratio_sweep.csv."""
    return validated(ratio_summary(ref_energy), "ratio_sweep")

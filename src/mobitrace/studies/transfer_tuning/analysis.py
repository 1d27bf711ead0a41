"""Everything the transfer-tuning chapter derives from the ingested tables
(Guner & Kosar), kept apart from mobitrace.studies.transfer_tuning.ingest
(which the ingest stage depends on) so that changing the chapter's analysis
does not re-run the ingest:

- energy per run (`modeled_power`, `run_energy`, `energy_table`): a measured
  power trace when the session has one, else a *modeled* trace: for each
  sampling interval (t_{i-1}, t_i], as an averaging power meter reports it,

      P_i = P_base + CPU(client CPU seconds in the interval / dt)
                + radio(interface rx rate + tx rate)

  with one radio for both directions, as the chapter states it (at most its
  active power, 900 mW, whichever way the bytes go),

  with mobitrace.energy.power_models's CpuPowerModel (busy-core power at its
  nominal frequency) and RadioPowerModel (dynamic power above its idle
  power); then the paper's E_d = int (P - P_base) dt over [first request,
  last byte], base power from the idle window before the first request,
  energy per 100 MB and tail energy (mobitrace.energy.integrals). Measured
  logs are read from power.parquet a batch at a time (`measured_power`), so
  a 1 GB trace never sits in memory; its figure draws it thinned;
- summaries along each knob and over the concurrency x parallelism grid,
  with the x-fold throughput and the saving 100 (1 - E / E_base) against
  level 1 (`sweep_summary`, `grid_summary`, `level_value`);
- intervals over repetitions (the kind per n: mobitrace.stats.intervals) of
  the x-fold throughput and the energy ratio (`ratio_ci`);
- the chapter's other tables (`datasets_table`, `power_model_table`,
  `gains_vs_paper`, `cpu_table`, `tail_table`) and figures.

Every results table is validated against
mobitrace.studies.transfer_tuning.schema before it is returned.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from mobitrace.core import capture_reader, host_info
from mobitrace.core import claims as cl
from mobitrace.core.numbers import data_size
from mobitrace.energy import integrals as energy
from mobitrace.energy import power_traces as pt
from mobitrace.stats import resampling as rs
from mobitrace.stats.resampling import SEED
from mobitrace.studies.transfer_tuning import schema

VALUES = ["throughput_mbps", "energy_per_100mb_j"]


def knob_runs(table: pd.DataFrame, factor: str, fixed: dict) -> pd.DataFrame:
    """The sweep runs along one knob with the others held at `fixed`, one
    row per run, with the knob's value as `level` (the runs `sweep_summary`
    averages)."""
    sel = table[_sweep_mask(table, fixed)]
    return sel.assign(factor=factor, level=sel[factor]).reset_index(drop=True)


def _sweep_mask(table: pd.DataFrame, fixed: dict) -> np.ndarray:
    """The sweep runs with the knobs of `fixed` at its values (one mask: one take, not one per knob)."""
    mask = (table["kind"] == "sweep").to_numpy(copy=True)
    for k, v in fixed.items():
        mask &= table[k].to_numpy() == v
    return mask


def ratio_ci(runs: pd.DataFrame, by: list[str], level: str = "level", baseline: dict | None = None,
             n_boot: int = rs.N_BOOT, seed: int = SEED, *, alpha: float) -> pd.DataFrame:
    """Per group of `by` + [`level`]: the throughput ratio to the group's
    baseline (`x_fold`) and the energy ratio (`energy_ratio`, E / E_base,
    below 1 saves energy), each with its 100(1 - alpha)% interval over repetitions
    (`*_low`, `*_high`; `rs.ratio_of_means_ci`: t on the log ratio at few
    repetitions, none below MIN_N), and the saving 100 (1 - energy ratio)
    with its interval. The baseline is the row where the columns of
    `baseline` have the given values, or, by default, the lowest `level`;
    its own ratios are exactly 1."""
    keys = [*by, level] if isinstance(level, str) else [*by, *level]
    values = {k if isinstance(k, tuple) else (k,): g for k, g in runs.groupby(keys, sort=True)[VALUES]}
    means = runs.groupby(keys)[VALUES].mean()
    rows = []
    for key, g in means.groupby(level=list(range(len(by))), sort=True):
        if baseline is None:
            base_key = g.index[0]
        else:
            idx = g.index.to_frame(index=False)
            mask = np.logical_and.reduce([idx[k] == v for k, v in baseline.items()])
            base_key = g.index[np.flatnonzero(mask)[0]]
        for k in g.index:
            row = dict(zip(means.index.names, k))
            for name, col in (("x_fold", "throughput_mbps"), ("energy_ratio", "energy_per_100mb_j")):
                row[name] = means.loc[k, col] / means.loc[base_key, col]
                row[f"{name}_low"], row[f"{name}_high"] = (
                    (1.0, 1.0) if k == base_key else
                    rs.ratio_of_means_ci(values[_tuple(k)][col], values[_tuple(base_key)][col], alpha, n_boot, seed))
            row["saving_pct"] = 100 * (1 - row["energy_ratio"])
            row["saving_pct_low"], row["saving_pct_high"] = 100 * (1 - row["energy_ratio_high"]), 100 * (1 - row["energy_ratio_low"])
            rows.append(row)
    return pd.DataFrame(rows)


def clean_runs(table: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(kept, left out): a run the capture's idle gate flagged (host load
    outside the experiment above the gate's limit during the run) is left
    out of every summary, figure and claim. A run of a capture made before
    the gate (no record) is kept."""
    flagged = table["gate_flagged"].fillna(False).astype(bool).to_numpy()
    return table[~flagged].reset_index(drop=True), table[flagged].reset_index(drop=True)


def device_claim_id(claim: str, device: str) -> str:
    """A claim checked on one device, as the ledger names it
    (cc_html_xfold on vm-veth-a -> cc_html_xfold_vm_veth_a)."""
    return f"{claim}_{device.replace('-', '_')}"


# Claims about no device: every device's claims table is the same for them.
STUDY_CLAIMS = ("lte_tail_longer",)
def _tuple(key) -> tuple:
    return key if isinstance(key, tuple) else (key,)


def ratios_table(knob_runs_: pd.DataFrame, device: str, knobs, alpha: float) -> pd.DataFrame:
    """`ratio_ci` of every knob in `knobs` on one device (runs of
    `knob_runs`), by device, factor and dataset: the table ratios_ci."""
    sel = knob_runs_[knob_runs_["device"] == device]
    out = pd.concat([ratio_ci(sel[sel["factor"] == f], ["device", "factor", "dataset"], alpha=alpha) for f in knobs],
                    ignore_index=True)
    return schema.RATIOS_CI.validate(out)


DATASETS = list(schema.DATASETS)


def power_trace(row, measured: dict, samples: pd.DataFrame, cpu, radio, base_w: float):
    """The power trace (t, P) of one run (a row of `energy_table`): the
    measured power log where the run has one (`measured`: measured_power's,
    thinned to at most TRACE_POINTS samples), else the modeled trace from
    its samples."""
    if row.energy_source == "measured":
        m = measured[(row.device, row.run_id)]
        return m.t, m.p
    s = samples[(samples["device"] == row.device) & (samples["run_id"] == row.run_id)]
    return modeled_power(s, cpu, radio, base_w)


# --------------------------------------------------------------------------- #
# Inputs


def load_interim(interim_dir: str | Path, devices: list[str]) -> dict[str, pd.DataFrame]:
    """The ingested tables of `devices` (runs, samples, sessions;
    mobitrace.studies.transfer_tuning.schema.INTERIM), devices concatenated.
    The power logs are not loaded: measured_power streams power_paths."""
    return {name: pd.concat([pd.read_parquet(Path(interim_dir) / d / f"{name}.parquet") for d in devices],
                            ignore_index=True) for name in ("runs", "samples", "sessions")}


def power_paths(interim_dir: str | Path, devices: list[str]) -> list[Path]:
    """The power.parquet of each of `devices` (for measured_power)."""
    return [Path(interim_dir) / d / "power.parquet" for d in devices]


def session_manifest(sessions: pd.DataFrame, device: str) -> dict:
    """The manifest of the first session of `device` (sessions.parquet)."""
    return json.loads(sessions.loc[sessions["device"] == device, "manifest_json"].iloc[0])


def delay_element(conf: dict) -> str:
    """The RTT emulator a capture names in configuration.rtt_method (the
    delay bridge's source file), or the method as written."""
    method = str(conf.get("rtt_method", "not recorded"))
    found = re.search(r"delay_bridge\.\w+", method)
    return found.group(0) if found else method


def achieved_text(runs: pd.DataFrame, rate_mbit: float) -> str:
    """The rates a capture's runs reached beside the configured link rate:
    the link's peak at the client's interface and the application goodput
    (both as the kit measured them; captures before 2026-11-23 lack them)."""
    peak, goodput = runs["link_peak_mbit"].dropna(), runs["achieved_mbit"].dropna()
    if peak.empty or goodput.empty:
        return f"not recorded by this capture (configured {rate_mbit:g} Mbps)"
    return (f"the link peaked at {peak.max():.1f} Mbps at the client's interface (configured {rate_mbit:g}); "
            f"a run's goodput, HTTP body bytes from the first request to the last byte, had median "
            f"{goodput.median():.1f} and maximum {goodput.max():.1f} Mbps")


# --------------------------------------------------------------------------- #
# Energy


@dataclass(frozen=True)
class RunRates:
    """What the power model reads from one run's samples, which no
    coefficient changes: the sample times t (s) and, over each interval
    (t_{i-1}, t_i], the client's CPU share and the interface rates (Mbps)."""

    t: np.ndarray
    cpu_share: np.ndarray
    rx_mbps: np.ndarray
    tx_mbps: np.ndarray


def run_rates(samples: pd.DataFrame) -> RunRates:
    """The RunRates of one run's samples."""
    t = samples["t_ns"].to_numpy(float) / 1e9
    dt = np.diff(t)
    return RunRates(t, np.diff(samples["client_cpu_ns"].to_numpy(float)) / 1e9 / dt,
                    8 * np.diff(samples["if_rx_bytes"].to_numpy(float)) / dt / 1e6,
                    8 * np.diff(samples["if_tx_bytes"].to_numpy(float)) / dt / 1e6)


def rates_by_run(samples: pd.DataFrame) -> dict[tuple[str, str], RunRates]:
    """{(device, run_id): RunRates} of every run in `samples`: computed once,
    for pricing the runs at many coefficients (the robustness analysis)."""
    return {k: run_rates(g) for k, g in samples.groupby(["device", "run_id"], sort=False)}


def modeled_power(samples: pd.DataFrame | RunRates, cpu, radio, base_w: float) -> tuple[np.ndarray, np.ndarray]:
    """A modeled power-meter trace (t in s, P in W) from one run's samples
    (or their RunRates):
    P_i over (t_{i-1}, t_i] = base + cpu busy-core power x client CPU share
    + the dynamic power of one radio at the interface's rx + tx rate
    (RadioPowerModel.one_radio_dynamic_mw; see module doc).
    The first sample has no interval before it and gets P_base."""
    r = samples if isinstance(samples, RunRates) else run_rates(samples)
    p_mw = (cpu.energy_from_cpu_seconds_mj(r.cpu_share)  # mJ per s of CPU = mW at share
            + radio.one_radio_dynamic_mw(r.rx_mbps, r.tx_mbps))
    p = np.concatenate(([base_w], base_w + p_mw / 1e3))
    return r.t, p


def _energy(se: energy.StreamingRunEnergy, t_start: float, t_end: float, nbytes: int) -> dict:
    base, e_d, tail = se.result()
    return {"base_w": base, "energy_j": e_d, "energy_per_100mb_j": float(energy.energy_per_100mb(e_d, nbytes)),
            "mean_power_w": base + e_d / (t_end - t_start), "tail_j": tail.energy_j, "tail_s": tail.duration_s,
            "tail_ended": tail.ended}


def run_energy(t, p, t_start: float, t_end: float, nbytes: int, tail_tolerance_w: float) -> dict:
    """Base power (idle window before t_start), E_d over [t_start, t_end],
    energy per 100 MB, tail after t_end; energies in J (the trace as one
    chunk of energy.StreamingRunEnergy, which measured_power feeds in chunks)."""
    se = energy.StreamingRunEnergy(t_start, t_end, tail_tolerance_w)
    se.feed(t, p)
    return _energy(se, t_start, t_end, nbytes)


TRACE_POINTS = 4000        # a drawn measured power trace keeps at most this many samples per run
POWER_BATCH_ROWS = 250_000  # rows of power.parquet in memory at once


@dataclass
class MeasuredRun:
    """A run's measured power log, read once as a stream: its run_energy
    numbers and the trace thinned for drawing (MinMaxThinner)."""

    energy: dict
    t: np.ndarray
    p: np.ndarray


def power_segments(power) -> Iterator[tuple[str, str, np.ndarray, np.ndarray]]:
    """(device, run_id, t_s, power_w) of consecutive rows of one run, from a
    power table (DataFrame) or from power.parquet files (paths), these read
    POWER_BATCH_ROWS rows at a time: a 1 GB trace never sits in memory."""
    cols = ["device", "run_id", "t_s", "power_w"]
    if isinstance(power, pd.DataFrame):
        frames = [power[cols]]
    else:
        # pre_buffer off: pyarrow would otherwise keep the file's column chunks cached (peak grows with
        # the file); names as dictionaries: a few strings per batch, not one object per row
        frames = (b.to_pandas() for path in power
                  for b in pq.ParquetFile(path, pre_buffer=False, read_dictionary=["device", "run_id"])
                  .iter_batches(batch_size=POWER_BATCH_ROWS, columns=cols))
    for f in frames:
        if not len(f):
            continue
        (dev, dev_names), (run, run_names) = pd.factorize(f["device"]), pd.factorize(f["run_id"])  # codes
        t, p = f["t_s"].to_numpy(float), f["power_w"].to_numpy(float)
        cut = np.r_[0, np.flatnonzero((dev[1:] != dev[:-1]) | (run[1:] != run[:-1])) + 1, len(f)]
        for a, b in zip(cut[:-1], cut[1:]):
            yield str(dev_names[dev[a]]), str(run_names[run[a]]), t[a:b], p[a:b]


def measured_power(runs: pd.DataFrame, power, tail_tolerance_w: float,
                   max_points: int = TRACE_POINTS) -> dict[tuple[str, str], MeasuredRun]:
    """{(device, run_id): MeasuredRun} for every run of `runs` with a
    measured power log in `power` (see power_segments), in one streaming
    pass: memory is one batch plus max_points samples per run."""
    clock = {(r.device, r.run_id): r for r in runs.itertuples(index=False)}
    state = {}
    for device, run_id, t, p in power_segments(power):
        key = (device, run_id)
        if key not in clock:
            continue
        if key not in state:
            r = clock[key]
            state[key] = (energy.StreamingRunEnergy(r.t_start_s, r.t_end_s, tail_tolerance_w),
                          pt.MinMaxThinner(max_points))
        for consumer in state[key]:
            consumer.feed(t, p)
    out = {}
    for key, (se, thin) in state.items():
        r = clock[key]
        out[key] = MeasuredRun(_energy(se, r.t_start_s, r.t_end_s, r.bytes), *thin.result())
    return out


def energy_table(runs: pd.DataFrame, samples: pd.DataFrame | dict, power, cpu, radio,
                 base_w: float, tail_tolerance_w: float) -> pd.DataFrame:
    """run_energy for every run: from its measured power trace when there is
    one (energy_source 'measured'; `power`: a measured_power result, or what
    measured_power reads), else from modeled_power ('modeled'; `samples`:
    the samples table, or its rates_by_run)."""
    rows = []
    by_run = samples if isinstance(samples, dict) else rates_by_run(samples)
    meas = power if isinstance(power, dict) else measured_power(runs, power, tail_tolerance_w)
    for r in runs[["device", "run_id", "t_start_s", "t_end_s", "bytes"]].itertuples(index=False):  # what it reads
        key = (r.device, r.run_id)
        if key in meas:
            e, src = meas[key].energy, "measured"
        else:
            t, p = modeled_power(by_run[key], cpu, radio, base_w)
            e, src = run_energy(t, p, r.t_start_s, r.t_end_s, r.bytes, tail_tolerance_w), "modeled"
        rows.append({"device": r.device, "run_id": r.run_id, "energy_source": src, **e})
    out = runs.merge(pd.DataFrame(rows), on=["device", "run_id"], how="left", validate="one_to_one")
    return schema.ENERGY_TABLE.validate(out)


def runs_energy(table: pd.DataFrame) -> pd.DataFrame:
    """The table runs_energy: `energy_table` without the run's clock times."""
    return schema.RUNS_ENERGY.validate(table.drop(columns=["t_start_s", "t_end_s"]))


def energy_kind(table: pd.DataFrame) -> str:
    """'measured' or 'modeled' when every run's energy is, else 'measured and modeled'."""
    src = table["energy_source"]
    return "measured" if (src == "measured").all() else (
        "modeled" if (src == "modeled").all() else "measured and modeled")


# --------------------------------------------------------------------------- #
# Summaries


def sweep_summary(table: pd.DataFrame, factor: str, fixed: dict) -> pd.DataFrame:
    """Mean and SD over repetitions of throughput and energy per 100 MB along
    one factor (others fixed), per device and dataset, with the x-fold
    throughput and the energy saving % relative to the factor's level 1
    (saving = 100 (1 - E(level) / E(1)), the paper's "reduced energy by x%")."""
    sel = table[_sweep_mask(table, fixed)]
    g = sel.groupby(["device", "dataset", factor])
    # one mean and one std over the columns (named aggregations cost several times more)
    mean = g[["throughput_mbps", "energy_per_100mb_j", "client_cpu_s"]].mean()
    sd = g[["throughput_mbps", "energy_per_100mb_j"]].std()
    out = pd.DataFrame({"n": g.size(), "throughput_mbps": mean["throughput_mbps"],
                        "throughput_sd": sd["throughput_mbps"], "energy_per_100mb_j": mean["energy_per_100mb_j"],
                        "energy_sd": sd["energy_per_100mb_j"], "client_cpu_s": mean["client_cpu_s"]}).reset_index()
    # the lowest level's row, the first of each device and dataset (groupby sorts by level)
    ref = out.groupby(["device", "dataset"])[["throughput_mbps", "energy_per_100mb_j"]].transform("first",
                                                                                                 skipna=False)
    out["x_fold"] = out["throughput_mbps"].to_numpy() / ref["throughput_mbps"].to_numpy()
    out["saving_pct"] = 100 * (1 - out["energy_per_100mb_j"].to_numpy() / ref["energy_per_100mb_j"].to_numpy())
    out.insert(2, "factor", factor)
    return schema.SWEEP.validate(out.rename(columns={factor: "level"}))


def knobs(default_io_kib: int) -> dict[str, dict]:
    """The paper's one-knob sweeps: each knob with the others held at
    concurrency 1, parallelism 1 and `default_io_kib`."""
    return {"concurrency": {"parallelism": 1, "io_kib": default_io_kib},
            "parallelism": {"concurrency": 1, "io_kib": default_io_kib},
            "io_kib": {"concurrency": 1, "parallelism": 1}}


def level_value(sweep: pd.DataFrame, dataset: str, level: int, col: str) -> float:
    """Column `col` of a `sweep_summary` (one device) at `dataset` and `level`; NaN when absent."""
    hit = np.flatnonzero((sweep["dataset"].to_numpy() == dataset) & (sweep["level"].to_numpy() == level))
    return float(sweep[col].iloc[hit[0]]) if len(hit) else float("nan")


def best_level(sweep: pd.DataFrame, dataset: str) -> pd.Series:
    """The row of a `sweep_summary` (one device) with the largest x-fold for `dataset`."""
    return sweep[sweep["dataset"] == dataset].sort_values("x_fold").iloc[-1]


def grid_runs(table: pd.DataFrame, levels, io_kib: int) -> pd.DataFrame:
    """The sweep runs at I/O size `io_kib` with concurrency and parallelism both in `levels`."""
    return table[(table["kind"] == "sweep") & (table["io_kib"] == io_kib)
                 & table["concurrency"].isin(levels) & table["parallelism"].isin(levels)]


def grid_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Means over repetitions per device, dataset, concurrency and
    parallelism (runs of `grid_runs`), with the x-fold throughput and the
    saving % against concurrency 1, parallelism 1: the table grid."""
    g = runs.groupby(["device", "dataset", "concurrency", "parallelism"])
    grid = g[["throughput_mbps", "energy_per_100mb_j"]].mean()  # one mean over both (see sweep_summary)
    grid.insert(0, "n", g.size())
    grid = grid.reset_index()
    base = grid[(grid["concurrency"] == 1) & (grid["parallelism"] == 1)].set_index(["device", "dataset"])
    key = pd.MultiIndex.from_frame(grid[["device", "dataset"]])
    grid["x_fold"] = grid["throughput_mbps"].to_numpy() / base["throughput_mbps"].reindex(key).to_numpy()
    grid["saving_pct"] = 100 * (1 - grid["energy_per_100mb_j"].to_numpy()
                                / base["energy_per_100mb_j"].reindex(key).to_numpy())
    return schema.GRID.validate(grid)


def cpu_table(table: pd.DataFrame, device: str, io_kib: int) -> pd.DataFrame:
    """CPU during the transfer along the concurrency sweep (parallelism 1,
    I/O size `io_kib`) of `device`, means over repetitions: the client's and
    nginx's CPU in % of one CPU (CPU seconds / transfer seconds), the
    client's CPU ms per MB and /proc/stat busy %: the table cpu_concurrency."""
    t = table[(table["device"] == device) & (table["kind"] == "sweep") & (table["parallelism"] == 1)
              & (table["io_kib"] == io_kib)]
    t = (t.assign(client_pct=100 * t["client_cpu_s"] / t["transfer_s"],
                  nginx_pct=100 * t["server_cpu_s"] / t["transfer_s"],
                  client_ms_per_mb=1e3 * t["client_cpu_s"] / (t["bytes"] / 1e6))
         .groupby(["dataset", "concurrency"])
         .agg(runs=("rep", "size"), client_pct=("client_pct", "mean"), nginx_pct=("nginx_pct", "mean"),
              client_ms_per_mb=("client_ms_per_mb", "mean"), proc_stat_busy_pct=("stat_busy_pct", "mean"))
         .reset_index())
    t.insert(0, "device", device)
    return schema.CPU_CONCURRENCY.validate(t)


TAIL_CASES = {(1, 1): "one file", (2, 1): "two files back to back", (2, 2): "two files at once"}


def tail_runs(table: pd.DataFrame, device: str) -> pd.DataFrame:
    """The tail runs of `device`, by repetition, files and concurrency."""
    return table[(table["device"] == device) & (table["kind"] == "tail")].sort_values(["rep", "files",
                                                                                       "concurrency"])


def tail_table(tails: pd.DataFrame, device: str) -> pd.DataFrame:
    """Means over repetitions per case (TAIL_CASES by files and concurrency)
    of transfer time, transfer energy E_d, tail energy, tail time and the
    tail's share 100 tail / (tail + E_d): the table tail_<device>."""
    t = tails.assign(case=[TAIL_CASES.get((f, c), "") for f, c in zip(tails["files"], tails["concurrency"])],
                     tail_share_pct=100 * tails["tail_j"] / (tails["tail_j"] + tails["energy_j"]))
    t = (t.groupby("case", sort=False)
         .agg(runs=("rep", "size"), transfer_s=("transfer_s", "mean"), energy_j=("energy_j", "mean"),
              tail_j=("tail_j", "mean"), tail_s=("tail_s", "mean"),
              tail_share_pct=("tail_share_pct", "mean")).reset_index())
    return schema.TAIL.validate(t.assign(device=device))


# --------------------------------------------------------------------------- #
# One row per device


def devices_table(analysis: dict, kept: pd.DataFrame, left_out: pd.DataFrame, sessions: pd.DataFrame,
                  ref_device: str) -> pd.DataFrame:
    """The cross-device comparison: per device of `analysis` (`analysis_at`)
    the runs analysed (`kept`) and left out by the idle gate, whether its
    capture had the gate, its repetitions, and at the concurrency level its
    claims compare the x-fold throughput and the energy saving per dataset
    with their bootstrap intervals: the table devices."""
    ratios = analysis["ratios"].set_index(["device", "factor", "dataset", "level"])
    rows = []
    for device, a in analysis["devices"].items():
        manifest = session_manifest(sessions, device)
        row = {"device": device, "reference": device == ref_device,
               "runs": int((kept["device"] == device).sum()), "left_out": int((left_out["device"] == device).sum()),
               "gated": manifest.get("idle_gate") is not None,
               "repetitions": int(manifest["configuration"]["repetitions"]), "concurrency": int(a["cc_top"])}
        for ds in DATASETS:
            key = (device, "concurrency", ds, a["cc_top"])
            for m in ("x_fold", "saving_pct"):
                found = key in ratios.index
                row[f"{ds}_{m}"] = level_value(a["ref"]["concurrency"], ds, a["cc_top"], m)
                row[f"{ds}_{m}_low"] = float(ratios.loc[key, f"{m}_low"]) if found else float("nan")
                row[f"{ds}_{m}_high"] = float(ratios.loc[key, f"{m}_high"]) if found else float("nan")
        rows.append(row)
    return schema.DEVICES.validate(pd.DataFrame(rows))


def captures_table(sessions: pd.DataFrame, kept: pd.DataFrame, left_out: pd.DataFrame,
                   devices: list[str]) -> pd.DataFrame:
    """The run conditions of each device's capture (its first session's
    manifest): sessions, host CPU and kernel, link rate, RTT, the client's
    receive buffer, repetitions, runs analysed and left out, and the idle
    gate's record of the load outside the experiment: the table captures."""
    rows = []
    for device in devices:
        m = session_manifest(sessions, device)
        host, conf = host_info.host_metadata(m, "manifest.yaml"), m["configuration"]
        cpu = host.get("cpu_model")
        rows.append({
            "device": device, "sessions": ", ".join(sessions.loc[sessions["device"] == device, "session"]),
            "cpu": ", ".join(dict.fromkeys(cpu)) if isinstance(cpu, list) else str(cpu),
            "kernel": str(host.get("kernel")), "rate_mbit": float(conf["link"]["rate_mbit"]),
            "rtt_ms": float(conf["rtt_ms"]), "rmem_kib": conf["client_tcp_rmem_max"] / 1024,
            "repetitions": int(conf["repetitions"]), "runs": int((kept["device"] == device).sum()),
            "left_out": int((left_out["device"] == device).sum()),
            "background": capture_reader.background_text(capture_reader.background_load(m))})
    return schema.CAPTURES.validate(pd.DataFrame(rows))


# --------------------------------------------------------------------------- #
# Tables against the paper


def datasets_table(values, served: dict, table: pd.DataFrame, device: str) -> pd.DataFrame:
    """Table 2 (published: files and size range of each dataset, `values` a
    mobitrace.core.published.Values) beside what the kit served (`served`:
    the manifest's configuration.datasets) and the bytes of the largest
    sweep run of `device` in MB: the table datasets."""
    rows = []
    for name in DATASETS:
        d = served.get(name)
        if d is None:
            continue
        rows.append({"device": device, "dataset": name, "paper files": int(values(f"{name}_files")),
                     "paper sizes": paper_sizes(values, name),
                     "served files": d["files"], "served sizes": f"{data_size(d['min_kib'] * 1024)} to {data_size(d['max_kib'] * 1024)}",
                     "served total (MB)": round(table.loc[(table["dataset"] == name) & (table["kind"] == "sweep")
                                                          & (table["device"] == device), "bytes"].max() / 1e6, 2)})
    return schema.DATASETS_TABLE.validate(pd.DataFrame(rows))


def paper_sizes(values, name: str) -> str:
    """Table 2's size range of dataset `name`, e.g. '102-153 kB'."""
    return f"{values(name + '_min'):g}-{values(name + '_max'):g} {values.row(name + '_min')['unit']}"


def power_model_table(cpu, radio, base_w: float) -> pd.DataFrame:
    """The power model behind every modeled energy: base, CPU and radio
    components with their formula, coefficients, provenance and source."""
    return schema.POWER_MODEL.validate(pd.DataFrame([
        {"component": "base (subtracted again by E_d)", "model": "constant", "coefficients": f"{base_w * 1e3:g} mW",
         "provenance": "published", "source": "Zhu et al. HotNets'16 §2.1 (seed 003): S3 idle power"},
        {"component": f"CPU ({cpu.name})", "model": "P = u (k_f f + k_0)",
         "coefficients": f"k_f={cpu.mw_per_ghz:g} mW/GHz, k_0={cpu.mw_at_zero_ghz:g} mW, f={cpu.nominal_ghz:g} GHz",
         "provenance": cpu.provenance, "source": cpu.source},
        {"component": f"radio ({radio.name}), one for both directions",
         "model": "P = (P_active - P_idle) min(1, (r_rx + r_tx) / r_max)",
         "coefficients": f"P_active={radio.rx_active_mw:g} mW, P_idle={radio.idle_mw:g} mW, "
                         f"r_max={radio.max_rate_mbps:g} Mbps",
         "provenance": radio.provenance, "source": radio.source},
    ]))


def gains_vs_paper(values, sweeps: dict[str, pd.DataFrame], ratios: pd.DataFrame, cc_top: int,
                   device: str) -> pd.DataFrame:
    """The paper's x-fold and saving (§4, Figure 2 prose: concurrency 1 to 16
    per dataset, the best parallelism for video) beside ours on `device`
    (`sweeps`: its `sweep_summary` per knob; concurrency at `cc_top`), with
    the bootstrap intervals of `ratios` (its `ratios_table`): its rows of
    the table gains_vs_paper."""
    comp = []
    for ds in DATASETS:
        comp.append({"device": device, "dataset": ds, "knob": f"concurrency 1 -> {cc_top}", "key": ("concurrency", ds, cc_top),
                     "paper x-fold": values(f"cc_{ds}_xfold"),
                     "artifact x-fold": level_value(sweeps["concurrency"], ds, cc_top, "x_fold"),
                     "paper saving %": values(f"cc_{ds}_saving"),
                     "artifact saving %": level_value(sweeps["concurrency"], ds, cc_top, "saving_pct")})
    p_best = best_level(sweeps["parallelism"], "video")
    comp.append({"device": device, "dataset": "video", "knob": f"parallelism 1 -> {int(p_best['level'])} (best)",
                 "key": ("parallelism", "video", int(p_best["level"])),
                 "paper x-fold": values("p_video_xfold"), "artifact x-fold": float(p_best["x_fold"]),
                 "paper saving %": values("p_video_saving"), "artifact saving %": float(p_best["saving_pct"])})
    comp = pd.DataFrame(comp)
    idx = ratios.set_index(["factor", "dataset", "level"])
    for col in ("x_fold_low", "x_fold_high", "saving_pct_low", "saving_pct_high", "energy_ratio",
                "energy_ratio_low", "energy_ratio_high"):
        comp[col] = [float(idx.loc[k, col]) for k in comp["key"]]
    return schema.GAINS_VS_PAPER.validate(comp.drop(columns=["key"]))


def interval_of(ratios: pd.DataFrame, key: tuple, col: str) -> tuple[float, float] | None:
    """(low, high) of `col` ('x_fold' or 'saving_pct') at `key`, an index of
    `ratios` ((factor, dataset, level) or (dataset, concurrency, parallelism)
    as `ratios` is indexed); None when `key` is not there."""
    if key not in ratios.index:
        return None
    return float(ratios.loc[key, f"{col}_low"]), float(ratios.loc[key, f"{col}_high"])


def claim_intervals(ratios: pd.DataFrame, grid_ci: pd.DataFrame, cc_top: int, p_video_best: int,
                    reduce_level: int, grid_best: pd.Series, grid_top_x: pd.Series) -> dict:
    """The bootstrap interval behind each claim with one: `ratios` is
    `ratios_table` indexed by factor, dataset, level; `grid_ci` is
    `ratio_ci` of the grid indexed by dataset, concurrency, parallelism;
    `grid_best` and `grid_top_x` the grid rows with the largest saving and
    x-fold."""
    cc = {ds: ("concurrency", ds, cc_top) for ds in DATASETS}
    out = {**{f"cc_{ds}_xfold": interval_of(ratios, k, "x_fold") for ds, k in cc.items()},
           **{f"cc_{ds}_helps": interval_of(ratios, k, "x_fold") for ds, k in cc.items()},
           **{f"cc_{ds}_saving": interval_of(ratios, k, "saving_pct") for ds, k in cc.items()}}
    for ds in ("html", "image"):
        ci = interval_of(ratios, ("parallelism", ds, reduce_level), "x_fold")
        if ci is not None:
            out[f"p8_{ds}_reduces"] = ci
    out["p_video_xfold"] = interval_of(ratios, ("parallelism", "video", p_video_best), "x_fold")
    for name, row, col in (("combined_saving", grid_best, "saving_pct"), ("combined_xfold", grid_top_x, "x_fold")):
        out[name] = interval_of(grid_ci, (row["dataset"], row["concurrency"], row["parallelism"]), col)
    return {k: v for k, v in out.items() if v is not None}


def device_analysis(sweep: dict, knob_runs_: pd.DataFrame, grid: pd.DataFrame,
                    g_runs: pd.DataFrame, values, *, device: str, knob_levels: dict, claim_level: int,
                    study: str, kind: str, rel_tol: float, alpha: float, intervals: dict | None = None) -> dict:
    """One device's part of `analysis_at`: its sweeps, the concurrency level
    the claims compare (`claim_level` or its highest captured), its best
    parallelism for video, its grid rows and best cells, its bootstrap
    intervals (`ratios_table`, the grid's `ratio_ci`; skipped when
    `intervals` is given) and its claims, ids by `device_claim_id`."""
    ref = {k: f[f["device"] == device] for k, f in sweep.items()}
    cc_top = min(claim_level, int(ref["concurrency"]["level"].max()))
    p_best = best_level(ref["parallelism"], "video")
    gref = grid[grid["device"] == device]
    best, top_x = gref.sort_values("saving_pct").iloc[-1], gref.sort_values("x_fold").iloc[-1]
    ratios = gci = None
    if intervals is None:
        ratios = ratios_table(knob_runs_, device, knob_levels, alpha)
        gci = ratio_ci(g_runs[g_runs["device"] == device], ["device", "dataset"],
                       level=["concurrency", "parallelism"], baseline={"concurrency": 1, "parallelism": 1},
                       alpha=alpha).set_index(["dataset", "concurrency", "parallelism"])
        intervals = claim_intervals(ratios.set_index(["factor", "dataset", "level"]), gci, cc_top,
                                    int(p_best["level"]), int(values("p_reduce_level")), best, top_x)
        intervals = {device_claim_id(k, device): v for k, v in intervals.items()}
    claims = chapter_claims(values, ref, grid_ref=gref, best=best, p_best=p_best, cc_top=cc_top, kind=kind,
                            intervals=intervals, study=study, device=device, rel_tol=rel_tol, alpha=alpha)
    return {"ref": ref, "cc_top": cc_top, "p_best": p_best, "grid_ref": gref, "best": best, "top_x": top_x,
            "ratios": ratios, "grid_ci": gci, "intervals": intervals, "claims": claims}


def analysis_at(table: pd.DataFrame, values, *, study: str, devices: list[str], io_kib: int, grid_levels,
                claim_level: int, rel_tol: float, alpha: float, intervals: dict | None = None) -> dict:
    """The one path from the runs' energies (`table`, `energy_table` of the
    runs kept by `clean_runs`) to the chapter's claims: the one-knob sweeps
    and their runs and the grid (every device), then `device_analysis` of
    each of `devices` (the first is the reference device): "devices" maps
    each to its results; "ratios" (every device's `ratios_table`),
    "intervals" and "claims" gather them (the study-wide claims once). The
    chapter calls it with the energies at the assumed coefficients; the
    robustness analysis at others, passing `intervals` (the intervals of
    measured throughput, which the coefficients do not move) so that the
    bootstrap is not redrawn (its inputs, "knob_runs" and "ratios", are then None)."""
    kind = energy_kind(table)
    knob_levels = knobs(io_kib)
    sweep = {name: sweep_summary(table, name, fixed) for name, fixed in knob_levels.items()}
    knob_runs_ = None if intervals is not None else pd.concat(  # only the intervals read them
        [knob_runs(table, name, fixed) for name, fixed in knob_levels.items()], ignore_index=True)
    g_runs = grid_runs(table, sorted(set(grid_levels)), io_kib)
    grid = grid_summary(g_runs)
    per = {d: device_analysis(sweep, knob_runs_, grid, g_runs, values, device=d, knob_levels=knob_levels,
                              claim_level=claim_level, study=study, kind=kind, rel_tol=rel_tol, alpha=alpha,
                              intervals=intervals) for d in devices}
    claims = pd.concat([per[d]["claims"] for d in devices] + [study_claims(values, study)], ignore_index=True)
    ratios = None if intervals is not None else pd.concat([per[d]["ratios"] for d in devices], ignore_index=True)
    return {"kind": kind, "knobs": knob_levels, "sweep": sweep, "knob_runs": knob_runs_, "grid": grid,
            "devices": per, "ratios": ratios, "claims": cl.claims_frame(claims.to_dict("records")),
            "intervals": {k: v for d in devices for k, v in per[d]["intervals"].items()}}


def measured_intervals(intervals: dict, claims: pd.DataFrame) -> dict:
    """The intervals of the claims whose provenance is measured (they do not
    move with the power coefficients)."""
    measured = set(claims.loc[claims["provenance"] == "measured", "claim_id"])
    return {k: v for k, v in intervals.items() if k in measured}


def chapter_claims(values, ref: dict[str, pd.DataFrame], *, grid_ref: pd.DataFrame, best: pd.Series,
                   p_best: pd.Series, cc_top: int, kind: str, intervals: dict, study: str, device: str,
                   rel_tol: float, alpha: float) -> pd.DataFrame:
    """The claims checked on one device (mobitrace.core.claims.Claims, ids
    by `device_claim_id`) from its sweeps `ref`, grid rows, best grid cell
    for saving, best parallelism for video, the compared concurrency level
    and the claims' intervals (`claim_intervals`, keyed by those ids)."""
    v = values

    def at(factor, ds, level, col):
        return level_value(ref[factor], ds, level, col)

    claims = DeviceClaims(study, device, alpha)
    src = f"on {device}"
    cc_level, p8 = v("cc_level"), int(v("p_reduce_level"))
    sweeps = "transfer-tuning-sweeps"
    # Bounds are decided on their 100(1 - alpha)% intervals: at n = 2 repetitions a
    # point estimate on the right side of 1 alone would overclaim.
    for ds in DATASETS:
        claims.add(f"cc_{ds}_xfold", f"Concurrency 1 to {cc_level:g} multiplies {ds} throughput by "
                                     f"{v(f'cc_{ds}_xfold'):g}",
                   location=v.row(f"cc_{ds}_xfold")["location"], relation="~", paper=v(f"cc_{ds}_xfold"),
                   artifact=at("concurrency", ds, cc_top, "x_fold"), unit="x",
                   basis=f"measured x-fold at concurrency {cc_top}, {src}", provenance="measured", section=sweeps,
                   rel_tol=rel_tol)
        claims.add(f"cc_{ds}_saving", f"Concurrency 1 to {cc_level:g} saves {v(f'cc_{ds}_saving'):g}% energy per "
                                      f"100 MB ({ds})",
                   location=v.row(f"cc_{ds}_saving")["location"], relation="~", paper=v(f"cc_{ds}_saving"),
                   artifact=at("concurrency", ds, cc_top, "saving_pct"), unit="%",
                   basis=f"{kind} saving at concurrency {cc_top}, {src}",
                   provenance=kind if kind != "measured and modeled" else "modeled", section=sweeps,
                   rel_tol=rel_tol)
        claims.add(f"cc_{ds}_helps", f"Concurrency raises {ds} throughput", location="§4; lessons",
                   relation=">", paper=1.0, artifact=at("concurrency", ds, cc_top, "x_fold"), unit="x",
                   basis=f"measured x-fold at concurrency {cc_top}, {src}", provenance="measured", section=sweeps,
                   interval=intervals.get(device_claim_id(f"cc_{ds}_helps", device)))
    xf = [at("concurrency", ds, cc_top, "x_fold") for ds in DATASETS]
    claims.add("cc_order", "Concurrency helps html most, then image, then video",
               location=v.row("cc_html_xfold")["location"], relation="=", paper=1.0,
               artifact=float("nan") if any(np.isnan(xf)) else float(xf[0] > xf[1] > xf[2]), unit="true=1",
               basis=f"measured x-folds at concurrency {cc_top}, {src}", provenance="measured", section=sweeps,
               tolerance="ordering holds")
    for ds in ("html", "image"):
        claims.add(f"p8_{ds}_reduces", f"Parallelism up to {p8} reduces {ds} throughput",
                   location=v.row("p8_html_reduces")["location"], relation="<", paper=1.0,
                   artifact=at("parallelism", ds, p8, "x_fold"), unit="x",
                   basis=f"measured x-fold at parallelism {p8}, {src}", provenance="measured", section=sweeps,
                   interval=intervals.get(device_claim_id(f"p8_{ds}_reduces", device)))
    claims.add("p_video_xfold", f"Parallelism improves video throughput {v('p_video_xfold'):g}x",
               location=v.row("p_video_xfold")["location"], relation="~", paper=v("p_video_xfold"),
               artifact=float(p_best["x_fold"]), unit="x", basis=f"measured, best parallelism level, {src}",
               provenance="measured", section=sweeps, rel_tol=rel_tol)
    claims.add("combined_saving", f"Combined concurrency and parallelism save up to {v('combined_saving'):g}% "
                                  "energy per 100 MB",
               location=v.row("combined_saving")["location"], relation="~", paper=v("combined_saving"),
               artifact=float(best["saving_pct"]), unit="%",
               basis=f"largest {kind} saving in the concurrency x parallelism grid, {src}",
               provenance="modeled" if kind != "measured" else "measured", section="transfer-tuning-grid",
               rel_tol=rel_tol)
    claims.add("combined_xfold", f"Tuning concurrency and parallelism raises throughput up to "
                                 f"{v('combined_xfold'):g}x",
               location=v.row("combined_xfold")["location"], relation="~", paper=v("combined_xfold"),
               artifact=float(grid_ref["x_fold"].max()), unit="x",
               basis=f"largest measured x-fold in the concurrency x parallelism grid, {src}",
               provenance="measured", section="transfer-tuning-grid", rel_tol=rel_tol)
    claims.add("tail_concurrency", "Concurrency reduces the share of tail energy like back-to-back transfers",
               location="§4, Figure 8", relation=None, paper=None, artifact=None, unit="%",
               basis="the modeled radio has no tail state; needs a phone's power log", provenance="modeled",
               section="transfer-tuning-power-time")
    return claims.frame(intervals)


class DeviceClaims(cl.Claims):
    """The claims of one device: each id by `device_claim_id`, each claim's
    text naming the device, as the ledger lists them."""

    def __init__(self, study: str, device: str, alpha: float):
        super().__init__(study, alpha=alpha)
        self.device = device

    def add(self, claim_id: str, text: str, **kw) -> str:
        return super().add(device_claim_id(claim_id, self.device), f"{text} ({self.device})", **kw)


def study_claims(values, study: str) -> pd.DataFrame:
    """The claims about no device (STUDY_CLAIMS)."""
    claims = cl.Claims(study)
    claims.add("lte_tail_longer", "4G LTE has a much longer tail than WiFi", location="§4, Figure 8",
               relation=None, paper=None, artifact=None, unit="s", basis="no LTE or WiFi radio on the host",
               provenance="published", section="transfer-tuning-power-time")
    return claims.frame()


# --------------------------------------------------------------------------- #
# Power over time (Figure 8 and 9 analogs)


def concurrency_runs(table: pd.DataFrame, device: str, io_kib: int, dataset: str = "video") -> pd.DataFrame:
    """Repetition 1 of each concurrency level of `dataset` (parallelism 1,
    I/O size `io_kib`) on `device`, by concurrency: the runs of Figure 9."""
    t = table[(table["device"] == device) & (table["kind"] == "sweep") & (table["dataset"] == dataset)
              & (table["parallelism"] == 1) & (table["io_kib"] == io_kib) & (table["rep"] == 1)]
    return t.sort_values("concurrency")



"""mptcp-dualband (Khan et al., WiNTECH'21): ingest of the capture kit's raw
runs, energy per bit from the power models, and the paper's Figure 9
guideline.

Raw capture (scripts/capture/mptcp_dualband/run.py), per session folder
data/raw/mptcp-dualband/<device>/<session>/:

* manifest.yaml: study, device, session, config (scale, path rates, ...), host;
* runs.jsonl.gz: one JSON record per run with the spec of the run, the two
  mtmp_xfer processes' own JSON (per-connection bytes, first/last byte
  times, getrusage CPU time), the phone's interface counters before/after
  (`ip -s -j link`), /proc/stat `cpu` lines before/after, the 1-min load
  average and `cpu MHz` from /proc/cpuinfo.

`ingest` turns a device's sessions into one tidy table (RUN_COLUMNS), one row
per run. Throughput is the receiver's payload over the time from its first
to its last byte. Per-path bytes: for the striping sender the receiver's
per-connection payload; for MPTCP (one socket) the payload split by the
phone's per-interface byte counters (which include headers, so only their
shares are used).

Energy per bit (nJ/bit = mW / Mbps, :func:`mobitrace.power.nj_per_bit`) is
modeled: the radio part from each interface's radio model at its measured
(paper-equivalent) rate, the CPU part from the phone-side process's measured
CPU time through a CPU power model.
"""

from __future__ import annotations

import json
import math
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pandera.pandas as pa

from .core import capture_reader
from .errors import InputError
from .power import CpuPowerModel, RadioPowerModel, nj_per_bit

STUDY = "mptcp-dualband"
PATHS = ("a", "b")
PHONE_IF = {"a": "pa", "b": "pb"}
DIRECTIONS = ("downlink", "uplink")
TRANSPORTS = ("mptcp", "striped")
USER_HZ = 100  # /proc/stat unit (getconf CLK_TCK; recorded in the manifest)

RUN_COLUMNS = [
    "device", "session", "run_id", "part", "config", "transport", "direction", "ratio_a_pct",
    "demand_mbps", "scale", "primary", "backup", "gro_a", "gro_b", "rps_cpu", "rep", "duration_s",
    "started_utc", "loadavg1", "payload_bytes", "rx_seconds", "tput_mbps", "bytes_a", "bytes_b",
    "tput_a_mbps", "tput_b_mbps", "phone_cpu_s", "ap_cpu_s", "procstat_busy_s", "procstat_softirq_s",
    "cpu_mhz_mean",
]

RUNS_SCHEMA = pa.DataFrameSchema(
    {
        "device": pa.Column(str), "session": pa.Column(str), "run_id": pa.Column(str, unique=True),
        "part": pa.Column(str, pa.Check.isin(["mptcp", "gro", "sirq", "sweep", "backup"])),
        "config": pa.Column(str), "transport": pa.Column(str, pa.Check.isin(TRANSPORTS)),
        "direction": pa.Column(str, pa.Check.isin(DIRECTIONS)),
        "ratio_a_pct": pa.Column(float, pa.Check.in_range(0, 100), nullable=True),
        "demand_mbps": pa.Column(float, pa.Check.gt(0), nullable=True),
        "scale": pa.Column(float, pa.Check.gt(0)), "primary": pa.Column(str, pa.Check.isin(PATHS)),
        "backup": pa.Column(bool), "gro_a": pa.Column(str), "gro_b": pa.Column(str),
        "rps_cpu": pa.Column(float, nullable=True), "rep": pa.Column(int, pa.Check.ge(0)),
        "duration_s": pa.Column(float, pa.Check.gt(0)), "started_utc": pa.Column(str),
        "loadavg1": pa.Column(float, pa.Check.ge(0)), "payload_bytes": pa.Column(int, pa.Check.gt(0)),
        "rx_seconds": pa.Column(float, pa.Check.gt(0)), "tput_mbps": pa.Column(float, pa.Check.gt(0)),
        "bytes_a": pa.Column(float, pa.Check.ge(0)), "bytes_b": pa.Column(float, pa.Check.ge(0)),
        "tput_a_mbps": pa.Column(float, pa.Check.ge(0)), "tput_b_mbps": pa.Column(float, pa.Check.ge(0)),
        "phone_cpu_s": pa.Column(float, pa.Check.ge(0)), "ap_cpu_s": pa.Column(float, pa.Check.ge(0)),
        "procstat_busy_s": pa.Column(float, pa.Check.ge(0)),
        "procstat_softirq_s": pa.Column(float, pa.Check.ge(0)),
        "cpu_mhz_mean": pa.Column(float, nullable=True),
    },
    strict=True, ordered=True,
)


# --------------------------------------------------------------------------- #
# Raw parsing


def _read_manifest(folder: Path) -> dict:
    path = folder / "manifest.yaml"
    if not capture_reader.exists(path):
        raise InputError(path, None, None, "a capture manifest.yaml", "no such file")
    doc, _ = capture_reader.load_yaml(capture_reader.resolve(path))
    if not isinstance(doc, dict):
        raise InputError(path, None, None, "a YAML mapping", type(doc).__name__)
    if doc.get("study") != STUDY:
        raise InputError(path, None, "study", f"'{STUDY}'", doc.get("study", "nothing"))
    for key, want in (("device", folder.parent.name), ("session", folder.name)):
        if doc.get(key) != want:
            raise InputError(path, None, key, f"'{want}' (the folder's name)", doc.get(key, "nothing"))
    if isinstance(doc.get("host"), dict):
        capture_reader.host_metadata(doc, path)  # schema 1 or 2; checks cpu_count
    config = doc.get("config")
    if not isinstance(config, dict):
        raise InputError(path, None, "config", "a mapping", config if config is not None else "nothing")
    scale = config.get("scale")
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not scale > 0:
        raise InputError(path, None, "config.scale", "a number > 0", scale if scale is not None else "nothing")
    rates = config.get("path_rates_mbps")
    if rates is not None and not isinstance(rates, dict):
        raise InputError(path, None, "config.path_rates_mbps", "a mapping of direction to path to rate", rates)
    for d in DIRECTIONS:
        for p in PATHS:
            v = (rates or {}).get(d, {}).get(p) if isinstance((rates or {}).get(d), dict) else None
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
                raise InputError(path, None, f"config.path_rates_mbps.{d}.{p}", "a rate > 0 (Mbps)",
                                 v if v is not None else "nothing")
    if not isinstance(doc.get("n_runs"), int):
        raise InputError(path, None, "n_runs", "an integer", doc.get("n_runs", "nothing"))
    capture_reader.check_number(doc["n_runs"], path, None, "n_runs", integer=True)
    return doc


def _need(rec: dict, key: str, kind, where: str, path: Path):
    v = rec.get(key) if isinstance(rec, dict) else None
    ok = isinstance(v, kind) and not (isinstance(v, bool) and kind is not bool)
    if not ok:
        raise InputError(path, where, key, f"a {getattr(kind, '__name__', kind)}",
                         v if v is not None else "nothing")
    return v


def _num(rec: dict, key: str, where: str, path: Path, minimum: float | None = None) -> float:
    v = rec.get(key) if isinstance(rec, dict) else None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise InputError(path, where, key, "a number", v if v is not None else "nothing")
    if minimum is not None and v < minimum:
        raise InputError(path, where, key, f"a number >= {minimum:g}", v)
    return float(v)


def _cpu_line(lines, where, field, path) -> tuple[float, float]:
    """(busy, softirq) seconds of the aggregate `cpu` line of /proc/stat."""
    if not isinstance(lines, list) or not lines or not isinstance(lines[0], str):
        raise InputError(path, where, field, "a list of /proc/stat cpu lines", lines)
    parts = lines[0].split()
    if not parts or parts[0] != "cpu" or len(parts) < 8:
        raise InputError(path, where, field, "the aggregate 'cpu' line first", lines[0])
    try:
        vals = [int(x) for x in parts[1:]]
    except ValueError:
        raise InputError(path, where, field, "integer jiffies", lines[0]) from None
    total = sum(vals[:8])
    idle = vals[3] + vals[4]
    return (total - idle) / USER_HZ, vals[6] / USER_HZ


def _tool(rec: dict, side: str, where: str, path: Path) -> dict:
    t = rec.get(side)
    if not isinstance(t, dict) or t.get("tool") != "mtmp_xfer":
        raise InputError(path, where, side, "the JSON object mtmp_xfer printed", t if t is not None else "nothing")
    for k in ("first_byte_ns", "last_byte_ns", "utime_us", "stime_us"):
        _num(t, k, where, path, 0)
    conns = t.get("conns")
    if not isinstance(conns, list) or not conns:
        raise InputError(path, where, f"{side}.conns", "a list of connections", conns)
    for c in conns:
        if not isinstance(c, dict) or not isinstance(c.get("local"), str):
            raise InputError(path, where, f"{side}.conns", "connections with local and bytes", c)
        _num(c, "bytes", where, path, 0)
    return t


def parse_run(rec, path: Path, line: int, scale: float, device: str, session: str) -> dict:
    """One raw run record -> one row of RUN_COLUMNS (InputError on a bad field)."""
    where = f"line {line}"
    if not isinstance(rec, dict):
        raise InputError(path, where, None, "a JSON object", type(rec).__name__)
    run_id = _need(rec, "run_id", str, where, path)
    where = f"line {line} (run {run_id})"
    spec = rec.get("spec")
    if not isinstance(spec, dict):
        raise InputError(path, where, "spec", "a mapping", spec if spec is not None else "nothing")
    direction = spec.get("direction")
    if direction not in DIRECTIONS:
        raise InputError(path, where, "spec.direction", f"one of {DIRECTIONS}", direction)
    transport = spec.get("transport")
    if transport not in TRANSPORTS:
        raise InputError(path, where, "spec.transport", f"one of {TRANSPORTS}", transport)
    ratio = spec.get("ratio_a_pct")
    if transport == "striped":
        if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not 0 <= ratio <= 100:
            raise InputError(path, where, "spec.ratio_a_pct", "a ratio in [0, 100] (% to path a)", ratio)
    demand = spec.get("demand_mbps")
    if demand is not None and (isinstance(demand, bool) or not isinstance(demand, (int, float)) or demand <= 0):
        raise InputError(path, where, "spec.demand_mbps", "a demand > 0 (Mbps) or null (backlogged)", demand)
    phone = _tool(rec, "phone", where, path)
    ap = _tool(rec, "ap", where, path)
    rx = phone if direction == "downlink" else ap
    seconds = (rx["last_byte_ns"] - rx["first_byte_ns"]) / 1e9
    payload = int(sum(c["bytes"] for c in rx["conns"]))
    if payload <= 0 or seconds <= 0:
        raise InputError(path, where, "phone" if direction == "downlink" else "ap",
                         "a receiver that got data over a positive time", f"{payload} B in {seconds:g} s")
    counter = "rx_bytes" if direction == "downlink" else "tx_bytes"
    iface = {}
    for p in PATHS:
        try:
            iface[p] = rec["if_after"][PHONE_IF[p]][counter] - rec["if_before"][PHONE_IF[p]][counter]
        except (KeyError, TypeError):
            raise InputError(path, where, f"if_before/if_after.{PHONE_IF[p]}.{counter}",
                             "interface byte counters before and after", "missing") from None
        if isinstance(iface[p], bool) or not isinstance(iface[p], int) or iface[p] < 0:
            raise InputError(path, where, f"if_after.{PHONE_IF[p]}.{counter}", "a counter >= its value before",
                             iface[p])
    if transport == "striped":
        by_path = {p: 0.0 for p in PATHS}
        for c in rx["conns"]:
            addr = c["local"].split(":")[0]
            p = "a" if addr.startswith("10.93.") else "b" if addr.startswith("10.94.") else None
            if p is None:
                raise InputError(path, where, "conns.local", "a path-a (10.93/24) or path-b (10.94/24) address",
                                 c["local"])
            by_path[p] += c["bytes"]
    else:
        total_if = iface["a"] + iface["b"]
        if total_if <= 0:
            raise InputError(path, where, "if_after", "bytes on the phone's interfaces", 0)
        by_path = {p: payload * iface[p] / total_if for p in PATHS}
    busy0, sirq0 = _cpu_line(rec.get("proc_stat_before"), where, "proc_stat_before", path)
    busy1, sirq1 = _cpu_line(rec.get("proc_stat_after"), where, "proc_stat_after", path)
    mhz = [x for x in (rec.get("cpu_mhz_before") or []) + (rec.get("cpu_mhz_after") or [])
           if isinstance(x, (int, float))]
    gro = rec.get("phone_gro") or {}
    rps = spec.get("rps")
    tput = payload * 8 / seconds / 1e6
    return {
        "device": device, "session": session, "run_id": run_id,
        "part": spec.get("part"), "config": str(spec.get("config")), "transport": transport,
        "direction": direction, "ratio_a_pct": float(ratio) if transport == "striped" else np.nan,
        "demand_mbps": float(demand) if demand is not None else np.nan, "scale": float(scale),
        "primary": spec.get("primary", "a"), "backup": bool(spec.get("backup", False)),
        "gro_a": str(gro.get("a", "unknown")), "gro_b": str(gro.get("b", "unknown")),
        "rps_cpu": float(rps) if isinstance(rps, int) else np.nan, "rep": int(spec.get("rep", 0)),
        "duration_s": _num(ap if direction == "downlink" else phone, "duration_s", where, path, 0),
        "started_utc": str(rec.get("started_utc", "")), "loadavg1": _num(rec, "loadavg1", where, path, 0),
        "payload_bytes": payload, "rx_seconds": seconds, "tput_mbps": tput,
        "bytes_a": float(by_path["a"]), "bytes_b": float(by_path["b"]),
        "tput_a_mbps": by_path["a"] * 8 / seconds / 1e6, "tput_b_mbps": by_path["b"] * 8 / seconds / 1e6,
        "phone_cpu_s": (phone["utime_us"] + phone["stime_us"]) / 1e6,
        "ap_cpu_s": (ap["utime_us"] + ap["stime_us"]) / 1e6,
        "procstat_busy_s": max(busy1 - busy0, 0.0), "procstat_softirq_s": max(sirq1 - sirq0, 0.0),
        "cpu_mhz_mean": float(np.mean(mhz)) if mhz else np.nan,
    }


def read_session(folder: str | Path) -> tuple[dict, pd.DataFrame]:
    """(manifest, runs table) of one session folder; InputError on bad input."""
    folder = Path(folder)
    manifest = _read_manifest(folder)
    path = folder / "runs.jsonl.gz"
    if not capture_reader.exists(path):
        raise InputError(path, None, None, "the kit's runs.jsonl.gz", "no such file")
    path = capture_reader.resolve(path)
    rows = []
    for i, line in capture_reader.iter_lines(path):
        try:
            rec = capture_reader.loads_json(line, path)
        except json.JSONDecodeError as exc:
            raise InputError(path, f"line {i}", None, "a JSON object", f"invalid JSON ({exc.msg})") from None
        rows.append(parse_run(rec, path, i, manifest["config"]["scale"], manifest["device"],
                              manifest["session"]))
    if len(rows) != manifest["n_runs"]:
        raise InputError(folder / "manifest.yaml", None, "n_runs", f"{len(rows)} (the runs in runs.jsonl.gz)",
                         manifest["n_runs"])
    if not rows:
        raise InputError(path, None, None, "at least one run", "no runs")
    frame = pd.DataFrame(rows, columns=RUN_COLUMNS)
    try:
        frame = RUNS_SCHEMA.validate(frame, lazy=False)
    except pa.errors.SchemaError as exc:
        idx = exc.failure_cases["index"].iloc[0] if exc.failure_cases is not None and len(exc.failure_cases) else None
        raise InputError(path, f"line {int(idx) + 1}" if idx is not None and not pd.isna(idx) else None,
                         str(exc.schema.name) if exc.schema is not None else None, "a valid value",
                         exc.failure_cases["failure_case"].iloc[0] if exc.failure_cases is not None else exc) from None
    return manifest, frame


def ingest(device_dir: str | Path, out_dir: str | Path) -> Path:
    """data/raw/mptcp-dualband/<device> -> <out_dir>/runs.parquet and manifests.json;
    nothing is written when any session is bad."""
    device_dir, out_dir = Path(device_dir), Path(out_dir)
    if not device_dir.is_dir():
        raise InputError(device_dir, None, None, "a device folder of capture sessions", "no such folder")
    capture_reader.check_capture(device_dir)
    sessions = sorted(p for p in device_dir.iterdir() if p.is_dir())
    if not sessions:
        raise InputError(device_dir, None, None, "at least one session folder", "none")
    manifests, frames = {}, []
    for s in sessions:
        m, f = read_session(s)
        manifests[s.name] = {"config": m["config"], "host": m.get("host", {}), "lock": m.get("lock"),
                             "created_utc": m.get("created_utc")}
        frames.append(f)
    runs = pd.concat(frames, ignore_index=True).sort_values(["session", "run_id"]).reset_index(drop=True)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
        runs.to_parquet(tmp / "runs.parquet", index=False)
        (tmp / "manifests.json").write_text(json.dumps(manifests, indent=1, sort_keys=True, default=str) + "\n")
        if out_dir.exists():
            shutil.rmtree(out_dir)
        tmp.rename(out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out_dir


def validate_session(folder: Path) -> list[InputError]:
    """Every problem of one session (for `mobitrace validate`)."""
    try:
        read_session(folder)
    except InputError as exc:
        return [exc]
    return []


# --------------------------------------------------------------------------- #
# Energy per bit


def radio_power_mw(models: dict[str, RadioPowerModel], tput_a_mbps, tput_b_mbps, direction: str):
    """Radio power (mW) of both interfaces of the phone: path a priced by
    models['a'], path b by models['b'], at their (paper-equivalent) rates; the
    phone receives on the downlink ('rx') and transmits on the uplink ('tx')."""
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, found {direction!r}")
    mode = "rx" if direction == "downlink" else "tx"
    return (np.asarray(models["a"].power_mw(tput_a_mbps, mode), dtype=float)
            + np.asarray(models["b"].power_mw(tput_b_mbps, mode), dtype=float))


def radio_power_floor_mw(models: dict[str, RadioPowerModel], tput_a_mbps, tput_b_mbps, direction: str,
                         floor_frac: float):
    """A sensitivity variant of :func:`radio_power_mw`: an interface that
    carries no traffic sleeps (0 mW above base, as with PSM), one that carries
    any pays a wake-up floor `floor_frac` of its backlogged power plus the
    rest in proportion to utilization:

        P = 0 if rate = 0, else P_act * (f + (1 - f) * min(1, rate / rate_max))

    f = 0 is the linear model; f = 1 is an interface that costs its full
    backlogged power whenever it is used. The floor is an assumption (the
    paper states backlogged powers only)."""
    if not 0.0 <= floor_frac <= 1.0:
        raise ValueError(f"floor_frac must lie in [0, 1], found {floor_frac}")
    mode = "rx" if direction == "downlink" else "tx"
    total = 0.0
    for path, rate in (("a", tput_a_mbps), ("b", tput_b_mbps)):
        m = models[path]
        r = np.asarray(rate, dtype=float)
        active = m.tx_active_mw if mode == "tx" else m.rx_active_mw
        util = np.minimum(1.0, r / m.max_rate_mbps)
        total = total + np.where(r > 0, active * (floor_frac + (1.0 - floor_frac) * util), 0.0)
    return total


def cpu_power_mw(model: CpuPowerModel, cpu_seconds, seconds, scale: float = 1.0):
    """CPU power (mW above idle) of a process that used `cpu_seconds` of CPU
    over `seconds` of transfer at the nominal frequency: mean busy fraction
    times the busy-core power. Divided by `scale`: a capture made at `scale`
    times the paper's rates is priced at the paper's rates assuming CPU time
    linear in throughput (the cpu-gbps study's finding)."""
    u = np.asarray(cpu_seconds, dtype=float) / np.asarray(seconds, dtype=float)
    return u * model.busy_core_mw() / scale


def energy_table(runs: pd.DataFrame, radio: dict[str, dict[str, RadioPowerModel]],
                 cpu: CpuPowerModel) -> pd.DataFrame:
    """Per run: paper-equivalent throughputs (measured / scale), modeled radio
    and CPU power and nJ/bit. `radio[direction][path]` is the model of that
    interface in that direction."""
    out = runs.copy()
    for col in ("tput_mbps", "tput_a_mbps", "tput_b_mbps"):
        out[col.replace("_mbps", "_eq_mbps")] = out[col] / out["scale"]
    p_radio = np.empty(len(out))
    for direction in DIRECTIONS:
        m = (out["direction"] == direction).to_numpy()
        if m.any():
            p_radio[m] = radio_power_mw(radio[direction], out.loc[m, "tput_a_eq_mbps"],
                                        out.loc[m, "tput_b_eq_mbps"], direction)
    out["radio_mw"] = p_radio
    out["cpu_mw"] = cpu_power_mw(cpu, out["phone_cpu_s"], out["rx_seconds"], out["scale"])
    out["power_mw"] = out["radio_mw"] + out["cpu_mw"]
    out["nj_per_bit"] = nj_per_bit(out["power_mw"], out["tput_eq_mbps"])
    out["radio_nj_per_bit"] = nj_per_bit(out["radio_mw"], out["tput_eq_mbps"])
    out["cpu_nj_per_bit"] = nj_per_bit(out["cpu_mw"], out["tput_eq_mbps"])
    return out


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
    is_fixed = pd.Series([(d, s) in fixed for d, s in zip(frame["device"], frame["session"])], index=frame.index)
    part = frame["part"].isin(MPTCP_PARTS)
    device_has_fixed = frame["device"].map(lambda d: any(dd == d for dd, _ in fixed))
    aside = part & device_has_fixed & ~is_fixed
    return frame[~aside].reset_index(drop=True), frame[aside].reset_index(drop=True)


# --------------------------------------------------------------------------- #
# Ratios: exhaustive search and the Figure 9 guideline


def floor_sensitivity(summary: pd.DataFrame, radio: dict[str, dict[str, RadioPowerModel]],
                      floors, satisfied_frac: float = 0.95) -> pd.DataFrame:
    """Energy-optimal ratio per direction x demand (over the ratios meeting
    the demand; all ratios when backlogged) when the radio part of nJ/bit
    uses a wake-up floor f (:func:`radio_power_floor_mw`) and the CPU part is
    kept as measured and modeled."""
    rows = []
    for f in floors:
        p = radio_power_floor_mw
        for (direction, demand), g in summary.groupby(["direction", "demand"], sort=True):
            ok = g[g["tput_mbps"] >= satisfied_frac * demand] if demand > 0 else g
            if ok.empty:
                continue
            radio_mw = p(radio[direction], ok["tput_a_mbps"], ok["tput_b_mbps"], direction, f)
            nj = radio_mw / ok["tput_mbps"].to_numpy() + ok["cpu_nj_per_bit"].to_numpy()
            i = int(np.argmin(nj))
            rows.append({"floor_frac": f, "direction": direction, "demand": demand,
                         "energy_opt_ratio": float(ok["ratio_a_pct"].iloc[i]), "nj_per_bit": float(nj[i])})
    return pd.DataFrame(rows)


def ratio_summary(energy: pd.DataFrame) -> pd.DataFrame:
    """Mean and SD over repetitions per direction x demand x ratio (the
    striped runs of the ratio sweep)."""
    s = energy[(energy["transport"] == "striped") & (energy["part"] == "sweep")].copy()
    s["demand"] = s["demand_mbps"].fillna(0.0)  # 0 = backlogged (groupby drops NaN)
    g = s.groupby(["direction", "demand", "ratio_a_pct"])
    out = g.agg(n=("tput_eq_mbps", "size"), tput_mbps=("tput_eq_mbps", "mean"), tput_sd=("tput_eq_mbps", "std"),
                tput_a_mbps=("tput_a_eq_mbps", "mean"), tput_b_mbps=("tput_b_eq_mbps", "mean"),
                nj_per_bit=("nj_per_bit", "mean"), nj_sd=("nj_per_bit", "std"),
                radio_nj_per_bit=("radio_nj_per_bit", "mean"), cpu_nj_per_bit=("cpu_nj_per_bit", "mean"),
                phone_cpu_s=("phone_cpu_s", "mean")).reset_index()
    return out


def optima(summary: pd.DataFrame, satisfied_frac: float = 0.95) -> pd.DataFrame:
    """Per direction x demand: the throughput-optimal ratio (highest mean
    throughput), the energy-optimal ratio over all ratios, over the ratios
    that use both paths (0 < a < 100, the paper's comparison for backlogged
    traffic) and, for a demand, over the ratios that deliver at least
    `satisfied_frac` of it."""
    rows = []
    for (direction, demand), g in summary.groupby(["direction", "demand"], sort=True):
        g = g.sort_values("ratio_a_pct")
        best_t = g.loc[g["tput_mbps"].idxmax()]
        best_e = g.loc[g["nj_per_bit"].idxmin()]
        both = g[(g["ratio_a_pct"] > 0) & (g["ratio_a_pct"] < 100)]
        best_e2 = both.loc[both["nj_per_bit"].idxmin()] if len(both) else None
        ok = g[g["tput_mbps"] >= satisfied_frac * demand] if demand > 0 else g
        best_es = ok.loc[ok["nj_per_bit"].idxmin()] if len(ok) else None
        rows.append({
            "direction": direction, "demand": demand,
            "tput_opt_ratio": best_t["ratio_a_pct"], "tput_opt_mbps": best_t["tput_mbps"],
            "tput_opt_nj": best_t["nj_per_bit"],
            "energy_opt_ratio": best_e["ratio_a_pct"], "energy_opt_nj": best_e["nj_per_bit"],
            "energy_opt_mbps": best_e["tput_mbps"],
            "energy_opt_both_ratio": np.nan if best_e2 is None else best_e2["ratio_a_pct"],
            "energy_opt_both_nj": np.nan if best_e2 is None else best_e2["nj_per_bit"],
            "energy_opt_both_mbps": np.nan if best_e2 is None else best_e2["tput_mbps"],
            "energy_opt_satisfying_ratio": np.nan if best_es is None else best_es["ratio_a_pct"],
            "energy_opt_satisfying_nj": np.nan if best_es is None else best_es["nj_per_bit"],
            "energy_opt_satisfying_mbps": np.nan if best_es is None else best_es["tput_mbps"],
        })
    return pd.DataFrame(rows)


def guideline_ratio(demand_mbps: float | None, r_ad: float, r_ac: float, direction: str) -> float:
    """The % of packets to the 802.11ad path that the paper's guidelines pick
    (Fig. 9, as its rules are stated in §4.2; the flow chart's image is not in
    the text), for an application demand (None = backlogged) and each
    interface's maximum rate:

    * backlogged, or a demand above R_ad + R_ac: the throughput-optimal ratio
      R_ad : R_ac (§3.2: "given by the ratio of the individual throughputs");
    * downlink (802.11ac cheaper to receive): demand > R_ad -> fill 802.11ac,
      the rest on 802.11ad, ratio (D - R_ac) : R_ac; R_ac < D <= R_ad -> 100:0;
      D <= R_ac -> 0:100;
    * uplink (802.11ad cheaper to transmit): demand > R_ad -> fill 802.11ad,
      ratio R_ad : (D - R_ad); else 100:0.

    E.g. downlink, 1750 Mbps, 1600/600 -> 1150/1750 = 65.7 % (the paper's
    66:34); uplink, 1750, 1450/600 -> 1450/1750 = 82.9 % (83:17).
    """
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, found {direction!r}")
    if r_ad <= 0 or r_ac <= 0:
        raise ValueError("interface rates must be positive")
    if demand_mbps is None or (isinstance(demand_mbps, float) and math.isnan(demand_mbps)) \
            or demand_mbps >= r_ad + r_ac:
        return 100.0 * r_ad / (r_ad + r_ac)
    d = float(demand_mbps)
    if d <= 0:
        raise ValueError("demand must be positive (None = backlogged)")
    if direction == "downlink":
        if d > r_ad:
            return 100.0 * (d - r_ac) / d
        return 100.0 if d > r_ac else 0.0
    if d > r_ad:
        return 100.0 * r_ad / d
    return 100.0


def nearest_ratio(ratio: float, grid) -> float:
    """The grid ratio closest to `ratio` (ties to the larger)."""
    grid = np.asarray(sorted(grid), dtype=float)
    i = np.argmin(np.abs(grid - ratio) - 1e-9 * grid)
    return float(grid[i])


def guideline_vs_search(summary: pd.DataFrame, opt: pd.DataFrame, rates: dict[str, dict[str, float]],
                        satisfied_frac: float = 0.95) -> pd.DataFrame:
    """Per direction x demand: the guideline's ratio (rounded to the measured
    grid), its throughput and nJ/bit, and how far it lands from the
    exhaustive search's best (energy over the ratios meeting the demand;
    throughput for backlogged traffic)."""
    rows = []
    for r in opt.itertuples():
        g = summary[(summary["direction"] == r.direction) & (summary["demand"] == r.demand)]
        rate = rates[r.direction]
        want = guideline_ratio(None if r.demand == 0 else r.demand, rate["a"], rate["b"], r.direction)
        on_grid = nearest_ratio(want, g["ratio_a_pct"])
        row = g[g["ratio_a_pct"] == on_grid].iloc[0]
        best_nj = r.energy_opt_satisfying_nj
        rows.append({
            "direction": r.direction, "demand": r.demand, "guideline_ratio": want, "grid_ratio": on_grid,
            "guideline_mbps": row["tput_mbps"], "guideline_nj": row["nj_per_bit"],
            "meets_demand": bool(r.demand == 0 or row["tput_mbps"] >= satisfied_frac * r.demand),
            "search_ratio": r.energy_opt_satisfying_ratio, "search_nj": best_nj,
            "search_mbps": r.energy_opt_satisfying_mbps,
            "excess_energy_pct": 100.0 * (row["nj_per_bit"] / best_nj - 1.0),
            "tput_shortfall_pct": 100.0 * (1.0 - row["tput_mbps"] / r.tput_opt_mbps),
        })
    return pd.DataFrame(rows)


def ecdf(values) -> tuple[np.ndarray, np.ndarray]:
    """Empirical CDF: sorted values and i/n for i = 1..n."""
    x = np.sort(np.asarray(values, dtype=float))
    return x, np.arange(1, len(x) + 1) / len(x)

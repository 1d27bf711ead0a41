"""mptcp-dualband (Khan et al., WiNTECH'21): ingest of the capture kit's raw
runs into one tidy table per device. Only reading and validating: energy per
bit, run selection, ratio summaries and the paper's Figure 9 guideline are
derived in mobitrace.studies.mptcp_dualband.analysis (and .energy), so that an
analysis edit does not re-run this stage.

Raw capture (scripts/capture/mptcp_dualband/run.py), per session folder
data/raw/mptcp-dualband/<device>/<session>/:

* manifest.yaml: study, device, session, config (scale, path rates, ...), host;
* runs.jsonl.gz: one JSON record per run with the spec of the run, the two
  mtmp_xfer processes' own JSON (per-connection bytes, first/last byte
  times, getrusage CPU time), the phone's interface counters before/after
  (`ip -s -j link`), /proc/stat `cpu` lines before/after, the 1-min load
  average and `cpu MHz` from /proc/cpuinfo.

`ingest` turns a device's sessions into one tidy table (schema.RUN_COLUMNS,
validated by schema.RUNS_SCHEMA), one row per run. Throughput is the
receiver's payload over the time from its first to its last byte. Per-path
bytes: for the striping sender the receiver's per-connection payload; for
MPTCP (one socket) the payload split by the phone's per-interface byte
counters (which include headers, so only their shares are used).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pandera.pandas as pa

from mobitrace.core.io import replacing_dir, problems
from mobitrace.core import capture_reader
from mobitrace.core import safe_yaml
from mobitrace.core import host_info
from mobitrace.core.errors import InputError
from mobitrace.studies.mptcp_dualband.schema import (DEVICE_RUNS_SCHEMA, DIRECTIONS, PATHS, RUN_COLUMNS,
                                                     RUNS_SCHEMA, STUDY, TRANSPORTS)

__all__ = ["DIRECTIONS", "PATHS", "RUN_COLUMNS", "RUNS_SCHEMA", "STUDY", "TRANSPORTS", "ingest", "parse_run",
           "read_session", "validate_session"]

PHONE_IF = {"a": "pa", "b": "pb"}
USER_HZ = 100  # /proc/stat unit (getconf CLK_TCK; recorded in the manifest)

# --------------------------------------------------------------------------- #
# Raw parsing


def _read_manifest(folder: Path) -> dict:
    path = folder / "manifest.yaml"
    doc = safe_yaml.read_manifest(path)
    capture_reader.background_load(doc, path)  # the idle gate's record (newer kits): checked
    if doc.get("study") != STUDY:
        raise InputError(path, None, "study", f"'{STUDY}'", doc.get("study", "nothing"))
    for key, want in (("device", folder.parent.name), ("session", folder.name)):
        if doc.get(key) != want:
            raise InputError(path, None, key, f"'{want}' (the folder's name)", doc.get(key, "nothing"))
    if isinstance(doc.get("host"), dict):
        host_info.host_metadata(doc, path)  # schema 1 or 2; checks cpu_count
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
    return manifest, _validated(RUNS_SCHEMA, pd.DataFrame(rows, columns=RUN_COLUMNS), path)


def _validated(schema, frame: pd.DataFrame, path: Path) -> pd.DataFrame:
    """`frame` validated by `schema`; a failure is one InputError naming the
    line (row + 1) and the field."""
    try:
        return schema.validate(frame, lazy=False)
    except pa.errors.SchemaError as exc:
        idx = exc.failure_cases["index"].iloc[0] if exc.failure_cases is not None and len(exc.failure_cases) else None
        raise InputError(path, f"line {int(idx) + 1}" if idx is not None and not pd.isna(idx) else None,
                         str(exc.schema.name) if exc.schema is not None else None, "a valid value",
                         exc.failure_cases["failure_case"].iloc[0] if exc.failure_cases is not None else exc) from None


def ingest(device_dir: str | Path, out_dir: str | Path) -> Path:
    """data/raw/mptcp-dualband/<device> -> <out_dir>/runs.parquet and manifests.json;
    nothing is written when any session is bad."""
    device_dir, out_dir = Path(device_dir), Path(out_dir)
    sessions = capture_reader.session_folders(device_dir)
    manifests, frames = {}, []
    for s in sessions:
        m, f = read_session(s)
        manifests[s.name] = {"config": m["config"], "host": m.get("host", {}), "lock": m.get("lock"),
                             "created_utc": m.get("created_utc")}
        frames.append(f)
    runs = pd.concat(frames, ignore_index=True).sort_values(["session", "run_id"]).reset_index(drop=True)
    runs = _validated(DEVICE_RUNS_SCHEMA, runs, device_dir)
    with replacing_dir(out_dir) as tmp:
        runs.to_parquet(tmp / "runs.parquet", index=False)
        (tmp / "manifests.json").write_text(json.dumps(manifests, indent=1, sort_keys=True, default=str) + "\n")
    return out_dir


def validate_session(folder: Path) -> list[InputError]:
    """Every problem of one session folder, for `mobitrace validate` (empty: valid)."""
    return problems(read_session, folder)

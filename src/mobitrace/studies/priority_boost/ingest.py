"""Raw captures of the priority-boost capture kit -> validated tidy tables.

A device folder data/raw/priority-boost/<device>/ holds session folders, each
written by scripts/capture/priority_boost/run.py:

    manifest.yaml                 configuration and host metadata
    runs.csv                      one line per attempted run (RUN_FIELDS)
    runs/<run_id>/transfer.json   bulk transfer result (transfer runs)
    runs/<run_id>/audio.csv.gz    seq,t_ns,errno of every audio packet (audio runs)
    runs/<run_id>/oracle.csv.gz   t_s,event,pid,value: link toggles and renices
    runs/<run_id>/cross.json      cross-traffic sender summary (when cross_pct > 0)
    runs/<run_id>/cgroup_cpu_stat.json  CFS bandwidth statistics before/after

`ingest` validates everything with pandera schemas and writes runs.parquet
(one row per completed run, with its metric) and sessions.parquet (one row per
session, with the capture's content hash) atomically: on any InputError (file,
line/record, field, expected, found) nothing is written.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pandera.pandas as pa

from mobitrace.core.io import replacing_dir, problems
from mobitrace.core import capture_reader
from mobitrace.core import safe_yaml
from mobitrace.core import host_info
from mobitrace.core.errors import InputError, plain_check
from mobitrace.studies.priority_boost.schema import (AUDIO_SCHEMA, CROSS_SCHEMA, ORACLE_SCHEMA, POLICIES,  # noqa: F401
                                                      RUN_COLUMNS, RUN_FIELDS, RUN_TABLE_SCHEMA, RUNS_SCHEMA,
                                                      SESSION_COLUMNS, SESSION_TABLE_SCHEMA, TRANSFER_SCHEMA)

AUDIO_PERIOD_NS = 20_000_000
ECONNREFUSED = 111  # Linux errno: the peer's port answered with ICMP port unreachable


def _check_steps(path: Path, frame: pd.DataFrame, col: str, ok, expected: str) -> None:
    """InputError at the first row whose step from the previous row fails `ok`."""
    steps = frame[col].diff().iloc[1:]
    bad = ~ok(steps)
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0]) + 1
        raise InputError(path, f"line {i + 2}", col, expected, frame[col].iloc[i])


MANIFEST_KEYS = ("study", "device", "session", "configuration", "host")


def _fail_schema(path: Path, exc: pa.errors.SchemaErrors, where_of) -> None:
    case = exc.failure_cases.iloc[0]
    idx = case["index"]
    where = where_of(int(idx)) if idx is not None and not pd.isna(idx) else None
    field = case["column"] if case["column"] is not None and not pd.isna(case["column"]) else None
    raise InputError(path, where, field, plain_check(case['check']), case["failure_case"]) from None


def _check_table(path: Path, frame: pd.DataFrame, schema: pa.DataFrameSchema, where_of) -> None:
    """Validate a tidy table before it is written; a failure is one InputError
    (the table named by `path`, the row by `where_of(index)`)."""
    try:
        schema.validate(frame, lazy=True)
    except pa.errors.SchemaErrors as exc:
        _fail_schema(path, exc, where_of)


class _Checks:
    """A session's per-file schema checks, run once per schema over all its
    files: pandera's fixed cost per call (a few ms) times ~1,300 files was most
    of the ingest's time. Every check is row-wise, so the concatenated table
    passes exactly when each file does; when it fails, the files are checked
    one by one in reading order, so the error is the one a check per file
    would have raised first."""

    def __init__(self) -> None:
        self.pending: list[tuple[Path, pd.DataFrame, pa.DataFrameSchema, object]] = []

    def add(self, path: Path, frame: pd.DataFrame | dict, schema: pa.DataFrameSchema, where_of) -> None:
        """`frame`: a table, or one JSON record (made a one-row table only when checked alone)."""
        self.pending.append((path, frame, schema, where_of))

    def run(self) -> None:
        """Check what was added (InputError at the first failing file)."""
        pending, self.pending = self.pending, []
        by_schema: dict[int, list] = {}
        for item in pending:
            by_schema.setdefault(id(item[2]), []).append(item)
        try:
            for items in by_schema.values():
                frames = [f for _, f, _, _ in items]
                schema = items[0][2]
                table = (_records_frame(frames, schema) if isinstance(frames[0], dict)
                         else pd.concat(frames, ignore_index=True))
                schema.validate(table, lazy=True)
        except pa.errors.SchemaErrors:  # find the file, and its row, as the check of one file does
            for path, frame, schema, where_of in pending:
                if isinstance(frame, dict):
                    frame = _records_frame([frame], schema)
                _check_table(path, frame, schema, where_of)


def _records_frame(records: list[dict], schema: pa.DataFrameSchema) -> pd.DataFrame:
    """JSON records as a table, int64 or float64 as the schema says (exact:
    _read_json lets through only integers that a float holds exactly)."""
    return pd.DataFrame(records).astype({c: ("int64" if str(col.dtype) == "int64" else "float64")
                                         for c, col in schema.columns.items()})


def _read_csv(path: Path, columns: list[str]) -> pd.DataFrame:
    """The file's records as strings, read as CSV (quoted fields may hold
    commas: the kit writes a failed command's message into runs.csv)."""
    text = capture_reader.read_text(capture_reader.resolve(path))
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows = []
    try:
        for row in reader:
            if not rows and row != columns:
                raise InputError(path, "line 1", "header", ",".join(columns), ",".join(row))
            if len(row) != len(columns):
                raise InputError(path, f"line {reader.line_num}", None, f"{len(columns)} comma-separated fields",
                                 f"{len(row)} fields")
            rows.append(row)
    except csv.Error as exc:
        raise InputError(path, f"line {reader.line_num}", None, "well-formed CSV", str(exc)) from None
    if not rows:
        raise InputError(path, "line 1", "header", ",".join(columns), "")
    return pd.DataFrame(rows[1:], columns=columns, dtype=str)


def _to_numbers(path: Path, frame: pd.DataFrame, kinds: dict) -> pd.DataFrame:
    """Convert columns to int/float, raising InputError at the first bad cell
    (line = data row + 2, counting the header)."""
    out = frame.copy()
    for col, kind in kinds.items():
        conv = pd.to_numeric(out[col], errors="coerce")
        values = conv.to_numpy(dtype=float)  # numpy, not Series, operations: ~700 small files per device
        with np.errstate(invalid="ignore"):
            bad = ~np.isfinite(values) | (np.abs(values) > capture_reader.LIMITS.magnitude)
            if kind is int:
                bad |= (values % 1) != 0
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(path, f"line {i + 2}", col, "an integer" if kind is int else "a number",
                             frame[col].iloc[i])
        out[col] = conv.astype(kind)
    return out


def read_runs(path: Path) -> tuple[pd.DataFrame, int]:
    """runs.csv: every attempted run. Returns the last line per run_id and the
    number of attempts that failed (status other than ok or timeout)."""
    raw = _read_csv(path, RUN_FIELDS)
    frame = _to_numbers(path, raw, {"cpu_procs": int, "cross_pct": int, "rep": int, "seed": int,
                                    "wall_s": float})
    frame["line"] = np.arange(len(frame)) + 2
    try:
        RUNS_SCHEMA.validate(frame.drop(columns="line"), lazy=True)
    except pa.errors.SchemaErrors as exc:
        _fail_schema(path, exc, lambda i: f"line {i + 2}")
    failed = int((~frame["status"].isin(["ok", "timeout"])).sum())
    return frame.drop_duplicates("run_id", keep="last").reset_index(drop=True), failed


def _read_json(path: Path, schema: pa.DataFrameSchema, checks: _Checks) -> dict:
    try:
        rec = capture_reader.loads_json(capture_reader.read_text(capture_reader.resolve(path)), path)
    except json.JSONDecodeError as exc:
        raise InputError(path, f"line {exc.lineno}", None, "valid JSON", exc.msg) from None
    if not isinstance(rec, dict):
        raise InputError(path, "record 1", None, "a JSON object", type(rec).__name__)
    for col, column in schema.columns.items():
        if col not in rec:
            raise InputError(path, "record 1", col, "a value", "nothing")
        want = column.dtype.type if column.dtype is not None else None
        val = rec[col]
        capture_reader.check_number(val, path, "record 1", col, minimum=None)
        if str(want) == "int64" and float(val) != int(val):
            raise InputError(path, "record 1", col, "an integer", val)
    checks.add(path, {c: rec[c] for c in schema.columns}, schema, lambda i: "record 1")
    return rec


def audio_jitter(t_ns: np.ndarray, period_ns: int = AUDIO_PERIOD_NS) -> tuple[float, float]:
    """The paper's audio metric: with send-time gaps d_i = t_i - t_{i-1},
    jitter_i = |d_i - 20 ms|; returns (SD of jitter_i (ddof=1), mean of
    jitter_i), both in microseconds (§4: "the standard deviation of the
    absolute jitter (i.e. absolute deviation from 20ms interarrival spacing)")."""
    gaps = np.diff(np.asarray(t_ns, dtype=np.int64))
    jit = np.abs(gaps - period_ns) / 1000.0
    if len(jit) < 2:
        return float("nan"), float("nan")
    return float(np.std(jit, ddof=1)), float(np.mean(jit))


def _oracle_summary(path: Path, checks: _Checks) -> dict:
    frame = _read_csv(path, ["t_s", "event", "pid", "value"])
    frame = _to_numbers(path, frame, {"t_s": float, "pid": int, "value": int})
    checks.add(path, frame, ORACLE_SCHEMA, lambda i: f"line {i + 2}")
    # Plain lists, not pandas filters: ~500 small files per device.
    times, events, values = frame["t_s"].tolist(), frame["event"].tolist(), frame["value"].tolist()
    links = [(t, ev) for t, ev in zip(times, events) if ev in ("link_up", "link_down")]
    stop = [t for t, ev in zip(times, events) if ev == "stop"]
    end = float(stop[-1]) if stop else float(frame["t_s"].max())
    up_time, last_t, last_up = 0.0, None, None
    for t, ev in links:
        if last_up:
            up_time += t - last_t
        last_t, last_up = t, ev == "link_up"
    if last_up and last_t is not None:
        up_time += end - last_t
    nice = [v for v, ev in zip(values, events) if ev == "nice"]
    return {"link_up_fraction": up_time / end if end > 0 else float("nan"),
            "link_toggles": len(links) - 1, "renices": len(nice),
            "min_nice": int(min(nice)) if nice else 0}


def read_manifest(path: Path) -> dict:
    doc, _ = safe_yaml.load_yaml(capture_reader.resolve(path))
    if not isinstance(doc, dict):
        raise InputError(path, None, None, "a mapping", type(doc).__name__)
    for key in MANIFEST_KEYS:
        if key not in doc:
            raise InputError(path, None, key, "a top-level key", "nothing")
    if doc["study"] != "priority-boost":
        raise InputError(path, None, "study", "'priority-boost'", doc["study"])
    capture_reader.background_load(doc, path)  # the idle gate's record (newer kits): checked
    for key in ("host", "configuration"):
        if not isinstance(doc[key], dict):
            raise InputError(path, None, key, "a mapping", doc[key])
    host_info.host_metadata(doc, path)  # schema 1 or 2; checks cpu_count
    if "file_bytes" in doc["configuration"]:
        capture_reader.check_number(doc["configuration"]["file_bytes"], path, None, "configuration.file_bytes",
                                    integer=True)
    if not isinstance(doc["host"].get("cpu_model") or [], list):
        raise InputError(path, None, "host.cpu_model", "a list of CPU models", doc["host"]["cpu_model"])
    return doc


def capture_hash(folder: Path) -> tuple[str, int, int]:
    """sha256 over (relative path, sha256 of content) of every file, sorted;
    with the number of files and their total size in bytes."""
    h, n, size = hashlib.sha256(), 0, 0
    for f in capture_reader.walk(folder):
        data = capture_reader.read_raw(f)
        h.update(f"{f.relative_to(folder).as_posix()}\0{hashlib.sha256(data).hexdigest()}\n".encode())
        n, size = n + 1, size + len(data)
    return h.hexdigest(), n, size


def _read_runs_files(folder: Path, device: str, runs: pd.DataFrame, checks: _Checks) -> list[dict]:
    """One row per ok or timed-out run, from its files; their schema checks go to `checks`."""
    rows = []
    for r in runs.itertuples(index=False):
        if r.status not in ("ok", "timeout"):
            continue
        rdir = folder / "runs" / r.run_id
        where = lambda f: rdir / f  # noqa: E731
        row = {c: None for c in RUN_COLUMNS}
        row.update({"device": device, "session": folder.name, "run_id": r.run_id, "table": r.table,
                    "kind": r.kind, "cell": r.cell, "policy": r.policy, "cpu_procs": r.cpu_procs,
                    "cross_pct": r.cross_pct, "rep": r.rep, "seed": r.seed, "status": r.status})
        row.update(_oracle_summary(where("oracle.csv.gz"), checks))
        if r.status == "ok" and r.kind == "transfer":
            rec = _read_json(where("transfer.json"), TRANSFER_SCHEMA, checks)
            row.update(transfer_s=float(rec["duration_s"]), metric=float(rec["duration_s"]), metric_unit="s",
                       cpu_s=float(rec["cpu_user_s"]) + float(rec["cpu_sys_s"]))
        elif r.status == "ok":
            frame = _read_csv(where("audio.csv.gz"), ["seq", "t_ns", "errno"])
            frame = _to_numbers(where("audio.csv.gz"), frame, {"seq": int, "t_ns": int, "errno": int})
            checks.add(where("audio.csv.gz"), frame, AUDIO_SCHEMA, lambda i: f"line {i + 2}")
            _check_steps(where("audio.csv.gz"), frame, "seq", lambda d: d == 1, "the previous seq + 1")
            _check_steps(where("audio.csv.gz"), frame, "t_ns", lambda d: d > 0, "a time after the previous packet's")
            sd, mean = audio_jitter(frame["t_ns"].to_numpy())
            row.update(jitter_sd_us=sd, jitter_mean_us=mean, metric=sd, metric_unit="us",
                       packets=int(len(frame)), send_errors=int((frame["errno"] != 0).sum()),
                       send_refused=int((frame["errno"] == ECONNREFUSED).sum()))
        if r.cross_pct > 0 and r.status == "ok":
            rec = _read_json(where("cross.json"), CROSS_SCHEMA, checks)
            row["cross_offered_bps"] = float(rec["offered_bps"])
        stat = where("cgroup_cpu_stat.json")
        if capture_reader.exists(stat):
            try:
                s = capture_reader.loads_json(capture_reader.read_text(capture_reader.resolve(stat)), stat)
                after, before = (capture_reader.check_number(s[k]["throttled_time"], stat, "record 1",
                                                             f"{k}.throttled_time") for k in ("after", "before"))
                row["throttled_ms"] = (after - before) / 1e6
            except (KeyError, TypeError, json.JSONDecodeError):
                raise InputError(stat, "record 1", "after.throttled_time", "a number", "nothing") from None
        rows.append(row)
    return rows


def read_session(folder: Path) -> tuple[dict, pd.DataFrame]:
    """Validate one session folder; return (session row, runs frame)."""
    manifest = read_manifest(folder / "manifest.yaml")
    if str(manifest["session"]) != folder.name:
        raise InputError(folder / "manifest.yaml", None, "session", f"'{folder.name}' (the folder's name)",
                         manifest["session"])
    device = str(manifest["device"])
    if device != folder.parent.name:
        raise InputError(folder / "manifest.yaml", None, "device", f"'{folder.parent.name}' (the folder's name)",
                         device)
    runs, failed_attempts = read_runs(folder / "runs.csv")
    checks = _Checks()
    try:
        rows = _read_runs_files(folder, device, runs, checks)
    except Exception:
        checks.run()  # a schema failure of an earlier file comes first, as when each file was checked on reading
        raise
    checks.run()
    digest, n_files, size = capture_hash(folder)
    host = host_info.host_metadata(manifest, folder / "manifest.yaml")
    conf = manifest.get("configuration") or {}
    session = {
        "device": device, "session": folder.name, "capture_sha256": digest, "files": n_files,
        "bytes": size, "runs_ok": int(sum(r["status"] == "ok" for r in rows)),
        "runs_timeout": int(sum(r["status"] == "timeout" for r in rows)),
        "runs_failed_attempts": failed_attempts,
        "smoke": bool(manifest.get("smoke", False)),
        "kernel": str(host.get("kernel")), "cpu_model": "; ".join(map(str, host.get("cpu_model") or [])),
        "cpu_count": int(host.get("cpu_count") or 0),
        "file_bytes": int(conf.get("file_bytes") or 0),
        "configuration": json.dumps(conf, sort_keys=True, default=str),
        "background_load": capture_reader.background_text(
            capture_reader.background_load(manifest, folder / "manifest.yaml")),
    }
    return session, pd.DataFrame(rows, columns=RUN_COLUMNS)


def ingest(device_dir: str | Path, out_dir: str | Path) -> None:
    """Validate every session of a device and write runs.parquet and
    sessions.parquet to out_dir; nothing is written on failure."""
    device_dir, out_dir = Path(device_dir), Path(out_dir)
    sessions = capture_reader.session_folders(device_dir)
    srows, frames = [], []
    for folder in sessions:
        s, runs = read_session(folder)
        srows.append(s)
        frames.append(runs)
    runs = pd.concat(frames, ignore_index=True)
    for col in ("cpu_procs", "cross_pct", "rep", "seed", "link_toggles", "renices", "min_nice"):
        runs[col] = runs[col].astype("int64")
    for col in ("metric", "transfer_s", "jitter_sd_us", "jitter_mean_us", "link_up_fraction",
                "cross_offered_bps", "throttled_ms", "cpu_s"):
        runs[col] = runs[col].astype("float64")
    runs["packets"] = runs["packets"].astype("Int64")
    runs["send_errors"] = runs["send_errors"].astype("Int64")
    runs["send_refused"] = runs["send_refused"].astype("Int64")
    runs = runs.sort_values(["session", "run_id"]).reset_index(drop=True)
    sessions_table = pd.DataFrame(srows, columns=SESSION_COLUMNS)
    _check_table(device_dir / "runs.parquet", runs, RUN_TABLE_SCHEMA,
                 lambda i: f"session {runs.loc[i, 'session']}, run {runs.loc[i, 'run_id']}")
    _check_table(device_dir / "sessions.parquet", sessions_table, SESSION_TABLE_SCHEMA,
                 lambda i: f"session {sessions_table.loc[i, 'session']}")
    with replacing_dir(out_dir) as tmp:
        runs.to_parquet(tmp / "runs.parquet", index=False)
        sessions_table.to_parquet(tmp / "sessions.parquet", index=False)


def validate_session(folder: Path) -> list[InputError]:
    """Every problem of one session folder, for `mobitrace validate` (empty: valid)."""
    return problems(read_session, folder)

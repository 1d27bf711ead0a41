"""Raw captures of the cpu-gbps study: parsers and ingest (schemas in
mobitrace.studies.cpu_gbps.schema).

A capture session is a folder data/raw/cpu-gbps/<device>/<session>/ written by
scripts/capture/capture.py:

    manifest.yaml                session: configuration, host metadata, run list
    runs/<run_id>/manifest.yaml  run: direction, target rate, CLOCK_MONOTONIC
                                 start/end, wait4() rusage of both iperf3s
    runs/<run_id>/iperf3.json.gz     `iperf3 -J` output of the client
    runs/<run_id>/proc_stat.txt.gz   `<t_ns> <a /proc/stat cpu line>` samples
    runs/<run_id>/proc_pid.txt.gz    per-process CPU time samples (TSV)
    runs/<run_id>/cpuacct.txt.gz     host-wide CPU time of all tasks (optional;
                                     captures from 2026-11-22T03:07Z on)

Every file may be gzip-compressed or not (`name` or `name.gz`). Each parser
raises InputError naming the file, the line or record, the field, what was
expected and what was found. `ingest` turns every complete session of a
device into one row per run (runs.parquet) plus one row per session
(sessions.parquet), writing nothing if any input is bad.

CPU utilization, as the paper computed it from /proc/stat
(Aggarwal et al. 2019, §2), over a window [t0, t1] bracketing the run:

    total %   = 100 * Δ(user+nice+system+irq+softirq+steal) / Δ(all but guest)
    softirq % = 100 * Δsoftirq / Δ(all but guest)

(guest and guest_nice are already counted in user and nice; proc(5)). The
precise source sums exact CPU time over the client's lifetime T on n CPUs:

    precise total % = 100 * (rusage_client + rusage_server + Δ runtime_ksoftirqd) / (T * n)

with rusage = ru_utime + ru_stime from wait4(2) and the ksoftirqd run time
from /proc/<pid>/schedstat (ns). Where recorded, the host-wide precise total
is 100 * Δ(root cgroup CPU time of all tasks) / (Δt * n): it counts the
same background work /proc/stat counts, so /proc/stat minus it isolates the
error of tick sampling. Without CONFIG_IRQ_TIME_ACCOUNTING SoftIRQ
work done on a process's way out of a system call is charged to that process,
so the precise total covers the network stack's work on this test bed.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pandera.pandas as pa
import yaml

from mobitrace.core.io import replacing_dir
from mobitrace.core import capture_reader
from mobitrace.core import table_checks
from mobitrace.core import safe_yaml
from mobitrace.core import host_info
from mobitrace.core.errors import InputError, plain_check
from mobitrace.studies.cpu_gbps.schema import (  # noqa: F401  (re-exported: ingest.SESSION_SCHEMA ...)
    CPUACCT_SCHEMA, CPUACCT_SOURCES, DIRECTIONS, IPERF_INTERVAL_SCHEMA, IPERF_SUMMARY_SCHEMA, PROC_PID_SCHEMA,
    PROC_STAT_FIELDS, PROC_STAT_SCHEMA, RUN_SCHEMA, RUNS_TABLE_SCHEMA, SESSION_SCHEMA, SESSIONS_TABLE_SCHEMA,
)

BUSY_FIELDS = ["user", "nice", "system", "irq", "softirq", "steal"]
ALL_FIELDS = BUSY_FIELDS + ["idle", "iowait"]
PROC_PID_COLUMNS = ["t_ns", "role", "pid", "schedstat_run_ns", "utime_ticks", "stime_ticks"]

# --------------------------------------------------------------------------- #
# Reading


def _records(text: str):
    """(1-based line number, whitespace-split fields) of each non-blank line."""
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip():
            yield n, line.split()


def resolve(path: str | Path) -> Path:
    """`path`, or `path`.gz when only the compressed file exists."""
    return capture_reader.resolve(path)


def read_text(path: str | Path) -> tuple[Path, str]:
    """The text of `path` (gzip read transparently) and the resolved path."""
    path = resolve(path)
    return path, capture_reader.read_text(path)


def _schema_error(path: Path, exc: pa.errors.SchemaErrors, frame: pd.DataFrame, unit: str) -> InputError:
    """The first failure of a pandera validation as an InputError."""
    case = exc.failure_cases.iloc[0]
    idx = case["index"]
    where = None
    if idx is not None and not (isinstance(idx, float) and math.isnan(idx)):
        idx = int(idx)
        where = f"{unit} {frame.loc[idx, 'line']}" if "line" in frame else f"record {idx + 1}"
    return InputError(path, where, case["column"], plain_check(case['check']), case["failure_case"])


def check_monotonic(frame: pd.DataFrame, group_col: str, cols: list[str], path: Path) -> None:
    """Counters that must not decrease from one sample to the next within a
    group (a CPU, a process): the first decrease raises InputError naming the
    line and the field."""
    values = frame[cols].to_numpy()
    if values.dtype.kind in "iu":  # counters as parsed: each row against the group's row before, in numpy
        codes = pd.factorize(frame[group_col])[0]
        order = np.argsort(codes, kind="stable")
        values, codes = values[order], codes[order]
        if not ((values[1:] < values[:-1]) & (codes[1:] == codes[:-1])[:, None]).any():
            return
    else:
        prev = frame.groupby(group_col, sort=False)[cols].shift()  # one groupby for all the counters
        if not (frame[cols] < prev).to_numpy().any():
            return
    first = None
    for col in cols:
        prev = frame.groupby(group_col, sort=False)[col].shift()
        bad = frame.index[(frame[col] < prev).fillna(False)]
        if len(bad):
            i = bad[0]
            if first is None or frame.loc[i, "line"] < frame.loc[first[0], "line"]:
                first = (i, col, int(prev.loc[i]))
    if first is not None:
        i, col, previous = first
        raise InputError(path, f"line {frame.loc[i, 'line']}", col,
                         f"a value >= {previous} (non-decreasing per {group_col})", int(frame.loc[i, col]))


# --------------------------------------------------------------------------- #
# iperf3 -J


# Where each summary field sits in the iperf3 JSON (for error messages).
IPERF_SUMMARY_KEYS = {
    "protocol": ["start", "test_start", "protocol"], "reverse": ["start", "test_start", "reverse"],
    "duration_s": ["start", "test_start", "duration"], "target_bps": ["start", "test_start", "target_bitrate"],
    "received_bps": ["end", "sum_received", "bits_per_second"], "sent_bps": ["end", "sum_sent", "bits_per_second"],
    "received_seconds": ["end", "sum_received", "seconds"], "retransmits": ["end", "sum_sent", "retransmits"],
    "host_total_pct": ["end", "cpu_utilization_percent", "host_total"],
    "remote_total_pct": ["end", "cpu_utilization_percent", "remote_total"], "version": ["start", "version"],
}


def _get(doc, keys: list, path: Path, expected: str):
    cur = doc
    for i, key in enumerate(keys):
        ok = isinstance(cur, dict) and key in cur if isinstance(key, str) else \
            isinstance(cur, list) and -len(cur) <= key < len(cur)
        if not ok:
            dotted = ".".join(str(k) for k in keys[:i + 1])
            raise InputError(path, "JSON record " + ".".join(str(k) for k in keys[:i]) or "top level",
                             dotted, expected, "nothing")
        cur = cur[key]
    return cur


def parse_iperf3(path: str | Path) -> tuple[dict, pd.DataFrame]:
    """Read an `iperf3 -J` client output (TCP).

    Returns (summary, intervals): summary holds the protocol, direction
    (`reverse`), duration, target rate (bit/s, 0 = unlimited), receiver and
    sender throughput (bit/s, from end.sum_received / end.sum_sent),
    retransmits and iperf3's own cpu_utilization_percent (host = client,
    remote = server; % of one CPU); intervals has one row per reporting
    interval (`line` = 1-based interval number).
    """
    path, text = read_text(path)
    try:
        doc = capture_reader.loads_json(text, path)
    except json.JSONDecodeError as exc:
        raise InputError(path, f"line {exc.lineno}, column {exc.colno}", None, "valid JSON", exc.msg) from None
    if not isinstance(doc, dict):
        raise InputError(path, None, None, "a JSON object", type(doc).__name__)
    if "error" in doc:
        raise InputError(path, "JSON record top level", "error", "a completed test (no 'error')", doc["error"])
    num = "a number"
    summary = {  # keys must match IPERF_SUMMARY_KEYS
        "protocol": _get(doc, ["start", "test_start", "protocol"], path, "a string"),
        "reverse": _get(doc, ["start", "test_start", "reverse"], path, "0 or 1"),
        "duration_s": _get(doc, ["start", "test_start", "duration"], path, num),
        "target_bps": _get(doc, ["start", "test_start", "target_bitrate"], path, num),
        "received_bps": _get(doc, ["end", "sum_received", "bits_per_second"], path, num),
        "sent_bps": _get(doc, ["end", "sum_sent", "bits_per_second"], path, num),
        "received_seconds": _get(doc, ["end", "sum_received", "seconds"], path, num),
        "retransmits": _get(doc, ["end", "sum_sent", "retransmits"], path, num),
        "host_total_pct": _get(doc, ["end", "cpu_utilization_percent", "host_total"], path, num),
        "remote_total_pct": _get(doc, ["end", "cpu_utilization_percent", "remote_total"], path, num),
        "version": _get(doc, ["start", "version"], path, "a string"),
    }
    for key in ("duration_s", "target_bps", "received_bps", "sent_bps", "received_seconds",
                "retransmits", "host_total_pct", "remote_total_pct"):
        val = summary[key]
        if not isinstance(val, (int, float)) or isinstance(val, bool) or not math.isfinite(val):
            raise InputError(path, "JSON record end/start", key, num, val)
    if summary["reverse"] not in (0, 1, True, False):
        raise InputError(path, "JSON record start.test_start", "reverse", "0 or 1", summary["reverse"])
    summary["reverse"] = bool(summary["reverse"])
    dtypes = {"duration_s": float, "target_bps": "int64", "received_bps": float, "sent_bps": float,
              "received_seconds": float, "retransmits": "int64", "host_total_pct": float,
              "remote_total_pct": float, "protocol": str, "version": str}
    def summary_error(exc: pa.errors.SchemaErrors) -> InputError:
        case = exc.failure_cases.iloc[0]
        keys = IPERF_SUMMARY_KEYS.get(case["column"], [case["column"]])
        return InputError(path, "JSON record " + ".".join(keys[:-1]), ".".join(keys),
                          plain_check(case['check']), case["failure_case"])
    table_checks.validated_record(IPERF_SUMMARY_SCHEMA, summary, dtypes, summary_error)

    raw_intervals = _get(doc, ["intervals"], path, "a list of intervals")
    if not isinstance(raw_intervals, list) or not raw_intervals:
        raise InputError(path, "JSON record top level", "intervals", "a non-empty list", raw_intervals)
    rows = []
    for i, item in enumerate(raw_intervals, 1):
        s = item.get("sum") if isinstance(item, dict) else None
        if not isinstance(s, dict):
            raise InputError(path, f"interval {i}", "sum", "an object", s)
        row = {}
        for key in ("start", "end", "seconds", "bytes", "bits_per_second"):
            val = s.get(key)
            if not isinstance(val, (int, float)) or isinstance(val, bool):
                raise InputError(path, f"interval {i}", f"sum.{key}", "a number", val)
            row[key] = val
        row["line"] = i
        rows.append(row)
    intervals = pd.DataFrame(rows).astype({"start": float, "end": float, "seconds": float,
                                           "bytes": "int64", "bits_per_second": float, "line": int})
    intervals = table_checks.validated(IPERF_INTERVAL_SCHEMA, intervals,
                                         lambda exc: _schema_error(path, exc, intervals, "interval"))
    return summary, intervals


# --------------------------------------------------------------------------- #
# /proc/stat samples

# proc(5): iowait "may decrease in certain situations" (and idle with it on
# NO_HZ kernels), so only the other counters must not decrease.
PROC_STAT_MONOTONIC = ["t_ns", "user", "nice", "system", "irq", "softirq", "steal", "guest", "guest_nice"]


def parse_proc_stat(path: str | Path) -> pd.DataFrame:
    """Read /proc/stat samples: lines `<t_ns> cpu[N] user nice system idle
    iowait irq softirq steal [guest [guest_nice]]` (proc(5); counters in
    USER_HZ ticks). Time and every counter but idle and iowait must not
    decrease per CPU (proc(5): iowait may decrease)."""
    path, text = read_text(path)
    records = list(_records(text))
    width = len(records[0][1]) if records else 0
    counts = capture_reader.count_matrix([[p[0], *p[2:]] for _, p in records]) if 10 <= width <= 12 and all(
        len(p) == width and p[1].startswith("cpu") for _, p in records) else None
    if counts is None:  # a malformed line (or none): name it, line by line
        frame = _proc_stat_rows(records, path)
    else:
        columns = dict(zip(["t_ns", *PROC_STAT_FIELDS], counts.T))
        zeros = np.zeros(len(records), dtype="int64")  # guest, guest_nice: absent on old kernels
        frame = pd.DataFrame({"t_ns": columns["t_ns"], "cpu": [p[1] for _, p in records],
                              **{f: columns.get(f, zeros) for f in PROC_STAT_FIELDS},
                              "line": np.array([n for n, _ in records], dtype="int64")})
    frame = table_checks.validated(PROC_STAT_SCHEMA, frame, lambda exc: _schema_error(path, exc, frame, "line"))
    check_monotonic(frame, "cpu", PROC_STAT_MONOTONIC, path)
    return frame


def _proc_stat_rows(records: list, path: Path) -> pd.DataFrame:
    rows = []
    for n, parts in records:
        if len(parts) < 10 or len(parts) > 12:
            raise InputError(path, f"line {n}", None,
                             "'<t_ns> cpuN' and 8 to 10 counters", " ".join(parts)[:80])
        if not parts[1].startswith("cpu"):
            raise InputError(path, f"line {n}", "cpu", "cpu or cpuN", parts[1])
        row = {"cpu": parts[1], "line": n}
        for name, val in zip(["t_ns", *PROC_STAT_FIELDS], [parts[0], *parts[2:]]):
            if not capture_reader.is_count(val):
                raise InputError(path, f"line {n}", name, "a non-negative integer", val)
            row[name] = int(val)
        rows.append(row)
    if not rows:
        raise InputError(path, None, None, "at least one sample", "an empty file")
    frame = pd.DataFrame(rows, columns=["t_ns", "cpu", *PROC_STAT_FIELDS, "line"])
    frame[PROC_STAT_FIELDS] = frame[PROC_STAT_FIELDS].fillna(0)
    return frame.astype({c: "int64" for c in ["t_ns", *PROC_STAT_FIELDS]}).astype({"line": int})


# --------------------------------------------------------------------------- #
# per-process CPU time samples


def parse_proc_pid(path: str | Path) -> pd.DataFrame:
    """Read per-process CPU samples (TSV with header PROC_PID_COLUMNS):
    run time from /proc/<pid>/schedstat (ns) and utime/stime from
    /proc/<pid>/stat (USER_HZ ticks)."""
    path, text = read_text(path)
    lines = text.splitlines()
    if not lines or lines[0].split("\t") != PROC_PID_COLUMNS:
        raise InputError(path, "line 1", "header", "\t".join(PROC_PID_COLUMNS), lines[0] if lines else "")
    records = [(n, line.split("\t")) for n, line in enumerate(lines[1:], 2) if line.strip()]
    counts = capture_reader.count_matrix([[p[0], *p[2:]] for _, p in records]) if records and all(
        len(p) == len(PROC_PID_COLUMNS) for _, p in records) else None
    if counts is None:  # a malformed line (or none): name it, line by line
        frame = _proc_pid_rows(records, path)
    else:
        frame = pd.DataFrame({"t_ns": counts[:, 0], "role": [p[1] for _, p in records],
                              **dict(zip(PROC_PID_COLUMNS[2:], counts[:, 1:].T)),
                              "line": np.array([n for n, _ in records], dtype="int64")})
    frame = table_checks.validated(PROC_PID_SCHEMA, frame, lambda exc: _schema_error(path, exc, frame, "line"))
    check_monotonic(frame, "role", ["t_ns", "schedstat_run_ns", "utime_ticks", "stime_ticks"], path)
    return frame


def _proc_pid_rows(records: list, path: Path) -> pd.DataFrame:
    rows = []
    for n, parts in records:
        if len(parts) != len(PROC_PID_COLUMNS):
            raise InputError(path, f"line {n}", None, f"{len(PROC_PID_COLUMNS)} tab-separated fields",
                             len(parts))
        row = {"role": parts[1], "line": n}
        for name, val in zip(PROC_PID_COLUMNS, parts):
            if name == "role":
                continue
            if not capture_reader.is_count(val):
                raise InputError(path, f"line {n}", name, "a non-negative integer", val)
            row[name] = int(val)
        rows.append(row)
    frame = pd.DataFrame(rows, columns=[*PROC_PID_COLUMNS, "line"])
    return frame.astype({c: "int64" for c in PROC_PID_COLUMNS if c != "role"}).astype({"role": str, "line": int})


# --------------------------------------------------------------------------- #
# host-wide precise CPU time (optional)


def parse_cpuacct(path: str | Path) -> pd.DataFrame:
    """Read host-wide CPU time samples: lines `<t_ns> cpuacct_percpu_ns
    <ns of CPU 0> <ns of CPU 1> ...` (root cgroup v1 cpuacct.usage_percpu) or
    `<t_ns> cgroup2_usage_ns <ns>` (cgroup v2 cpu.stat usage_usec x 1000).
    Long format: one row per sample and CPU (cpu 0 for the v2 total)."""
    path, text = read_text(path)
    records = list(_records(text))
    width = len(records[0][1]) if records else 0
    counts = capture_reader.count_matrix([[p[0], *p[2:]] for _, p in records]) if width >= 3 and all(
        len(p) == width and p[1] in CPUACCT_SOURCES for _, p in records) else None
    if counts is None:  # a malformed line (or none): name it, line by line
        frame = _cpuacct_rows(records, path)
    else:  # long format: one row per sample and CPU
        k = width - 2
        frame = pd.DataFrame({"t_ns": np.repeat(counts[:, 0], k), "source": np.repeat([p[1] for _, p in records], k),
                              "cpu": np.tile(np.arange(k, dtype="int64"), len(records)),
                              "usage_ns": counts[:, 1:].ravel(),
                              "line": np.repeat(np.array([n for n, _ in records], dtype="int64"), k)})
    frame = table_checks.validated(CPUACCT_SCHEMA, frame, lambda exc: _schema_error(path, exc, frame, "line"))
    check_monotonic(frame, "cpu", ["t_ns", "usage_ns"], path)
    return frame


def _cpuacct_rows(records: list, path: Path) -> pd.DataFrame:
    rows = []
    for n, parts in records:
        if len(parts) < 3:
            raise InputError(path, f"line {n}", None, "'<t_ns> <source> <ns>...'", " ".join(parts)[:80])
        if parts[1] not in CPUACCT_SOURCES:
            raise InputError(path, f"line {n}", "source", " or ".join(CPUACCT_SOURCES), parts[1])
        for name, val in [("t_ns", parts[0])] + [(f"cpu{i}", v) for i, v in enumerate(parts[2:])]:
            if not capture_reader.is_count(val):
                raise InputError(path, f"line {n}", name, "a non-negative integer", val)
        for i, val in enumerate(parts[2:]):
            rows.append({"t_ns": int(parts[0]), "source": parts[1], "cpu": i, "usage_ns": int(val), "line": n})
    if not rows:
        raise InputError(path, None, None, "at least one sample", "an empty file")
    return pd.DataFrame(rows).astype({"t_ns": "int64", "cpu": "int64", "usage_ns": "int64", "line": int})


def cpuacct_utilization(acct: pd.DataFrame, t0: int, t1: int, n_cpus: int, path: Path) -> float:
    """Host-wide precise Total %: 100 * Δ(CPU time of all tasks) / (Δt * n)
    over the samples bracketing [t0, t1]."""
    total_ns, window = 0, None
    for _, g in acct.groupby("cpu", sort=True):
        times = g["t_ns"].to_numpy()
        i0, i1 = _bracket(times, t0, t1, path)
        total_ns += int(g["usage_ns"].iloc[i1]) - int(g["usage_ns"].iloc[i0])
        window = (times[i1] - times[i0]) if window is None else window
    return 100.0 * total_ns / (window * n_cpus) if window else float("nan")


# --------------------------------------------------------------------------- #
# manifests


def _load_yaml(path: Path) -> tuple[dict, yaml.Node]:
    path, text = read_text(path)
    doc, node = safe_yaml.loads_yaml(text, path)
    if not isinstance(doc, dict):
        raise InputError(path, None, None, "a YAML mapping", type(doc).__name__)
    return doc, node


def _line_of(node: yaml.Node | None, keys: list[str]) -> str | None:
    """'line N' of the deepest existing key on `keys` in a composed YAML tree."""
    line = None
    for key in keys:
        if not isinstance(node, yaml.MappingNode):
            break
        for k, v in node.value:
            if k.value == key:
                line, node = k.start_mark.line + 1, v
                break
        else:
            break
    return f"line {line}" if line else None


def _field(doc: dict, node, keys: list[str], path: Path, expected: str, kinds: tuple):
    cur = doc
    for i, key in enumerate(keys):
        if not isinstance(cur, dict) or key not in cur:
            raise InputError(path, _line_of(node, keys[:i]) or "top level", ".".join(keys[:i + 1]),
                             expected, "nothing")
        cur = cur[key]
    if kinds and (not isinstance(cur, kinds) or (isinstance(cur, bool) and bool not in kinds)):
        raise InputError(path, _line_of(node, keys), ".".join(keys), expected, cur)
    return cur


# Where each session record field sits in manifest.yaml (for error messages).
SESSION_KEYS = {
    "study": ["study"], "device": ["device"], "session": ["session"], "kind": ["kind"],
    "config": ["configuration", "name"], "repetitions": ["configuration", "repetitions"],
    "duration_s": ["configuration", "duration_s"], "sample_period_ms": ["configuration", "sample_period_ms"],
    "hostname": ["host", "hostname"], "kernel": ["host", "kernel"], "cpu_model": ["host", "cpu", "model"],
    "n_cpus": ["host", "cpu", "count"], "hypervisor": ["host", "cpu", "hypervisor"], "user_hz": ["host", "user_hz"],
    "cpu_quota": ["configuration", "cpu_quota"], "n_runs": ["runs"], "iperf3_version": ["tools", "iperf3"],
}


# Session columns read from host metadata: column -> schema-2 host key.
HOST_COLUMNS = {"hostname": "hostname_hash", "kernel": "kernel", "cpu_model": "cpu_model", "n_cpus": "cpu_count",
                "hypervisor": "hypervisor", "user_hz": "user_hz"}


def parse_session_manifest(path: str | Path) -> dict:
    """Read and check a session manifest.yaml; returns one flat record
    (SESSION_SCHEMA) plus `runs` (the list of run ids)."""
    path = resolve(path)
    doc, node = _load_yaml(path)
    gate = capture_reader.background_load(doc, path)  # the idle gate's record (newer kits): checked
    f = lambda keys, expected, kinds: _field(doc, node, keys, path, expected, kinds)  # noqa: E731
    text, integer = (str,), (int,)
    offloads = f(["testbed", "device", "ethtool_k"], "a mapping of offloads", (dict,))
    rps = f(["testbed", "device", "rps_cpus"], "a mapping of rx queues to masks", (dict,))
    hk = host_info.host_key_paths(doc, SESSION_KEYS, HOST_COLUMNS)  # schema-1 or schema-2 host keys
    rec = {
        "study": f(["study"], "a study slug", text),
        "device": f(["device"], "a device name", text),
        "session": f(["session"], "a session name", text),
        "kind": f(["kind"], "default or smoke", text),
        "config": f(["configuration", "name"], "a configuration name", text),
        "repetitions": f(["configuration", "repetitions"], "an integer", integer),
        "duration_s": f(["configuration", "duration_s"], "an integer", integer),
        "sample_period_ms": f(["configuration", "sample_period_ms"], "an integer", integer),
        # A schema-1 manifest's plain host name is published hashed, as schema 2 records it.
        "hostname": (host_info.hostname_hash if hk["hostname"][-1] == "hostname" else str)(
            f(hk["hostname"], "a host name", text)),
        "kernel": f(hk["kernel"], "a kernel release", text),
        "cpu_model": "; ".join(host_info.host_list(f(hk["cpu_model"], "a CPU model", (str, list)))),
        "n_cpus": f(hk["n_cpus"], "an integer", integer),
        "hypervisor": f(hk["hypervisor"], "true or false", (bool,)),
        "user_hz": f(hk["user_hz"], "an integer", integer),
        "config_hz": str(f(["host", "kernel_config", "CONFIG_HZ"], "a value", ())),
        "irq_time_accounting": str(f(["host", "kernel_config", "CONFIG_IRQ_TIME_ACCOUNTING"], "a value", ())),
        "gro_device": str(offloads.get("generic-receive-offload", "unknown")),
        "gso_device": str(offloads.get("generic-segmentation-offload", "unknown")),
        "tso_device": str(offloads.get("tcp-segmentation-offload", "unknown")),
        "rps_device": ",".join(f"{k}={v}" for k, v in sorted(rps.items())),
        "cpu_quota": doc.get("configuration", {}).get("cpu_quota"),
        "device_cpus": str(doc.get("configuration", {}).get("device_cpus")),
        "iperf3_version": f(["tools", "iperf3"], "a version string", text),
        "started_utc": str(f(["started_utc"], "a UTC time", ())),
        "background_load": capture_reader.background_text(gate),
    }
    runs = f(["runs"], "a non-empty list of run ids", (list,))
    if not runs or not all(isinstance(r, str) for r in runs):
        raise InputError(path, _line_of(node, ["runs"]), "runs", "a non-empty list of run ids", runs)
    for i, run_id in enumerate(runs):  # each becomes a folder name: runs/<run_id>
        capture_reader.check_name(run_id, path, _line_of(node, ["runs"]), f"runs[{i}]")
        if run_id in runs[:i]:
            raise InputError(path, _line_of(node, ["runs"]), f"runs[{i}]", "unique run ids", run_id)
    rec["n_runs"] = len(runs)
    quota = rec["cpu_quota"]
    if quota is not None and (isinstance(quota, bool) or not isinstance(quota, (int, float))):
        keys = SESSION_KEYS["cpu_quota"]
        raise InputError(path, _line_of(node, keys), ".".join(keys), "a number (or no quota)", quota)
    if rec["device"] != path.parent.parent.name and path.parent.parent.name != "":
        pass  # the folder name is the device; checked by ingest
    frame = pd.DataFrame([rec])
    frame["cpu_quota"] = frame["cpu_quota"].astype(float)
    def session_error(exc: pa.errors.SchemaErrors) -> InputError:
        case = exc.failure_cases.iloc[0]
        keys = hk.get(case["column"]) or SESSION_KEYS.get(case["column"], [case["column"]])
        return InputError(path, _line_of(node, keys), ".".join(keys), plain_check(case['check']),
                          case["failure_case"])
    table_checks.validated(SESSION_SCHEMA, frame, session_error)
    rec["runs"] = runs
    return rec


RUN_KEYS = {
    "run_id": ["run_id"], "direction": ["direction"], "target_rate_bps": ["target_rate_bps"],
    "repetition": ["repetition"], "duration_s": ["duration_s"], "t_start_ns": ["t_start_monotonic_ns"],
    "t_end_ns": ["t_end_monotonic_ns"], "client_exit": ["client", "exit_status"],
}


_RATE_IN_RUN_ID = re.compile(r"(?:down|up)-(?:(max)|(\d+(?:\.\d+)?)([KMG]))-r\d+")
_RATE_UNIT = {"K": 1e3, "M": 1e6, "G": 1e9}


def _check_units(rec: dict, path: Path, node) -> None:
    """Catch unit slips the schema cannot: the rate must be the one the run
    id names (1G = 1,000,000,000 bit/s, max = 0), and duration_s the client's
    measured lifetime in seconds (a value in ms is a thousand times it)."""
    m = _RATE_IN_RUN_ID.fullmatch(rec["run_id"])
    if m is not None:
        want = 0 if m.group(1) else round(float(m.group(2)) * _RATE_UNIT[m.group(3)])
        if rec["target_rate_bps"] != want:
            raise InputError(path, _line_of(node, ["target_rate_bps"]), "target_rate_bps",
                             f"{want} bit/s (run {rec['run_id']}; the field is in bit/s, not Mbit/s)",
                             rec["target_rate_bps"])
    lifetime = (rec["t_end_ns"] - rec["t_start_ns"]) / 1e9
    if not 0.5 * lifetime - 2 <= rec["duration_s"] <= 1.5 * lifetime + 2:
        raise InputError(path, _line_of(node, ["duration_s"]), "duration_s",
                         f"about {lifetime:.0f} s (the client ran {lifetime:.1f} s; the field is in seconds, "
                         "not ms)", rec["duration_s"])


def parse_run_manifest(path: str | Path) -> dict:
    """Read and check a run's manifest.yaml; returns a flat record (RUN_SCHEMA)."""
    path = resolve(path)
    doc, node = _load_yaml(path)
    f = lambda keys, expected, kinds: _field(doc, node, keys, path, expected, kinds)  # noqa: E731
    num, integer = (int, float), (int,)
    cru = f(["client", "rusage"], "a mapping", (dict,))
    sru = f(["server", "rusage"], "a mapping", (dict,))
    rec = {
        "run_id": f(["run_id"], "a run id", (str,)),
        "direction": f(["direction"], "down or up", (str,)),
        "target_rate_bps": f(["target_rate_bps"], "an integer (0 = unlimited)", integer),
        "repetition": f(["repetition"], "an integer", integer),
        "duration_s": f(["duration_s"], "an integer", integer),
        "t_start_ns": f(["t_start_monotonic_ns"], "an integer (ns)", integer),
        "t_end_ns": f(["t_end_monotonic_ns"], "an integer (ns)", integer),
        "client_cpu_s": f(["client", "rusage", "utime_s"], "seconds", num) + f(["client", "rusage", "stime_s"], "seconds", num),
        "server_cpu_s": f(["server", "rusage", "utime_s"], "seconds", num) + f(["server", "rusage", "stime_s"], "seconds", num),
        "client_exit": f(["client", "exit_status"], "an integer", integer),
    }
    del cru, sru
    for side in ("client", "server"):
        for part in ("utime_s", "stime_s"):
            val = doc[side]["rusage"][part]
            if val < 0:
                keys = [side, "rusage", part]
                raise InputError(path, _line_of(node, keys), ".".join(keys), "CPU seconds >= 0", val)
    if rec["t_end_ns"] <= rec["t_start_ns"]:
        raise InputError(path, _line_of(node, ["t_end_monotonic_ns"]), "t_end_monotonic_ns",
                         f"a time after t_start_monotonic_ns ({rec['t_start_ns']})", rec["t_end_ns"])
    if rec["run_id"] != path.parent.name:
        raise InputError(path, _line_of(node, ["run_id"]), "run_id", f"'{path.parent.name}' (the folder)",
                         rec["run_id"])
    _check_units(rec, path, node)
    def run_error(exc: pa.errors.SchemaErrors) -> InputError:
        case = exc.failure_cases.iloc[0]
        keys = RUN_KEYS.get(case["column"], [case["column"]])
        return InputError(path, _line_of(node, keys), ".".join(keys),
                          plain_check(case['check']), case["failure_case"])
    table_checks.validated_record(RUN_SCHEMA, rec, {"client_cpu_s": float, "server_cpu_s": float}, run_error)
    return rec


# --------------------------------------------------------------------------- #
# One run -> one row


def _bracket(times: np.ndarray, t0: int, t1: int, path: Path) -> tuple[int, int]:
    """Indices of the last sample at or before t0 and the first at or after t1."""
    i0 = np.searchsorted(times, t0, side="right") - 1
    i1 = np.searchsorted(times, t1, side="left")
    if i0 < 0 or i1 >= len(times):
        raise InputError(path, None, "t_ns", f"samples before {t0} and after {t1} (the run)",
                         f"samples from {times[0]} to {times[-1]}")
    return int(i0), int(i1)


def proc_stat_utilization(stat: pd.DataFrame, t0: int, t1: int, path: Path) -> dict:
    """Total and SoftIRQ CPU % (aggregate and per CPU) from /proc/stat
    samples over the window bracketing [t0, t1] (see module docstring)."""
    out = {}
    cpus, all_times = stat["cpu"].to_numpy(), stat["t_ns"].to_numpy()
    counters = stat[ALL_FIELDS].to_numpy(dtype="int64")  # numpy, not a groupby: one call per run
    busy_cols = [ALL_FIELDS.index(f) for f in BUSY_FIELDS]
    for cpu in sorted(set(cpus.tolist())):  # the order of groupby("cpu", sort=True)
        mine = cpus == cpu
        times = all_times[mine]
        i0, i1 = _bracket(times, t0, t1, path)
        d = counters[mine][i1] - counters[mine][i0]
        total = int(d.sum())
        busy = int(d[busy_cols].sum())
        key = "all" if cpu == "cpu" else cpu
        out[f"stat_{key}_total_pct"] = 100.0 * busy / total if total else float("nan")
        out[f"stat_{key}_softirq_pct"] = 100.0 * int(d[ALL_FIELDS.index("softirq")]) / total if total else float("nan")
        if cpu == "cpu":
            out["stat_window_s"] = (times[i1] - times[i0]) / 1e9
            out["stat_ticks"] = total
            out["stat_samples"] = i1 - i0 + 1
    return out


def ksoftirqd_seconds(pid: pd.DataFrame, t0: int, t1: int, path: Path) -> float:
    """CPU seconds all ksoftirqd threads ran in the window bracketing [t0, t1]."""
    total = 0
    roles, times, run_ns = (pid[c].to_numpy() for c in ("role", "t_ns", "schedstat_run_ns"))
    for role in sorted({r for r in roles.tolist() if r.startswith("ksoftirqd/")}):  # groupby("role")'s order
        mine = roles == role  # numpy, not a groupby: one call per run
        i0, i1 = _bracket(times[mine], t0, t1, path)
        total += int(run_ns[mine][i1]) - int(run_ns[mine][i0])
    return total / 1e9


def run_row(run_dir: Path, n_cpus: int) -> dict:
    """One run folder -> one record of throughput and CPU utilization."""
    m = parse_run_manifest(run_dir / "manifest.yaml")
    summary, intervals = parse_iperf3(run_dir / "iperf3.json")
    stat_path = resolve(run_dir / "proc_stat.txt")
    stat = parse_proc_stat(stat_path)
    pid_path = resolve(run_dir / "proc_pid.txt")
    pid = parse_proc_pid(pid_path)
    if m["target_rate_bps"] and summary.get("target_bps") not in (None, m["target_rate_bps"]):
        raise InputError(resolve(run_dir / "iperf3.json"), "JSON record start.test_start", "target_bitrate",
                         f"{m['target_rate_bps']} (target_rate_bps of the run's manifest)", summary["target_bps"])
    expect_reverse = m["direction"] == "down"
    if summary["reverse"] != expect_reverse:
        raise InputError(resolve(run_dir / "iperf3.json"), "JSON record start.test_start", "reverse",
                         f"{int(expect_reverse)} for direction {m['direction']}", int(summary["reverse"]))
    t0, t1 = m["t_start_ns"], m["t_end_ns"]
    lifetime = (t1 - t0) / 1e9
    ksoft = ksoftirqd_seconds(pid, t0, t1, pid_path)
    row = {
        "run_id": m["run_id"], "direction": m["direction"], "target_rate_bps": m["target_rate_bps"],
        "target_rate_mbps": m["target_rate_bps"] / 1e6, "repetition": m["repetition"],
        "duration_s": m["duration_s"], "client_lifetime_s": lifetime,
        "throughput_gbps": summary["received_bps"] / 1e9,
        "sender_gbps": summary["sent_bps"] / 1e9,
        "retransmits": summary["retransmits"],
        "n_intervals": len(intervals),
        "interval_gbps_cv": float(intervals["bits_per_second"].std(ddof=1) / intervals["bits_per_second"].mean())
        if len(intervals) > 1 and intervals["bits_per_second"].mean() > 0 else float("nan"),
        **proc_stat_utilization(stat, t0, t1, stat_path),
        "client_cpu_s": m["client_cpu_s"], "server_cpu_s": m["server_cpu_s"], "ksoftirqd_cpu_s": ksoft,
    }
    denom = lifetime * n_cpus / 100.0
    row["precise_total_pct"] = (m["client_cpu_s"] + m["server_cpu_s"] + ksoft) / denom
    row["precise_device_pct"] = m["client_cpu_s"] / denom
    row["precise_peer_pct"] = m["server_cpu_s"] / denom
    row["precise_ksoftirqd_pct"] = ksoft / denom
    # Host-wide precise Total (all tasks), where the capture recorded it.
    acct_file = resolve(run_dir / "cpuacct.txt") if capture_reader.exists(run_dir / "cpuacct.txt") else None
    row["host_precise_total_pct"] = (cpuacct_utilization(parse_cpuacct(acct_file), t0, t1, n_cpus, acct_file)
                                     if acct_file is not None else float("nan"))
    # iperf3's own getrusage-based figure, % of one CPU -> % of all CPUs.
    row["iperf3_total_pct"] = (summary["host_total_pct"] + summary["remote_total_pct"]) / n_cpus
    return row


def file_md5(path: Path) -> str:
    return capture_reader.md5_raw(path)


def session_hash(folder: Path) -> tuple[str, int, int]:
    """md5 over the sorted (relative path, md5) of every file in a capture
    folder, with the number of files and their total bytes."""
    files = capture_reader.walk(folder)
    h = hashlib.md5()
    for p in files:
        h.update(f"{p.relative_to(folder).as_posix()}\t{file_md5(p)}\n".encode())
    return h.hexdigest(), len(files), sum(p.stat().st_size for p in files)


def load_device(device_dir: str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """All sessions of a device -> (sessions, runs) frames."""
    device_dir = Path(device_dir)
    sessions, runs = [], []
    for folder in capture_reader.session_folders(device_dir):
        rec = parse_session_manifest(folder / "manifest.yaml")
        if rec["device"] != device_dir.name:
            raise InputError(resolve(folder / "manifest.yaml"), None, "device",
                             f"'{device_dir.name}' (the folder)", rec["device"])
        if rec["session"] != folder.name:
            raise InputError(resolve(folder / "manifest.yaml"), None, "session",
                             f"'{folder.name}' (the folder)", rec["session"])
        run_ids = rec.pop("runs")
        runs_dir = folder / "runs"
        unlisted = sorted({p.name for p in runs_dir.iterdir() if p.is_dir()} - set(run_ids)) \
            if runs_dir.is_dir() else []
        if unlisted:
            raise InputError(resolve(folder / "manifest.yaml"), None, "runs",
                             f"every folder under runs/ listed (runs/{unlisted[0]})",
                             "a run folder the manifest does not list")
        digest, n_files, n_bytes = session_hash(folder)
        sessions.append({**rec, "capture_md5": digest, "n_files": n_files, "bytes": n_bytes,
                         "path": folder.as_posix()})
        for run_id in run_ids:
            run_dir = folder / "runs" / run_id
            if not run_dir.is_dir():
                raise InputError(resolve(folder / "manifest.yaml"), None, "runs",
                                 f"a folder runs/{run_id}", "no such folder")
            runs.append({"device": rec["device"], "session": rec["session"], "config": rec["config"],
                         **run_row(run_dir, rec["n_cpus"])})
    return pd.DataFrame(sessions), pd.DataFrame(runs)


def ingest(device_dir: str | Path, out_dir: str | Path) -> None:
    """Validate every capture of a device and write sessions.parquet and
    runs.parquet to out_dir; on any error nothing is written."""
    with table_checks.checked_once():
        sessions, runs = load_device(device_dir)
    runs = runs.sort_values(["session", "direction", "target_rate_bps", "repetition"])
    for name, frame, schema in (("sessions", sessions, SESSIONS_TABLE_SCHEMA), ("runs", runs, RUNS_TABLE_SCHEMA)):
        try:
            schema.validate(frame)
        except pa.errors.SchemaError as exc:
            raise InputError(Path(device_dir), f"{name} table", exc.schema.name if exc.schema else None,
                             plain_check(exc.check), str(exc).splitlines()[0]) from None
    with replacing_dir(out_dir) as tmp:
        sessions.to_parquet(tmp / "sessions.parquet", index=False)
        runs.to_parquet(tmp / "runs.parquet", index=False)


def validate_session(folder: Path) -> list[InputError]:
    """Every problem of one session folder, for `mobitrace validate` (empty: valid)."""
    manifest = folder / "manifest.yaml"
    try:
        rec = parse_session_manifest(manifest)
    except InputError as exc:
        return [exc]
    problems = []
    for key, want in (("device", folder.parent.name), ("session", folder.name)):
        if rec[key] != want:
            problems.append(InputError(manifest, None, key, f"'{want}' (the folder's name)", rec[key]))
    runs_dir = folder / "runs"
    present = {p.name for p in runs_dir.iterdir() if p.is_dir()} if runs_dir.is_dir() else set()
    # All runs read with one check per table first (ingest's path); only when
    # a run has a problem is each run read again alone, to list every problem.
    try:
        with table_checks.checked_once():
            for run_id in rec["runs"]:
                if run_id in present:
                    run_row(runs_dir / run_id, rec["n_cpus"])
        runs_ok = True
    except InputError:
        runs_ok = False
    for run_id in rec["runs"]:
        if run_id not in present:
            problems.append(InputError(manifest, None, "runs", f"a folder runs/{run_id}", "no such folder"))
            continue
        if runs_ok:
            continue
        try:
            run_row(runs_dir / run_id, rec["n_cpus"])
        except InputError as exc:
            problems.append(exc)
    for extra in sorted(present - set(rec["runs"])):
        problems.append(InputError(manifest, None, "runs", f"every folder under runs/ listed (runs/{extra})",
                                   "a run folder the manifest does not list"))
    return problems

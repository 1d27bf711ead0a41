"""Raw captures of the stack-trim capture kit -> validated tidy tables.

A device folder data/raw/stack-trim/<device>/ holds session folders written by
scripts/capture/stack_trim/run.py:

    manifest.yaml                  configuration (conditions, rates) and host metadata
    runs.csv                       one line per run (RUN_FIELDS)
    runs/<run_id>/sender.json      stnet's report: bytes, calls, data-phase CPU time
    runs/<run_id>/receiver.json    the same for the receiver
    runs/<run_id>/proc_stat.txt.gz '# t_ns <ns>', /proc/stat cpu lines, 'mhz <cpu> <MHz>'
                                   every 500 ms
    runs/<run_id>/run.json         the run's manifest (wait4 rusage, loadavg, commands)

`ingest` validates everything and writes, atomically (nothing on an
InputError naming file, line/record, field, expected and found):

* runs.parquet: one row per run (RUN_COLUMNS): CPU seconds of each process
  (precise: getrusage of the data phase), of the device under test (the
  sender for `up`, the receiver for `down`) and of both endpoints; bytes,
  goodput, delivered fraction; host-wide CPU seconds by /proc/stat state over
  the run (tick-sampled, includes every process of the shared host); mean MHz.
* samples.parquet: per run, interval and CPU: busy fraction and MHz.
* sessions.parquet: one row per session with the capture's content hash.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pandera.pandas as pa

from mobitrace.core.io import replacing_dir
from mobitrace.core import capture_reader
from mobitrace.core import safe_yaml
from mobitrace.core import host_info
from mobitrace.core.errors import InputError, plain_check
from mobitrace.studies.stack_trim.schema import (RUN_COLUMNS, RUN_FIELDS, RUNS_CSV_SCHEMA, RUNS_SCHEMA,
                                                 SAMPLE_COLUMNS, SAMPLES_SCHEMA, SESSION_COLUMNS,
                                                 SESSIONS_SCHEMA, STAT_STATES)

REPORT_FIELDS = {"role": str, "proto": str, "mode": str, "size": int, "bytes": int, "calls": int,
                 "short_calls": int, "errors": int, "elapsed_s": float, "phase_utime_s": float,
                 "phase_stime_s": float, "utime_s": float, "stime_s": float}


def _open_text(path: Path) -> str:
    if not capture_reader.exists(path):
        raise InputError(path, None, None, "a file written by the capture kit", "no such file")
    return capture_reader.read_text(capture_reader.resolve(path))


def condition_of(row) -> str:
    return f"{row['link']}-{row['direction']}-{row['proto']}{row['size']}-{row['sender_mode']}-{row['receiver_mode']}"


def read_runs_csv(path: Path) -> pd.DataFrame:
    text = _open_text(path)
    lines = text.splitlines()
    if not lines or lines[0].split(",") != RUN_FIELDS:
        raise InputError(path, "line 1", "header", ",".join(RUN_FIELDS), lines[0] if lines else "")
    rows = []
    for i, line in enumerate(lines[1:], start=2):
        parts = line.split(",")
        if len(parts) != len(RUN_FIELDS):
            raise InputError(path, f"line {i}", None, f"{len(RUN_FIELDS)} comma-separated fields", line)
        rows.append(dict(zip(RUN_FIELDS, parts)))
    if not rows:
        raise InputError(path, "line 2", None, "at least one run", "no runs")
    frame = pd.DataFrame(rows, columns=RUN_FIELDS)
    for col, typ in (("size", int), ("mtu", int), ("rep", int), ("rate_mbps", float), ("duration_s", float)):
        for i, v in enumerate(frame[col]):
            try:
                typ(v)
            except ValueError:
                raise InputError(path, f"line {i + 2}", col, f"a number ({typ.__name__})", v) from None
        frame[col] = frame[col].map(typ)
    try:
        frame = RUNS_CSV_SCHEMA.validate(frame, lazy=True)
    except pa.errors.SchemaErrors as exc:
        case = exc.failure_cases.iloc[0]
        idx = case["index"]
        where = f"line {int(idx) + 2}" if idx is not None and not pd.isna(idx) else None
        raise InputError(path, where, case["column"], plain_check(case['check']), case["failure_case"]) from None
    for i, r in frame.iterrows():
        want = f"{condition_of(r)}-r{r['rate_mbps']:g}-{r['rep']:02d}"
        if r["run_id"] != want:
            raise InputError(path, f"line {i + 2}", "run_id", f"'{want}' (from the row's fields)", r["run_id"])
    return frame


def read_report(path: Path, role: str, proto: str, mode: str, size: int) -> dict:
    """One stnet JSON report, checked field by field."""
    text = _open_text(path).strip()
    try:
        doc = capture_reader.loads_json(text.splitlines()[-1], path) if text else None
    except json.JSONDecodeError as exc:
        raise InputError(path, f"line {len(text.splitlines())}", None, "a JSON object", exc.msg) from None
    if not isinstance(doc, dict):
        raise InputError(path, None, None, "a JSON object (stnet's report)", text[:60] or "an empty file")
    for key, typ in REPORT_FIELDS.items():
        v = doc.get(key)
        ok = isinstance(v, str) if typ is str else (isinstance(v, (int, float)) and not isinstance(v, bool))
        if not ok:
            raise InputError(path, None, key, f"a {typ.__name__}", v if key in doc else "nothing")
        if typ is not str and v < 0:
            raise InputError(path, None, key, "a value >= 0", v)
    for key, want in (("role", role), ("proto", proto), ("mode", mode), ("size", size)):
        if doc[key] != want:
            raise InputError(path, None, key, f"{want!r} (runs.csv)", doc[key])
    return doc


def parse_proc_stat(path: Path, n_cpus: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Samples of the kit's proc_stat file: (t_s [n], jiffies [n, cpus+1, 8]
    with row 0 the aggregate 'cpu' line, mhz [n, cpus])."""
    text = _open_text(path)
    times, stats, mhzs = [], [], []
    cur_stat, cur_mhz = None, None
    for no, line in enumerate(text.splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "#":
            if len(parts) != 3 or parts[1] != "t_ns" or not capture_reader.is_count(parts[2]):
                raise InputError(path, f"line {no}", "t_ns", "'# t_ns <integer>'", line)
            if cur_stat is not None:
                stats.append(cur_stat)
                mhzs.append(cur_mhz)
            times.append(int(parts[2]) / 1e9)
            cur_stat, cur_mhz = [], []
        elif cur_stat is None:
            raise InputError(path, f"line {no}", None, "a '# t_ns' line first", line)
        elif parts[0].startswith("cpu"):
            want = "cpu" if not cur_stat else f"cpu{len(cur_stat) - 1}"
            if parts[0] != want:
                raise InputError(path, f"line {no}", "cpu", want, parts[0])
            if len(parts) < 9 or not all(capture_reader.is_count(p) for p in parts[1:]):
                raise InputError(path, f"line {no}", parts[0], "at least 8 integer jiffy counters", line)
            cur_stat.append([int(p) for p in parts[1:9]])
        elif parts[0] == "mhz":
            try:
                cpu, mhz = int(parts[1]), float(parts[2])
            except (IndexError, ValueError):
                raise InputError(path, f"line {no}", "mhz", "'mhz <cpu> <MHz>'", line) from None
            if cpu != len(cur_mhz) or not (0 < mhz < 1e5):
                raise InputError(path, f"line {no}", "mhz", f"cpu {len(cur_mhz)} with 0 < MHz < 100000", line)
            cur_mhz.append(mhz)
        else:
            raise InputError(path, f"line {no}", None, "a cpu, mhz or '# t_ns' line", line)
    if cur_stat is not None:
        stats.append(cur_stat)
        mhzs.append(cur_mhz)
    if len(times) < 2:
        raise InputError(path, None, None, "at least two samples", f"{len(times)} sample(s)")
    shapes = {len(s) for s in stats}
    if len(shapes) != 1 or (n_cpus is not None and shapes != {n_cpus + 1}):
        raise InputError(path, None, "cpu", f"the same cpu lines in every sample ({n_cpus} cpus)", sorted(shapes))
    if {len(m) for m in mhzs} != {len(stats[0]) - 1}:
        raise InputError(path, None, "mhz", "one mhz line per cpu in every sample", sorted({len(m) for m in mhzs}))
    t = np.array(times)
    if np.any(np.diff(t) <= 0):
        i = int(np.flatnonzero(np.diff(t) <= 0)[0]) + 1
        raise InputError(path, f"sample {i + 1}", "t_ns", "increasing times", times[i])
    j = np.array(stats, dtype=float)
    if np.any(np.diff(j, axis=0) < 0):
        raise InputError(path, None, "jiffies", "counters that never decrease", "a decrease")
    return t, j, np.array(mhzs, dtype=float)


def run_tables(run_dir: Path, row: dict, n_cpus: int, user_hz: int) -> tuple[dict, list[dict]]:
    """The tidy row and the per-interval samples of one run folder."""
    s = read_report(run_dir / "sender.json", "send", row["proto"], row["sender_mode"], row["size"])
    r = read_report(run_dir / "receiver.json", "recv", row["proto"], row["receiver_mode"], row["size"])
    man_path = run_dir / "run.json"
    try:
        man = capture_reader.loads_json(_open_text(man_path), man_path)
    except json.JSONDecodeError as exc:
        raise InputError(man_path, f"line {exc.lineno}", None, "a JSON object", exc.msg) from None
    if not isinstance(man, dict):
        raise InputError(man_path, None, None, "a JSON object", type(man).__name__)
    for key in ("loadavg_1min", "sender", "receiver"):
        if key not in man:
            raise InputError(man_path, None, key, "a value", "nothing")
    capture_reader.check_number(man["loadavg_1min"], man_path, None, "loadavg_1min")
    wait4 = {}
    for side in ("sender", "receiver"):
        for part in ("utime_s", "stime_s"):
            try:
                val = man[side]["wait4"][part]
            except (KeyError, TypeError):
                raise InputError(man_path, None, f"{side}.wait4.{part}", "CPU seconds", "nothing") from None
            wait4[side, part] = capture_reader.check_number(val, man_path, None, f"{side}.wait4.{part}")
    if man.get("run_id") != row["run_id"]:
        raise InputError(man_path, None, "run_id", row["run_id"], man.get("run_id"))
    t, jif, mhz = parse_proc_stat(run_dir / "proc_stat.txt.gz", n_cpus)
    if s["elapsed_s"] <= 0:
        raise InputError(run_dir / "sender.json", None, "elapsed_s", "a data phase > 0 s", s["elapsed_s"])
    if r["bytes"] > s["bytes"]:
        raise InputError(run_dir / "receiver.json", None, "bytes", f"at most the {s['bytes']} bytes sent", r["bytes"])
    delta = (jif[-1] - jif[0]) / user_hz
    sender_cpu = s["phase_utime_s"] + s["phase_stime_s"]
    receiver_cpu = r["phase_utime_s"] + r["phase_stime_s"]
    device_side = "sender" if row["direction"] == "up" else "receiver"
    out = {
        **{k: row[k] for k in RUN_FIELDS},
        "condition": condition_of(row), "device_side": device_side,
        "device_mode": row["sender_mode"] if device_side == "sender" else row["receiver_mode"],
        "loadavg_1min": float(man["loadavg_1min"]),
        "sender_bytes": s["bytes"], "receiver_bytes": r["bytes"], "sender_calls": s["calls"],
        "receiver_calls": r["calls"], "elapsed_s": s["elapsed_s"],
        "offered_mbps": s["bytes"] * 8 / s["elapsed_s"] / 1e6,
        "goodput_mbps": r["bytes"] * 8 / s["elapsed_s"] / 1e6,
        "delivered_fraction": r["bytes"] / s["bytes"] if s["bytes"] else np.nan,
        "sender_user_s": s["phase_utime_s"], "sender_sys_s": s["phase_stime_s"],
        "receiver_user_s": r["phase_utime_s"], "receiver_sys_s": r["phase_stime_s"],
        "sender_cpu_s": sender_cpu, "receiver_cpu_s": receiver_cpu,
        "sender_cpu_wait4_s": float(wait4["sender", "utime_s"] + wait4["sender", "stime_s"]),
        "receiver_cpu_wait4_s": float(wait4["receiver", "utime_s"] + wait4["receiver", "stime_s"]),
        "device_cpu_s": sender_cpu if device_side == "sender" else receiver_cpu,
        "peer_cpu_s": receiver_cpu if device_side == "sender" else sender_cpu,
        "both_cpu_s": sender_cpu + receiver_cpu,
        "stat_interval_s": float(t[-1] - t[0]),
        **{f"stat_{name}_s": float(delta[0, k]) for k, name in enumerate(STAT_STATES)},
        "stat_busy_s": float(delta[0].sum() - delta[0, STAT_STATES.index("idle")] - delta[0, STAT_STATES.index("iowait")]),
        "mean_mhz": float(mhz.mean()),
    }
    samples = []
    per = np.diff(jif[:, 1:, :], axis=0)  # intervals x cpus x states
    total = per.sum(axis=2)
    idle = per[:, :, STAT_STATES.index("idle")] + per[:, :, STAT_STATES.index("iowait")]
    busy = np.where(total > 0, (total - idle) / np.where(total > 0, total, 1), 0.0)
    for i in range(len(t) - 1):
        for c in range(n_cpus):
            samples.append({"run_id": row["run_id"], "interval": i, "t_s": float(t[i + 1] - t[0]),
                            "dt_s": float(t[i + 1] - t[i]), "cpu": c, "busy": float(busy[i, c]),
                            "mhz": float((mhz[i, c] + mhz[i + 1, c]) / 2)})
    return out, samples


def read_manifest(path: Path) -> dict:
    doc, _ = safe_yaml.loads_yaml(_open_text(path), path)
    if not isinstance(doc, dict):
        raise InputError(path, None, None, "a YAML mapping", type(doc).__name__)
    for key in ("study", "device", "session", "configuration", "host"):
        if key not in doc:
            raise InputError(path, None, key, "a value", "nothing")
    if doc["study"] != "stack-trim":
        raise InputError(path, None, "study", "'stack-trim'", doc["study"])
    capture_reader.background_load(doc, path)  # the idle gate's record (newer kits): checked
    host = doc["host"] if isinstance(doc["host"], dict) else {}
    for key in ("cpu_count", "user_hz"):
        if not isinstance(host.get(key), int) or host[key] <= 0:
            raise InputError(path, None, f"host.{key}", "a positive integer", host.get(key, "nothing"))
    return doc


def sequential_record(man: dict, path: Path) -> dict:
    """The sequential-repetition rule's outcome (the kit's `--until-ci-pp`,
    manifest `sequential`), checked: repetitions done, the target and what
    stopped the capture ("target" or "cap"), the widest one-copy interval
    half-width reached and how many conditions reached the target. A session
    with a fixed number of repetitions: stopped_by "fixed", NaN target."""
    seq = man.get("sequential")
    reps = int(man["configuration"].get("reps", 0))
    if seq is None:
        return {"reps_done": reps, "stopped_by": "fixed", "target_pp": float("nan"),
                "widest_halfwidth_pp": float("nan"), "n_at_target": 0, "n_halfwidths": 0}
    if not isinstance(seq, dict):
        raise InputError(path, None, "sequential", "a mapping", type(seq).__name__)
    num = capture_reader.check_number
    target = float(num(seq.get("target_pp"), path, None, "sequential.target_pp"))
    done = num(seq.get("reps_done"), path, None, "sequential.reps_done", minimum=1, integer=True)
    if seq.get("stopped_by") not in ("target", "cap"):
        raise InputError(path, None, "sequential.stopped_by", "'target' or 'cap'", seq.get("stopped_by"))
    widths = seq.get("reached_halfwidth_pp")
    if not isinstance(widths, dict) or not widths:
        raise InputError(path, None, "sequential.reached_halfwidth_pp", "a mapping of condition to pp", widths)
    hw = {capture_reader.check_name(k, path, None, "sequential.reached_halfwidth_pp"):
          float(num(v, path, None, f"sequential.reached_halfwidth_pp.{k}")) for k, v in widths.items()}
    return {"reps_done": int(done), "stopped_by": seq["stopped_by"], "target_pp": target,
            "widest_halfwidth_pp": max(hw.values()), "n_at_target": sum(h <= target for h in hw.values()),
            "n_halfwidths": len(hw)}


def content_hash(folder: Path) -> str:
    h = hashlib.md5()
    for p in capture_reader.walk(folder):
        h.update(str(p.relative_to(folder)).encode() + b"\0" + capture_reader.read_raw(p))
    return h.hexdigest()


def read_session(folder: Path) -> tuple[dict, pd.DataFrame, pd.DataFrame]:
    """(manifest, runs, samples) of one session folder; InputError on any problem."""
    folder = Path(folder)
    man = read_manifest(folder / "manifest.yaml")
    for key, want in (("device", folder.parent.name), ("session", folder.name)):
        if man[key] != want:
            raise InputError(folder / "manifest.yaml", None, key, f"'{want}' (the folder's name)", man[key])
    runs = read_runs_csv(folder / "runs.csv")
    host = host_info.host_metadata(man, folder / "manifest.yaml")
    present = {p.name for p in (folder / "runs").iterdir() if p.is_dir()} if (folder / "runs").is_dir() else set()
    gate = capture_reader.background_load(man, folder / "manifest.yaml")
    flagged = {r for r, rec in (gate or {"runs": {}})["runs"].items() if rec["flagged"]}
    rows, samples = [], []
    for i, row in enumerate(runs.to_dict("records")):
        if row["run_id"] not in present:
            raise InputError(folder / "runs.csv", f"line {i + 2}", "run_id", f"a folder runs/{row['run_id']}",
                             "no such folder")
        if row["status"] != "ok":
            continue
        out, smp = run_tables(folder / "runs" / row["run_id"], row, host["cpu_count"], host["user_hz"])
        rows.append({**out, "gate_flagged": row["run_id"] in flagged})
        samples.extend(smp)
    extra = sorted(present - set(runs["run_id"]))
    if extra:
        raise InputError(folder / "runs.csv", None, "run_id", f"a line for every run folder (runs/{extra[0]})",
                         "a folder runs.csv does not list")
    frame = pd.DataFrame(rows)
    frame.insert(0, "session", man["session"])
    frame.insert(0, "device", man["device"])
    smp = pd.DataFrame(samples)
    smp.insert(0, "session", man["session"])
    smp.insert(0, "device", man["device"])
    return man, frame[RUN_COLUMNS], smp[SAMPLE_COLUMNS]


def validated(schema: pa.DataFrameSchema, frame: pd.DataFrame, device_dir: Path) -> pd.DataFrame:
    """`frame` checked against `schema` (mobitrace.studies.stack_trim.schema);
    the first failure as an InputError naming the session and run it comes
    from (when the row has them), the column, the check and the value."""
    try:
        return schema.validate(frame, lazy=True)
    except pa.errors.SchemaErrors as exc:
        case = exc.failure_cases.iloc[0]
        idx = case["index"]
        path, where = device_dir, None
        if idx is not None and not pd.isna(idx) and "session" in frame.columns:
            row = frame.loc[int(idx)]
            path = device_dir / str(row["session"])
            where = f"run {row['run_id']}" if "run_id" in frame.columns else None
        raise InputError(path, where, case["column"], plain_check(case['check']), case["failure_case"]) from None


def ingest(device_dir: str | Path, out_dir: str | Path) -> None:
    """Validate every session of a device folder and write runs.parquet,
    samples.parquet and sessions.parquet to out_dir (all or nothing)."""
    device_dir, out_dir = Path(device_dir), Path(out_dir)
    sessions = capture_reader.session_folders(device_dir)
    runs, samples, meta = [], [], []
    for folder in sessions:
        man, r, s = read_session(folder)
        runs.append(r)
        samples.append(s)
        cfg, host = man["configuration"], host_info.host_metadata(man, folder / "manifest.yaml")
        meta.append({"device": man["device"], "session": man["session"], "runs": len(r),
                     "kernel": str(host.get("kernel")), "cpu_model": "; ".join(map(str, host.get("cpu_model") or [])),
                     "cpu_count": int(host["cpu_count"]), "cpufreq": str(host.get("cpufreq")),
                     "reps": int(cfg.get("reps", 0)), "duration_s": float(cfg.get("duration_s", 0)),
                     "lock_seconds": float(cfg.get("lock_seconds") or 0.0),
                     "shared_host_note": str(host.get("note") or ""),
                     **sequential_record(man, folder / "manifest.yaml"),
                     "background_load": capture_reader.background_text(
                         capture_reader.background_load(man, folder / "manifest.yaml")),
                     "md5": content_hash(folder)})
    tables = {
        "runs.parquet": validated(RUNS_SCHEMA, pd.concat(runs, ignore_index=True), device_dir),
        "samples.parquet": validated(SAMPLES_SCHEMA, pd.concat(samples, ignore_index=True), device_dir),
        "sessions.parquet": validated(SESSIONS_SCHEMA, pd.DataFrame(meta, columns=SESSION_COLUMNS), device_dir),
    }
    with replacing_dir(out_dir) as tmp:
        for name, frame in tables.items():
            frame.to_parquet(tmp / name, index=False)


def validate_session(folder: Path) -> list[InputError]:
    """Every problem of a stack-trim session: the manifest and runs.csv stop
    the session; then each run folder is checked on its own."""
    try:
        man = read_manifest(folder / "manifest.yaml")
        runs = read_runs_csv(folder / "runs.csv")
    except InputError as exc:
        return [exc]
    problems = []
    for key, want in (("device", folder.parent.name), ("session", folder.name)):
        if man[key] != want:
            problems.append(InputError(folder / "manifest.yaml", None, key, f"'{want}' (the folder's name)", man[key]))
    runs_dir = folder / "runs"
    present = {p.name for p in runs_dir.iterdir() if p.is_dir()} if runs_dir.is_dir() else set()
    for i, row in enumerate(runs.to_dict("records")):
        if row["run_id"] not in present:
            problems.append(InputError(folder / "runs.csv", f"line {i + 2}", "run_id",
                                       f"a folder runs/{row['run_id']}", "no such folder"))
            continue
        if row["status"] != "ok":
            continue
        try:
            host = host_info.host_metadata(man, folder / "manifest.yaml")
            run_tables(runs_dir / row["run_id"], row, host["cpu_count"], host["user_hz"])
        except InputError as exc:
            problems.append(exc)
    for extra in sorted(present - set(runs["run_id"])):
        problems.append(InputError(folder / "runs.csv", None, "run_id", f"a line for every run folder (runs/{extra})",
                                   "a folder runs.csv does not list"))
    return problems


def validate_device(sessions: list[Path]) -> list[InputError]:
    """Across the sessions of one device: ingest keys every run by its id,
    so two sessions must not repeat one (a re-capture supersedes the old
    session in params.yaml instead). Names the id and both sessions."""
    seen: dict[str, Path] = {}
    for session in sessions:
        for i, run_id in enumerate(read_runs_csv(session / "runs.csv")["run_id"]):
            if run_id in seen:
                return [InputError(session / "runs.csv", f"line {i + 2}", "run_id",
                                   f"a run id no other session of the device has (session {seen[run_id].name} "
                                   "has it too; supersede that session in params.yaml to re-capture it)", run_id)]
            seen[run_id] = session
    return []

"""Raw captures of the transfer-tuning capture kit -> validated tidy tables
(Guner & Kosar). Reading and validating only: energy and every other
derived result live in mobitrace.studies.transfer_tuning.analysis, so that an
analysis edit does not re-run the ingest stage.

A device folder data/raw/transfer-tuning/<device>/ holds session folders,
each written by scripts/capture/transfer_tuning/run.py:

    manifest.yaml                  configuration, host, power_trace (or null), runs
    runs.csv                       one line per run (RUN_FIELDS)
    runs/<run_id>/run.json         the run's configuration, files, client summary
    runs/<run_id>/samples.csv.gz   SAMPLE_FIELDS every sample_ms (CLOCK_MONOTONIC ns)
    runs/<run_id>/transfers.csv.gz one line per range request (TRANSFER_FIELDS)
    runs/<run_id>/<power file>     only when the manifest declares a power_trace
                                   (power_traces formats; same clock as samples)

`ingest` writes runs.parquet, samples.parquet, power.parquet and
sessions.parquet atomically: on any InputError (file, line/record, field,
expected, found) nothing is written.

Schemas of the raw files and of the parquet written here are in
mobitrace.studies.transfer_tuning.schema.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pandera.pandas as pa
import pyarrow
import pyarrow.parquet as pq

from mobitrace.core.io import replacing_dir, problems
from mobitrace.energy import power_traces as pt
from mobitrace.core import capture_reader
from mobitrace.core import table_checks
from mobitrace.core import safe_yaml
from mobitrace.core import host_info
from mobitrace.core.errors import InputError
from mobitrace.studies.transfer_tuning import schema

RUN_FIELDS, SAMPLE_FIELDS, TRANSFER_FIELDS = schema.RUN_FIELDS, schema.SAMPLE_FIELDS, schema.TRANSFER_FIELDS
DATASETS = schema.DATASETS
RUNS_SCHEMA, SAMPLES_SCHEMA, TRANSFERS_SCHEMA = schema.RUNS_CSV, schema.SAMPLES_CSV, schema.TRANSFERS_CSV
RUN_COLUMNS = schema.RUN_COLUMNS


def _csv(path: Path, fields: list[str], file_schema: pa.DataFrameSchema, optional: tuple = ()) -> pd.DataFrame:
    """Read and validate a capture CSV; `optional` trailing fields may all be absent (older captures):
    they are then added as NaN after validation."""
    if not capture_reader.exists(path):
        raise InputError(path, None, None, "a file written by the capture kit", "no such file")
    path = capture_reader.resolve(path)
    text = capture_reader.read_text(path)
    frame, missing = _int_csv(path, text, fields, file_schema, optional), ()
    if frame is None:  # not all plain-digit integers: read as text, converting (and checking) column by column
        frame, file_schema, missing = _text_csv(path, text, fields, file_schema, optional)

    def fail(exc: pa.errors.SchemaError) -> InputError:
        fc = exc.failure_cases
        row = None if fc is None or fc.empty or pd.isna(fc["index"].iloc[0]) else int(fc["index"].iloc[0])
        col = getattr(exc.schema, "name", None) if hasattr(exc, "schema") else None
        found = None if fc is None or fc.empty else fc["failure_case"].iloc[0]
        if row is not None and col is None:
            found = frame.iloc[row].to_dict()
        check = str(exc.check) if getattr(exc, "check", None) is not None else "the schema"
        return InputError(path, f"line {row + 2}" if row is not None else None, col, check, found)
    return table_checks.validated(file_schema, frame, fail, lazy=False).assign(**{c: float("nan") for c in missing})


def _text_csv(path: Path, text: str, fields: list[str], file_schema: pa.DataFrameSchema, optional: tuple):
    """(frame, schema, optional fields missing) of a capture CSV read as text,
    its int and float columns converted; InputError at the first bad cell."""
    try:
        with capture_reader.header_wide_rows(path, len(fields), lambda: io.StringIO(text, newline="")):
            frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, index_col=False)
    except pd.errors.EmptyDataError:
        raise InputError(path, "line 1", "header", ",".join(fields), "an empty file") from None
    except pd.errors.ParserError as exc:
        raise InputError(path, None, None, f"a CSV with columns {','.join(fields)}", str(exc).strip()) from None
    missing = ()
    if optional and list(frame.columns) == [f for f in fields if f not in optional]:
        missing, file_schema = optional, file_schema.remove_columns(list(optional))
    elif list(frame.columns) != fields:
        raise InputError(path, "line 1", "header", ",".join(fields), ",".join(frame.columns))
    ints = [c for c, spec in file_schema.columns.items() if spec.dtype is not None and str(spec.dtype).startswith("int")]
    counts = capture_reader.count_matrix(frame[ints].to_numpy().tolist()) if ints and len(frame) else None
    if counts is not None:  # every integer cell plain digits: converted at once, as the loop below would
        for j, col in enumerate(ints):
            frame[col] = counts[:, j]
    for col, spec in file_schema.columns.items():
        if counts is not None and col in ints:
            continue
        if spec.dtype is not None and str(spec.dtype).startswith("int"):
            num = pd.to_numeric(frame[col], errors="coerce")
            bad = num.isna() | (num.astype(float).abs() > capture_reader.LIMITS.magnitude)
            bad |= num != num.round()
            if bad.any():
                i = int(np.flatnonzero(bad.to_numpy())[0])
                raise InputError(path, f"line {i + 2}", col, "an integer", frame[col].iloc[i])
            frame[col] = num.astype("int64")
        elif spec.dtype is not None and str(spec.dtype).startswith("float"):
            num = pd.to_numeric(frame[col], errors="coerce")
            bad = num.isna() | ~np.isfinite(num.astype(float)) | (num.astype(float).abs() > capture_reader.LIMITS.magnitude)
            if bad.any():
                i = int(np.flatnonzero(bad.to_numpy())[0])
                raise InputError(path, f"line {i + 2}", col, "a number", frame[col].iloc[i])
            frame[col] = num.astype(float)
    return frame, file_schema, missing


_PLAIN_INT_ROWS = re.compile(r"(?:\d{1,18}(?:,\d{1,18})*\n)*\d{1,18}(?:,\d{1,18})*\n?")


def _int_csv(path: Path, text: str, fields: list[str], file_schema: pa.DataFrameSchema,
             optional: tuple) -> pd.DataFrame | None:
    """A CSV of the integer columns `fields` (the samples file) whose cells
    are all plain ASCII digits (at most 18), read straight as int64: what
    _text_csv makes of it, without a string per cell. None otherwise."""
    if optional or not all(str(spec.dtype).startswith("int") for spec in file_schema.columns.values()):
        return None
    header, _, body = text.partition("\n")
    if header != ",".join(fields) or not _PLAIN_INT_ROWS.fullmatch(body):
        return None
    try:
        with capture_reader.header_wide_rows(path, len(fields), lambda: io.StringIO(text, newline="")):
            frame = pd.read_csv(io.StringIO(text), dtype="int64", index_col=False)
    except InputError:  # a row wider than the header
        raise
    except (ValueError, pd.errors.ParserError):  # a short row: _text_csv names it
        return None
    return frame if list(frame.columns) == fields else None


def _steps(path: Path, frame: pd.DataFrame, col: str, strict: bool) -> None:
    d = frame[col].diff().iloc[1:]
    bad = (d <= 0) if strict else (d < 0)
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0]) + 1
        raise InputError(path, f"line {i + 2}", col, "increasing values" if strict else "non-decreasing values",
                         int(frame[col].iloc[i]))


def read_manifest(folder: Path) -> dict:
    path = folder / "manifest.yaml"
    doc = safe_yaml.read_manifest(path)
    for key in ("study", "device", "session", "configuration", "host", "runs"):
        if key not in doc:
            raise InputError(path, None, key, "a value", "nothing")
    if doc["study"] != "transfer-tuning":
        raise InputError(path, None, "study", "'transfer-tuning'", doc["study"])
    capture_reader.background_load(doc, path)  # the idle gate's record (newer kits): checked
    for key, want in (("device", folder.parent.name), ("session", folder.name)):
        if doc[key] != want:
            raise InputError(path, None, key, f"'{want}' (the folder's name)", doc[key])
    if not isinstance(doc["host"], dict):
        raise InputError(path, None, "host", "a mapping", doc["host"])
    host_info.host_metadata(doc, path)  # schema 1 or 2; checks cpu_count (schema 1: `cpus`)
    cfg = doc["configuration"]
    if not isinstance(cfg, dict) or not isinstance(cfg.get("sample_ms"), int) or cfg["sample_ms"] <= 0:
        raise InputError(path, None, "configuration.sample_ms", "a sampling period in ms > 0",
                         cfg.get("sample_ms") if isinstance(cfg, dict) else cfg)
    rate = cfg.get("link", {}).get("rate_mbit") if isinstance(cfg.get("link"), dict) else None
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not rate > 0:
        raise InputError(path, None, "configuration.link.rate_mbit", "a link rate in Mbit/s > 0", rate)
    capture_reader.check_number(rate, path, "configuration.link", "rate_mbit")
    if doc.get("power_trace") is not None:
        doc["_power_spec"] = pt.spec_from_manifest(doc["power_trace"], "power_trace", path)
        f = doc["power_trace"].get("file")
        if not isinstance(f, str) or "<run_id>" not in f:
            raise InputError(path, "power_trace", "file", "a path pattern with <run_id>", f)
        capture_reader.inside(folder, f, path, "power_trace.file")
    return doc


def read_session(folder: str | Path, stream_power: bool = False) -> dict:
    """Validate one session folder; return its tables (runs, samples, power).
    With `stream_power` the power traces are not read here: "power_files"
    lists (device, session, run_id, path, spec) for ingest to stream, so a
    1 GB trace never sits in memory whole."""
    folder = Path(folder)
    man = read_manifest(folder)
    runs = _csv(folder / "runs.csv", RUN_FIELDS, RUNS_SCHEMA, schema.RUN_FIELDS_OPTIONAL)
    listed = set(man["runs"]) if isinstance(man["runs"], list) else set()
    extra = sorted(set(runs["run_id"]) ^ listed)
    if extra:
        raise InputError(folder / "manifest.yaml", None, "runs", "the run ids of runs.csv", extra[:3])
    rate_mbit = float(man["configuration"]["link"]["rate_mbit"])
    gate = (capture_reader.background_load(man) or {}).get("runs", {})  # {} before the idle gate
    run_rows, sample_frames, power_frames, power_files = [], [], [], []
    for r in runs.itertuples(index=False):
        if r.status != "ok":
            continue
        rdir = folder / "runs" / r.run_id
        meta_path = rdir / "run.json"
        if not capture_reader.exists(meta_path):
            raise InputError(meta_path, None, None, "the run's run.json", "no such file")
        try:
            meta = capture_reader.loads_json(capture_reader.read_text(capture_reader.resolve(meta_path)), meta_path)
        except json.JSONDecodeError as exc:
            raise InputError(meta_path, f"line {exc.lineno}", None, "JSON", exc.msg) from None
        if not isinstance(meta, dict):
            raise InputError(meta_path, None, None, "a JSON object", type(meta).__name__)
        client = meta.get("client") if isinstance(meta.get("client"), dict) else {}
        for key in ("t_transfer_start_ns", "t_transfer_end_ns", "bytes_expected", "bytes_received",
                    "client_cpu_transfer_s", "connections"):
            if not isinstance(client.get(key), (int, float)) or isinstance(client.get(key), bool):
                raise InputError(meta_path, "client", key, "a number", client.get(key, "nothing"))
            capture_reader.check_number(client[key], meta_path, "client", key)
        sizes = meta.get("file_sizes", [])
        if not isinstance(sizes, list):
            raise InputError(meta_path, None, "file_sizes", "a list of byte counts", sizes)
        for size in sizes:
            capture_reader.check_number(size, meta_path, None, "file_sizes", integer=True)
        if "loadavg_1min" in meta:
            capture_reader.check_number(meta["loadavg_1min"], meta_path, None, "loadavg_1min")
        if not np.isnan(r.rate_mbit) and r.rate_mbit != rate_mbit:
            raise InputError(folder / "runs.csv", None, "rate_mbit", f"{rate_mbit:g} (the manifest's)", r.rate_mbit)
        for key in ("dataset", "concurrency", "parallelism", "io_kib", "kind"):
            if meta.get(key) != getattr(r, key):
                raise InputError(meta_path, None, key, f"{getattr(r, key)!r} (runs.csv)", meta.get(key))
        s = _csv(rdir / "samples.csv.gz", SAMPLE_FIELDS, SAMPLES_SCHEMA)
        counters = ["client_cpu_ns", "server_cpu_ns", "rx_bytes_app", "if_rx_bytes", "if_tx_bytes"]
        steps = np.diff(s[["t_ns", *counters]].to_numpy(), axis=0)  # int64: the signs pandas' diff gives
        if not ((steps[:, 0] > 0).all() and (steps[:, 1:] >= 0).all()):  # name the first bad step
            _steps(rdir / "samples.csv.gz", s, "t_ns", strict=True)
            for col in counters:
                _steps(rdir / "samples.csv.gz", s, col, strict=False)
        tr = _csv(rdir / "transfers.csv.gz", TRANSFER_FIELDS, TRANSFERS_SCHEMA)
        nbytes = int(tr["bytes"].sum())
        if nbytes != client["bytes_expected"] or nbytes != sum(meta.get("file_sizes", [])):
            raise InputError(rdir / "transfers.csv.gz", None, "bytes",
                             f"{client['bytes_expected']} bytes (the run's files)", nbytes)
        t0, t1 = client["t_transfer_start_ns"], client["t_transfer_end_ns"]
        if not (s["t_ns"].iloc[0] < t0 < t1 < s["t_ns"].iloc[-1]):
            raise InputError(meta_path, "client", "t_transfer_start_ns",
                             "a transfer inside the sampled span", f"[{t0}, {t1}]")
        ts = s["t_ns"].to_numpy(float)
        server = np.interp([t0, t1], ts, s["server_cpu_ns"].to_numpy(float))
        busy_cols = ["stat_user", "stat_nice", "stat_system", "stat_irq", "stat_softirq"]
        tot_cols = busy_cols + ["stat_idle", "stat_iowait"]
        # int64 counters: numpy gives the same sums as pandas, without a Series per run
        inside = s[tot_cols].to_numpy()[(s["t_ns"] >= t0).to_numpy() & (s["t_ns"] <= t1).to_numpy()]
        if len(inside) >= 2:
            d = inside[-1] - inside[0]
            total = float(d.sum())
            stat_busy = 100 * float(d[:len(busy_cols)].sum()) / total if total > 0 else float("nan")
        else:
            stat_busy = float("nan")
        dur = (t1 - t0) / 1e9
        run_rows.append({
            "device": man["device"], "session": man["session"], "run_id": r.run_id, "kind": r.kind,
            "dataset": r.dataset, "concurrency": r.concurrency, "parallelism": r.parallelism,
            "io_kib": r.io_kib, "files": r.files, "rep": r.rep, "bytes": nbytes, "transfer_s": dur,
            "throughput_mbps": 8 * nbytes / dur / 1e6, "connections": int(client["connections"]),
            "client_cpu_s": float(client["client_cpu_transfer_s"]), "server_cpu_s": float(server[1] - server[0]) / 1e9,
            "stat_busy_pct": stat_busy, "loadavg_1min": float(meta.get("loadavg_1min", float("nan"))),
            "t_start_s": t0 / 1e9, "t_end_s": t1 / 1e9, "sample_ms": int(man["configuration"]["sample_ms"]),
            "rate_mbit": rate_mbit, "achieved_mbit": float(r.achieved_mbit),
            "link_peak_mbit": float(r.link_peak_mbit),
            "background_pct": float(gate[r.run_id]["during_pct"]) if r.run_id in gate else float("nan"),
            "gate_flagged": gate[r.run_id]["flagged"] if r.run_id in gate else pd.NA,
        })
        s = s.assign(run_id=r.run_id, device=man["device"], session=man["session"])
        sample_frames.append(s)
        if man.get("_power_spec") is not None:
            f = capture_reader.inside(folder, man["power_trace"]["file"].replace("<run_id>", r.run_id),
                                      folder / "manifest.yaml", "power_trace.file")
            if stream_power:
                power_files.append((man["device"], man["session"], r.run_id, f, man["_power_spec"]))
                continue
            trace = pt.read_trace(f, man["_power_spec"])
            power_frames.append(pd.DataFrame({"device": man["device"], "session": man["session"],
                                              "run_id": r.run_id, "t_s": trace.t_s, "power_w": trace.power_w}))
    if not run_rows:
        raise InputError(folder / "runs.csv", None, "status", "at least one run with status ok", "none")
    runs_out = pd.DataFrame(run_rows, columns=RUN_COLUMNS).astype({"gate_flagged": "boolean"})
    return {"manifest": man, "runs": runs_out, "power_files": power_files,
            "samples": pd.concat(sample_frames, ignore_index=True),
            "power": (pd.concat(power_frames, ignore_index=True) if power_frames else
                      pd.DataFrame({"device": pd.Series(dtype=str), "session": pd.Series(dtype=str),
                                    "run_id": pd.Series(dtype=str), "t_s": pd.Series(dtype=float),
                                    "power_w": pd.Series(dtype=float)}))}


def _tree_hash(folder: Path) -> str:
    h = hashlib.md5()
    for p in capture_reader.walk(folder):
        h.update(str(p.relative_to(folder)).encode() + b"\0" + bytes.fromhex(capture_reader.md5_raw(p)))
    return h.hexdigest()


def _check_interim(frame: pd.DataFrame, name: str, device_dir: Path) -> None:
    """Validate an interim table against schema.INTERIM[name] before it is
    written; a failure is one InputError line naming the table, the row's
    run and the column."""
    try:
        schema.INTERIM[name].validate(frame, lazy=False)
    except pa.errors.SchemaError as exc:
        fc = exc.failure_cases
        row = None if fc is None or fc.empty or pd.isna(fc["index"].iloc[0]) else int(fc["index"].iloc[0])
        where = f"{name}.parquet" + (f", run {frame['run_id'].iloc[row]}" if row is not None and "run_id" in frame
                                     else "")
        found = None if fc is None or fc.empty else fc["failure_case"].iloc[0]
        raise InputError(device_dir, where, getattr(exc.schema, "name", None),
                         str(exc.check) if exc.check is not None else "the schema", found) from None


def ingest(device_dir: str | Path, out_dir: str | Path) -> None:
    """Every session of a device -> runs/samples/power/sessions parquet (atomic)."""
    device_dir, out_dir = Path(device_dir), Path(out_dir)
    sessions = capture_reader.session_folders(device_dir)
    with table_checks.checked_once():
        parts = [read_session(s, stream_power=True) for s in sessions]
    sess = pd.DataFrame([{
        "device": p["manifest"]["device"], "session": p["manifest"]["session"],
        "kind": str(p["manifest"].get("kind")), "content_md5": _tree_hash(s),
        "power_source": "measured" if p["manifest"].get("power_trace") else "modeled",
        "manifest_json": json.dumps({k: v for k, v in p["manifest"].items() if not k.startswith("_")},
                                    sort_keys=True, default=str),
    } for p, s in zip(parts, sessions)])
    tables = {"runs": pd.concat([p["runs"] for p in parts], ignore_index=True),
              "samples": pd.concat([p["samples"] for p in parts], ignore_index=True),
              "power": pd.concat([p["power"] for p in parts], ignore_index=True),
              "sessions": sess}
    for name, frame in tables.items():
        _check_interim(frame, name, device_dir)
    power_files = [pf for p in parts for pf in p["power_files"]]
    with replacing_dir(out_dir) as tmp:
        for name, frame in tables.items():
            if name != "power" or not power_files:  # no trace: the table as before (empty)
                frame.to_parquet(tmp / f"{name}.parquet", index=False)
        if power_files:
            _write_power(power_files, tmp / "power.parquet", device_dir)


def _write_power(power_files: list, out: Path, device_dir: Path,
                 chunk_rows: int = 250_000) -> None:  # 250k rows: 79 MB trace peaks at 316 MB (1M: 480)
    """Stream every run's power trace into one parquet file, a row group per
    chunk (memory: one chunk), each chunk checked against schema.POWER."""
    writer = None
    try:
        for device, session, run_id, path, spec in power_files:
            for t, p in pt.iter_chunks(path, spec, chunk_rows=chunk_rows):
                frame = pd.DataFrame({"device": device, "session": session, "run_id": run_id,
                                      "t_s": t, "power_w": p})
                _check_interim(frame, "power", device_dir)
                table = pyarrow.Table.from_pandas(frame, preserve_index=False)
                if writer is None:
                    writer = pq.ParquetWriter(out, table.schema)
                writer.write_table(table)
        if writer is None:  # every trace had no kept sample
            pd.DataFrame({"device": pd.Series(dtype=str), "session": pd.Series(dtype=str),
                          "run_id": pd.Series(dtype=str), "t_s": pd.Series(dtype=float),
                          "power_w": pd.Series(dtype=float)}).to_parquet(out, index=False)
    finally:
        if writer is not None:
            writer.close()


def _check_session(folder: Path) -> None:
    """read_session, with each power trace checked as a stream (never whole in memory)."""
    for *_, path, spec in read_session(folder, stream_power=True)["power_files"]:
        for _ in pt.iter_chunks(path, spec):
            pass


def validate_session(folder: Path) -> list[InputError]:
    """Every problem of one session folder, for `mobitrace validate` (empty: valid)."""
    return problems(_check_session, folder)

"""Raw captures of the transfer-tuning capture kit -> validated tidy tables,
and the run-level energy analysis (Guner & Kosar).

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

Energy (`run_energy`): a measured power trace when the session has one, else
a *modeled* 10 Hz trace (`modeled_power`): for each sampling interval
(t_{i-1}, t_i], as an averaging power meter reports it,

    P_i = P_base + CPU(client CPU seconds in the interval / dt)
              + radio_rx(interface rx rate) + radio_tx(interface tx rate)

with mobitrace.power's CpuPowerModel (busy-core power at its nominal
frequency) and RadioPowerModel (dynamic power above its idle power). Then the
paper's E_d over [first request, last byte], base power from the idle window
before the first request, energy per 100 MB and tail energy (mobitrace.energy).
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pandera.pandas as pa

from . import energy
from . import power_traces as pt
from .core import capture_reader
from .errors import InputError

RUN_FIELDS = ["run_id", "kind", "dataset", "concurrency", "parallelism", "io_kib", "files", "rep", "status",
              "started_utc", "wall_s"]
SAMPLE_FIELDS = ["t_ns", "client_cpu_ns", "server_cpu_ns", "rx_bytes_app", "if_rx_bytes", "if_tx_bytes",
                 "stat_user", "stat_nice", "stat_system", "stat_idle", "stat_iowait", "stat_irq", "stat_softirq"]
TRANSFER_FIELDS = ["file", "part", "conn", "offset", "length", "t_start_ns", "t_first_byte_ns", "t_end_ns",
                   "bytes", "status"]
DATASETS = ("html", "image", "video")

RUNS_SCHEMA = pa.DataFrameSchema(
    {
        "run_id": pa.Column(str, pa.Check.str_matches(r"^(sweep|tail)-[a-z]+-cc\d+-p\d+-io\d+(-n\d+)?-r\d+$"),
                            unique=True),
        "kind": pa.Column(str, pa.Check.isin(["sweep", "tail"])),
        "dataset": pa.Column(str, pa.Check.isin(DATASETS)),
        "concurrency": pa.Column(int, pa.Check.in_range(1, 1024)),
        "parallelism": pa.Column(int, pa.Check.in_range(1, 1024)),
        "io_kib": pa.Column(int, pa.Check.in_range(1, 1 << 20)),
        "files": pa.Column(int, pa.Check.ge(1)),
        "rep": pa.Column(int, pa.Check.ge(1)),
        "status": pa.Column(str, pa.Check.str_length(min_value=1)),
        "started_utc": pa.Column(str, pa.Check.str_matches(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")),
        "wall_s": pa.Column(float, pa.Check.ge(0)),
    },
    strict=True, ordered=True,
)
SAMPLES_SCHEMA = pa.DataFrameSchema({c: pa.Column(int, pa.Check.ge(0)) for c in SAMPLE_FIELDS},
                                    strict=True, ordered=True)
TRANSFERS_SCHEMA = pa.DataFrameSchema(
    {
        "file": pa.Column(int, pa.Check.ge(0)),
        "part": pa.Column(int, pa.Check.ge(0)),
        "conn": pa.Column(int, pa.Check.ge(0)),
        "offset": pa.Column(int, pa.Check.ge(0)),
        "length": pa.Column(int, pa.Check.gt(0)),
        "t_start_ns": pa.Column(int, pa.Check.gt(0)),
        "t_first_byte_ns": pa.Column(int, pa.Check.gt(0)),
        "t_end_ns": pa.Column(int, pa.Check.gt(0)),
        "bytes": pa.Column(int, pa.Check.ge(0)),
        "status": pa.Column(str, pa.Check.eq("ok")),
    },
    checks=[pa.Check(lambda d: d["bytes"] == d["length"], error="bytes == length"),
            pa.Check(lambda d: d["t_end_ns"] >= d["t_first_byte_ns"], error="t_end_ns >= t_first_byte_ns"),
            pa.Check(lambda d: d["t_first_byte_ns"] >= d["t_start_ns"], error="t_first_byte_ns >= t_start_ns")],
    strict=True, ordered=True,
)
RUN_COLUMNS = ["device", "session", "run_id", "kind", "dataset", "concurrency", "parallelism", "io_kib",
               "files", "rep", "bytes", "transfer_s", "throughput_mbps", "connections", "client_cpu_s",
               "server_cpu_s", "stat_busy_pct", "loadavg_1min", "t_start_s", "t_end_s", "sample_ms"]


def _csv(path: Path, fields: list[str], schema: pa.DataFrameSchema) -> pd.DataFrame:
    if not capture_reader.exists(path):
        raise InputError(path, None, None, "a file written by the capture kit", "no such file")
    path = capture_reader.resolve(path)
    text = capture_reader.read_text(path)
    try:
        frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    except pd.errors.EmptyDataError:
        raise InputError(path, "line 1", "header", ",".join(fields), "an empty file") from None
    except pd.errors.ParserError as exc:
        raise InputError(path, None, None, f"a CSV with columns {','.join(fields)}", str(exc).strip()) from None
    if list(frame.columns) != fields:
        raise InputError(path, "line 1", "header", ",".join(fields), ",".join(frame.columns))
    for col, spec in schema.columns.items():
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
    try:
        return schema.validate(frame, lazy=False)
    except (pa.errors.SchemaError,) as exc:
        fc = exc.failure_cases
        row = None if fc is None or fc.empty or pd.isna(fc["index"].iloc[0]) else int(fc["index"].iloc[0])
        col = getattr(exc.schema, "name", None) if hasattr(exc, "schema") else None
        found = None if fc is None or fc.empty else fc["failure_case"].iloc[0]
        if row is not None and col is None:
            found = frame.iloc[row].to_dict()
        check = str(exc.check) if getattr(exc, "check", None) is not None else "the schema"
        raise InputError(path, f"line {row + 2}" if row is not None else None, col, check, found) from None


def _steps(path: Path, frame: pd.DataFrame, col: str, strict: bool) -> None:
    d = frame[col].diff().iloc[1:]
    bad = (d <= 0) if strict else (d < 0)
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0]) + 1
        raise InputError(path, f"line {i + 2}", col, "increasing values" if strict else "non-decreasing values",
                         int(frame[col].iloc[i]))


def read_manifest(folder: Path) -> dict:
    path = folder / "manifest.yaml"
    if not capture_reader.exists(path):
        raise InputError(path, None, None, "a capture manifest.yaml", "no such file")
    doc, _ = capture_reader.load_yaml(capture_reader.resolve(path))
    if not isinstance(doc, dict):
        raise InputError(path, None, None, "a YAML mapping", type(doc).__name__)
    for key in ("study", "device", "session", "configuration", "host", "runs"):
        if key not in doc:
            raise InputError(path, None, key, "a value", "nothing")
    if doc["study"] != "transfer-tuning":
        raise InputError(path, None, "study", "'transfer-tuning'", doc["study"])
    for key, want in (("device", folder.parent.name), ("session", folder.name)):
        if doc[key] != want:
            raise InputError(path, None, key, f"'{want}' (the folder's name)", doc[key])
    if not isinstance(doc["host"], dict):
        raise InputError(path, None, "host", "a mapping", doc["host"])
    capture_reader.host_metadata(doc, path)  # schema 1 or 2; checks cpu_count (schema 1: `cpus`)
    cfg = doc["configuration"]
    if not isinstance(cfg, dict) or not isinstance(cfg.get("sample_ms"), int) or cfg["sample_ms"] <= 0:
        raise InputError(path, None, "configuration.sample_ms", "a sampling period in ms > 0",
                         cfg.get("sample_ms") if isinstance(cfg, dict) else cfg)
    if doc.get("power_trace") is not None:
        doc["_power_spec"] = pt.spec_from_manifest(doc["power_trace"], "power_trace", path)
        f = doc["power_trace"].get("file")
        if not isinstance(f, str) or "<run_id>" not in f:
            raise InputError(path, "power_trace", "file", "a path pattern with <run_id>", f)
        capture_reader.inside(folder, f, path, "power_trace.file")
    return doc


def read_session(folder: str | Path) -> dict:
    """Validate one session folder; return its tables (runs, samples, power)."""
    folder = Path(folder)
    man = read_manifest(folder)
    runs = _csv(folder / "runs.csv", RUN_FIELDS, RUNS_SCHEMA)
    listed = set(man["runs"]) if isinstance(man["runs"], list) else set()
    extra = sorted(set(runs["run_id"]) ^ listed)
    if extra:
        raise InputError(folder / "manifest.yaml", None, "runs", "the run ids of runs.csv", extra[:3])
    run_rows, sample_frames, power_frames = [], [], []
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
        for key in ("dataset", "concurrency", "parallelism", "io_kib", "kind"):
            if meta.get(key) != getattr(r, key):
                raise InputError(meta_path, None, key, f"{getattr(r, key)!r} (runs.csv)", meta.get(key))
        s = _csv(rdir / "samples.csv.gz", SAMPLE_FIELDS, SAMPLES_SCHEMA)
        _steps(rdir / "samples.csv.gz", s, "t_ns", strict=True)
        for col in ("client_cpu_ns", "server_cpu_ns", "rx_bytes_app", "if_rx_bytes", "if_tx_bytes"):
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
        inside = s[(s["t_ns"] >= t0) & (s["t_ns"] <= t1)]
        if len(inside) >= 2:
            d = inside.iloc[-1] - inside.iloc[0]
            total = float(d[tot_cols].sum())
            stat_busy = 100 * float(d[busy_cols].sum()) / total if total > 0 else float("nan")
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
        })
        s = s.assign(run_id=r.run_id, device=man["device"], session=man["session"])
        sample_frames.append(s)
        if man.get("_power_spec") is not None:
            f = capture_reader.inside(folder, man["power_trace"]["file"].replace("<run_id>", r.run_id),
                                      folder / "manifest.yaml", "power_trace.file")
            trace = pt.read_trace(f, man["_power_spec"])
            power_frames.append(pd.DataFrame({"device": man["device"], "session": man["session"],
                                              "run_id": r.run_id, "t_s": trace.t_s, "power_w": trace.power_w}))
    if not run_rows:
        raise InputError(folder / "runs.csv", None, "status", "at least one run with status ok", "none")
    return {"manifest": man, "runs": pd.DataFrame(run_rows, columns=RUN_COLUMNS),
            "samples": pd.concat(sample_frames, ignore_index=True),
            "power": (pd.concat(power_frames, ignore_index=True) if power_frames else
                      pd.DataFrame({"device": pd.Series(dtype=str), "session": pd.Series(dtype=str),
                                    "run_id": pd.Series(dtype=str), "t_s": pd.Series(dtype=float),
                                    "power_w": pd.Series(dtype=float)}))}


def _tree_hash(folder: Path) -> str:
    h = hashlib.md5()
    for p in capture_reader.walk(folder):
        h.update(str(p.relative_to(folder)).encode() + b"\0" + hashlib.md5(capture_reader.read_raw(p)).digest())
    return h.hexdigest()


def ingest(device_dir: str | Path, out_dir: str | Path) -> None:
    """Every session of a device -> runs/samples/power/sessions parquet (atomic)."""
    device_dir, out_dir = Path(device_dir), Path(out_dir)
    if not device_dir.is_dir():
        raise InputError(device_dir, None, None, "a device folder of capture sessions", "no such folder")
    capture_reader.check_capture(device_dir)
    sessions = sorted(p for p in device_dir.iterdir() if p.is_dir())
    if not sessions:
        raise InputError(device_dir, None, None, "at least one session folder", "none")
    parts = [read_session(s) for s in sessions]
    sess = pd.DataFrame([{
        "device": p["manifest"]["device"], "session": p["manifest"]["session"],
        "kind": str(p["manifest"].get("kind")), "content_md5": _tree_hash(s),
        "power_source": "measured" if p["manifest"].get("power_trace") else "modeled",
        "manifest_json": json.dumps({k: v for k, v in p["manifest"].items() if not k.startswith("_")},
                                    sort_keys=True, default=str),
    } for p, s in zip(parts, sessions)])
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent if out_dir.parent.exists() else None))
    try:
        pd.concat([p["runs"] for p in parts], ignore_index=True).to_parquet(tmp / "runs.parquet", index=False)
        pd.concat([p["samples"] for p in parts], ignore_index=True).to_parquet(tmp / "samples.parquet", index=False)
        pd.concat([p["power"] for p in parts], ignore_index=True).to_parquet(tmp / "power.parquet", index=False)
        sess.to_parquet(tmp / "sessions.parquet", index=False)
        if out_dir.exists():
            shutil.rmtree(out_dir)
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(tmp), str(out_dir))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# --------------------------------------------------------------------------- #
# Energy


def modeled_power(samples: pd.DataFrame, cpu, radio, base_w: float) -> tuple[np.ndarray, np.ndarray]:
    """A modeled power-meter trace (t in s, P in W) from one run's samples:
    P_i over (t_{i-1}, t_i] = base + cpu busy-core power x client CPU share
    + radio rx/tx dynamic power at the interface rates (see module doc).
    The first sample has no interval before it and gets P_base."""
    t = samples["t_ns"].to_numpy(float) / 1e9
    dt = np.diff(t)
    cpu_share = np.diff(samples["client_cpu_ns"].to_numpy(float)) / 1e9 / dt
    rx_mbps = 8 * np.diff(samples["if_rx_bytes"].to_numpy(float)) / dt / 1e6
    tx_mbps = 8 * np.diff(samples["if_tx_bytes"].to_numpy(float)) / dt / 1e6
    p_mw = (cpu.energy_from_cpu_seconds_mj(cpu_share)  # mJ per s of CPU = mW at share
            + radio.dynamic_power_mw(rx_mbps, "rx") + radio.dynamic_power_mw(tx_mbps, "tx"))
    p = np.concatenate(([base_w], base_w + p_mw / 1e3))
    return t, p


def run_energy(t, p, t_start: float, t_end: float, nbytes: int, tail_tolerance_w: float) -> dict:
    """Base power (idle window before t_start), E_d over [t_start, t_end],
    energy per 100 MB, tail after t_end; energies in J."""
    base = energy.base_power(t, p, t[0], t_start)
    e_d = energy.dynamic_energy(t, p, base, t_start, t_end)
    tail = energy.tail_energy(t, p, base, t_end, tail_tolerance_w)
    return {"base_w": base, "energy_j": e_d, "energy_per_100mb_j": float(energy.energy_per_100mb(e_d, nbytes)),
            "mean_power_w": base + e_d / (t_end - t_start), "tail_j": tail.energy_j, "tail_s": tail.duration_s,
            "tail_ended": tail.ended}


def energy_table(runs: pd.DataFrame, samples: pd.DataFrame, power: pd.DataFrame, cpu, radio,
                 base_w: float, tail_tolerance_w: float) -> pd.DataFrame:
    """run_energy for every run: from its measured power trace when there is
    one (energy_source 'measured'), else from modeled_power ('modeled')."""
    rows = []
    by_run = {k: g for k, g in samples.groupby(["device", "run_id"], sort=False)}
    meas = {k: g for k, g in power.groupby(["device", "run_id"], sort=False)} if len(power) else {}
    for r in runs.itertuples(index=False):
        key = (r.device, r.run_id)
        if key in meas:
            g = meas[key]
            t, p, src = g["t_s"].to_numpy(float), g["power_w"].to_numpy(float), "measured"
        else:
            t, p = modeled_power(by_run[key], cpu, radio, base_w)
            src = "modeled"
        e = run_energy(t, p, r.t_start_s, r.t_end_s, r.bytes, tail_tolerance_w)
        rows.append({"device": r.device, "run_id": r.run_id, "energy_source": src, **e})
    return runs.merge(pd.DataFrame(rows), on=["device", "run_id"], how="left", validate="one_to_one")


def sweep_summary(table: pd.DataFrame, factor: str, fixed: dict) -> pd.DataFrame:
    """Mean and SD over repetitions of throughput and energy per 100 MB along
    one factor (others fixed), per device and dataset, with the x-fold
    throughput and the energy saving % relative to the factor's level 1
    (saving = 100 (1 - E(level) / E(1)), the paper's "reduced energy by x%")."""
    sel = table[table["kind"] == "sweep"]
    for k, v in fixed.items():
        sel = sel[sel[k] == v]
    g = sel.groupby(["device", "dataset", factor])
    out = g.agg(n=("rep", "size"), throughput_mbps=("throughput_mbps", "mean"),
                throughput_sd=("throughput_mbps", "std"), energy_per_100mb_j=("energy_per_100mb_j", "mean"),
                energy_sd=("energy_per_100mb_j", "std"), client_cpu_s=("client_cpu_s", "mean")).reset_index()
    ref = out[out[factor] == out.groupby(["device", "dataset"])[factor].transform("min")]
    ref = ref.set_index(["device", "dataset"])[["throughput_mbps", "energy_per_100mb_j"]]
    idx = pd.MultiIndex.from_frame(out[["device", "dataset"]])
    out["x_fold"] = out["throughput_mbps"].to_numpy() / ref["throughput_mbps"].reindex(idx).to_numpy()
    out["saving_pct"] = 100 * (1 - out["energy_per_100mb_j"].to_numpy()
                               / ref["energy_per_100mb_j"].reindex(idx).to_numpy())
    out.insert(2, "factor", factor)
    return out.rename(columns={factor: "level"})

"""Synthetic transfer-tuning capture sessions, written the way the capture
kit writes them (scripts/capture/transfer_tuning/run.py), with numbers
chosen so that every derived value is hand-computable."""

import gzip
import json
from pathlib import Path

import pytest
import yaml

from tests import ROOT as REPO

SAMPLE_HEADER = ("t_ns,client_cpu_ns,server_cpu_ns,rx_bytes_app,if_rx_bytes,if_tx_bytes,stat_user,stat_nice,"
                 "stat_system,stat_idle,stat_iowait,stat_irq,stat_softirq")
TRANSFER_HEADER = "file,part,conn,offset,length,t_start_ns,t_first_byte_ns,t_end_ns,bytes,status"


def gz(path: Path, text: str) -> None:
    path.write_bytes(gzip.compress(text.encode(), mtime=0))


def write_run(session: Path, run_id: str, *, dataset="video", cc=1, p=1, io=16, rep=1, kind="sweep",
              size=1_000_000, t0_s=100.0, dur_s=1.0, cpu_share=0.5, power_log: str | None = None):
    """One run: samples every 0.1 s from t0-0.5 to t0+dur+0.5; during the
    transfer the client uses `cpu_share` of a CPU and the interface receives
    size bytes evenly; one file of `size` bytes in one range."""
    rdir = session / "runs" / run_id
    rdir.mkdir(parents=True)
    lines = [SAMPLE_HEADER]
    n = int(round((dur_s + 1.0) / 0.1)) + 1
    start, end = t0_s, t0_s + dur_s
    for i in range(n):
        t = t0_s - 0.5 + 0.1 * i
        busy = min(max(t - start, 0.0), end - start)
        cpu_ns = int(round(busy * cpu_share * 1e9))
        rx = int(round(size * busy / dur_s))
        lines.append(f"{int(round(t * 1e9))},{cpu_ns},{cpu_ns // 10},{rx},{rx},0,{i},0,{i},{10 * i},0,0,0")
    gz(rdir / "samples.csv.gz", "\n".join(lines) + "\n")
    t0n, t1n = int(round(start * 1e9)), int(round(end * 1e9))
    gz(rdir / "transfers.csv.gz", f"{TRANSFER_HEADER}\n0,0,0,0,{size},{t0n},{t0n + 1000},{t1n},{size},ok\n")
    meta = {"run_id": run_id, "rep": rep, "kind": kind, "dataset": dataset, "concurrency": cc, "parallelism": p,
            "io_kib": io, "files": ["/video/f0000.bin"], "file_sizes": [size], "status": "ok",
            "started_utc": "2026-11-22T19:00:00Z", "loadavg_1min": 0.5,
            "client": {"t_transfer_start_ns": t0n, "t_transfer_end_ns": t1n, "bytes_expected": size,
                       "bytes_received": size, "connections": cc * p, "client_cpu_transfer_s": cpu_share * dur_s,
                       "errors": [], "n_errors": 0}}
    (rdir / "run.json").write_text(json.dumps(meta))
    if power_log is not None:
        (rdir / "power.csv").write_text(power_log)
    return {"run_id": run_id, "kind": kind, "dataset": dataset, "concurrency": cc, "parallelism": p, "io_kib": io,
            "files": 1, "rep": rep, "status": "ok", "started_utc": "2026-11-22T19:00:00Z", "wall_s": "2.000"}


def write_session(root: Path, runs: list[dict], device="synthetic-host", session="s1", power_trace=None,
                  rates: list[tuple] | None = None, idle_gate: dict | None = None) -> Path:
    """rates: per run (rate_mbit, achieved_mbit; link_peak_mbit 40) as the kit writes since 2026-11-23; None: the older runs.csv.
    idle_gate: {run_id: background % during the run} recorded by an idle gate of limit 5 %; None: a capture without it."""
    folder = root / device / session
    (folder / "runs").mkdir(parents=True, exist_ok=True)
    rows = []
    for r in runs:
        rows.append(write_run(folder, **r))
    fields = ["run_id", "kind", "dataset", "concurrency", "parallelism", "io_kib", "files", "rep", "status",
              "started_utc", "wall_s"]
    if rates is not None:
        fields += ["rate_mbit", "achieved_mbit", "link_peak_mbit"]
        rows = [dict(r, rate_mbit=a, achieved_mbit=b, link_peak_mbit=40.0) for r, (a, b) in zip(rows, rates)]
    (folder / "runs.csv").write_text(",".join(fields) + "\n" + "".join(
        ",".join(str(r[f]) for f in fields) + "\n" for r in rows))
    manifest = {"study": "transfer-tuning", "device": device, "session": session, "kind": "synthetic",
                "configuration": {"sample_ms": 100, "link": {"rate_mbit": 40.0}, "rtt_ms": 50.0,
                                  "client_tcp_rmem_max": 262144, "repetitions": 1, "grid": [1, 4, 16],
                                  "datasets": {}},
                "host": {"note": "synthetic"}, "power_trace": power_trace,
                "invocations": [{"lock_held_s": 0.0}], "runs": sorted(r["run_id"] for r in rows)}
    if idle_gate is not None:
        manifest["idle_gate"] = {"max_pct": 5.0, "runs": {
            run_id: {"before_pct": 1.0, "during_pct": during, "flagged": during > 5.0}
            for run_id, during in idle_gate.items()}}
    (folder / "manifest.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    return folder


@pytest.fixture
def synthetic_session(tmp_path):
    return write_session(tmp_path / "raw", [
        {"run_id": "sweep-video-cc1-p1-io16-r1", "cc": 1, "size": 1_000_000, "dur_s": 1.0},
        {"run_id": "sweep-video-cc4-p1-io16-r1", "cc": 4, "size": 1_000_000, "dur_s": 0.5, "t0_s": 200.0},
    ])

import gzip
import json
from pathlib import Path

import pytest
import yaml

from tests import ROOT as REPO
HEADER = ("run_id,experiment,link,direction,proto,size,sender_mode,receiver_mode,mtu,rate_mbps,rep,duration_s,"
          "status,started_utc")


def _report(role, proto, mode, size, nbytes, cpu_user, cpu_sys, elapsed=1.0):
    return json.dumps({"role": role, "proto": proto, "mode": mode, "size": size, "rate_bps": 0, "bytes": nbytes,
                       "calls": max(1, nbytes // size), "short_calls": 0, "errors": 0, "elapsed_s": elapsed,
                       "phase_utime_s": cpu_user, "phase_stime_s": cpu_sys, "utime_s": cpu_user + 0.001,
                       "stime_s": cpu_sys + 0.001}) + "\n"


def write_synthetic_session(root: Path, device="synthetic-host", session="s1", cpu=None):
    """A tiny synthetic stack-trim session (made-up numbers, for tests only):
    TCP uplink copy vs onecopy at 10 Mbps, 2 reps each. `cpu` maps
    (sender_mode, rep) to the sender's data-phase CPU seconds."""
    cpu = cpu or {("copy", 0): 0.010, ("copy", 1): 0.012, ("onecopy", 0): 0.006, ("onecopy", 1): 0.008}
    folder = root / device / session
    (folder / "runs").mkdir(parents=True)
    manifest = {"study": "stack-trim", "device": device, "session": session, "status": "complete",
                "configuration": {"reps": 2, "duration_s": 1.0, "lock_seconds": 1.0},
                "host": {"cpu_count": 2, "user_hz": 100, "kernel": "synthetic", "cpu_model": ["synthetic"],
                         "cpufreq": "synthetic", "shared_host_note": "synthetic"}}
    (folder / "manifest.yaml").write_text(yaml.safe_dump(manifest))
    lines = [HEADER]
    for (mode, rep), cpu_s in sorted(cpu.items()):
        run_id = f"lo-up-tcp16384-{mode}-mem-r10-{rep:02d}"
        lines.append(f"{run_id},onecopy,lo,up,tcp,16384,{mode},mem,1500,10.0,{rep},1.0,ok,2026-11-22T10:00:00Z")
        d = folder / "runs" / run_id
        d.mkdir()
        (d / "sender.json").write_text(_report("send", "tcp", mode, 16384, 1_250_000, 0.0, cpu_s))
        (d / "receiver.json").write_text(_report("recv", "tcp", "mem", 16384, 1_250_000, 0.0, 0.002))
        (d / "run.json").write_text(json.dumps({"run_id": run_id, "loadavg_1min": 0.5,
                                                "sender": {"wait4": {"utime_s": 0.0, "stime_s": cpu_s + 0.002}},
                                                "receiver": {"wait4": {"utime_s": 0.0, "stime_s": 0.004}}}))
        # Two samples 1 s apart: cpu0 50 of 100 jiffies busy (user 30, softirq 20), cpu1 idle; 2000 MHz.
        stat = ("# t_ns 1000000000\ncpu  100 0 0 1000 0 0 0 0 0 0\ncpu0 50 0 0 500 0 0 0 0 0 0\n"
                "cpu1 50 0 0 500 0 0 0 0 0 0\nmhz 0 2000.0\nmhz 1 2000.0\n"
                "# t_ns 2000000000\ncpu  130 0 0 1150 0 0 20 0 0 0\ncpu0 80 0 0 550 0 0 20 0 0 0\n"
                "cpu1 50 0 0 600 0 0 0 0 0 0\nmhz 0 2000.0\nmhz 1 2000.0\n")
        with gzip.open(d / "proc_stat.txt.gz", "wt") as fh:
            fh.write(stat)
    (folder / "runs.csv").write_text("\n".join(lines) + "\n")
    return folder


@pytest.fixture
def synthetic_session(tmp_path):
    return write_synthetic_session(tmp_path / "raw")

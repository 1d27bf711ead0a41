#!/usr/bin/env python3
"""Capture kit for the priority-boost study (Liang & Keshav): re-run the
paper's three experiments on a Linux host, as root, inside two network
namespaces this script creates and always removes.

    device ns (mtpb-dev)  veth 10.88.0.1/30, egress tbf <rate> --  peer ns (mtpb-peer) 10.88.0.2/30
    slow "PDA": the device's programs and the CPU hogs run in a cgroup limited by
    CFS bandwidth (cgroup v2 cpu.max, or v1 cpu.cfs_quota_us where the cpu
    controller is on v1) to --cpu-fraction of one core, pinned to that core.

Tables (cells), each cell = policies x repetitions:
    cpu    transfer time vs competing CPU-bound processes (0, 1, 10, 20, 30)
    net    transfer time vs cross traffic (25, 50, 85 % of the link), 0 or 1 hog
    audio  send-time jitter of an 80 B / 20 ms UDP sender, 0 or 1 hog, 0/50/85 %

Every run follows the on/off link schedule of seed (seed_base + repetition):
the same schedule for every policy and cell of a repetition. Results go to
<out>/<device>/<session>/: manifest.yaml, runs.csv (one line per run) and
runs/<run_id>/ (the programs' own outputs), written into <session>.partial/
and renamed when an invocation ends (an interrupted one leaves .partial).
Completed runs are skipped when a session is resumed (same --session), so a
capture can be split into chunks. Namespaces, lock, host metadata (schema 2),
session writing and the progress line come from mobitrace.capture. With --lock FILE
cells run while holding an exclusive flock on FILE (machine-wide measurement
mutex), released between cells after --lock-hold-s.

    python run.py --device NAME [--session S] [--tables cpu,net,audio] [--smoke]
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2] / "src"))  # a checkout without `pip install -e .`
from mobitrace.capture import (Interrupted, MeasurementLock, Namespaces, Progress, SessionWriter,  # noqa: E402
                               handle_signals, host_metadata, missing_tool, output, spawn)
from mobitrace.capture.cgroup import CpuLimit  # noqa: E402
from mobitrace.capture.idle import IdleGate, NotIdle  # noqa: E402

APPS = HERE / "apps.py"
NS_PREFIX = "mtpb-"
IF_DEV, IF_PEER = "pbdev0", "pbpeer0"
ADDR_DEV, ADDR_PEER = "10.88.0.1", "10.88.0.2"
PORT = 5201
CGROUP = "mtpb-slow"
RUN_FIELDS = ["run_id", "table", "kind", "cell", "policy", "cpu_procs", "cross_pct", "rep", "seed",
              "status", "wall_s", "started_utc"]
KEY_3DES = "0123456789abcdeffedcba98765432100123456789abcdef"
IV_3DES = "0011223344556677"
SYSCTLS = ("kernel.sched_autogroup_enabled", "kernel.sched_child_runs_first", "kernel.timer_migration")


def slow_cpu(fraction: float, period_us: int, core: int) -> CpuLimit:
    """The "PDA": a CFS-bandwidth-limited cgroup pinned to one core."""
    try:
        return CpuLimit(CGROUP, fraction, period_us, core)
    except RuntimeError:
        raise SystemExit("no CFS bandwidth control (cgroup cpu.max) on this host") from None


def describe_cpu(cpu: CpuLimit) -> dict:
    return {"mechanism": cpu.mechanism, "fraction_of_one_core": cpu.fraction,
            "period_us": cpu.period_us, "quota_us": cpu.quota_us, "pinned_core": cpu.core}


# ---------------------------------------------------------------- namespaces
class Link:
    def __init__(self, rate_mbit: float):
        self.rate_mbit = rate_mbit
        self.receiver = None
        self.ns = Namespaces(NS_PREFIX, ["dev", "peer"], per_process=False)  # mtpb-dev, mtpb-peer

    def up(self):
        self.ns.create()
        self.ns.veth("dev", IF_DEV, "peer", IF_PEER)
        self.ns.address("dev", IF_DEV, f"{ADDR_DEV}/30")
        self.ns.address("peer", IF_PEER, f"{ADDR_PEER}/30")
        self.ns.sh("dev", "tc", "qdisc", "add", "dev", IF_DEV, "root", "tbf",
                   "rate", f"{self.rate_mbit}mbit", "burst", "16kb", "latency", "100ms")
        self.receiver = subprocess.Popen(
            self.ns.argv("peer", [sys.executable, str(APPS), "receiver", "--addr", ADDR_PEER, "--port", str(PORT)]),
            stdout=subprocess.PIPE, text=True)
        if self.receiver.stdout.readline().strip() != "ready":
            raise RuntimeError("receiver did not start")

    def down(self):
        if self.receiver is not None:
            self.receiver.kill()
            self.receiver.wait()
            self.receiver = None
        self.ns.close()

    def describe(self) -> dict:
        dev = self.ns["dev"]

        def ns_read(path):
            return output("cat", path, netns=dev)
        return {
            "device_namespace": dev, "peer_namespace": self.ns["peer"],
            "device_if": IF_DEV, "peer_if": IF_PEER, "device_addr": f"{ADDR_DEV}/30",
            "peer_addr": f"{ADDR_PEER}/30", "rate_mbit": self.rate_mbit,
            "qdisc": output("tc", "qdisc", "show", "dev", IF_DEV, netns=dev),
            "ethtool_k_device_if": output("ethtool", "-k", IF_DEV, netns=dev).splitlines(),
            "rps_cpus_device_if": ns_read(f"/sys/class/net/{IF_DEV}/queues/rx-0/rps_cpus"),
            "xps_cpus_device_if": ns_read(f"/sys/class/net/{IF_DEV}/queues/tx-0/xps_cpus"),
            "sysctls_device_ns": {k: ns_read("/proc/sys/" + k.replace(".", "/")) for k in (
                "net.ipv4.tcp_congestion_control", "net.ipv4.tcp_wmem", "net.ipv4.tcp_rmem",
                "net.core.default_qdisc", "net.ipv4.tcp_retries2", "net.ipv4.tcp_sack")},
        }


# --------------------------------------------------------------------- cells
def cells_for(table: str, smoke: bool) -> list[dict]:
    if table == "cpu":
        procs = [0, 30] if smoke else [0, 1, 10, 20, 30]
        return [{"table": "cpu", "kind": "transfer", "cpu_procs": n, "cross_pct": 0} for n in procs]
    if table == "net":
        grid = [(1, 50)] if smoke else [(c, x) for c in (0, 1) for x in (25, 50, 85)]
        return [{"table": "net", "kind": "transfer", "cpu_procs": c, "cross_pct": x} for c, x in grid]
    if table == "audio":
        grid = [(1, 50)] if smoke else [(c, x) for c in (0, 1) for x in (0, 50, 85)]
        return [{"table": "audio", "kind": "audio", "cpu_procs": c, "cross_pct": x} for c, x in grid]
    raise SystemExit(f"unknown table {table!r}")


def cell_id(cell: dict) -> str:
    return f"{cell['table']}-c{cell['cpu_procs']}-x{cell['cross_pct']}"


def run_id(cell: dict, policy: str, rep: int) -> str:
    return f"{cell_id(cell)}-{policy}-r{rep:02d}"


class Capture:
    def __init__(self, args):
        self.args = args
        self.session = SessionWriter(Path(args.out) / args.device, args.session, resume=True)
        self.cpu = slow_cpu(args.cpu_fraction, args.cpu_period_us, args.core)
        self.link = Link(args.rate_mbit)
        self.procs: list[subprocess.Popen] = []
        self.tmp = Path(tempfile.mkdtemp(prefix="mtpb-"))
        self.file = self.tmp / "payload.bin"
        self.gate = IdleGate.from_args(args, log=lambda m: print(m, flush=True))

    @property
    def runs_dir(self) -> Path:
        return self.session.path("runs")

    # -- bookkeeping
    def done(self) -> set[str]:
        return {r["run_id"] for r in self.session.read_rows("runs.csv") if r["status"] in ("ok", "timeout")}

    def append(self, row: dict):
        self.session.append_row("runs.csv", RUN_FIELDS, row)

    def manifest(self, chunk: dict | None = None, link: dict | None = None):
        doc = self.session.read_manifest()
        a = self.args
        doc.update({
            "study": "priority-boost", "device": a.device, "session": a.session,
            "description": "User-space re-run of Liang & Keshav's priority-boosting experiments "
                           "(scripts/capture/priority_boost/run.py)",
            "smoke": a.smoke,
            "configuration": {
                "policies": a.policies.split(","), "repetitions_per_cell": a.reps,
                "seed_base": a.seed_base, "seed_rule": "seed = seed_base + repetition (same for all policies and cells)",
                "onoff_mean_s": a.mean_onoff_s, "onoff_start": "link up at t=0",
                "link_toggle": "ip link set dev <device veth> up/down (oracle process on the host)",
                "file_bytes": a.file_bytes, "file_scaled_down": a.file_bytes != 41 * 10**6,
                "file_note": "paper: 41 MByte; scaled down to keep the default capture under ~1 h",
                "file_content": f"numpy default_rng({a.seed_base}).bytes(file_bytes)",
                "file_sha256": hashlib.sha256(self.file.read_bytes()).hexdigest() if self.file.exists() else None,
                "cipher": f"openssl enc -{a.cipher} (3DES-CBC: CPU-heavy like the paper's SCP)",
                "transfer_timeout_s": a.timeout_s,
                "audio": {"period_ms": 20, "payload_bytes": 80, "duration_s": a.audio_s,
                          "encryption": "XOR with a SHA-256 counter keystream (stand-in)",
                          "timestamp": "CLOCK_MONOTONIC in user space just before sendto()",
                          "pacing": "absolute 20 ms deadlines (sound-card clock)"},
                "cross_traffic": {"kind": "paced UDP, 1400 B datagrams, 5 ms ticks",
                                  "rate": "cross_pct % of the link rate", "boosted": "yes, same policy as the application"},
                "cpu_hogs": "sh busy loops (while :; do :; done) in the slow cgroup, nice 0",
                "controller": {"poll_s": a.poll_s, "io_event": "a write system call (/proc/<pid>/io syscw)",
                               "bytes_moved": "bytes written (/proc/<pid>/io wchar)",
                               "decr_step_bytes": a.decr_step_bytes, "max_boost_nice": -20,
                               "min_boost_nice": -1, "base_nice": 0, "on_link_down": "reset to base nice",
                               "renices": "the application and its children (openssl)"},
                "slow_cpu": describe_cpu(self.cpu),
                "paper_device": "Linux 2.6.1 server clocked down 2.5 GHz -> 325 MHz, NIC at 10 Mbps",
            },
            "host": host_metadata(sysctls=SYSCTLS, tools={"openssl": ["openssl", "version"]}),
        })
        if link:
            doc["link"] = link
        if self.gate.enabled:
            doc["idle_gate"] = self.gate.manifest(doc.get("idle_gate"))
        if chunk:  # one record per invocation, updated after each cell
            chunks = [c for c in doc.get("chunks", []) if c.get("started_utc") != chunk["started_utc"]]
            doc["chunks"] = chunks + [dict(chunk)]
        self.session.write_manifest(doc)

    # -- processes
    def spawn(self, cmd, in_cgroup=True, netns=None, stdin=False, stdout=False):
        p = spawn(cmd, netns=netns, preexec=self.cpu.enter() if in_cgroup else None,
                  stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                  stdout=subprocess.PIPE if stdout else subprocess.DEVNULL, text=True)
        self.procs.append(p)
        return p

    def kill_all(self):
        for p in self.procs:
            if p.poll() is None:
                try:
                    p.kill()
                except OSError:
                    pass
        for p in self.procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        self.procs = []

    # -- one run
    def run_one(self, cell: dict, policy: str, rep: int) -> dict:
        a = self.args
        seed = a.seed_base + rep
        rid = run_id(cell, policy, rep)
        rdir = self.runs_dir / rid
        if rdir.exists():
            shutil.rmtree(rdir)
        rdir.mkdir(parents=True)
        py = [sys.executable, str(APPS)]
        started = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        t0 = time.monotonic()
        status = "ok"
        self.cpu.limit(False)  # start-up is not part of a run
        try:
            if cell["kind"] == "transfer":
                app = self.spawn(py + ["send", "--addr", ADDR_PEER, "--port", str(PORT), "--file", str(self.file),
                                       "--out", str(rdir / "transfer.json"), "--cipher", a.cipher,
                                       "--key", KEY_3DES, "--iv", IV_3DES, "--timeout-s", str(a.timeout_s)],
                                 netns=self.link.ns["dev"], stdin=True, stdout=True)
            else:
                app = self.spawn(py + ["audio", "--addr", ADDR_PEER, "--port", str(PORT + 1),
                                       "--out", str(rdir / "audio.csv.gz"), "--key", "00" * 16,
                                       "--duration-s", str(a.audio_s)],
                                 netns=self.link.ns["dev"], stdin=True, stdout=True)
            waiting = [app]
            managed = [app.pid]
            if cell["cross_pct"] > 0:
                cross = self.spawn(py + ["cross", "--addr", ADDR_PEER, "--port", str(PORT + 2),
                                         "--out", str(rdir / "cross.json"),
                                         "--rate-bps", str(a.rate_mbit * 1e6 * cell["cross_pct"] / 100)],
                                   netns=self.link.ns["dev"], stdin=True, stdout=True)
                waiting.append(cross)
                managed.append(cross.pid)
            for p in waiting:
                if p.stdout.readline().strip() != "ready":
                    raise RuntimeError(f"{p.args[4:6]} did not start")
            hogs = [self.spawn(["sh", "-c", "while :; do :; done"]) for _ in range(cell["cpu_procs"])]
            oracle = self.spawn(py + ["oracle", "--netns", self.link.ns["dev"], "--dev", IF_DEV, "--policy", policy,
                                      "--out", str(rdir / "oracle.csv.gz"), "--seed", str(seed),
                                      "--mean-s", str(a.mean_onoff_s), "--poll-s", str(a.poll_s),
                                      "--decr-step-bytes", str(a.decr_step_bytes),
                                      "--pids", ",".join(map(str, managed))],
                                in_cgroup=False, stdout=True)
            if oracle.stdout.readline().strip() != "ready":
                raise RuntimeError("oracle did not start")
            self.cpu.limit(True)
            stat0 = self.cpu.stat()
            for p in waiting:
                p.stdin.write("go\n")
                p.stdin.flush()
            limit = time.monotonic() + (a.timeout_s if cell["kind"] == "transfer" else a.audio_s + 60)
            line = ""
            while time.monotonic() < limit:
                if select.select([app.stdout], [], [], 0.2)[0]:
                    line = app.stdout.readline().strip()
                    break
                if app.poll() is not None:
                    break
            stat1 = self.cpu.stat()
            for h in hogs:  # the load ends with the application's task
                h.kill()
            self.cpu.limit(False)
            if line != "done":
                status = "timeout" if app.poll() is None else f"error rc={app.returncode}"
                app.kill()
            rc = app.wait(timeout=60)
            if status == "ok" and rc != 0:
                status = f"error rc={rc}"
            for p in waiting[1:]:
                p.send_signal(signal.SIGTERM)
                p.wait(timeout=10)
            oracle.send_signal(signal.SIGTERM)
            oracle.wait(timeout=10)
            (rdir / "cgroup_cpu_stat.json").write_text(json.dumps(
                {"before": stat0, "after": stat1}, sort_keys=True) + "\n")
        except Exception as exc:  # recorded, and the run is retried on resume
            status = f"error {type(exc).__name__}: {exc}"[:200]
        finally:
            self.kill_all()
        wall = time.monotonic() - t0
        row = {"run_id": rid, "table": cell["table"], "kind": cell["kind"], "cell": cell_id(cell),
               "policy": policy, "cpu_procs": cell["cpu_procs"], "cross_pct": cell["cross_pct"], "rep": rep,
               "seed": seed, "status": status, "wall_s": f"{wall:.3f}", "started_utc": started}
        if status not in ("ok", "timeout"):
            shutil.rmtree(rdir, ignore_errors=True)
        self.append(row)
        print(f"{rid}: {status} ({wall:.1f} s)", flush=True)
        return row

    def run(self):
        a = self.args
        import numpy as np
        self.file.write_bytes(np.random.default_rng(a.seed_base).bytes(a.file_bytes))
        self.session.open()
        policies = a.policies.split(",")
        done = self.done()
        t_start = time.monotonic()
        chunk = {"started_utc": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                 "tables": a.tables, "cells": [], "command": " ".join(sys.argv)}
        link_info = None
        lock = MeasurementLock(a.lock, log=lambda m: print(m, flush=True))
        self.manifest(chunk)
        plan = [cell for table in a.tables.split(",") for cell in cells_for(table, a.smoke)]
        if a.cells:  # only these cells, in the order given
            wanted = a.cells.split(",")
            plan = sorted((c for c in plan if cell_id(c) in wanted), key=lambda c: wanted.index(cell_id(c)))
        todo_by_cell = [(cell, [(rep, pol) for rep in range(a.reps)
                                for pol in policies[rep % len(policies):] + policies[:rep % len(policies)]
                                if run_id(cell, pol, rep) not in done]) for cell in plan]
        progress = Progress(sum(len(t) for _, t in todo_by_cell), f"priority-boost {a.device}")
        for cell, todo in todo_by_cell:
            if not todo:
                continue
            lock.release_if_held(a.lock_hold_s, pause_s=5)  # let others have the machine between groups of cells
            lock.acquire()
            try:
                t_cell = time.monotonic()
                self.cpu.create()
                self.link.up()
                link_info = link_info or self.link.describe()
                for rep, pol in todo:
                    with self.gate.run(run_id(cell, pol, rep)):
                        row = self.run_one(cell, pol, rep)
                    progress.step(f"{row['run_id']}: {row['status']}")
                chunk["cells"].append({"cell": cell_id(cell), "runs": len(todo),
                                       "wall_s": round(time.monotonic() - t_cell, 1)})
                chunk["wall_s"] = round(time.monotonic() - t_start, 1)
                self.manifest(chunk, link_info)
            finally:
                self.kill_all()
                self.link.down()
                self.cpu.remove()
        lock.release()
        chunk["wall_s"] = round(time.monotonic() - t_start, 1)
        self.manifest(chunk, link_info)
        print(f"wrote {self.session.finish()}", flush=True)

    def cleanup(self):
        self.kill_all()
        self.link.down()
        self.cpu.remove()
        shutil.rmtree(self.tmp, ignore_errors=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", required=True, help="name of this host/device (folder name)")
    ap.add_argument("--session", default=dt.datetime.now(dt.timezone.utc).strftime("%Y%m%d"))
    ap.add_argument("--out", default="data/raw/priority-boost")
    ap.add_argument("--tables", default="cpu,net,audio")
    ap.add_argument("--cells", default="", help="comma-separated cell ids to run, in this order (default: all)")
    ap.add_argument("--policies", default="original,incr,decr")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--seed-base", type=int, default=20040)
    ap.add_argument("--file-bytes", type=int, default=1 << 20)
    ap.add_argument("--audio-s", type=float, default=6.0)
    ap.add_argument("--mean-onoff-s", type=float, default=5.0)
    ap.add_argument("--rate-mbit", type=float, default=10.0)
    ap.add_argument("--cpu-fraction", type=float, default=0.13, help="325 MHz / 2.5 GHz")
    ap.add_argument("--cpu-period-us", type=int, default=10000)
    ap.add_argument("--core", type=int, default=(os.cpu_count() or 1) - 1)
    ap.add_argument("--cipher", default="des-ede3-cbc")
    ap.add_argument("--poll-s", type=float, default=0.005)
    ap.add_argument("--decr-step-bytes", type=int, default=60 * 1024)
    ap.add_argument("--timeout-s", type=float, default=300.0)
    ap.add_argument("--lock", default="", help="flock this file while running cells")
    ap.add_argument("--lock-hold-s", type=float, default=900.0,
                    help="release the lock between cells once held this long (the next cell may add a few minutes)")
    ap.add_argument("--smoke", action="store_true",
                    help="seconds: 64 KiB file, 1 s audio, 0.5 s on/off, 1 repetition, 1-2 cells per table")
    IdleGate.add_arguments(ap)
    args = ap.parse_args(argv)
    if args.smoke:
        args.file_bytes, args.audio_s, args.mean_onoff_s, args.reps = 64 * 1024, 1.0, 0.5, 1
        args.timeout_s = min(args.timeout_s, 60.0)
    if os.geteuid() != 0:
        raise SystemExit("run.py needs root (network namespaces, cgroups, setpriority)")
    missing = [t for t in ("ip", "tc", "ethtool", "openssl") if shutil.which(t) is None]
    if missing:
        raise SystemExit(f"priority-boost kit: {missing_tool(missing[0])}")
    capture = Capture(args)
    try:
        with handle_signals():
            capture.run()
    except (Interrupted, NotIdle) as exc:
        print(f"{exc}: unfinished session kept in {capture.session.partial} (resume with the same --session)",
              file=sys.stderr)
        return exc.status
    finally:
        capture.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())

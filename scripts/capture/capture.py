#!/usr/bin/env python3
"""Capture kit for the cpu-gbps study: CPU utilization vs iperf3 TCP throughput.

Creates two network namespaces (the *device* under test and its *peer*) joined
by a veth pair with private addresses (10.77.0.1/30 device, 10.77.0.2/30 peer),
sweeps iperf3 target rates from 100 Mbps up to unlimited, downlink (peer sends
to device: `iperf3 -R`) and uplink, and records per run:

  iperf3.json.gz   the client's `iperf3 -J` output (native format)
  proc_stat.txt.gz /proc/stat `cpu*` lines sampled every --sample-ms (default
                   100 ms = 10 Hz), each line prefixed by CLOCK_MONOTONIC ns
  cpuacct.txt.gz   host-wide precise CPU time of all tasks (root cgroup
                   cpuacct.usage_percpu ns, or cgroup2 cpu.stat usage), same
                   instants, where readable
  proc_pid.txt.gz  precise per-process CPU time sampled at the same instants:
                   /proc/<pid>/schedstat run time (ns) and /proc/<pid>/stat
                   utime/stime (clock ticks) of the two iperf3 processes and of
                   every ksoftirqd thread
  manifest.yaml    the run's configuration, its CLOCK_MONOTONIC start/end and
                   the exact wait4() rusage (user/system s) of both iperf3
                   processes

The session folder holds manifest.yaml with the configuration and host
metadata collected automatically (kernel, CPU model, core count,
governor/frequency where readable, `ethtool -k` of both veth ends, RPS masks,
sysctls, tool versions). A session is written to <session>.partial and renamed
when complete; namespaces, cgroups and processes are removed on every exit
path (normal end, error, Ctrl-C, SIGTERM).

Configurations (--config):
  default        offloads on: GRO, GSO and TSO switched on on both veth ends
                 (veth leaves GRO off unless asked)
  offloads-off   GRO, GSO and TSO off on both veth ends (paper §3.3.1)
  rps-cpu<N>     receive SoftIRQ steered to CPU N by RPS masks on both veth
                 ends; device iperf3 pinned to the last CPU, peer to CPU 0
                 (paper §3.3.2)
  slow-cpumax    a slower emulated device: the device-side iperf3 runs in a
                 cgroup limited to --cpu-quota of one CPU (cgroup v2 cpu.max
                 or v1 cpu.cfs_quota_us), the way Liang & Keshav emulated a
                 PDA by clocking a server down

Idle gate (mobitrace.capture.idle): before each run the CPU used outside the
experiment is measured; above --idle-max-pct (default 5% of one core) the kit
waits and retries, then runs flagged (--idle-strict: stops); the load before
and during every run is in the session manifest under idle_gate:.

Exit status 77 means "cannot capture here" (not root, no iperf3/ip, no
network namespaces); the reason is printed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))  # a checkout without `pip install -e .`
from mobitrace.capture import (SKIP, Interrupted, MeasurementLock, Namespaces, Progress, SessionWriter,  # noqa: E402
                               handle_signals, host_metadata, output, read, sh, spawn, wait, why_not)
from mobitrace.capture.cgroup import CpuLimit  # noqa: E402
from mobitrace.capture.idle import IdleGate  # noqa: E402
from mobitrace.capture.sampler import Periodic, proc_stat_cpu, read_kernel_file  # noqa: E402

DEVICE_IP, PEER_IP, PREFIX = "10.77.0.1", "10.77.0.2", 30
PORT = 5201
DEFAULT_RATES = ["100M", "250M", "500M", "1G", "2500M", "5G", "10G", "max"]
SMOKE_RATES = ["100M", "max"]
CONFIGS = ("default", "offloads-off", "slow-cpumax")  # plus rps-cpu<N>
SYSCTLS = [
    "net.core.rmem_max", "net.core.wmem_max", "net.core.netdev_max_backlog",
    "net.core.netdev_budget", "net.core.rps_sock_flow_entries", "net.core.default_qdisc",
    "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", "net.ipv4.tcp_congestion_control",
    "net.ipv4.tcp_timestamps", "net.ipv4.tcp_sack", "net.ipv4.tcp_window_scaling",
    "net.ipv4.tcp_autocorking", "net.ipv4.tcp_limit_output_bytes",
]


def log(msg: str) -> None:
    print(f"[capture {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def parse_rate(text: str) -> int:
    """'100M' -> 100_000_000 bit/s; 'max' -> 0 (iperf3: unlimited)."""
    if text == "max":
        return 0
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([KMG]?)", text)
    if not m:
        raise argparse.ArgumentTypeError(f"rate {text!r}: expected e.g. 100M, 2500M, 10G or max")
    return int(float(m.group(1)) * {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}[m.group(2)])


def can_capture() -> str | None:
    """Why this machine cannot capture, or None if it can."""
    return why_not("mt", ("ip", "iperf3", "ethtool"), "not root (network namespaces need CAP_SYS_ADMIN)")


# --------------------------------------------------------------------------- #
# Sampling


class Sampler:
    """Samples /proc/stat cpu lines and per-process CPU time every `period` s."""

    def __init__(self, period: float, pids: dict[str, int]):
        self.pids = pids
        self.stat_lines: list[str] = []
        self.pid_lines: list[str] = []
        self.acct_lines: list[str] = []
        self.thread = Periodic(period, self.sample)

    def sample(self) -> None:
        t = time.monotonic_ns()
        self.stat_lines.extend(f"{t} {line}" for line in proc_stat_cpu())
        acct = read_cpuacct()
        if acct is not None:
            self.acct_lines.append(f"{t} {acct}")
        for role, pid in list(self.pids.items()):
            sched = read_kernel_file(f"/proc/{pid}/schedstat")
            stat = read_kernel_file(f"/proc/{pid}/stat")
            if sched is None or stat is None:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            # fields[0] is state (field 3); utime, stime are fields 14, 15
            self.pid_lines.append(f"{t}\t{role}\t{pid}\t{sched.split()[0]}\t{fields[11]}\t{fields[12]}")

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.thread.stop()


def read_cpuacct() -> str | None:
    """Host-wide precise CPU time of all tasks: the root cgroup's
    cpuacct.usage_percpu (v1, ns per CPU) or cpu.stat usage_usec (v2)."""
    v1 = (read_kernel_file("/sys/fs/cgroup/cpuacct/cpuacct.usage_percpu") or "").strip()
    if v1:
        return "cpuacct_percpu_ns " + " ".join(v1.split())
    v2 = (read_kernel_file("/sys/fs/cgroup/cpu.stat") or "").strip()
    if v2:
        for line in v2.splitlines():
            if line.startswith("usage_usec "):
                return f"cgroup2_usage_ns {int(line.split()[1]) * 1000}"
    return None


def ksoftirqd_pids() -> dict[str, int]:
    out = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            comm = read(str(d / "comm"))
            if comm and comm.startswith("ksoftirqd/"):
                out[comm] = int(d.name)
    return dict(sorted(out.items()))


# --------------------------------------------------------------------------- #
# Test-bed metadata (the host's is mobitrace.capture.host)


def tool_versions() -> dict:
    return {
        "iperf3": (output("iperf3", "--version").splitlines() or ["not available"])[0],
        "ethtool": (output("ethtool", "--version").splitlines() or ["not available"])[0],
        "python": sys.version.split()[0],
        "capture_script": "scripts/capture/capture.py",
        "git_commit": sh("git", "-C", str(Path(__file__).resolve().parent), "rev-parse", "HEAD", check=False)
        or "unknown",
    }


def iface_metadata(ns: str, dev: str) -> dict:
    offloads = {}
    for line in sh("ethtool", "-k", dev, netns=ns, check=False).splitlines()[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            offloads[k.strip()] = v.strip()
    queues = {}
    qdir = f"/sys/class/net/{dev}/queues"
    listing = sh("sh", "-c", f"for q in {qdir}/rx-*; do echo $q $(cat $q/rps_cpus); done", netns=ns, check=False)
    for line in listing.splitlines():
        q, _, mask = line.partition(" ")
        queues[Path(q).name] = mask
    return {
        "netns": ns, "name": dev,
        "mtu": sh("cat", f"/sys/class/net/{dev}/mtu", netns=ns, check=False) or None,
        "ethtool_k": offloads,
        "rps_cpus": queues,
        "qdisc": sh("tc", "qdisc", "show", "dev", dev, netns=ns, check=False) or None,
    }


def sysctls(ns: str) -> dict:
    out = {}
    for key in SYSCTLS:
        val = sh("sysctl", "-n", key, netns=ns, check=False) or sh(
            "cat", "/proc/sys/" + key.replace(".", "/"), netns=ns, check=False)
        out[key] = val if val else "not readable"
    return out


# --------------------------------------------------------------------------- #
# Test bed


class Testbed:
    """Two namespaces joined by veth (mobitrace.capture.Namespaces removes
    them on every exit path); the iperf3 processes and the cgroup."""

    def __init__(self, config: str, cpu_quota: float):
        tag = f"{os.getpid()}"
        self.ns = Namespaces("mt", ["dev", "peer"])
        self.ns_dev, self.ns_peer = self.ns["dev"], self.ns["peer"]
        self.if_dev, self.if_peer = f"mtd{tag}"[:15], f"mtp{tag}"[:15]
        self.config, self.cpu_quota = config, cpu_quota
        self.cpu: CpuLimit | None = None
        self.procs: list[subprocess.Popen] = []
        self.dev_cpus: list[int] | None = None
        self.peer_cpus: list[int] | None = None

    @property
    def cgroup(self) -> Path | None:
        return self.cpu.path if self.cpu else None

    def setup(self) -> None:
        self.ns.create()
        self.ns.veth("dev", self.if_dev, "peer", self.if_peer)
        for name, dev, ip in (("dev", self.if_dev, DEVICE_IP), ("peer", self.if_peer, PEER_IP)):
            self.ns.address(name, dev, f"{ip}/{PREFIX}")
        self.apply_config()

    def apply_config(self) -> None:
        ends = (("dev", self.if_dev), ("peer", self.if_peer))
        ncpu = os.cpu_count() or 1
        # Offloads on (GRO is off by default on veth: switch it on) or all off (§3.3.1).
        state = "off" if self.config == "offloads-off" else "on"
        for ns, dev in ends:
            self.ns.sh(ns, "ethtool", "-K", dev, "gro", state, "gso", state, "tso", state)
        if self.config == "offloads-off":
            pass
        elif self.config.startswith("rps-cpu"):
            cpu = int(self.config[len("rps-cpu"):])
            if not 0 <= cpu < ncpu:
                raise RuntimeError(f"config {self.config}: this host has CPUs 0..{ncpu - 1}")
            mask = format(1 << cpu, "x")
            for ns, dev in ends:
                self.ns.sh(ns, "sh", "-c", f"for q in /sys/class/net/{dev}/queues/rx-*; do echo {mask} > $q/rps_cpus; done")
            # Fixed placement of the applications so only the SoftIRQ CPU changes.
            self.dev_cpus, self.peer_cpus = [ncpu - 1], [0]
        elif self.config == "slow-cpumax":
            self.cpu = CpuLimit(f"mobitrace-capture-{os.getpid()}", self.cpu_quota).create()
        elif self.config != "default":
            raise RuntimeError(f"unknown config {self.config!r}")

    def spawn(self, ns: str, cmd: list[str], cpus: list[int] | None, in_cgroup: bool, stdout) -> subprocess.Popen:
        join = self.cpu.enter() if (in_cgroup and self.cpu) else None

        def pre():
            if cpus is not None:
                os.sched_setaffinity(0, cpus)
            if join is not None:
                join()
        proc = spawn(cmd, netns=ns, preexec=pre, stdout=stdout, stderr=subprocess.PIPE)
        self.procs.append(proc)
        return proc

    def close(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        self.ns.close()
        if self.cpu is not None:
            self.cpu.remove()


# --------------------------------------------------------------------------- #
# One run


def finish(proc: subprocess.Popen, timeout: float) -> tuple[int, dict]:
    """Wait for `proc`; (exit status, rusage of exactly that process)."""
    status, ru, timed_out = wait(proc, timeout)
    if timed_out:
        raise RuntimeError(f"{proc.args} did not finish within {timeout:.0f} s")
    return status, ru


def one_run(bed: Testbed, session: SessionWriter, run_id: str, direction: str, rate: str, rep: int,
            duration: int, sample_ms: int) -> dict:
    rate_bps = parse_rate(rate)
    server = bed.spawn(bed.ns_peer, ["iperf3", "-s", "-1", "-B", PEER_IP, "-p", str(PORT)],
                       bed.peer_cpus, False, subprocess.DEVNULL)
    # Wait until the server listens (it binds within milliseconds).
    for _ in range(100):
        if f"{PEER_IP}:{PORT}" in sh("ss", "-Hltn", netns=bed.ns_peer, check=False):
            break
        time.sleep(0.05)
    client_cmd = ["iperf3", "-c", PEER_IP, "-p", str(PORT), "-t", str(duration), "-i", "1", "-J",
                  "-b", str(rate_bps)]
    if direction == "down":
        client_cmd.append("-R")
    pids = {"server": server.pid, **ksoftirqd_pids()}
    sampler = Sampler(sample_ms / 1000, pids)
    sampler.start()
    time.sleep(0.3)
    t_start = time.monotonic_ns()
    client = bed.spawn(bed.ns_dev, client_cmd, bed.dev_cpus, True, subprocess.PIPE)
    pids["client"] = client.pid
    out = client.stdout.read()
    client_status, client_ru = finish(client, duration + 60)
    t_end = time.monotonic_ns()
    server_status, server_ru = finish(server, 30)
    time.sleep(0.2)
    sampler.stop()
    err = client.stderr.read().decode(errors="replace").strip()
    if client_status != 0:
        raise RuntimeError(f"iperf3 client exited {client_status}: {err or out[-300:]!r}")
    rel = f"runs/{run_id}"
    session.mkdir(rel)
    session.write(f"{rel}/iperf3.json", out, gz=True)
    session.write(f"{rel}/proc_stat.txt", "\n".join(sampler.stat_lines) + "\n", gz=True)
    header = "t_ns\trole\tpid\tschedstat_run_ns\tutime_ticks\tstime_ticks\n"
    session.write(f"{rel}/proc_pid.txt", header + "\n".join(sampler.pid_lines) + "\n", gz=True)
    if sampler.acct_lines:
        session.write(f"{rel}/cpuacct.txt", "\n".join(sampler.acct_lines) + "\n", gz=True)
    manifest = {
        "run_id": run_id, "direction": direction, "target_rate": rate,
        "target_rate_bps": rate_bps, "repetition": rep, "duration_s": duration,
        "sample_period_ms": sample_ms,
        "client": {"netns": bed.ns_dev, "cmd": client_cmd, "pid": client.pid, "cpus": bed.dev_cpus,
                   "cgroup": str(bed.cgroup) if bed.cgroup else None, "exit_status": client_status,
                   "rusage": client_ru},
        "server": {"netns": bed.ns_peer, "cmd": server.args[4:], "pid": server.pid, "cpus": bed.peer_cpus,
                   "exit_status": server_status, "rusage": server_ru},
        "t_start_monotonic_ns": t_start, "t_end_monotonic_ns": t_end,
        "loadavg_before": read("/proc/loadavg"),
    }
    session.write_manifest(manifest, f"{rel}/manifest.yaml")
    return manifest


# --------------------------------------------------------------------------- #


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--study", default="cpu-gbps", choices=["cpu-gbps"])
    ap.add_argument("--device", required=True, help="device/configuration name, e.g. vm-veth-default")
    ap.add_argument("--config", default="default",
                    help="default | offloads-off | rps-cpu<N> | slow-cpumax")
    ap.add_argument("--out", default="data/raw", help="root of raw captures (default data/raw)")
    ap.add_argument("--session", default=None, help="session name (default: UTC time)")
    ap.add_argument("--rates", default=",".join(DEFAULT_RATES),
                    help="comma-separated target rates, e.g. 100M,1G,max (default %(default)s)")
    ap.add_argument("--directions", default="down,up")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--duration", type=int, default=10, help="seconds per run (default 10)")
    ap.add_argument("--sample-ms", type=int, default=100, help="/proc sampling period (default 100 ms)")
    ap.add_argument("--cpu-quota", type=float, default=0.25,
                    help="slow-cpumax: CPUs the device iperf3 may use (default 0.25)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the run order shuffle")
    ap.add_argument("--smoke", action="store_true", help="2 rates x 1 s x 1 repetition (for CI)")
    ap.add_argument("--lock", default=None, help="flock this file around each run (a machine-wide mutex)")
    IdleGate.add_arguments(ap)
    args = ap.parse_args(argv)
    gate = IdleGate.from_args(args, log=log)

    if args.smoke:
        args.rates, args.reps, args.duration = ",".join(SMOKE_RATES), 1, 1
    rates = args.rates.split(",")
    for r in rates:
        parse_rate(r)
    directions = args.directions.split(",")
    if set(directions) - {"down", "up"}:
        ap.error("--directions: expected down and/or up")
    if not (args.config in CONFIGS or re.fullmatch(r"rps-cpu\d+", args.config)):
        ap.error(f"--config: expected one of {', '.join(CONFIGS)} or rps-cpu<N>")
    if not args.smoke and (args.reps < 3 or args.duration < 10):
        log("warning: fewer than 3 repetitions or shorter than 10 s: not the default settings")

    reason = can_capture()
    if reason:
        print(f"SKIP: cannot capture on this machine: {reason}")
        return SKIP

    session_name = args.session or dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    session = SessionWriter(Path(args.out) / args.study / args.device, session_name, keep_partial=False)
    if session.final.exists():
        ap.error(f"{session.final} exists; raw captures are immutable")

    bed = Testbed(args.config, args.cpu_quota)
    lock = MeasurementLock(args.lock, log=log)
    order = [(rep, d, r) for rep in range(1, args.reps + 1) for d in directions for r in rates]
    rng = random.Random(args.seed)
    # Shuffle within each repetition so slow drifts do not line up with rate.
    order = [x for rep in range(1, args.reps + 1)
             for x in rng.sample([o for o in order if o[0] == rep], len(rates) * len(directions))]
    t0 = time.monotonic()
    try:
        with handle_signals(), session:
            bed.setup()
            manifest = {
                "study": args.study, "device": args.device, "session": session_name,
                "kind": "smoke" if args.smoke else "default",
                "configuration": {
                    "name": args.config,
                    "description": {
                        "default": "veth pair between two network namespaces; GRO, GSO and TSO on",
                        "offloads-off": "GRO, GSO and TSO off on both veth ends (ethtool -K)",
                        "slow-cpumax": f"device-side iperf3 limited to {args.cpu_quota} CPU by a cgroup CPU quota",
                    }.get(args.config, "receive SoftIRQ steered by RPS masks on both veth ends; "
                                       "device iperf3 and peer iperf3 pinned"),
                    "rates": rates, "directions": directions, "repetitions": args.reps,
                    "duration_s": args.duration, "sample_period_ms": args.sample_ms, "seed": args.seed,
                    "run_order": [f"{d}-{r}-r{rep}" for rep, d, r in order],
                    "device_cpus": bed.dev_cpus, "peer_cpus": bed.peer_cpus,
                    "cpu_quota": args.cpu_quota if args.config == "slow-cpumax" else None,
                    "cgroup": bed.cpu.limits() if bed.cpu else None,
                    "downlink": "peer sends, device receives (iperf3 client on the device with -R)",
                    "uplink": "device sends, peer receives",
                },
                "testbed": {
                    "device": {"address": f"{DEVICE_IP}/{PREFIX}", **iface_metadata(bed.ns_dev, bed.if_dev)},
                    "peer": {"address": f"{PEER_IP}/{PREFIX}", **iface_metadata(bed.ns_peer, bed.if_peer)},
                    "sysctls_device_netns": sysctls(bed.ns_dev),
                    "note": "both namespaces share the host's CPUs: host CPU counts device and peer",
                },
                "host": host_metadata(),
                "tools": tool_versions(),
                "started_utc": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            }
            runs = []
            progress = Progress(len(order), f"cpu-gbps {args.device}")
            for rep, direction, rate in order:
                run_id = f"{direction}-{rate}-r{rep}"
                with lock, gate.run(run_id):  # per run, so other kits can interleave between runs
                    one_run(bed, session, run_id, direction, rate, rep, args.duration, args.sample_ms)
                runs.append(run_id)
                progress.step(run_id)
            manifest["runs"] = runs
            if gate.enabled:
                manifest["idle_gate"] = gate.manifest()
            if args.lock:
                manifest["measurement_lock"] = {"path": args.lock, "held_s": round(lock.held_s, 1),
                                                "waited_s": round(lock.waited_s, 1)}
            manifest["finished_utc"] = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
            manifest["wall_time_s"] = round(time.monotonic() - t0, 1)
            session.write_manifest(manifest)
            final = session.finish()
        log(f"wrote {final} ({manifest['wall_time_s']} s)")
        print(final)
        return 0
    except (Interrupted, Exception) as exc:
        log(f"aborted: {exc}; removed {session.partial}")
        return getattr(exc, "status", 1)  # a signal's 128 + n, --idle-strict's NotIdle 75, else 1
    finally:
        bed.close()
        log("namespaces removed")


if __name__ == "__main__":
    sys.exit(main())

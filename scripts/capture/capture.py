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

Exit status 77 means "cannot capture here" (not root, no iperf3/ip, no
network namespaces); the reason is printed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import os
import platform
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

try:
    import yaml
except ImportError:  # pragma: no cover - the venv has pyyaml
    sys.exit("capture.py needs PyYAML (run it with the project's .venv python)")

SKIP = 77
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


class Abort(Exception):
    """Raised by the signal handlers so `finally` blocks clean up."""


def log(msg: str) -> None:
    print(f"[capture {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def run(cmd: list[str], check: bool = True, netns: str | None = None) -> str:
    if netns:
        cmd = ["ip", "netns", "exec", netns, *cmd]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc.stdout


def try_run(cmd: list[str], netns: str | None = None) -> str | None:
    try:
        return run(cmd, netns=netns).strip()
    except (RuntimeError, FileNotFoundError):
        return None


def read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


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
    if os.geteuid() != 0:
        return "not root (network namespaces need CAP_SYS_ADMIN)"
    for tool in ("ip", "iperf3", "ethtool"):
        if shutil.which(tool) is None:
            return f"{tool} not installed"
    probe = f"mtprobe{os.getpid()}"
    try:
        run(["ip", "netns", "add", probe])
    except RuntimeError as exc:
        return f"cannot create a network namespace: {exc}"
    finally:
        subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


# --------------------------------------------------------------------------- #
# Sampling


class Sampler(threading.Thread):
    """Samples /proc/stat cpu lines and per-process CPU time every `period` s."""

    def __init__(self, period: float, pids: dict[str, int]):
        super().__init__(daemon=True)
        self.period, self.pids = period, pids
        self.stat_lines: list[str] = []
        self.pid_lines: list[str] = []
        self.acct_lines: list[str] = []
        self.stop_event = threading.Event()

    def sample(self) -> None:
        t = time.monotonic_ns()
        with open("/proc/stat") as f:
            for line in f:
                if line.startswith("cpu"):
                    self.stat_lines.append(f"{t} {line.rstrip()}")
                else:
                    break
        acct = read_cpuacct()
        if acct is not None:
            self.acct_lines.append(f"{t} {acct}")
        for role, pid in list(self.pids.items()):
            sched = read(f"/proc/{pid}/schedstat")
            stat = read(f"/proc/{pid}/stat")
            if sched is None or stat is None:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            # fields[0] is state (field 3); utime, stime are fields 14, 15
            self.pid_lines.append(f"{t}\t{role}\t{pid}\t{sched.split()[0]}\t{fields[11]}\t{fields[12]}")

    def run(self) -> None:
        nxt = time.monotonic()
        while not self.stop_event.is_set():
            self.sample()
            nxt += self.period
            self.stop_event.wait(max(0.0, nxt - time.monotonic()))
        self.sample()

    def stop(self) -> None:
        self.stop_event.set()
        self.join()


def read_cpuacct() -> str | None:
    """Host-wide precise CPU time of all tasks: the root cgroup's
    cpuacct.usage_percpu (v1, ns per CPU) or cpu.stat usage_usec (v2)."""
    v1 = read("/sys/fs/cgroup/cpuacct/cpuacct.usage_percpu")
    if v1:
        return "cpuacct_percpu_ns " + " ".join(v1.split())
    v2 = read("/sys/fs/cgroup/cpu.stat")
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
# Host metadata


def kernel_config(keys: list[str]) -> dict[str, str]:
    text = None
    try:
        with gzip.open("/proc/config.gz", "rt") as f:
            text = f.read()
    except OSError:
        cfg = Path(f"/boot/config-{platform.release()}")
        text = cfg.read_text() if cfg.exists() else None
    if text is None:
        return {k: "not readable" for k in keys}
    out = {}
    for k in keys:
        m = re.search(rf"^{k}=(.*)$", text, re.M)
        out[k] = m.group(1) if m else "not set"
    return out


def cpu_metadata() -> dict:
    info = Path("/proc/cpuinfo").read_text()
    models = re.findall(r"^model name\s*:\s*(.*)$", info, re.M)
    flags = re.search(r"^flags\s*:\s*(.*)$", info, re.M)
    mhz = re.findall(r"^cpu MHz\s*:\s*(.*)$", info, re.M)
    cpus = []
    for n in range(os.cpu_count() or 1):
        base = f"/sys/devices/system/cpu/cpu{n}/cpufreq"
        cpus.append({
            "cpu": n,
            "governor": read(f"{base}/scaling_governor") or "not readable",
            "cur_khz": read(f"{base}/scaling_cur_freq") or "not readable",
            "max_khz": read(f"{base}/cpuinfo_max_freq") or "not readable",
            "cpuinfo_mhz": mhz[n] if n < len(mhz) else "not readable",
        })
    return {
        "model": models[0] if models else platform.processor() or "unknown",
        "count": os.cpu_count(),
        "online": read("/sys/devices/system/cpu/online"),
        "hypervisor": bool(flags and " hypervisor" in f" {flags.group(1)}"),
        "frequency": cpus,
    }


def tool_versions() -> dict:
    def first(cmd):
        out = try_run(cmd)
        return out.splitlines()[0] if out else "not available"
    return {
        "iperf3": first(["iperf3", "--version"]),
        "ethtool": first(["ethtool", "--version"]),
        "ip": first(["ip", "-V"]),
        "tc": first(["tc", "-V"]),
        "python": sys.version.split()[0],
        "capture_script": "scripts/capture/capture.py",
        "git_commit": try_run(["git", "-C", str(Path(__file__).resolve().parent), "rev-parse", "HEAD"]) or "unknown",
    }


def iface_metadata(ns: str, dev: str) -> dict:
    offloads = {}
    for line in (try_run(["ethtool", "-k", dev], netns=ns) or "").splitlines()[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            offloads[k.strip()] = v.strip()
    queues = {}
    qdir = f"/sys/class/net/{dev}/queues"
    listing = try_run(["sh", "-c", f"for q in {qdir}/rx-*; do echo $q $(cat $q/rps_cpus); done"], netns=ns)
    for line in (listing or "").splitlines():
        q, _, mask = line.partition(" ")
        queues[Path(q).name] = mask
    return {
        "netns": ns, "name": dev,
        "mtu": try_run(["cat", f"/sys/class/net/{dev}/mtu"], netns=ns),
        "ethtool_k": offloads,
        "rps_cpus": queues,
        "qdisc": try_run(["tc", "qdisc", "show", "dev", dev], netns=ns),
    }


def host_metadata() -> dict:
    uname = platform.uname()
    return {
        "hostname": uname.node,
        "kernel": uname.release,
        "kernel_version": uname.version,
        "machine": uname.machine,
        "os_release": dict(re.findall(r'^(PRETTY_NAME|ID|VERSION_ID)="?([^"\n]*)"?$',
                                      read("/etc/os-release") or "", re.M)),
        "cpu": cpu_metadata(),
        "memory_kb": int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1)),
        "clocksource": read("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
        "user_hz": os.sysconf("SC_CLK_TCK"),
        "kernel_config": kernel_config(["CONFIG_HZ", "CONFIG_NO_HZ_IDLE", "CONFIG_NO_HZ_FULL",
                                        "CONFIG_IRQ_TIME_ACCOUNTING", "CONFIG_VIRT_CPU_ACCOUNTING_GEN",
                                        "CONFIG_TICK_CPU_ACCOUNTING", "CONFIG_RPS", "CONFIG_SCHED_INFO"]),
        "irqbalance_running": any((read(f"/proc/{p}/comm") or "") == "irqbalance"
                                  for p in os.listdir("/proc") if p.isdigit()),
        "dmi_product": read("/sys/class/dmi/id/product_name") or "not readable",
        "sys_vendor": read("/sys/class/dmi/id/sys_vendor") or "not readable",
    }


def sysctls(ns: str) -> dict:
    out = {}
    for key in SYSCTLS:
        val = try_run(["sysctl", "-n", key], netns=ns)
        if val is None:
            val = try_run(["cat", "/proc/sys/" + key.replace(".", "/")], netns=ns)
        out[key] = val if val is not None else "not readable"
    return out


# --------------------------------------------------------------------------- #
# Test bed


class Testbed:
    """Two namespaces joined by veth; always torn down by close()."""

    def __init__(self, config: str, cpu_quota: float):
        tag = f"{os.getpid()}"
        self.ns_dev, self.ns_peer = f"mtdev{tag}", f"mtpeer{tag}"
        self.if_dev, self.if_peer = f"mtd{tag}"[:15], f"mtp{tag}"[:15]
        self.config, self.cpu_quota = config, cpu_quota
        self.cgroup: Path | None = None
        self.procs: list[subprocess.Popen] = []
        self.dev_cpus: list[int] | None = None
        self.peer_cpus: list[int] | None = None

    def setup(self) -> None:
        run(["ip", "netns", "add", self.ns_dev])
        run(["ip", "netns", "add", self.ns_peer])
        run(["ip", "link", "add", self.if_dev, "type", "veth", "peer", "name", self.if_peer])
        run(["ip", "link", "set", self.if_dev, "netns", self.ns_dev])
        run(["ip", "link", "set", self.if_peer, "netns", self.ns_peer])
        for ns, dev, ip in ((self.ns_dev, self.if_dev, DEVICE_IP), (self.ns_peer, self.if_peer, PEER_IP)):
            run(["ip", "addr", "add", f"{ip}/{PREFIX}", "dev", dev], netns=ns)
            run(["ip", "link", "set", "lo", "up"], netns=ns)
            run(["ip", "link", "set", dev, "up"], netns=ns)
        self.apply_config()

    def apply_config(self) -> None:
        ends = ((self.ns_dev, self.if_dev), (self.ns_peer, self.if_peer))
        ncpu = os.cpu_count() or 1
        # Offloads on (GRO is off by default on veth: switch it on) or all off (§3.3.1).
        state = "off" if self.config == "offloads-off" else "on"
        for ns, dev in ends:
            run(["ethtool", "-K", dev, "gro", state, "gso", state, "tso", state], netns=ns)
        if self.config == "offloads-off":
            pass
        elif self.config.startswith("rps-cpu"):
            cpu = int(self.config[len("rps-cpu"):])
            if not 0 <= cpu < ncpu:
                raise RuntimeError(f"config {self.config}: this host has CPUs 0..{ncpu - 1}")
            mask = format(1 << cpu, "x")
            for ns, dev in ends:
                run(["sh", "-c", f"for q in /sys/class/net/{dev}/queues/rx-*; do echo {mask} > $q/rps_cpus; done"],
                    netns=ns)
            # Fixed placement of the applications so only the SoftIRQ CPU changes.
            self.dev_cpus, self.peer_cpus = [ncpu - 1], [0]
        elif self.config == "slow-cpumax":
            self.cgroup = make_cgroup(f"mobitrace-capture-{os.getpid()}", self.cpu_quota)
        elif self.config != "default":
            raise RuntimeError(f"unknown config {self.config!r}")

    def spawn(self, ns: str, cmd: list[str], cpus: list[int] | None, cgroup: Path | None,
              stdout) -> subprocess.Popen:
        def pre():
            os.setpgrp()
            if cpus is not None:
                os.sched_setaffinity(0, cpus)
            if cgroup is not None:
                (cgroup / "cgroup.procs").write_text(str(os.getpid()))
        proc = subprocess.Popen(["ip", "netns", "exec", ns, *cmd], stdout=stdout,
                                stderr=subprocess.PIPE, preexec_fn=pre)
        self.procs.append(proc)
        return proc

    def close(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()
        for ns in (self.ns_dev, self.ns_peer):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        subprocess.run(["ip", "link", "del", self.if_dev], capture_output=True)
        if self.cgroup is not None:
            for _ in range(50):
                try:
                    self.cgroup.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.1)


def make_cgroup(name: str, quota: float) -> Path:
    """A cgroup limited to `quota` CPUs (v2 cpu.max, else v1 cfs quota)."""
    period = 100_000
    v2 = Path("/sys/fs/cgroup")
    if "cpu" in (read(str(v2 / "cgroup.controllers")) or "").split():
        if "cpu" not in (read(str(v2 / "cgroup.subtree_control")) or "").split():
            (v2 / "cgroup.subtree_control").write_text("+cpu")
        cg = v2 / name
        cg.mkdir()
        (cg / "cpu.max").write_text(f"{int(quota * period)} {period}")
        return cg
    v1 = Path("/sys/fs/cgroup/cpu")
    if (v1 / "cpu.cfs_quota_us").exists():
        cg = v1 / name
        cg.mkdir()
        (cg / "cpu.cfs_period_us").write_text(str(period))
        (cg / "cpu.cfs_quota_us").write_text(str(int(quota * period)))
        return cg
    raise RuntimeError("no cgroup cpu controller (v2 cpu.max or v1 cpu.cfs_quota_us) found")


def cgroup_limits(cg: Path | None) -> dict | None:
    if cg is None:
        return None
    if (cg / "cpu.max").exists():
        return {"path": str(cg), "cpu.max": read(str(cg / "cpu.max"))}
    return {"path": str(cg), "cpu.cfs_quota_us": read(str(cg / "cpu.cfs_quota_us")),
            "cpu.cfs_period_us": read(str(cg / "cpu.cfs_period_us"))}


# --------------------------------------------------------------------------- #
# One run


def wait4(proc: subprocess.Popen, timeout: float) -> tuple[int, dict]:
    """Wait for `proc`; return (exit status, rusage of the exact process)."""
    deadline = time.monotonic() + timeout
    while True:
        pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return proc.returncode, {"utime_s": ru.ru_utime, "stime_s": ru.ru_stime,
                                     "maxrss_kb": ru.ru_maxrss, "nvcsw": ru.ru_nvcsw,
                                     "nivcsw": ru.ru_nivcsw}
        if time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            raise RuntimeError(f"{proc.args} did not finish within {timeout:.0f} s")
        time.sleep(0.02)


def one_run(bed: Testbed, run_dir: Path, direction: str, rate: str, rep: int, duration: int,
            sample_ms: int) -> dict:
    rate_bps = parse_rate(rate)
    server = bed.spawn(bed.ns_peer, ["iperf3", "-s", "-1", "-B", PEER_IP, "-p", str(PORT)],
                       bed.peer_cpus, None, subprocess.DEVNULL)
    # Wait until the server listens (it binds within milliseconds).
    for _ in range(100):
        if f"{PEER_IP}:{PORT}" in (try_run(["ss", "-Hltn"], netns=bed.ns_peer) or ""):
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
    client = bed.spawn(bed.ns_dev, client_cmd, bed.dev_cpus, bed.cgroup, subprocess.PIPE)
    pids["client"] = client.pid
    out = client.stdout.read()
    client_status, client_ru = wait4(client, duration + 60)
    t_end = time.monotonic_ns()
    server_status, server_ru = wait4(server, 30)
    time.sleep(0.2)
    sampler.stop()
    err = client.stderr.read().decode(errors="replace").strip()
    if client_status != 0:
        raise RuntimeError(f"iperf3 client exited {client_status}: {err or out[-300:]!r}")
    run_dir.mkdir(parents=True)
    with gzip.GzipFile(run_dir / "iperf3.json.gz", "wb", mtime=0) as f:
        f.write(out)
    with gzip.GzipFile(run_dir / "proc_stat.txt.gz", "wb", mtime=0) as f:
        f.write(("\n".join(sampler.stat_lines) + "\n").encode())
    with gzip.GzipFile(run_dir / "proc_pid.txt.gz", "wb", mtime=0) as f:
        header = "t_ns\trole\tpid\tschedstat_run_ns\tutime_ticks\tstime_ticks\n"
        f.write((header + "\n".join(sampler.pid_lines) + "\n").encode())
    if sampler.acct_lines:
        with gzip.GzipFile(run_dir / "cpuacct.txt.gz", "wb", mtime=0) as f:
            f.write(("\n".join(sampler.acct_lines) + "\n").encode())
    manifest = {
        "run_id": run_dir.name, "direction": direction, "target_rate": rate,
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
    (run_dir / "manifest.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
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
    args = ap.parse_args(argv)

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

    session = args.session or dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    final = Path(args.out) / args.study / args.device / session
    if final.exists():
        ap.error(f"{final} exists; raw captures are immutable")
    partial = final.with_name(final.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)

    def on_signal(signum, _frame):
        raise Abort(f"signal {signal.Signals(signum).name}")
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)

    bed = Testbed(args.config, args.cpu_quota)
    order = [(rep, d, r) for rep in range(1, args.reps + 1) for d in directions for r in rates]
    rng = random.Random(args.seed)
    # Shuffle within each repetition so slow drifts do not line up with rate.
    order = [x for rep in range(1, args.reps + 1)
             for x in rng.sample([o for o in order if o[0] == rep], len(rates) * len(directions))]
    t0 = time.monotonic()
    try:
        bed.setup()
        partial.mkdir(parents=True)
        manifest = {
            "study": args.study, "device": args.device, "session": session,
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
                "cgroup": cgroup_limits(bed.cgroup),
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
        for i, (rep, direction, rate) in enumerate(order, 1):
            run_id = f"{direction}-{rate}-r{rep}"
            log(f"{args.device} run {i}/{len(order)}: {run_id}")
            one_run(bed, partial / "runs" / run_id, direction, rate, rep, args.duration, args.sample_ms)
            runs.append(run_id)
        manifest["runs"] = runs
        manifest["finished_utc"] = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        manifest["wall_time_s"] = round(time.monotonic() - t0, 1)
        (partial / "manifest.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
        partial.rename(final)
        log(f"wrote {final} ({manifest['wall_time_s']} s)")
        print(final)
        return 0
    except (Abort, Exception) as exc:
        log(f"aborted: {exc}; removing {partial}")
        shutil.rmtree(partial, ignore_errors=True)
        return 130 if isinstance(exc, Abort) else 1
    finally:
        bed.close()
        log("namespaces removed")


if __name__ == "__main__":
    sys.exit(main())

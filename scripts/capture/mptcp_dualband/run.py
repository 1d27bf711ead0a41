#!/usr/bin/env python3
"""Capture kit for the mptcp-dualband study (Khan et al., WiNTECH'21): two
rate-limited paths between a "phone" and an "AP/server" namespace, Linux
MPTCP and a fixed-ratio striping sender, as root. Namespaces are created
with this kit's own prefix and always removed (also on errors and SIGTERM).

    phone ns (mtmp-ph<pid>)                       ap ns (mtmp-ap<pid>)
      pa 10.93.0.2/24  <== path a ("802.11ad") ==>  aa 10.93.0.1/24
      pb 10.94.0.2/24  <== path b ("802.11ac") ==>  ab 10.94.0.1/24

Each path is limited by tc htb on the egress of both ends: the AP side at
the paper's downlink rates (1600 and 600 Mbps, §3.2), the phone side at its
uplink rates (1450 and 600 Mbps), all times --scale. Downlink = AP sends to
the phone; uplink = the phone sends.

Transfers use mtmp_xfer (mtmp_xfer.c, compiled here with gcc):
  * mptcp: one IPPROTO_MPTCP socket; the phone connects to the AP's path-a
    address, the AP announces its path-b address (`ip mptcp endpoint ...
    signal`), the phone has a path-b endpoint (flag `backup` in backup runs,
    which use the other path as primary when asked), limits 2/2. Per-path
    bytes come from the phone's interface counters (`ip -s -j link`).
  * striped: two TCP connections (one per path) and a fixed packet ratio
    a:b, chunk by chunk (the FixedRatio scheduler's behaviour), optionally
    paced to a demand (Mbps, times --scale).

Parts (--parts): mptcp (backlogged MPTCP, both directions, the CDF runs),
gro (downlink MPTCP with GRO off on the phone's path-a or path-b interface),
sirq (downlink MPTCP with RPS steering the phone's receive SoftIRQ to CPU 0
or CPU 1, as the cpu-gbps kit's rps-cpu<N>), sweep (striped, ratios x
demands x directions), backup (downlink MPTCP backup mode vs a 0-packet
ratio, at several demands).

Every run records both CPU sources: the two processes' own CPU time
(getrusage, precise) and /proc/stat before/after (tick-sampled), the 1-min
load average and `cpu MHz` from /proc/cpuinfo (no cpufreq in sysfs here).
Output: <out>/<device>/<session>/manifest.yaml and runs.jsonl.gz (one JSON
record per run with the tools' own JSON). With --lock FILE each batch of
runs holds an exclusive flock on FILE (a machine-wide measurement mutex).

    python run.py --device NAME [--session S] [--parts mptcp,gro,sirq,sweep,backup] [--smoke]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "src"))  # a checkout without `pip install -e .`
from mobitrace.capture import (SKIP, CommandError, Interrupted, MeasurementLock, Namespaces, Progress,  # noqa: E402
                               SessionWriter, handle_signals, host_metadata, missing_tool, output, read, run)
from mobitrace.capture import sh as _sh  # noqa: E402
from mobitrace.capture.sampler import cpuinfo_mhz as cpu_mhz, loadavg_1min as loadavg1, proc_stat_cpu  # noqa: E402
from mobitrace.capture.idle import IdleGate, NotIdle  # noqa: E402

HERE = Path(__file__).resolve().parent
SRC = HERE / "mtmp_xfer.c"
PREFIX = "mtmp-"
ADDR = {"a": ("10.93.0.2", "10.93.0.1"), "b": ("10.94.0.2", "10.94.0.1")}  # (phone, ap)
IF_PHONE = {"a": "pa", "b": "pb"}
IF_AP = {"a": "aa", "b": "ab"}
# The paper's single-path TCP throughputs (§3.2), Mbps: the path capacities.
RATES = {"downlink": {"a": 1600.0, "b": 600.0}, "uplink": {"a": 1450.0, "b": 600.0}}
SWEEP_RATIOS = sorted(set(range(0, 101, 10)) | {73, 66, 83, 70, 90})
# Demands of §4.2 (Mbps, before scaling); None = backlogged.
DEMANDS = {"downlink": [None, 1750.0, 1500.0, 500.0], "uplink": [None, 1750.0, 1400.0, 500.0]}
BACKUP_DEMANDS = {"a": [500.0, 1000.0, 1500.0], "b": [100.0, 300.0, 500.0]}
PORT = 5301
CC = "cubic"
SUBFLOW_WAIT_MS = 300.0   # MPTCP runs: sender waits for the subflows (see mtmp_xfer.c --wait-ms)
ADD_ADDR_TIMEOUT_S = 1    # net.mptcp.add_addr_timeout in both namespaces (kernel default 120 s)


SYSCTLS = ("net.mptcp.enabled", "net.mptcp.scheduler")
SHARED_HOST = ("a shared 2-core VM: other captures run between this kit's batches "
               "(a machine-wide flock keeps measured runs from overlapping); see loadavg1 per run")


def sh(*cmd, check=True):
    """A set-up command, retried (`ip netns exec` fails transiently on a busy host)."""
    return _sh(*cmd, check=check, attempts=3)


class Topology:
    """Two namespaces, two veth paths, htb on both ends, MPTCP limits."""

    def __init__(self, scale: float):
        self.nets = Namespaces(PREFIX, ["ph", "ap"])  # mtmp-ph<pid>, mtmp-ap<pid>
        self.ph, self.ap = self.nets["ph"], self.nets["ap"]
        self.scale = scale

    def ns(self, which: str) -> str:
        return self.ph if which == "phone" else self.ap

    def up(self):
        self.nets.create()
        for p in ("a", "b"):
            self.nets.veth("ph", IF_PHONE[p], "ap", IF_AP[p])
            self.nets.address("ph", IF_PHONE[p], f"{ADDR[p][0]}/24")
            self.nets.address("ap", IF_AP[p], f"{ADDR[p][1]}/24")
            for ns, dev, direction in ((self.ap, IF_AP[p], "downlink"), (self.ph, IF_PHONE[p], "uplink")):
                mbit = RATES[direction][p] * self.scale
                sh("ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", dev, "root", "handle", "1:",
                   "htb", "default", "1")
                sh("ip", "netns", "exec", ns, "tc", "class", "add", "dev", dev, "parent", "1:", "classid",
                   "1:1", "htb", "rate", f"{mbit:g}mbit", "ceil", f"{mbit:g}mbit", "quantum", "200000",
                   "burst", "256k", "cburst", "256k")
        for ns in (self.ph, self.ap):
            sh("ip", "-n", ns, "mptcp", "limits", "set", "subflows", "2", "add_addr_accepted", "2")
            sh("ip", "netns", "exec", ns, "sysctl", "-qw", f"net.mptcp.add_addr_timeout={ADD_ADDR_TIMEOUT_S}")

    def mptcp_endpoints(self, primary: str, backup: bool):
        """AP announces the non-primary path's address; the phone has an endpoint there."""
        other = "b" if primary == "a" else "a"
        for ns in (self.ph, self.ap):
            sh("ip", "-n", ns, "mptcp", "endpoint", "flush")
        sh("ip", "-n", self.ap, "mptcp", "endpoint", "add", ADDR[other][1], "dev", IF_AP[other], "signal")
        cmd = ["ip", "-n", self.ph, "mptcp", "endpoint", "add", ADDR[other][0], "dev", IF_PHONE[other]]
        sh(*(cmd + (["backup"] if backup else [])))

    def set_gro(self, off: set[str]):
        for p in ("a", "b"):
            sh("ip", "netns", "exec", self.ph, "ethtool", "-K", IF_PHONE[p], "gro",
               "off" if p in off else "on", check=False)

    def set_rps(self, mask: str):
        for p in ("a", "b"):
            sh("ip", "netns", "exec", self.ph, "sh", "-c",
               f"for f in /sys/class/net/{IF_PHONE[p]}/queues/rx-*/rps_cpus; do echo {mask} > $f; done")

    def gro_state(self) -> dict:
        out = {}
        for p, dev in IF_PHONE.items():
            text = output("ip", "netns", "exec", self.ph, "ethtool", "-k", dev)
            out[p] = next((ln.split(":", 1)[1].strip() for ln in text.splitlines()
                           if ln.startswith("generic-receive-offload")), "unknown")
        return out

    def if_stats(self) -> dict:
        out = sh("ip", "-n", self.ph, "-s", "-j", "link", "show")
        return {d["ifname"]: {"rx_bytes": d["stats64"]["rx"]["bytes"], "tx_bytes": d["stats64"]["tx"]["bytes"],
                              "rx_packets": d["stats64"]["rx"]["packets"],
                              "tx_packets": d["stats64"]["tx"]["packets"]}
                for d in json.loads(out) if d["ifname"] in IF_PHONE.values()}

    def describe(self) -> dict:
        out = {}
        for which in ("phone", "ap"):
            ns = self.ns(which)
            ifs = IF_PHONE if which == "phone" else IF_AP
            out[which] = {
                "tc": output("ip", "netns", "exec", ns, "tc", "-s", "class", "show", "dev", ifs["a"]) + "\n"
                + output("ip", "netns", "exec", ns, "tc", "class", "show", "dev", ifs["b"]),
                "ethtool_k": {p: output("ip", "netns", "exec", ns, "ethtool", "-k", dev)
                              for p, dev in ifs.items()},
                "rps_cpus": {p: output("ip", "netns", "exec", ns, "sh", "-c",
                                       f"cat /sys/class/net/{dev}/queues/rx-*/rps_cpus")
                             for p, dev in ifs.items()},
                "mptcp_limits": output("ip", "-n", ns, "mptcp", "limits", "show"),
            }
        return out

    def down(self):
        self.nets.close()


def plan(parts: list[str], smoke: bool, reps_cdf: int, reps_sweep: int, reps_extra: int | None = None) -> list[dict]:
    reps_extra = reps_cdf if reps_extra is None else reps_extra
    runs = []

    def add(**kw):
        base = {"transport": "mptcp", "direction": "downlink", "ratio_a_pct": None, "demand_mbps": None,
                "gro_off": [], "rps": None, "primary": "a", "backup": False, "rep": 0}
        base.update(kw)
        runs.append(base)

    ratios = [0, 73, 100] if smoke else SWEEP_RATIOS
    for part in parts:
        if part == "mptcp":
            for direction in ("downlink", "uplink"):
                for rep in range(1 if smoke else reps_cdf):
                    add(part=part, config="default", direction=direction, rep=rep)
        elif part == "gro":
            for path in ("a", "b"):
                for rep in range(1 if smoke else reps_extra):
                    add(part=part, config=f"gro-off-{path}", gro_off=[path], rep=rep)
        elif part == "sirq":
            for cpu in (0, 1):
                for rep in range(1 if smoke else reps_extra):
                    add(part=part, config=f"rps-cpu{cpu}", rps=cpu, rep=rep)
        elif part == "sweep":
            for direction in ("downlink", "uplink"):
                for demand in (DEMANDS[direction][:2] if smoke else DEMANDS[direction]):
                    for ratio in ratios:
                        for rep in range(1 if smoke else reps_sweep):
                            add(part=part, config="default", transport="striped", direction=direction,
                                ratio_a_pct=float(ratio), demand_mbps=demand, rep=rep)
        elif part == "backup":
            for primary in ("a", "b"):
                for demand in (BACKUP_DEMANDS[primary][:1] if smoke else BACKUP_DEMANDS[primary]):
                    for rep in range(1 if smoke else reps_sweep):
                        add(part=part, config=f"backup-{'b' if primary == 'a' else 'a'}", primary=primary,
                            backup=True, demand_mbps=demand, rep=rep)
                        add(part=part, config="zero-packets", transport="striped",
                            ratio_a_pct=100.0 if primary == "a" else 0.0, demand_mbps=demand, rep=rep)
        else:
            raise SystemExit(f"unknown part {part!r}; parts are mptcp, gro, sirq, sweep, backup")
    for i, r in enumerate(runs):
        ratio = "mp" if r["ratio_a_pct"] is None else f"r{int(r['ratio_a_pct']):03d}"
        demand = "bl" if r["demand_mbps"] is None else f"d{int(r['demand_mbps'])}"
        r["run_id"] = f"{i:04d}-{r['part']}-{r['config']}-{r['direction'][0]}l-{ratio}-{demand}-{r['rep']}"
    return runs


def run_one(topo: Topology, xfer: Path, spec: dict, duration: float, scale: float) -> dict:
    """One transfer; returns the run record (raises on a failed tool)."""
    topo.set_gro(set(spec["gro_off"]))
    topo.set_rps("0" if spec["rps"] is None else format(1 << spec["rps"], "x"))
    mptcp = spec["transport"] == "mptcp"
    if mptcp:
        topo.mptcp_endpoints(spec["primary"], spec["backup"])
        addrs = ADDR[spec["primary"]][1]
        conns = 1
    else:
        addrs = f"{ADDR['a'][1]},{ADDR['b'][1]}"
        conns = 2
    ap_sends = spec["direction"] == "downlink"
    sender_opts = ["--duration", f"{duration:g}"] + (["--wait-ms", f"{SUBFLOW_WAIT_MS:g}"] if mptcp else [])
    if spec["demand_mbps"] is not None:
        sender_opts += ["--rate", f"{spec['demand_mbps'] * scale:g}"]
    if spec["ratio_a_pct"] is not None:
        sender_opts += ["--ratio", f"{spec['ratio_a_pct']:g}"]
    common = ["--port", str(PORT), "--cc", CC] + (["--mptcp"] if mptcp else [])
    server = ["ip", "netns", "exec", topo.ap, str(xfer), "server", "--conns", str(conns), *common,
              *(["--send", *sender_opts] if ap_sends else ["--recv"])]
    client = ["ip", "netns", "exec", topo.ph, str(xfer), "client", "--addr", addrs, *common,
              *(["--recv"] if ap_sends else ["--send", *sender_opts])]
    rec = {"run_id": spec["run_id"], "spec": {k: v for k, v in spec.items() if k != "run_id"},
           "started_utc": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
           "loadavg1": loadavg1(), "cpu_mhz_before": cpu_mhz()}
    rec["phone_gro"] = topo.gro_state()
    rec["if_before"] = topo.if_stats()
    rec["proc_stat_before"] = proc_stat_cpu()
    srv = subprocess.Popen(server, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = srv.stdout.readline()
        if '"listening"' not in line:
            raise RuntimeError(f"server did not start: {line!r} {srv.stderr.read()}")
        cli = run(client, timeout=duration + 60)
        s_out, s_err = srv.communicate(timeout=duration + 60)
    finally:
        if srv.poll() is None:
            srv.kill()
            srv.wait()
    rec["proc_stat_after"] = proc_stat_cpu()
    rec["if_after"] = topo.if_stats()
    rec["cpu_mhz_after"] = cpu_mhz()
    if cli.returncode != 0 or srv.returncode != 0:
        raise RuntimeError(f"run {spec['run_id']}: client rc {cli.returncode} {cli.stderr.strip()!r}; "
                           f"server rc {srv.returncode} {s_err.strip()!r}")
    rec["phone"] = json.loads(cli.stdout.strip().splitlines()[-1])
    rec["ap"] = json.loads(s_out.strip().splitlines()[-1])
    return rec


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", required=True)
    ap.add_argument("--session", default=None)
    ap.add_argument("--out", default=str(HERE.parents[2] / "data" / "raw" / "mptcp-dualband"))
    ap.add_argument("--parts", default="mptcp,sweep,gro,backup,sirq")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="factor on every path rate and demand (keeps the 1600:600 proportion)")
    ap.add_argument("--reps-cdf", type=int, default=20, help="runs per configuration of the CDF parts")
    ap.add_argument("--reps-extra", type=int, default=None,
                    help="runs per configuration of the gro and sirq parts (default: --reps-cdf)")
    ap.add_argument("--reps-sweep", type=int, default=2, help="runs per ratio x demand x direction")
    ap.add_argument("--duration-cdf", type=float, default=3.0, help="seconds per CDF run")
    ap.add_argument("--duration-sweep", type=float, default=2.0, help="seconds per sweep/backup run")
    ap.add_argument("--batch", type=int, default=12, help="runs per lock hold")
    ap.add_argument("--lock", default=None, help="flock this file around each batch of runs")
    ap.add_argument("--smoke", action="store_true", help="a few 0.5 s runs of every part (seconds)")
    IdleGate.add_arguments(ap)
    args = ap.parse_args(argv)

    if os.geteuid() != 0:
        print("mptcp-dualband kit: needs root (network namespaces)", file=sys.stderr)
        return SKIP
    if read("/proc/sys/net/mptcp/enabled") != "1":
        print("mptcp-dualband kit: MPTCP is not enabled (net.mptcp.enabled != 1)", file=sys.stderr)
        return SKIP
    for tool in ("ip", "tc", "gcc", "ethtool"):
        if not shutil.which(tool):
            print(f"mptcp-dualband kit: {missing_tool(tool)}", file=sys.stderr)
            return SKIP
    parts = [p for p in args.parts.split(",") if p]
    if args.smoke:
        args.duration_cdf = args.duration_sweep = 0.5
    session_name = args.session or dt.datetime.now(dt.timezone.utc).strftime("s%Y%m%dT%H%M%S")
    session = SessionWriter(Path(args.out) / args.device, session_name)
    if session.final.exists():
        print(f"mptcp-dualband kit: {session.final} exists; choose another --session", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="mtmp-kit-"))
    xfer = work / "mtmp_xfer"
    subprocess.run(["gcc", "-O2", "-Wall", "-o", str(xfer), str(SRC)], check=True)
    topo = Topology(args.scale)
    runs = plan(parts, args.smoke, args.reps_cdf, args.reps_sweep, args.reps_extra)
    lock = MeasurementLock(args.lock)
    gate = IdleGate.from_args(args, log=lambda m: print(m, file=sys.stderr, flush=True))
    records, failed = [], []
    try:
        with handle_signals():
            try:
                topo.up()
            except CommandError as exc:
                print(f"mptcp-dualband kit: cannot build the namespaces ({exc}); skipping", file=sys.stderr)
                return SKIP
            link = topo.describe()
            progress = Progress(len(runs), f"mptcp-dualband {args.device}")
            try:
                for start in range(0, len(runs), args.batch):
                    with lock:
                        for spec in runs[start:start + args.batch]:
                            d = args.duration_sweep if spec["part"] in ("sweep", "backup") else args.duration_cdf
                            for attempt in range(3):
                                try:
                                    with gate.run(spec["run_id"]):  # background load before and during
                                        rec = run_one(topo, xfer, spec, d, args.scale)
                                    rec["attempt"] = attempt + 1
                                    records.append(rec)
                                    break
                                except (RuntimeError, subprocess.SubprocessError, ValueError) as exc:
                                    msg = getattr(exc, "stderr", None) or str(exc)
                                    failed.append({"run_id": spec["run_id"], "attempt": attempt + 1,
                                                   "error": str(msg).strip()[:300]})
                                    print(f"run {spec['run_id']} attempt {attempt + 1} failed: {msg}",
                                          file=sys.stderr)
                                    time.sleep(1)
                            progress.step(spec["run_id"])
            except (Interrupted, NotIdle) as exc:  # --idle-strict stops like a signal
                print(f"mptcp-dualband kit: interrupted ({exc}); keeping the {len(records)} runs done",
                      file=sys.stderr)
    finally:
        topo.down()
        shutil.rmtree(work, ignore_errors=True)
    if not records:
        print("mptcp-dualband kit: no runs completed; nothing written", file=sys.stderr)
        return 1
    with session:
        session.write("runs.jsonl", "".join(json.dumps(rec, sort_keys=True) + "\n" for rec in records), gz=True)
        doc = {
            "study": "mptcp-dualband", "device": args.device, "session": session_name,
            "created_utc": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "kit": "scripts/capture/mptcp_dualband/run.py",
            "command": " ".join(sys.argv),
            "config": {
                "parts": parts, "smoke": args.smoke, "scale": args.scale,
                "path_rates_mbps": {d: {p: r * args.scale for p, r in v.items()} for d, v in RATES.items()},
                "paper_path_rates_mbps": RATES, "paths": {"a": "802.11ad analog", "b": "802.11ac analog"},
                "shaper": "tc htb on the egress of both ends of each veth (rate = ceil, burst 256k, quantum 200000)",
                "congestion_control": CC, "mptcp_subflow_wait_ms": SUBFLOW_WAIT_MS,
                "mptcp_add_addr_timeout_s": ADD_ADDR_TIMEOUT_S,
                "transfer_tool": "mtmp_xfer (scripts/capture/mptcp_dualband/mtmp_xfer.c)",
                "reps_cdf": args.reps_cdf, "reps_extra": args.reps_extra or args.reps_cdf,
                "reps_sweep": args.reps_sweep,
                "duration_cdf_s": args.duration_cdf, "duration_sweep_s": args.duration_sweep,
                "sweep_ratios_a_pct": SWEEP_RATIOS, "demands_mbps": DEMANDS, "backup_demands_mbps": BACKUP_DEMANDS,
                "cpu_sources": {"precise": "getrusage(RUSAGE_SELF) of each mtmp_xfer process",
                                "tick_sampled": "/proc/stat cpu lines before and after each run"},
            },
            "lock": {"file": args.lock, "held_s": round(lock.held_s, 1)},
            "n_runs": len(records),
            "n_planned": len(runs),
            "complete": len(records) == len(runs),
            "failed_attempts": failed,
            "host": host_metadata(sysctls=SYSCTLS, tools={"gcc": ["gcc", "--version"]}, note=SHARED_HOST),
            "link": link,
        }
        if gate.enabled:
            doc["idle_gate"] = gate.manifest()
        session.write_manifest(doc)
        final = session.finish()
    print(f"wrote {len(records)} runs to {final} (lock held {lock.held_s:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Stack-trim capture kit: CPU cost of one-copy vs two-copy and TCP vs UDP at
constant bit rates, over loopback and over a veth pair (Zhu et al., HotNets'16,
§4.1 and §5.1).

Runs as root. It compiles `stnet.c` (next to this file) with gcc, creates its
own network namespaces (prefix `mtst-`): one whose loopback carries the
"loopback" runs, and two joined by a veth pair (10.91.0.1/30 <-> 10.91.0.2/30)
for the "veth" runs, and always removes them (also on an error, Ctrl-C or
SIGTERM). No traffic leaves the host.

Experiments (one *condition* = link, direction, transport, sender and receiver
data path; the device under test is the sender for `up`, the receiver for
`down`, the other end is a plain peer that moves memory only):

* onecopy: TCP, up (sender read()+send() `copy` vs sendfile() `onecopy`,
  receiver recv() into memory) and down (sender send() from memory, receiver
  recv()+write() `copy` vs splice() socket->pipe->file `onecopy`);
* transport: up, sender read()+send(): TCP (shared with onecopy), UDP with
  1472-byte datagrams (link MTU 1500) and UDP with 20000-byte datagrams on a
  link whose MTU is raised to 21000 (the paper's §5.1 loopback experiment).

Links run at MTU 1500 (a WiFi-sized MTU) except for the 20 KB UDP condition
(MTU 21000); the MTU is set before each run and recorded. Files are in tmpfs
(/dev/shm): the sender's source file and the receiver's sink file wrap at
64 MB, so the page cache, not a disk, is the file system.

Per run (data/raw/stack-trim/<device>/<session>/runs/<run_id>/):
  sender.json, receiver.json  stnet's own report: bytes, calls, the data
                              phase's CPU time by getrusage (precise)
  proc_stat.txt.gz            every 500 ms: '# t_ns <monotonic ns>', the cpu
                              lines of /proc/stat and 'mhz <cpu> <MHz>' from
                              /proc/cpuinfo (no cpufreq in sysfs on the VM)
  run.json                    the run's manifest: condition, commands, wait4()
                              rusage of each process, 1-min loadavg, host note
and runs.csv (one line per run) plus the session's manifest.yaml.

Every repetition runs all conditions of one link and rate in a seeded random
order while holding an exclusive flock on --lock (a machine-wide measurement
mutex), so captures of other kits never overlap a measured run.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import math
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
sys.path.insert(0, str(REPO / "src"))  # a checkout without `pip install -e .`
from mobitrace.capture import (SKIP, Interrupted, MeasurementLock, Namespaces, Progress, SessionWriter,  # noqa: E402
                               handle_signals, host_metadata, output, sh, spawn, wait)
from mobitrace.capture import why_not as _why_not  # noqa: E402
from mobitrace.capture.sampler import Periodic, cpuinfo_mhz_text, proc_stat_cpu  # noqa: E402
from mobitrace.capture.idle import IdleGate, NotIdle  # noqa: E402

PREFIX = "mtst-"
ADDR_A, ADDR_B = "10.91.0.1", "10.91.0.2"
PORT = 5301
FILE_BYTES = 64 << 20
TCP_WRITE = 16384
RUN_FIELDS = ["run_id", "experiment", "link", "direction", "proto", "size", "sender_mode", "receiver_mode",
              "mtu", "rate_mbps", "rep", "duration_s", "status", "started_utc"]
DEFAULT_RATES = [1, 10, 40, 100, 240, 1000, 2500]
SHARED_HOST = ("captured on a machine shared with other capture kits; each measured batch held an exclusive flock "
               "on the measurement lock, and each run records the 1-min loadavg")


def conditions(links, directions, experiments, transport_directions=None) -> list[dict]:
    """The kit's conditions (deduplicated: TCP two-copy uplink is shared)."""
    out = {}
    for link in links:
        if "onecopy" in experiments:
            for d in directions:
                for mode in ("copy", "onecopy"):
                    c = dict(link=link, direction=d, proto="tcp", size=TCP_WRITE, mtu=1500,
                             sender_mode=mode if d == "up" else "mem",
                             receiver_mode="mem" if d == "up" else mode)
                    out[cond_id(c)] = c
        if "transport" in experiments:
            for d in (directions if transport_directions is None else transport_directions):
                for proto, size, mtu in (("tcp", TCP_WRITE, 1500), ("udp", 1472, 1500), ("udp", 20000, 21000)):
                    c = dict(link=link, direction=d, proto=proto, size=size, mtu=mtu,
                             sender_mode="copy" if d == "up" else "mem",
                             receiver_mode="mem" if d == "up" else "copy")
                    out[cond_id(c)] = c
    return list(out.values())


def cond_id(c: dict) -> str:
    return f"{c['link']}-{c['direction']}-{c['proto']}{c['size']}-{c['sender_mode']}-{c['receiver_mode']}"


def experiment_of(c: dict) -> str:
    return "transport" if c["proto"] == "udp" else "onecopy"


def why_not() -> str | None:
    """None when the kit can run here, else the reason."""
    return _why_not(PREFIX, ("ip", "gcc"))


class Testbed:
    """Namespaces: L (loopback runs), A and B joined by a veth pair."""

    def __init__(self):
        tag = str(os.getpid())
        self.ns = Namespaces(PREFIX, ["l", "a", "b"])
        self.ns_l, self.ns_a, self.ns_b = self.ns["l"], self.ns["a"], self.ns["b"]
        self.va, self.vb = f"mtstva{tag}"[:15], f"mtstvb{tag}"[:15]

    def up(self):
        self.ns.create()
        self.ns.veth("a", self.va, "b", self.vb)
        self.ns.address("a", self.va, f"{ADDR_A}/30")
        self.ns.address("b", self.vb, f"{ADDR_B}/30")
        # Room for UDP bursts at the receiver (each namespace has its own).
        for ns in "lab":
            self.ns.sh(ns, "sysctl", "-q", "-w", "net.core.rmem_max=8388608", check=False)

    def endpoints(self, link: str):
        """(sender ns, receiver ns, receiver address, devices whose MTU to set)."""
        if link == "lo":
            return self.ns_l, self.ns_l, "127.0.0.1", [(self.ns_l, "lo")]
        return self.ns_a, self.ns_b, ADDR_B, [(self.ns_a, self.va), (self.ns_b, self.vb)]

    def set_mtu(self, link: str, mtu: int):
        for ns, dev in self.endpoints(link)[3]:
            sh("ip", "-n", ns, "link", "set", dev, "mtu", str(mtu))

    def describe(self) -> dict:
        def offloads(ns, dev):
            out = output("ethtool", "-k", dev, netns=ns) if shutil.which("ethtool") else ""
            return {k.strip(): v.strip() for k, _, v in (ln.partition(":") for ln in out.splitlines()[1:]) if v}
        return {
            "loopback": {"netns": "<prefix>l<pid>", "device": "lo", "address": "127.0.0.1",
                         "ethtool_k": offloads(self.ns_l, "lo")},
            "veth": {"netns": ["<prefix>a<pid>", "<prefix>b<pid>"], "addresses": [f"{ADDR_A}/30", f"{ADDR_B}/30"],
                     "ethtool_k": offloads(self.ns_a, self.va),
                     "rps_cpus": output("cat", f"/sys/class/net/{self.va}/queues/rx-0/rps_cpus", netns=self.ns_a)},
            "mtu_rule": "1500 for TCP and 1472-byte UDP; 21000 for 20000-byte UDP (set before each run)",
            "namespace_prefix": PREFIX,
        }

    def down(self):
        self.ns.close()


class Sampler:
    """/proc/stat cpu lines and /proc/cpuinfo MHz every `period` seconds."""

    def __init__(self, period: float):
        self.lines: list[str] = []
        self.thread = Periodic(period, self.sample)

    def sample(self):
        self.lines.append(f"# t_ns {time.monotonic_ns()}")
        self.lines.extend(proc_stat_cpu())
        self.lines.extend(f"mhz {i} {m}" for i, m in enumerate(cpuinfo_mhz_text()))

    def start(self):
        self.thread.start()

    def stop(self):
        self.thread.stop()  # a final sample closes the last interval


def device_cpu_s(direction: str, sender_out: str, receiver_out: str) -> float:
    """The device side's data-phase CPU seconds (stnet's phase_utime_s + phase_stime_s; the sender uplink,
    the receiver downlink), as ingest reads them; NaN when the tool printed none."""
    try:
        doc = json.loads(sender_out if direction == "up" else receiver_out)
        return float(doc["phase_utime_s"]) + float(doc["phase_stime_s"])
    except (ValueError, KeyError, TypeError):
        return float("nan")


def onecopy_halfwidths(rows: list[dict], level: float = 0.95, seed: int = 0) -> dict[str, float]:
    """Per one-copy condition (link, direction, rate): half the width, in percentage points, of the
    bootstrap CI (studies/stack_trim/analysis.bootstrap_ci, as the chapter) of the saving
    1 - mean(cpu onecopy) / mean(cpu copy) of the device side's CPU seconds (the CPU-time basis; the
    chapter's energy adds a power model); inf while a side has fewer than two ok runs."""
    from mobitrace.studies.stack_trim.analysis import bootstrap_ci
    groups: dict[str, dict[str, list[float]]] = {}
    for r in rows:
        if r["experiment"] != "onecopy" or r["status"] != "ok" or math.isnan(r["cpu_s"]):
            continue
        key = f"{r['link']}-{r['direction']}-r{float(r['rate_mbps']):g}"
        mode = "onecopy" if "onecopy" in (r["sender_mode"], r["receiver_mode"]) else "copy"
        groups.setdefault(key, {"copy": [], "onecopy": []})[mode].append(r["cpu_s"])
    out = {}
    for key, g in sorted(groups.items()):
        if min(len(g["copy"]), len(g["onecopy"])) < 2:
            out[key] = float("inf")
            continue
        _, lo, hi = bootstrap_ci(g["onecopy"], g["copy"], "saving", alpha=1 - level, seed=seed)
        out[key] = 100 * (hi - lo) / 2
    return out


def stop_adding(halfwidths: dict[str, float], target_pp: float, reps: int, max_reps: int) -> str | None:
    """Why to stop adding repetitions ("target" / "cap"), or None to add another batch."""
    if halfwidths and all(h <= target_pp for h in halfwidths.values()):
        return "target"
    return "cap" if reps >= max_reps else None


def wait4(proc: subprocess.Popen, timeout: float) -> dict:
    rc, ru, timed_out = wait(proc, timeout)
    return {"returncode": "killed (timeout)" if timed_out else rc, "utime_s": ru["utime_s"],
            "stime_s": ru["stime_s"], "maxrss_kb": ru["maxrss_kb"]}


class Kit:
    def __init__(self, args):
        self.args = args
        self.session = SessionWriter(Path(args.out) / args.device, args.session)
        self.bed = Testbed()
        self.tmp = Path(f"/dev/shm/{PREFIX}{os.getpid()}")
        self.procs: list[subprocess.Popen] = []
        self.lock = MeasurementLock(args.lock)
        self.gate = IdleGate.from_args(args, log=print)

    # ----------------------------------------------------------- set-up
    def build(self):
        self.tmp.mkdir(parents=True, exist_ok=True)
        self.binary = self.tmp / "stnet"
        self.cflags = ["-O2", "-Wall"]
        sh("gcc", *self.cflags, "-o", str(self.binary), str(HERE / "stnet.c"))
        self.gcc = sh("gcc", "--version").splitlines()[0]
        src = self.tmp / "source.bin"
        block = bytes((i * 131 + 7) & 0xFF for i in range(1 << 16))
        with src.open("wb") as fh:
            for _ in range(FILE_BYTES // len(block)):
                fh.write(block)
        self.source = src

    def cleanup(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
        self.bed.down()
        shutil.rmtree(self.tmp, ignore_errors=True)

    # ----------------------------------------------------------- manifest
    def write_manifest(self, conds, rates, status="complete"):
        a = self.args
        doc = {
            "study": "stack-trim", "device": a.device, "session": a.session, "status": status,
            "kit": "scripts/capture/stack_trim/run.py", "data_path_tool": "scripts/capture/stack_trim/stnet.c",
            "stnet_sha256": hashlib.sha256((HERE / "stnet.c").read_bytes()).hexdigest(),
            "compiler": {"gcc": self.gcc, "flags": self.cflags},
            "configuration": {
                "rates_mbps": rates, "reps": a.reps, "duration_s": a.duration, "sample_period_s": a.sample_period,
                "smoke": a.smoke, "seed": a.seed, "batch": a.batch, "tcp_write_bytes": TCP_WRITE, "file_bytes": FILE_BYTES,
                "file_system": "tmpfs (/dev/shm)", "conditions": [dict(c, id=cond_id(c)) for c in conds],
                "lock": a.lock, "lock_seconds": round(self.lock.held_s, 1),
            },
            "links": self.bed.describe(),
            "host": host_metadata(tools={"gcc": ["gcc", "--version"]}, note=SHARED_HOST),
        }
        if self.gate.enabled:
            doc["idle_gate"] = self.gate.manifest()
        if getattr(self, "until", None):
            doc["sequential"] = self.until
        self.session.write_manifest(doc, width=100)

    # ----------------------------------------------------------- one run
    def stnet(self, ns, *args):
        cmd = [str(self.binary), *map(str, args)]
        p = spawn(cmd, netns=ns, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.procs.append(p)
        return p, ["ip", "netns", "exec", ns, *cmd]

    def run_one(self, c: dict, rate: float, rep: int) -> dict:
        a = self.args
        run_id = f"{cond_id(c)}-r{rate:g}-{rep:02d}"
        run_dir = self.session.mkdir("runs", run_id)
        s_ns, r_ns, dst, _ = self.bed.endpoints(c["link"])
        self.bed.set_mtu(c["link"], c["mtu"])
        started = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        loadavg = os.getloadavg()[0]
        sink = self.tmp / "sink.bin"
        with self.gate.run(run_id):  # the background load before and during this run
            recv, recv_cmd = self.stnet(r_ns, "recv", "--proto", c["proto"], "--mode", c["receiver_mode"],
                                        "--bind", dst, "--port", PORT, "--size", c["size"], "--file", sink,
                                        "--file-bytes", FILE_BYTES, "--idle-ms", 200)
            ready = recv.stdout.readline()
            if "ready" not in ready:
                raise RuntimeError(f"receiver did not start: {recv.stderr.read()}")
            sampler = Sampler(a.sample_period)
            sampler.start()
            send, send_cmd = self.stnet(s_ns, "send", "--proto", c["proto"], "--mode", c["sender_mode"],
                                        "--dst", dst, "--port", PORT, "--size", c["size"], "--rate-bps", int(rate * 1e6),
                                        "--duration", a.duration, "--file", self.source, "--file-bytes", FILE_BYTES)
            s_ru = wait4(send, a.duration + 30)
            r_ru = wait4(recv, 30)
            sampler.stop()
        s_out, s_err = send.communicate()
        r_out, r_err = recv.communicate()
        self.procs = [p for p in self.procs if p not in (send, recv)]
        status = "ok"
        if s_ru["returncode"] != 0 or r_ru["returncode"] != 0:
            status = f"failed: sender {s_ru['returncode']} {s_err.strip()[:200]}; receiver {r_ru['returncode']} {r_err.strip()[:200]}"
        (run_dir / "sender.json").write_text(s_out)
        (run_dir / "receiver.json").write_text(r_out)
        self.session.write(f"runs/{run_id}/proc_stat.txt", "\n".join(sampler.lines) + "\n", gz=True)
        manifest = {"run_id": run_id, "condition": cond_id(c), **c, "experiment": experiment_of(c),
                    "rate_mbps": rate, "rep": rep, "duration_s": a.duration, "started_utc": started,
                    "loadavg_1min": loadavg, "status": status,
                    "sender": {"netns": s_ns.replace(str(os.getpid()), "<pid>"), "cmd": send_cmd[4:], "wait4": s_ru},
                    "receiver": {"netns": r_ns.replace(str(os.getpid()), "<pid>"), "cmd": recv_cmd[4:], "wait4": r_ru},
                    "note": "shared 2-core host; wait4 rusage covers the whole process, the tool's phase_*_s "
                            "its data phase"}
        for side in ("sender", "receiver"):
            manifest[side]["cmd"] = [x.replace(str(self.tmp), "/dev/shm/<kit>") for x in manifest[side]["cmd"]]
        (run_dir / "run.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
        row = {"run_id": run_id, "experiment": experiment_of(c), "rate_mbps": rate, "rep": rep,
               "duration_s": a.duration, "status": status, "started_utc": started,
               **{k: c[k] for k in ("link", "direction", "proto", "size", "sender_mode", "receiver_mode", "mtu")}}
        row["cpu_s"] = device_cpu_s(c["direction"], s_out, r_out)  # for the sequential rule; not in runs.csv
        return row

    # ----------------------------------------------------------- session
    def run(self) -> int:
        a = self.args
        rates = [float(r) for r in a.rates]
        conds = conditions(a.links, a.directions, a.experiments, a.transport_directions)
        self.session.open()
        self.build()
        self.bed.up()
        rows = []
        rng = random.Random(a.seed)
        # One lock hold per (rep, link, rate), or per (rep, link) with
        # --batch link (fewer, longer holds: ~1 min at the defaults).
        groups = [rates] if a.batch == "link" else [[r] for r in rates]
        progress = Progress(a.reps * sum(1 for c in conds for link in a.links if c["link"] == link) * len(rates),
                            f"stack-trim {a.device}")
        self.until = None
        rep = 0
        while True:
            for link in a.links:
                for group in groups:
                    batch = [(c, rate) for rate in group for c in conds if c["link"] == link]
                    rng.shuffle(batch)
                    with self.lock:
                        for c, rate in batch:
                            rows.append(self.run_one(c, rate, rep))
                            progress.step(f"{rows[-1]['run_id']} {rows[-1]['status'][:40]}")
            rep += 1
            if a.until_ci_pp is None:
                if rep >= a.reps:
                    break
                continue
            # Sequential mode: another batch (one more repetition of every condition, shuffled as above)
            # until every one-copy condition's saving CI is narrow enough, or the cap.
            hw = onecopy_halfwidths(rows)
            why = stop_adding(hw, a.until_ci_pp, rep, a.max_reps) if rep >= a.reps else None
            print(f"after {rep} reps: widest one-copy CI half-width "
                  f"{max(hw.values(), default=float('nan')):.2f} pp (target {a.until_ci_pp:g})", flush=True)
            if why:
                self.until = {"rule": f"add repetitions until the 95% bootstrap CI half-width of the one-copy "
                                      f"saving (device-side data-phase CPU time) is <= {a.until_ci_pp:g} pp for every one-copy "
                                      f"condition (link, direction, rate), at least --reps, at most --max-reps",
                              "target_pp": a.until_ci_pp, "min_reps": a.reps, "max_reps": a.max_reps,
                              "reps_done": rep, "stopped_by": why,
                              "reached_halfwidth_pp": {k: round(v, 3) for k, v in hw.items()},
                              "inconclusive": why == "cap"}
                break
            if rep >= a.reps:  # the first --reps batches are in the initial total
                progress.total += len(rates) * sum(1 for c in conds if c["link"] in a.links)
        for r in rows:
            r.pop("cpu_s", None)
        rows.sort(key=lambda r: r["run_id"])
        self.session.write_rows("runs.csv", RUN_FIELDS, rows)
        self.write_manifest(conds, rates)
        final = self.session.finish()
        bad = [r for r in rows if r["status"] != "ok"]
        print(f"{len(rows)} runs, {len(bad)} failed; lock held {self.lock.held_s:.0f} s, waited "
              f"{self.lock.waited_s:.0f} s; {final}")
        return 1 if bad else 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", required=True)
    p.add_argument("--session", default=dt.datetime.now(dt.timezone.utc).strftime("s%Y%m%dT%H%M%S"))
    p.add_argument("--out", default=str(REPO / "data/raw/stack-trim"))
    p.add_argument("--rates", nargs="+", type=float, default=DEFAULT_RATES, help="CBR rates in Mbps")
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--duration", type=float, default=1.0, help="seconds per run")
    p.add_argument("--sample-period", type=float, default=0.5)
    p.add_argument("--links", nargs="+", default=["lo", "veth"], choices=["lo", "veth"])
    p.add_argument("--directions", nargs="+", default=["up", "down"], choices=["up", "down"])
    p.add_argument("--experiments", nargs="+", default=["onecopy", "transport"], choices=["onecopy", "transport"])
    p.add_argument("--transport-directions", nargs="+", default=None, choices=["up", "down"],
                   help="directions of the transport experiment (default: --directions)")
    p.add_argument("--batch", choices=["rate", "link"], default="rate",
                   help="runs per lock hold: all conditions of one rate (default) or of all rates of a link")
    p.add_argument("--until-ci-pp", type=float, default=None,
                   help="sequential mode: after --reps, add repetitions until every one-copy condition's 95%% CI "
                        "half-width of the saving is <= this many percentage points, or --max-reps")
    p.add_argument("--max-reps", type=int, default=30, help="the sequential mode's cap")
    p.add_argument("--seed", type=int, default=20161109)
    p.add_argument("--lock", default=None, help="flock this file around each batch (a machine-wide mutex)")
    p.add_argument("--smoke", action="store_true", help="seconds: 2 rates x 1 rep x 0.3 s, loopback only")
    IdleGate.add_arguments(p)
    args = p.parse_args(argv)
    if args.smoke:
        args.rates, args.reps, args.duration, args.links = [10, 100], 1, 0.3, ["lo"]
    reason = why_not()
    if reason:
        print(f"stack-trim capture kit cannot run here: {reason}", file=sys.stderr)
        return SKIP
    kit = Kit(args)
    try:
        with handle_signals():
            return kit.run()
    except (Interrupted, NotIdle) as exc:
        print(f"stack-trim capture kit: {exc}; unfinished session left in {kit.session.partial}", file=sys.stderr)
        return exc.status
    finally:
        kit.cleanup()


if __name__ == "__main__":
    sys.exit(main())

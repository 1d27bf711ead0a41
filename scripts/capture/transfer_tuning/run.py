#!/usr/bin/env python3
"""Capture kit for the transfer-tuning study (Guner & Kosar): HTTP downloads
from a real nginx, with the paper's concurrency, parallelism and I/O request
size knobs, on a Linux host as root, inside three network namespaces this
script creates and always removes (also on an error, Ctrl-C or SIGTERM):

    mttt-cli 10.92.0.1/24 --veth-- mttt-dly (delay_bridge) --veth-- mttt-srv 10.92.0.2/24
    client.py (tcp_rmem max clamped)  L2 bridge, one-way delay      nginx (Debian), tbf on egress

- Link: `tc tbf` at --rate-mbit on both the server's and the client's egress.
- RTT: the kernel has no netem, so delay_bridge.c (user space, AF_PACKET,
  compiled here with gcc) holds every frame --rtt-ms/2 in each direction.
  Offloads are off on all veths so frames are <= MTU with checksums filled in.
  `--bridge py` runs the original delay_bridge.py instead (it saturates below
  40 Mbit/s; kept because older manifests name it, and to compare).
- Each run's achieved rate (goodput, Mbit/s) is in runs.csv next to the
  configured link rate, and the manifest summarises it (achieved_rate).
- The client's receive buffer (net.ipv4.tcp_rmem max in the client namespace)
  is clamped to --rmem-max bytes: a phone-sized window, so one stream's
  throughput is window-limited (about rmem/RTT) as on the paper's long-RTT paths.
- Datasets: Table 2's html, image and video datasets generated
  deterministically (seeded sizes uniform in Table 2's min-max, seeded
  random content), with file counts (and the video file sizes) scaled down;
  the scaling is in DATASETS and in the manifest.

Runs (plan): one-factor sweeps per dataset (concurrency, parallelism, I/O
size), a reduced concurrency x parallelism grid, and the tail experiment
(one file; two files back to back; two files concurrently). Unique
configurations run once per repetition in a seeded random order. Each run
holds an exclusive flock on --lock (the machine's measurement mutex) while
it runs. Output: <out>/<device>/<session>/ manifest.yaml, runs.csv and
runs/<run_id>/{samples.csv.gz, transfers.csv.gz, run.json}, written into
<session>.partial/ and renamed when the invocation ends (an interrupted one
leaves .partial). Completed runs are skipped when a session is resumed.
Namespaces, lock, host metadata (schema 2), session writing and the
progress line come from mobitrace.capture.

    python run.py --device NAME [--session S] [--out DIR] [--smoke] [--lock FILE]
Exit 77: not root, or no network namespaces / nginx (the reason is printed).
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
sys.path.insert(0, str(REPO / "src"))  # a checkout without `pip install -e .`
from mobitrace.capture import (SKIP, Interrupted, MeasurementLock, Namespaces, Progress, SessionWriter,  # noqa: E402
                               handle_signals, host_metadata, output, run, sh)
from mobitrace.capture import missing_tool, why_not as _why_not  # noqa: E402
from mobitrace.capture.sampler import cpuinfo_mhz as cpu_mhz  # noqa: E402
from mobitrace.capture.idle import IdleGate, NotIdle  # noqa: E402

NS_CLI, NS_DLY, NS_SRV = "mttt-cli", "mttt-dly", "mttt-srv"
IF_C0, IF_C1, IF_S0, IF_S1 = "mttt-c0", "mttt-c1", "mttt-s0", "mttt-s1"
ADDR_CLI, ADDR_SRV = "10.92.0.1", "10.92.0.2"
PORT = 8080
KIB = 1024
RUN_FIELDS = ["run_id", "kind", "dataset", "concurrency", "parallelism", "io_kib", "files", "rep", "status",
              "started_utc", "wall_s", "rate_mbit", "achieved_mbit", "link_peak_mbit"]
BRIDGE_SRC = HERE / "delay_bridge.c"
CFLAGS = ["-O2", "-Wall"]
SHARED_HOST = ("captures were made on a shared 2-core VM: other experiments ran between runs "
               "(never during one: every run held the machine's measurement lock)")

# Table 2 of the paper and the scaled datasets this kit serves (sizes in KiB).
DATASETS = {
    "html": {"paper_files": 1500, "paper_min_kib": 102, "paper_max_kib": 153, "files": 64,
             "min_kib": 102, "max_kib": 153, "seed": 1},
    "image": {"paper_files": 200, "paper_min_kib": 524, "paper_max_kib": 786, "files": 16,
              "min_kib": 524, "max_kib": 786, "seed": 2},
    "video": {"paper_files": 64, "paper_min_kib": 10 * 1024, "paper_max_kib": 20 * 1024, "files": 8,
              "min_kib": 1024, "max_kib": 2048, "seed": 3},
}
SMOKE_DATASETS = {"html": dict(DATASETS["html"], files=4), "video": dict(DATASETS["video"], files=2,
                                                                         min_kib=256, max_kib=512)}
LEVELS = [1, 2, 4, 8, 16, 32]
IO_KIB = [1, 2, 4, 8, 16, 32, 64]
GRID = [1, 4, 16]
DEFAULT_IO_KIB = 16


def nsx(ns, *cmd, check=True):
    return sh(*cmd, netns=ns, check=check)


def why_not() -> str | None:
    reason = _why_not("mttt-", ("ip", "tc", "ethtool", "gcc"))
    if reason is None and not Path("/usr/sbin/nginx").exists() and shutil.which("nginx") is None:
        return missing_tool("nginx")
    return reason


def make_datasets(specs: dict, root: Path) -> dict:
    """Write the datasets under root/<name>/ and return their file lists."""
    listing = {}
    for name, spec in specs.items():
        rng = random.Random(spec["seed"])
        d = root / name
        d.mkdir(parents=True)
        files = []
        for i in range(spec["files"]):
            size = rng.randint(spec["min_kib"] * KIB, spec["max_kib"] * KIB)
            (d / f"f{i:04d}.bin").write_bytes(rng.randbytes(size))
            files.append({"path": f"/{name}/f{i:04d}.bin", "size": size})
        listing[name] = files
    return listing


def plan(datasets: dict, smoke: bool) -> list[dict]:
    """Unique run configurations: {kind, dataset, cc, p, io_kib, files}."""
    seen, runs = set(), []

    def add(kind, ds, cc, p, io, files=None):
        files = files or list(range(len(datasets[ds])))
        key = (ds, cc, p, io, tuple(files))
        if key in seen:
            return
        seen.add(key)
        runs.append({"kind": kind, "dataset": ds, "concurrency": cc, "parallelism": p, "io_kib": io,
                     "files": files})

    if smoke:
        for ds in datasets:
            for cc in (1, 2):
                add("sweep", ds, cc, 1, DEFAULT_IO_KIB)
            add("sweep", ds, 1, 2, DEFAULT_IO_KIB)
            add("sweep", ds, 1, 1, 4)
        add("tail", "video", 1, 1, DEFAULT_IO_KIB, [0])
        return runs
    for ds in datasets:
        for cc in LEVELS:
            add("sweep", ds, cc, 1, DEFAULT_IO_KIB)
        for p in LEVELS:
            add("sweep", ds, 1, p, DEFAULT_IO_KIB)
        for io in IO_KIB:
            add("sweep", ds, 1, 1, io)
        for cc in GRID:
            for p in GRID:
                add("sweep", ds, cc, p, DEFAULT_IO_KIB)
    # Figure 8: one file; two files back to back; two files concurrently.
    add("tail", "video", 1, 1, DEFAULT_IO_KIB, [0])
    add("tail", "video", 1, 1, DEFAULT_IO_KIB, [0, 1])
    add("tail", "video", 2, 1, DEFAULT_IO_KIB, [0, 1])
    return runs


def run_id(cfg: dict, rep: int) -> str:
    files = "" if cfg["kind"] == "sweep" else f"-n{len(cfg['files'])}"
    return (f"{cfg['kind']}-{cfg['dataset']}-cc{cfg['concurrency']}-p{cfg['parallelism']}"
            f"-io{cfg['io_kib']}{files}-r{rep}")


class Testbed:
    def __init__(self, args, tmp: Path):
        self.args, self.tmp = args, tmp
        self.nginx = None
        self.bridge = None
        self.bridge_stats = None
        self.ns = Namespaces("mttt-", ["cli", "dly", "srv"], per_process=False)  # mttt-cli, mttt-dly, mttt-srv

    def up(self, docroot: Path):
        a = self.args
        self.ns.create()
        self.ns.veth("cli", IF_C0, "dly", IF_C1)
        self.ns.veth("srv", IF_S0, "dly", IF_S1)
        for ns, dev in ((NS_CLI, IF_C0), (NS_DLY, IF_C1), (NS_SRV, IF_S0), (NS_DLY, IF_S1)):
            nsx(ns, "ethtool", "-K", dev, "tx", "off", "rx", "off", "tso", "off", "gso", "off", "gro", "off",
                check=False)
            nsx(ns, "sysctl", "-q", "-w", f"net.ipv6.conf.{dev}.disable_ipv6=1", check=False)
            nsx(ns, "ip", "link", "set", dev, "up")
        nsx(NS_CLI, "ip", "addr", "add", f"{ADDR_CLI}/24", "dev", IF_C0)
        nsx(NS_SRV, "ip", "addr", "add", f"{ADDR_SRV}/24", "dev", IF_S0)
        burst = max(16 * KIB, int(a.rate_mbit * 1e6 / 8 / 250))
        limit = max(64 * KIB, int(a.rate_mbit * 1e6 / 8 * a.rtt_ms / 1000))
        for ns, dev in ((NS_SRV, IF_S0), (NS_CLI, IF_C0)):
            nsx(ns, "tc", "qdisc", "replace", "dev", dev, "root", "tbf", "rate", f"{a.rate_mbit}mbit",
                "burst", str(burst), "limit", str(limit))
        nsx(NS_CLI, "sysctl", "-q", "-w", f"net.ipv4.tcp_rmem=4096 {min(131072, a.rmem_max)} {a.rmem_max}")
        if a.bridge == "c":
            binary = self.tmp / "delay_bridge"
            sh("gcc", *CFLAGS, "-o", str(binary), str(BRIDGE_SRC))
            bridge_cmd = [str(binary)]
        else:
            bridge_cmd = [sys.executable, str(HERE / "delay_bridge.py")]
        self.bridge = subprocess.Popen(
            ["ip", "netns", "exec", NS_DLY, *bridge_cmd, IF_C1, IF_S1, "--delay-ms", str(a.rtt_ms / 2)],
            stdout=subprocess.PIPE, text=True)
        if self.bridge.stdout.readline().strip() != "ready":
            raise RuntimeError("delay bridge did not start")
        prefix = self.tmp / "nginx"
        prefix.mkdir()
        conf = prefix / "nginx.conf"
        conf.write_text(f"""daemon off;
master_process on;
worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    keepalive_timeout 300s;
    default_type application/octet-stream;
    client_body_temp_path {prefix}/body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    server {{
        listen {ADDR_SRV}:{PORT};
        root {docroot};
    }}
}}
""")
        self.nginx = subprocess.Popen(["ip", "netns", "exec", NS_SRV, "/usr/sbin/nginx", "-p", str(prefix),
                                       "-c", str(conf), "-e", str(prefix / "error.log")],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        for _ in range(100):
            pidf = prefix / "nginx.pid"
            if pidf.exists() and pidf.read_text().strip() and self.server_pids()[1:]:
                break
            if self.nginx.poll() is not None:
                raise RuntimeError(f"nginx exited: {self.nginx.stderr.read()}")
            time.sleep(0.05)
        else:
            raise RuntimeError("nginx did not start")

    def server_pids(self) -> list[int]:
        pidf = self.tmp / "nginx" / "nginx.pid"
        try:
            master = int(pidf.read_text().strip())
        except (OSError, ValueError):
            return []
        try:
            kids = Path(f"/proc/{master}/task/{master}/children").read_text().split()
        except OSError:
            kids = []
        return [master, *map(int, kids)]

    def down(self):
        if self.nginx is not None and self.nginx.poll() is None:
            pids = self.server_pids()
            if pids:
                try:
                    os.kill(pids[0], signal.SIGTERM)
                except ProcessLookupError:
                    pass
            try:
                self.nginx.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.nginx.kill()
        if self.bridge is not None and self.bridge.poll() is None:
            self.bridge.terminate()
            try:
                out, _ = self.bridge.communicate(timeout=5)
                lines = [ln for ln in out.splitlines() if ln.startswith("{")]
                self.bridge_stats = json.loads(lines[-1]) if lines else None
            except (subprocess.TimeoutExpired, ValueError):
                self.bridge.kill()
        self.ns.close()


def one_run(bed: Testbed, session: SessionWriter, lock: MeasurementLock, gate: IdleGate, args, tmp: Path,
            listing: dict, cfg: dict, rep: int) -> dict:
    """One run, holding the measurement lock; its files under runs/<run_id>/; its runs.csv row."""
    rid = run_id(cfg, rep)
    rdir = session.mkdir("runs", rid, fresh=True)
    sink = tmp / "sink"
    sink.mkdir(exist_ok=True)
    files = [listing[cfg["dataset"]][i] for i in cfg["files"]]
    ccfg = {"host": ADDR_SRV, "port": PORT, "concurrency": cfg["concurrency"],
            "parallelism": cfg["parallelism"], "io_bytes": cfg["io_kib"] * KIB, "files": files,
            "out_dir": str(rdir), "sink_dir": str(sink), "sample_ms": args.sample_ms,
            "idle_pre_s": args.idle_pre_s, "idle_post_s": args.idle_post_s,
            "server_pids": bed.server_pids(), "iface": IF_C0}
    (tmp / "client.json").write_text(json.dumps(ccfg))
    t_wait = time.monotonic()
    try:
        lock.acquire()  # kept across consecutive runs for --lock-batch-s
        t_lock = time.monotonic()
        with gate.run(rid):  # the background load before and during this run
            t0 = time.monotonic()
            when = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
            load = os.getloadavg()[0]
            mhz0 = cpu_mhz()
            r = run([sys.executable, str(HERE / "client.py"), str(tmp / "client.json")], timeout=300, netns=NS_CLI)
            mhz1 = cpu_mhz()
    except BaseException:
        lock.release()
        raise
    lock.release_if_held(args.lock_batch_s)
    wall = time.monotonic() - t0
    shutil.rmtree(sink, ignore_errors=True)
    status = "ok" if r.returncode == 0 else f"failed rc={'timeout' if r.timed_out else r.returncode}"
    link_peak = peak_link_mbit(rdir / "samples.csv")
    for name in ("samples.csv", "transfers.csv"):
        if (rdir / name).exists():
            session.write(f"runs/{rid}/{name}", (rdir / name).read_bytes(), gz=True)
            (rdir / name).unlink()
    client = json.loads((rdir / "client.json").read_text()) if (rdir / "client.json").exists() else {}
    (rdir / "client.json").unlink(missing_ok=True)
    meta = {"run_id": rid, "rep": rep, **{k: cfg[k] for k in ("kind", "dataset", "concurrency",
                                                             "parallelism", "io_kib")},
            "files": [f["path"] for f in files], "file_sizes": [f["size"] for f in files],
            "status": status, "started_utc": when, "loadavg_1min": load,
            "lock_wait_s": round(t_lock - t_wait, 3), "cpu_mhz_before": mhz0, "cpu_mhz_after": mhz1,
            "client": client, "stderr_tail": r.stderr[-2000:] if r.returncode else ""}
    session.write(f"runs/{rid}/run.json", json.dumps(meta, indent=1, sort_keys=True) + "\n")
    secs = max(1e-9, (client.get("t_transfer_end_ns", 1) - client.get("t_transfer_start_ns", 0)) / 1e9)
    achieved = 8 * client.get("bytes_received", 0) / secs / 1e6  # goodput: HTTP bodies over the transfer span
    print(f"{rid}: {status} {wall:.1f}s goodput {achieved:.1f}, link peak {link_peak:.1f} of {args.rate_mbit:g} Mbit/s",
          flush=True)
    return {"run_id": rid, "kind": cfg["kind"], "dataset": cfg["dataset"], "concurrency": cfg["concurrency"],
            "parallelism": cfg["parallelism"], "io_kib": cfg["io_kib"], "files": len(files), "rep": rep,
            "status": status, "started_utc": when, "wall_s": f"{wall:.3f}", "rate_mbit": f"{args.rate_mbit:g}",
            "achieved_mbit": f"{achieved:.3f}", "link_peak_mbit": f"{link_peak:.3f}"}


def peak_link_mbit(samples: Path, window_s: float = 1.0) -> float:
    """The highest rate at the client's interface (received bytes incl. Ethernet/IP/TCP headers, what tbf
    shapes) over any window of >= window_s between samples: does the testbed reach the configured rate?"""
    try:
        with samples.open() as f:
            pts = [(int(r["t_ns"]), int(r["if_rx_bytes"])) for r in csv.DictReader(f)]
    except (OSError, KeyError, ValueError):
        return 0.0
    best, j = 0.0, 0
    for i in range(len(pts)):
        while j < i and pts[i][0] - pts[j + 1][0] >= window_s * 1e9:
            j += 1
        dt_ns = pts[i][0] - pts[j][0]
        if dt_ns >= window_s * 1e9:
            best = max(best, 8e3 * (pts[i][1] - pts[j][1]) / dt_ns)
    return best


def achieved_rate(rows: list[dict], rate: float) -> dict | None:
    """The manifest's summary of the runs' achieved rates (ok runs), next to the configured one."""
    ok = [r for r in rows if r["status"] == "ok" and r.get("achieved_mbit")]
    if not ok:
        return None
    good = sorted(float(r["achieved_mbit"]) for r in ok)
    link = max(float(r["link_peak_mbit"]) for r in ok)
    return {"configured_mbit": rate, "runs": len(ok),
            "goodput_max_mbit": round(good[-1], 3), "goodput_median_mbit": round(good[len(good) // 2], 3),
            "link_peak_max_mbit": round(link, 3), "link_peak_fraction_of_configured": round(link / rate, 4),
            "measures": {"achieved_mbit": "goodput: HTTP body bytes x 8 / (last byte - first request)",
                         "link_peak_mbit": "client interface rx bytes (with headers) over the best >= 1 s window"}}


def bridge_tool(kind: str) -> dict:
    """What ran as the delay bridge: source file, its sha256 and (C) the compiler and flags."""
    src = BRIDGE_SRC if kind == "c" else HERE / "delay_bridge.py"
    doc = {"source": f"scripts/capture/transfer_tuning/{src.name}", "sha256": hashlib.sha256(src.read_bytes()).hexdigest()}
    if kind == "c":
        doc["compiler"] = {"gcc": output("gcc", "--version").splitlines()[0], "flags": CFLAGS}
    else:
        doc["python"] = sys.version.split()[0]
    return doc


def write_manifest(session: SessionWriter, args, specs: dict, host: dict, invocation: dict, rows: list[dict],
                   bridge_stats, gate: IdleGate) -> None:
    old = session.read_manifest()
    invocations = old.get("invocations", []) + [dict(invocation, delay_bridge_counters=bridge_stats)]
    doc = {
        "study": "transfer-tuning", "device": args.device, "session": args.session,
        "kind": "smoke" if args.smoke else "default",
        "configuration": {
            "link": {"rate_mbit": args.rate_mbit, "shaper": "tc tbf on the server's and the client's egress"},
            "rtt_ms": args.rtt_ms,
            "rtt_method": f"user-space L2 delay bridge ({BRIDGE_SRC.name if args.bridge == 'c' else 'delay_bridge.py'}"
                          ", AF_PACKET) in a middle namespace, rtt_ms/2 each way; no netem in this kernel",
            "client_tcp_rmem_max": args.rmem_max,
            "server": "nginx (Debian), 1 worker, sendfile on, keep-alive",
            "datasets": specs, "default_io_kib": DEFAULT_IO_KIB, "levels": LEVELS, "io_kib": IO_KIB,
            "grid": GRID, "repetitions": args.reps, "sample_ms": args.sample_ms,
            "idle_pre_s": args.idle_pre_s, "idle_post_s": args.idle_post_s, "kib": KIB,
        },
        "power_trace": None,
        "power_note": "no power meter on this host: energy is modeled from the sampled CPU time and bytes",
        "host": host,
        "tools": {"nginx": output("/usr/sbin/nginx", "-v"), "capture_script": "scripts/capture/transfer_tuning/run.py",
                  "delay_bridge": bridge_tool(args.bridge)},
        "achieved_rate": achieved_rate(rows, args.rate_mbit),
        "invocations": invocations,
        "runs": sorted(r["run_id"] for r in rows),
    }
    if gate.enabled or "idle_gate" in old:
        doc["idle_gate"] = gate.manifest(old.get("idle_gate"))
    session.write_manifest(doc, width=4096)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", required=True)
    ap.add_argument("--session", default=dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ"))
    ap.add_argument("--out", default=str(REPO / "data" / "raw" / "transfer-tuning"))
    ap.add_argument("--smoke", action="store_true", help="a few tiny runs (seconds)")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--rate-mbit", type=float, default=40.0)
    ap.add_argument("--rtt-ms", type=float, default=50.0)
    ap.add_argument("--rmem-max", type=int, default=262144, help="client tcp_rmem max (bytes)")
    ap.add_argument("--sample-ms", type=int, default=100)
    ap.add_argument("--idle-pre-s", type=float, default=0.6)
    ap.add_argument("--idle-post-s", type=float, default=1.2)
    ap.add_argument("--lock", default=None, help="flock this file during each run (e.g. /work/capture.lock)")
    ap.add_argument("--lock-batch-s", type=float, default=40.0,
                    help="keep the lock across consecutive runs until this many seconds have passed")
    ap.add_argument("--bridge", choices=("c", "py"), default="c",
                    help="delay bridge: delay_bridge.c (default) or the original, slower delay_bridge.py")
    ap.add_argument("--max-runs", type=int, default=None, help="stop after this many runs (resume later)")
    IdleGate.add_arguments(ap)
    args = ap.parse_args()
    reason = why_not()
    if reason:
        print(f"transfer-tuning capture skipped: {reason}", file=sys.stderr)
        return SKIP
    if args.smoke:
        args.reps, args.idle_pre_s, args.idle_post_s = 1, 0.3, 0.4
    specs = SMOKE_DATASETS if args.smoke else DATASETS
    session = SessionWriter(Path(args.out) / args.device, args.session, resume=True).open()
    tmp = Path(tempfile.mkdtemp(prefix="mttt-"))
    tmp.chmod(0o755)  # nginx workers (an unprivileged user) read the docroot under it
    bed = Testbed(args, tmp)
    lock = MeasurementLock(args.lock)
    gate = IdleGate.from_args(args, log=lambda m: print(m, flush=True))
    started = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    host = host_metadata(sysctls=("net.ipv4.tcp_slow_start_after_idle",), tools={"gcc": ["gcc", "--version"]},
                         note=SHARED_HOST)
    rows = session.read_rows("runs.csv")
    done = {r["run_id"] for r in rows if r["status"] == "ok"}
    interrupted = None
    try:
        with handle_signals():
            listing = make_datasets(specs, tmp / "www")
            bed.up(tmp / "www")
            configs = plan(listing, args.smoke)
            order = []
            for rep in range(1, args.reps + 1):
                cfgs = list(configs)
                random.Random(1000 + rep).shuffle(cfgs)
                order += [(c, rep) for c in cfgs if run_id(c, rep) not in done]
            if args.max_runs is not None:
                order = order[:args.max_runs]
            progress = Progress(len(order), f"transfer-tuning {args.device}")
            for cfg, rep in order:
                row = one_run(bed, session, lock, gate, args, tmp, listing, cfg, rep)
                rows = [x for x in rows if x["run_id"] != row["run_id"]] + [row]
                session.write_rows("runs.csv", RUN_FIELDS, rows)
                progress.step(f"{row['run_id']}: {row['status']}")
    except (Interrupted, NotIdle) as exc:
        interrupted = exc
    finally:
        lock.release()
        bed.down()
        shutil.rmtree(tmp, ignore_errors=True)
        invocation = {"started_utc": started,
                      "finished_utc": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                      "argv": sys.argv[1:], "lock_held_s": round(lock.held_s, 1),
                      "loadavg_1min_at_start": host["loadavg_1min"]}
        write_manifest(session, args, specs, host, invocation, rows, bed.bridge_stats, gate)
    if interrupted is not None:
        print(f"{interrupted}: unfinished session kept in {session.partial} (resume with the same --session)",
              file=sys.stderr)
        return interrupted.status
    session.finish()
    bad = [r for r in rows if r["status"] != "ok"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

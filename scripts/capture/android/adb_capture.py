#!/usr/bin/env python3
"""Android capture for the cpu-gbps study, over adb: the same formats as
scripts/capture/capture.py, so a phone's session drops into data/raw.

The phone runs the iperf3 client (a static arm64 iperf3 pushed to
/data/local/tmp, see book page "Bring your own device") against an
`iperf3 -s` the user starts on a server reachable over the radio under test.
Per run it writes runs/<run_id>/:

  iperf3.json.gz    the phone's `iperf3 -J` output (native format)
  proc_stat.txt.gz  `<t_ns> <cpu line of /proc/stat>` every --sample-ms
  proc_pid.txt.gz   per-thread CPU time of every ksoftirqd (schedstat ns,
                    utime/stime ticks), same instants
  battery.csv.gz    time,voltage_now,current_now (ns, uV, uA) from
                    /sys/class/power_supply/<supply>/: the transfer-tuning
                    chapter's `android-battery` power-trace format, with
                    units and sign convention in the session manifest
  manifest.yaml     run configuration, start/end and the iperf3 client's
                    CPU time (POSIX `times` of the phone's shell)

Times are the phone's /proc/uptime (CLOCK_BOOTTIME, 10 ms resolution), the
same clock for samples and run bounds. The sampler and the client run as one
`adb shell` each; the phone does the sampling so adb latency does not skew it.
The session manifest records getprop, sysfs CPU frequencies and governors,
the interface's MTU and RPS masks; offloads (ethtool -k) are not readable on
a stock phone and are recorded as such.

Usage: python scripts/capture/android/adb_capture.py --device pixel7 \
           --server 192.168.1.10 [--serial X] [--iface wlan0] [--smoke]
Exit 77: no adb or no authorized phone (the reason is printed).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "src"))  # a checkout without `pip install -e .`
from mobitrace.capture import SKIP, Progress, SessionWriter  # noqa: E402
from mobitrace.core.host_info import HOST_KEYS, hostname_hash  # noqa: E402

RATES = {"100M": 100_000_000, "200M": 200_000_000, "400M": 400_000_000, "600M": 600_000_000,
         "800M": 800_000_000, "1G": 1_000_000_000, "1500M": 1_500_000_000, "max": 0}
SAMPLER_MARK = "# mobitrace-sampler"
CLIENT_MARK = "# mobitrace-iperf3"
PROC_PID_HEADER = "t_ns\trole\tpid\tschedstat_run_ns\tutime_ticks\tstime_ticks"


class Adb:
    def __init__(self, adb: str, serial: str | None):
        self.base = [adb] + (["-s", serial] if serial else [])

    def run(self, *args: str, check: bool = True, timeout: float = 60) -> str:
        out = subprocess.run([*self.base, *args], capture_output=True, text=True, timeout=timeout)
        if check and out.returncode != 0:
            raise RuntimeError(f"adb {' '.join(args)[:80]}: exit {out.returncode}: {out.stderr.strip()[:200]}")
        return out.stdout

    def shell(self, script: str, **kw) -> str:
        return self.run("shell", script, **kw)

    def popen(self, script: str) -> subprocess.Popen:
        return subprocess.Popen([*self.base, "shell", script], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                text=True)

    def read(self, path: str) -> str:
        out = subprocess.run([*self.base, "shell", f"cat {shlex.quote(path)}"], capture_output=True, text=True,
                             timeout=30)
        return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else "not readable"


class Sampler:
    """The phone-side sampler, read on a thread. `start` returns once the phone
    has printed its first full sample block, so every run is bracketed by
    samples however long `adb shell` takes to start (tens of ms on a phone,
    more on a loaded host)."""

    def __init__(self, adb: Adb, script: str, timeout: float = 30):
        self.proc = adb.popen(script)
        self.lines: list[str] = []
        self._first_block = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        if not self._first_block.wait(timeout):
            self.stop()
            raise RuntimeError(f"the phone's sampler printed no sample within {timeout:.0f} s")

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(line)
            if line.startswith("B "):
                self._first_block.set()

    def stop(self) -> str:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._reader.join(timeout=10)
        return "".join(self.lines)


def sampler_script(period_ms: int, supply: str) -> str:
    """The phone-side loop: one tagged block per sample."""
    ps = f"/sys/class/power_supply/{supply}"
    return f"""{SAMPLER_MARK}
ks=$(for d in /proc/[0-9]*; do c=$(cat $d/comm 2>/dev/null); case "$c" in ksoftirqd/*) echo ${{d#/proc/}};; esac; done)
while :; do
  read u _ < /proc/uptime
  echo "T $u"
  grep '^cpu' /proc/stat
  for p in $ks; do read r _ < /proc/$p/schedstat; set -- $(cat /proc/$p/stat); echo "P $p $(cat /proc/$p/comm) $r ${{14}} ${{15}}"; done
  echo "B $(cat {ps}/voltage_now 2>/dev/null || echo NA) $(cat {ps}/current_now 2>/dev/null || echo NA)"
  sleep {period_ms / 1000:.3f}
done"""


def client_script(iperf3: str, args: list[str]) -> str:
    """Run the iperf3 client; print its JSON, then its bounds and CPU time."""
    return f"""{CLIENT_MARK}
read u0 _ < /proc/uptime
{shlex.join([iperf3, *args])}
rc=$?
read u1 _ < /proc/uptime
echo "@@ $rc $u0 $u1"
times"""


def _uptime_ns(text: str) -> int:
    sec, _, frac = text.partition(".")
    return int(sec) * 1_000_000_000 + int((frac + "000000000")[:9])


def _times_seconds(field: str) -> float:
    """POSIX `times` field like 0m0.12s or 1m2.500s -> seconds."""
    m = re.fullmatch(r"(\d+)m([\d.]+)s", field)
    if not m:
        raise RuntimeError(f"unexpected `times` output {field!r}")
    return int(m.group(1)) * 60 + float(m.group(2))


def parse_client_output(text: str) -> tuple[str, int, int, int, float, float]:
    """(iperf3 JSON, exit status, t0 ns, t1 ns, children user s, children sys s)."""
    head, sep, tail = text.rpartition("\n@@ ")
    if not sep:
        raise RuntimeError("the phone's client script printed no '@@' trailer")
    lines = tail.strip().splitlines()
    rc, u0, u1 = lines[0].split()
    children = lines[2].split() if len(lines) >= 3 else lines[-1].split()
    return head + "\n", int(rc), _uptime_ns(u0), _uptime_ns(u1), _times_seconds(children[0]), \
        _times_seconds(children[1])


def split_samples(text: str) -> tuple[str, str, str]:
    """Sampler output -> (proc_stat.txt, proc_pid.txt, battery.csv) texts."""
    stat, pid, batt = [], [PROC_PID_HEADER], ["time,voltage_now,current_now"]
    t = None
    for line in text.splitlines():
        if line.startswith("T "):
            t = _uptime_ns(line.split()[1])
        elif t is None:
            continue
        elif line.startswith("cpu"):
            stat.append(f"{t} {line.strip()}")
        elif line.startswith("P "):
            _, p, comm, run_ns, ut, st = line.split()
            pid.append(f"{t}\t{comm}\t{p}\t{run_ns}\t{ut}\t{st}")
        elif line.startswith("B "):
            _, v, c = line.split()
            batt.append(f"{t},{'' if v == 'NA' else v},{'' if c == 'NA' else c}")
    return "\n".join(stat) + "\n", "\n".join(pid) + "\n", "\n".join(batt) + "\n"


def getprop(adb: Adb) -> dict:
    props = {}
    for line in adb.shell("getprop").splitlines():
        m = re.match(r"\[(.+?)\]: \[(.*)\]", line)
        if m:
            props[m.group(1)] = m.group(2)
    return props


def current_sign(adb: Adb, supply: str) -> tuple[str, str]:
    """The sign convention of current_now, read off a discharging phone:
    sysfs says "negative when discharging" on some kernels and "positive" on
    others, so it is observed, not assumed."""
    base = f"/sys/class/power_supply/{supply}"
    status, now = adb.read(f"{base}/status"), adb.read(f"{base}/current_now")
    evidence = f"status={status}, current_now={now} at session start"
    if status == "Discharging" and now.lstrip("-").isdigit() and int(now) != 0:
        return ("discharge-negative" if int(now) < 0 else "discharge-positive"), evidence
    return "unknown", evidence + " (unplug the charger to observe the sign)"


def host_metadata(adb: Adb, iface: str, iperf3: str) -> dict:
    props = getprop(adb)
    online = adb.read("/sys/devices/system/cpu/online")
    ncpu = 0
    for part in online.split(","):
        a, _, b = part.partition("-")
        if a.isdigit():
            ncpu += (int(b) - int(a) + 1) if b.isdigit() else 1
    freqs = []
    for c in range(ncpu):
        base = f"/sys/devices/system/cpu/cpu{c}/cpufreq"
        freqs.append({"cpu": c, "governor": adb.read(f"{base}/scaling_governor"),
                      "cur_khz": adb.read(f"{base}/scaling_cur_freq"),
                      "max_khz": adb.read(f"{base}/cpuinfo_max_freq")})
    queues = adb.shell(f"ls /sys/class/net/{iface}/queues/ 2>/dev/null", check=False).split()
    rps = {q: adb.read(f"/sys/class/net/{iface}/queues/{q}/rps_cpus") for q in queues if q.startswith("rx-")}
    wanted = ("ro.product.manufacturer", "ro.product.model", "ro.product.device", "ro.build.fingerprint",
              "ro.build.version.release", "ro.build.version.sdk", "ro.soc.model", "ro.board.platform",
              "ro.hardware")
    host = dict.fromkeys(HOST_KEYS)  # schema 2, as mobitrace.capture.host writes for a Linux host
    host.update({
        "hostname_hash": hostname_hash(props.get("ro.product.device", "android")),
        "kernel": adb.shell("uname -r").strip(),
        "kernel_version": adb.shell("uname -v", check=False).strip() or None,
        "machine": adb.shell("uname -m").strip(),
        "os": f"Android {props['ro.build.version.release']}" if "ro.build.version.release" in props else None,
        "cpu_model": [props.get("ro.soc.model") or props.get("ro.board.platform") or "unknown"],
        "cpu_count": ncpu, "cpus_online": online, "hypervisor": False,
        "user_hz": 100,  # Android kernels use USER_HZ = 100 (the /proc ABI)
        "cpufreq": freqs,
        "kernel_config": {"CONFIG_HZ": "not readable", "CONFIG_IRQ_TIME_ACCOUNTING": "not readable"},
        "tools": {"adb": adb.run("version").splitlines()[0]},
        "note": "a phone over adb: the host is the phone",
    })
    return {
        "props": {k: props[k] for k in wanted if k in props},
        "host": host,
        "testbed": {"device": {"interface": iface, "mtu": adb.read(f"/sys/class/net/{iface}/mtu"),
                               "ethtool_k": {}, "ethtool_note": "ethtool -k is not readable on a stock phone",
                               "rps_cpus": rps}},
        "iperf3_version": (adb.shell(f"{shlex.quote(iperf3)} --version", check=False).strip().splitlines()
                           or ["not found"])[0],
    }


def capture(args) -> Path:
    adb = Adb(args.adb, args.serial)
    meta = host_metadata(adb, args.iface, args.iperf3)
    meta["sign"] = current_sign(adb, args.supply)
    if meta["iperf3_version"] == "not found":
        raise SystemExit(f"no iperf3 at {args.iperf3} on the phone: adb push a static arm64 iperf3 there first")
    rates = ["100M", "max"] if args.smoke else args.rates
    reps = 1 if args.smoke else args.repetitions
    duration = 1 if args.smoke else args.duration
    session = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    # keep_partial=False: no partial session is left behind (a crash leaves only .partial)
    with SessionWriter(Path(args.out) / args.device, session, keep_partial=False) as writer:
        return _capture_runs(args, adb, meta, writer, session, rates, reps, duration)


def _capture_runs(args, adb, meta, writer, session, rates, reps, duration) -> Path:
    sign, sign_evidence = meta["sign"]
    run_ids = []
    started = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    progress = Progress(reps * len(args.directions) * len(rates), f"adb {args.device}")
    for rep in range(1, reps + 1):
        for direction in args.directions:
            for rate in rates:
                run_id = f"{direction}-{rate}-r{rep}"
                rel = f"runs/{run_id}"
                iperf_args = ["-c", args.server, "-p", str(args.port), "-t", str(duration), "-i", "1", "-J"]
                if RATES[rate]:
                    iperf_args += ["-b", str(RATES[rate])]
                if direction == "down":
                    iperf_args.append("-R")
                sampler = Sampler(adb, sampler_script(args.sample_ms, args.supply), args.sampler_timeout)
                time.sleep(2 * args.sample_ms / 1000)
                text = adb.shell(client_script(args.iperf3, iperf_args), check=False, timeout=duration + 60)
                time.sleep(2 * args.sample_ms / 1000)
                samples = sampler.stop()
                adb.shell("pkill -f 'mobitrace-sampler' 2>/dev/null; true", check=False)
                js, rc, t0, t1, ut, st = parse_client_output(text)
                stat, pid, batt = split_samples(samples)
                for name, text in (("iperf3.json", js), ("proc_stat.txt", stat), ("proc_pid.txt", pid),
                                   ("battery.csv", batt)):
                    writer.write(f"{rel}/{name}", text, gz=True)
                writer.write_manifest({
                    "run_id": run_id, "direction": direction, "target_rate": rate,
                    "target_rate_bps": RATES[rate], "repetition": rep, "duration_s": duration,
                    "sample_period_ms": args.sample_ms,
                    "client": {"where": "phone", "cmd": [args.iperf3, *iperf_args], "exit_status": rc,
                               "rusage": {"utime_s": ut, "stime_s": st,
                                          "source": "POSIX `times` (children) of the phone's shell"}},
                    "server": {"where": f"{args.server} (not the phone)", "on_device": False,
                               "rusage": {"utime_s": 0.0, "stime_s": 0.0},
                               "note": "the server's CPU is not the phone's; counted as 0"},
                    "t_start_monotonic_ns": t0, "t_end_monotonic_ns": t1,
                    "clock": "phone /proc/uptime (CLOCK_BOOTTIME, 10 ms resolution)",
                }, f"{rel}/manifest.yaml")
                run_ids.append(run_id)
                progress.step(f"{run_id}: iperf3 exit {rc}")
    manifest = {
        "study": "cpu-gbps", "device": args.device, "session": session, "kind": "smoke" if args.smoke else "default",
        "configuration": {"name": args.config, "description": args.description,
                          "rates": rates, "directions": args.directions, "repetitions": reps,
                          "duration_s": duration, "sample_period_ms": args.sample_ms,
                          "downlink": "server sends, phone receives (iperf3 -R on the phone)",
                          "uplink": "phone sends, server receives", "server": args.server,
                          "device_cpus": None, "cpu_quota": None},
        "testbed": meta["testbed"],
        "host": meta["host"],
        "android": meta["props"],
        "power_trace": {"format": "android-battery", "file": "runs/<run_id>/battery.csv.gz",
                        "supply": f"/sys/class/power_supply/{args.supply}",
                        "units": {"time": "ns", "voltage": "uV", "current": "uA"},
                        "current_sign": sign, "current_sign_evidence": sign_evidence,
                        "max_gap_s": 3 * args.sample_ms / 1000},
        "tools": {"iperf3": meta["iperf3_version"], "adb": adb.run("version").splitlines()[0],
                  "capture_script": "scripts/capture/android/adb_capture.py"},
        "started_utc": started,
        "runs": run_ids,
        "finished_utc": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    }
    writer.write_manifest(manifest)
    return writer.finish()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", required=True, help="device name (folder under data/raw/cpu-gbps)")
    ap.add_argument("--server", required=True, help="address of the host running `iperf3 -s`")
    ap.add_argument("--port", type=int, default=5201)
    ap.add_argument("--serial", help="adb serial (when several phones are attached)")
    ap.add_argument("--adb", default=os.environ.get("ADB", "adb"))
    ap.add_argument("--iface", default="wlan0")
    ap.add_argument("--supply", default="battery", help="/sys/class/power_supply/<supply>")
    ap.add_argument("--iperf3", default="/data/local/tmp/iperf3")
    ap.add_argument("--config", default="default")
    ap.add_argument("--description", default="phone over its radio to an iperf3 server")
    ap.add_argument("--rates", nargs="+", default=["100M", "200M", "400M", "600M", "800M", "1G", "max"],
                    choices=sorted(RATES))
    ap.add_argument("--directions", nargs="+", default=["down", "up"], choices=["down", "up"])
    ap.add_argument("--repetitions", type=int, default=3)
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--sample-ms", type=int, default=100)
    ap.add_argument("--sampler-timeout", type=float, default=30,
                    help="seconds to wait for the phone's first sample before giving up")
    ap.add_argument("--out", default="data/raw/cpu-gbps")
    ap.add_argument("--smoke", action="store_true", help="2 rates x 1 s x 1 repetition")
    args = ap.parse_args(argv)
    if shutil.which(args.adb) is None:
        print(f"cannot capture: no '{args.adb}' on PATH (install Android platform-tools)", file=sys.stderr)
        return SKIP
    state = subprocess.run([args.adb, *(["-s", args.serial] if args.serial else []), "get-state"],
                           capture_output=True, text=True)
    if state.returncode != 0 or state.stdout.strip() != "device":
        print(f"cannot capture: adb sees no authorized phone ({state.stderr.strip() or state.stdout.strip()})",
              file=sys.stderr)
        return SKIP
    final = capture(args)
    print(f"wrote {final}\nnext: python -m mobitrace validate {final} && "
          f"python -m mobitrace add-device {final.parent}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

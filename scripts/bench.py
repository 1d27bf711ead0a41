#!/usr/bin/env python3
"""`make bench`: how long the pipeline, the tests and the parsers take.

Over --runs runs (default 3) it reports the minimum and the median of:

cold      what `make` runs, `python -m mobitrace repro -f` (the studies side
          by side, mobitrace.repro), the same without its warm server
          (MOBITRACE_NO_WARM=1: what mobitrace.warm saves), and plain `dvc
          repro -f` (one stage at a time: what the runner saves), each on its
          own fresh copy of the repository (tracked and
          new files, as `git clone` would give; your working tree is not
          touched); wall and CPU s
stages    each stage of the plain `dvc repro -f`: from DVC's "Running stage"
          line to the next one (the command plus DVC's hashing of its deps and
          outs)
noop      `dvc repro` and `python -m mobitrace repro` with nothing changed,
          and the runner without its two no-op cuts (DVC's stage-file walk
          pruned below the capture sessions, params.yaml parsed once): what
          they save
add       `python -m mobitrace add-device` (an existing capture under a new
          name, as book/byod.md does) and the `python -m mobitrace repro`
          that rebuilds the book (what `make` runs)
book      the book stage alone (`dvc repro -f -s book`)
test      `make test` (PYTEST_ARGS=--durations=10) and its 10 slowest tests
ingest    a synthetic power-meter CSV (scripts/bench_power_trace_memory.py,
          --trace-mb) read by mobitrace.energy.power_traces.iter_chunks and by
          pyarrow.csv.read_csv: MB/s, the ratio, peak RSS of each
bigtrace  (one run, whatever --runs says) a transfer-tuning device
          ("synthetic-host") whose one run has a synthetic power-meter trace
          of about --bigtrace-mb MB (default 1000): wall time and peak RSS
          (getrusage of a fresh child) of ingest and of what the chapter
          does with the trace (analysis.measured_power streaming
          power.parquet, energy_table, the power-over-time figure with the
          thinned trace). Synthetic data, for memory only; the goal is
          <= 500 MB each
growth    how the cost grows with a study's devices (--growth 5,20,100; one
          run): the cpu-gbps study at each count, filled with synthetic
          devices (the capture SOURCE_DEVICE registered again as
          synthetic-<i>): the no-op, and adding one more device (add-device
          and the runner that rebuilds): its wall and CPU s and the stages
          that ran, of which how many are device stages (1 at every count:
          adding a device is O(1) in device stages; the chapters that
          compare every device, and the book, grow with the count).
          device_growth() is the function to call from elsewhere
groups    (one run) two end-to-end modules whose module fixture builds for
          minutes, on 2 pytest-xdist workers: with `--dist loadgroup` (what
          `make test` runs: tests/conftest.py's scheduler keeps each group on
          one worker) and with `--dist load` (what xdist alone does on the
          pinned pytest, tests/unit/test_library_contracts.py): wall and CPU s,
          and how often the fixtures were made
sampler   CPU time of each capture kit's periodic sampler at --sampler-hz,
          less an idle process's over the same --sampler-s seconds, as % of
          one core (per-process CPU time: /proc/stat ticks are too coarse)

Results go to --out (default dist/bench.json; no DVC stage reads it) and a
table is printed. Timing is wall clock (time.monotonic) of child processes;
the load average at start and end is recorded, as other work on the machine
slows every figure. Last, each target with its median wall time, its median
CPU s (user + system of the process tree, which load does not inflate) and
the 1-minute load average at the end of its runs.

    python scripts/bench.py [--runs 3] [--only cold,noop,...] [--skip-test]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SECTIONS = ("cold", "noop", "add", "book", "test", "groups", "ingest", "sampler", "bigtrace", "growth")
# bigtrace: one run (about a minute, a 1 GB file in the temporary folder);
# growth: one run, a build at each device count (at 100 devices, minutes)
DEFAULT_SECTIONS = SECTIONS
# The targets, shown next to the figures.
TARGETS = {"cold mobitrace repro -f (make)": "<= 30 s", "cold dvc repro -f": "<= 60 s", "no-op dvc repro": "<= 2 s",
           "no-op mobitrace repro (make)": "<= 2 s", "add-device + mobitrace repro (make)": "<= 10 s",
           "make test": "<= 180 s",
           "ingest ratio (mobitrace / pyarrow)": ">= 0.8"}
SOURCE_DEVICE = "data/raw/cpu-gbps/vm-veth-default"  # the capture book/byod.md re-registers
MAKE_REPRO = [sys.executable, "-m", "mobitrace", "repro"]  # what `make` runs (the copy's own, by PYTHONPATH)
# The runner with mobitrace.repro's no-op cuts left out: DVC walks every
# session folder for stage files and parses params.yaml once per stage.
REPRO_WITHOUT_NOOP_CUTS = [sys.executable, "-c", (
    "import runpy, sys; from mobitrace import repro\n"
    "repro._collect_stage_files_above_sessions = repro._parse_params_once_per_version = lambda: None\n"
    "sys.argv = ['mobitrace', 'repro']; runpy.run_module('mobitrace', run_name='__main__')")]


def env(clone: Path | None = None) -> dict:
    e = dict(os.environ)
    e["DVC_NO_ANALYTICS"] = "1"
    e["MPLBACKEND"] = "Agg"
    e["PYTHONUNBUFFERED"] = "1"  # DVC's lines arrive when they are written
    bin_dir = str(Path(sys.executable).parent)
    e["PATH"] = f"{bin_dir}{os.pathsep}{e.get('PATH', '')}"
    if clone is not None:  # the copy's own code, whatever is installed
        e["PYTHONPATH"] = str(clone / "src")
    for k, v in (("GIT_AUTHOR_NAME", "bench"), ("GIT_AUTHOR_EMAIL", "bench@localhost"),
                 ("GIT_COMMITTER_NAME", "bench"), ("GIT_COMMITTER_EMAIL", "bench@localhost")):
        e.setdefault(k, v)
    return e


def sh(args: list[str], cwd: Path, clone: Path | None = None, extra: dict | None = None) -> str:
    done = subprocess.run(args, cwd=cwd, env={**env(clone), **(extra or {})}, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"bench: {' '.join(args)} failed ({done.returncode}) in {cwd}:\n"
                         f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done.stdout + done.stderr


def children_cpu() -> float:
    """User + system CPU s of the waited-for child process trees so far."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def load1() -> float:
    """The 1-minute load average now: what else the machine is doing slows every wall figure."""
    return os.getloadavg()[0]


def timed(args: list[str], cwd: Path, clone: Path | None = None, cpu: list | None = None,
          extra: dict | None = None, loads: list | None = None) -> float:
    t0, c0 = time.monotonic(), children_cpu()
    sh(args, cwd, clone, extra)
    if loads is not None:  # at the end: the 1-minute average then covers the run
        loads.append(load1())
    if cpu is not None:
        cpu.append(children_cpu() - c0)
    return time.monotonic() - t0


def fresh_copy(repo: Path, parent: Path) -> Path:
    """The repository's tracked and new (not ignored) files in a new git repo."""
    clone = Path(tempfile.mkdtemp(prefix="clone-", dir=parent)) / "repo"
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         cwd=repo, capture_output=True, text=True, check=True).stdout
    for name in out.split("\0"):
        if name and (repo / name).is_file():
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(repo / name, clone / name)
    sh(["git", "init", "-q", "-b", "main"], clone)
    sh(["git", "add", "-A"], clone)
    sh(["git", "commit", "-q", "-m", "bench snapshot"], clone)
    return clone


def repro_with_stage_times(clone: Path, *args: str) -> tuple[float, dict[str, float]]:
    """Run `dvc repro <args>`; (wall s, {stage: s}) from the time each
    "Running stage" line arrives. "(before the first stage)" is DVC's start
    and its collecting of the pipeline; "(lock and exit)" what follows the last."""
    t0, c0 = time.monotonic(), children_cpu()
    proc = subprocess.Popen(["dvc", "repro", *args], cwd=clone, env=env(clone), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    marks: list[tuple[str, float]] = [("(before the first stage)", t0)]
    tail = []
    for line in proc.stdout:
        m = re.match(r"Running stage '([^']+)'", line)
        if m:
            marks.append((m.group(1), time.monotonic()))
        tail = (tail + [line])[-60:]
    rc = proc.wait()
    end = time.monotonic()
    if rc != 0:
        raise SystemExit(f"bench: dvc repro {' '.join(args)} failed ({rc}) in {clone}:\n{''.join(tail)}")
    marks.append(("(lock and exit)", end))
    # the last stage ends when dvc exits; its lock writing is counted with it
    stages = {name: nxt - t for (name, t), (_, nxt) in zip(marks, marks[1:])}
    stages.pop("(lock and exit)", None)
    stages["(cpu s of the whole run)"] = children_cpu() - c0
    return end - t0, stages


def command_times(clone: Path) -> dict[str, float]:
    """{stage: wall s of its command alone}, as the commands record them
    (.mobitrace/timings.json, keyed by command line; dvc.lock maps stages to
    command lines). The rest of a stage's time is DVC's."""
    import yaml
    try:
        timings = json.loads((clone / ".mobitrace" / "timings.json").read_text())
    except FileNotFoundError:
        return {}
    lock = yaml.safe_load((clone / "dvc.lock").read_text())["stages"]
    return {stage: timings[entry["cmd"]]["wall_s"] for stage, entry in lock.items() if entry["cmd"] in timings}


def summary(values: list[float], loads: list[float] | None = None) -> dict:
    """min and median of `values`; with `loads`, the median 1-minute load average at the runs' ends."""
    out = {"min": min(values), "median": statistics.median(values), "runs": values}
    if loads:
        out["load"] = statistics.median(loads)
    return out


# ---------------------------------------------------------------- pipeline
def bench_pipeline(repo: Path, runs: int, only: set[str], work: Path, results: dict) -> None:
    cold, stages, commands, clone = [], {}, {}, None
    made, made_cpu, cold_nowarm, cold_nowarm_cpu = [], [], [], []
    made_load, cold_load = [], []
    if "cold" in only or not only & {"noop", "add", "book"}:
        for i in range(runs if "cold" in only else 1):
            if "cold" in only:
                clone = fresh_copy(repo, work)
                made.append(timed([*MAKE_REPRO, "-f"], clone, clone, made_cpu, loads=made_load))
                print(f"  cold run {i + 1}, mobitrace repro -f: {made[-1]:.1f} s", flush=True)
                shutil.rmtree(clone.parent)
                # the same without the warm server (mobitrace.warm): what it saves
                clone = fresh_copy(repo, work)
                cold_nowarm.append(timed([*MAKE_REPRO, "-f"], clone, clone, cold_nowarm_cpu, {"MOBITRACE_NO_WARM": "1"}))
                print(f"  cold run {i + 1}, mobitrace repro -f without the warm server: {cold_nowarm[-1]:.1f} s",
                      flush=True)
                shutil.rmtree(clone.parent)
            elif clone is not None:
                shutil.rmtree(clone.parent)
            clone = fresh_copy(repo, work)
            wall, per = repro_with_stage_times(clone, "-f")
            cold.append(wall)
            cold_load.append(load1())
            for k, v in per.items():
                stages.setdefault(k, []).append(v)
            for k, v in command_times(clone).items():
                commands.setdefault(k, []).append(v)
            print(f"  cold run {i + 1}, dvc repro -f: {wall:.1f} s", flush=True)
    else:  # only the warm figures: one untimed build to start from
        clone = fresh_copy(repo, work)
        sh(MAKE_REPRO, clone, clone)
    if "cold" in only:
        results["cold mobitrace repro -f (make)"] = summary(made, made_load)
        results["cold mobitrace repro -f (cpu s)"] = summary(made_cpu)
        results["  without the warm server"] = summary(cold_nowarm)
        results["  without the warm server (cpu s)"] = summary(cold_nowarm_cpu)
        results["cold dvc repro -f"] = summary(cold, cold_load)
        results["cold dvc repro -f (cpu s)"] = summary(stages.pop("(cpu s of the whole run)"))
        results["stages"] = {k: summary(v) for k, v in stages.items()}
        results["stage commands"] = {k: summary(v) for k, v in commands.items()}
    sh(["git", "add", "-A"], clone)
    sh(["git", "commit", "-q", "-m", "built", "--allow-empty"], clone)
    if "noop" in only:
        for name, args in (("no-op dvc repro", ["dvc", "repro"]), ("no-op mobitrace repro (make)", MAKE_REPRO),
                           ("  without its no-op cuts", REPRO_WITHOUT_NOOP_CUTS)):
            cpu, loads = [], []
            results[name] = summary([timed(args, clone, clone, cpu, loads=loads) for _ in range(runs)], loads)
            results[name.replace("(make)", "").rstrip() + " (cpu s)"] = summary(cpu)
    if "book" in only:
        cpu: list[float] = []
        results["book stage alone"] = summary(
            [timed(["dvc", "repro", "-f", "-s", "book"], clone, clone, cpu) for _ in range(runs)])
        results["book stage alone (cpu s)"] = summary(cpu)
    if "add" in only:
        times, cpu, loads = [], [], []
        for i in range(runs):
            # a new name each run, so DVC's run cache cannot answer for it
            name = f"bench-{os.getpid()}-{i}"
            t0, c0 = time.monotonic(), children_cpu()
            sh([sys.executable, "-m", "mobitrace", "add-device", SOURCE_DEVICE, "--device", name], clone, clone)
            sh(MAKE_REPRO, clone, clone)
            times.append(time.monotonic() - t0)
            cpu.append(children_cpu() - c0)
            loads.append(load1())
            print(f"  add-device run {i + 1}: {times[-1]:.1f} s", flush=True)
            if i == runs - 1:
                break
            # back to the built state (untimed)
            sh(["git", "reset", "-q", "--hard"], clone)
            sh(["git", "clean", "-qfd"], clone)
            sh(["dvc", "checkout", "-f", "-q"], clone, clone)
            sh(MAKE_REPRO, clone, clone)
        results["add-device + mobitrace repro (make)"] = summary(times, loads)
        results["add-device + mobitrace repro (cpu s)"] = summary(cpu)
    shutil.rmtree(clone.parent)


# ---------------------------------------------------------------- growth
def stages_ran(log: str) -> list[str]:
    """The stages whose command ran, from a runner's or `dvc repro`'s output."""
    return re.findall(r"^Running stage '([^']+)'", log, re.M)


def study_devices(clone: Path, section: str) -> list[str]:
    import yaml
    return list(yaml.safe_load((clone / "params.yaml").read_text())[section]["devices"])


def device_growth(repo: Path, counts=(5, 20, 100), work: Path | None = None, study: str = "cpu-gbps",
                  section: str = "cpu-gbps-measured", source: str = SOURCE_DEVICE) -> dict:
    """How the pipeline's cost grows with the devices of `study` (params.yaml
    section `section`): a fresh copy of `repo` built, then filled, count by
    count (ascending), with synthetic devices (the capture `source`
    registered again as synthetic-<i>, by add-device) and rebuilt, untimed;
    at each count the no-op runner, then one more device added and rebuilt,
    timed. Returns {count: {"noop_s", "add_s", "add_cpu_s", "stages_ran",
    "device_stages_ran"}}; the copy is removed."""
    work = Path(tempfile.mkdtemp(prefix="growth-", dir=work))
    clone = fresh_copy(repo, work)
    sh(MAKE_REPRO, clone, clone)
    out: dict = {}
    try:
        for count in sorted(counts):
            have = study_devices(clone, section)
            for i in range(len(have), count):
                sh([sys.executable, "-m", "mobitrace", "add-device", source, "--device", f"synthetic-{i:03d}"],
                   clone, clone)
            if len(study_devices(clone, section)) != max(count, len(have)):
                raise SystemExit(f"bench: growth: {study} has not {count} devices")
            sh(MAKE_REPRO, clone, clone)
            noop = timed(MAKE_REPRO, clone, clone)
            t0, c0 = time.monotonic(), children_cpu()
            sh([sys.executable, "-m", "mobitrace", "add-device", source, "--device", f"synthetic-extra-{count:03d}"],
               clone, clone)
            log = sh(MAKE_REPRO, clone, clone)
            ran = stages_ran(log)
            devices = study_devices(clone, section)
            out[count] = {"noop_s": noop, "add_s": time.monotonic() - t0, "add_cpu_s": children_cpu() - c0,
                          "stages_ran": ran, "device_stages_ran": [s for s in ran if "@" in s],
                          "devices_after_add": len(devices), "synthetic": True}
            print(f"  growth at {count} {study} devices: no-op {noop:.1f} s, add a device {out[count]['add_s']:.1f} s "
                  f"({len(ran)} stages ran, {len(out[count]['device_stages_ran'])} of them device stages)", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out


# ---------------------------------------------------------------- tests
def bench_tests(repo: Path, runs: int, results: dict) -> None:
    walls, cpu, loads, per_test, counts = [], [], [], {}, ""
    for i in range(runs):
        t0, c0 = time.monotonic(), children_cpu()
        done = subprocess.run(["make", "--no-print-directory", "test", "PYTEST_ARGS=--durations=10 -q"],
                              cwd=repo, env=env(), capture_output=True, text=True)
        walls.append(time.monotonic() - t0)
        cpu.append(children_cpu() - c0)
        loads.append(load1())
        out = done.stdout + done.stderr
        if done.returncode != 0:
            print(out[-4000:])
            raise SystemExit(f"bench: make test failed ({done.returncode})")
        for secs, _phase, test in re.findall(r"^(\d+\.\d+)s (call|setup|teardown)\s+(.+)$", out, re.M):
            per_test.setdefault(f"{test} ({_phase})", []).append(float(secs))
        m = re.search(r"^=* ?(\d+ (?:passed|failed|error).* in [\d.]+s.*?)(?: =+)?$", out, re.M)
        counts = m.group(1) if m else counts
        print(f"  make test run {i + 1}: {walls[-1]:.0f} s ({counts})", flush=True)
    results["make test"] = summary(walls, loads)
    results["make test (cpu s)"] = summary(cpu)
    results["make test outcome"] = counts
    slow = sorted(per_test.items(), key=lambda kv: -statistics.median(kv[1]))[:10]
    results["slowest tests"] = {k: summary(v) for k, v in slow}


GROUPED_MODULES = ["tests/e2e/test_stack_trim_devices_synthetic.py", "tests/e2e/test_mptcp_devices_synthetic.py"]


def bench_groups(repo: Path, results: dict) -> None:
    """What the xdist scheduler subclass saves: GROUPED_MODULES on 2 workers, grouped and not."""
    out = {}
    for dist in ("loadgroup", "load"):
        base = Path(tempfile.mkdtemp(prefix=f"groups-{dist}-"))
        t0, c0 = time.monotonic(), children_cpu()
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2",
                               "--dist", dist, f"--basetemp={base}", *GROUPED_MODULES],
                              cwd=repo, env=env(), capture_output=True, text=True)
        if done.returncode != 0:
            print(done.stdout[-4000:])
            raise SystemExit(f"bench: the grouped modules failed with --dist {dist} ({done.returncode})")
        # each making of a module fixture leaves its mktemp folder in a worker's basetemp
        made = sum(1 for p in base.glob("*/*") if re.match(r"(stack-trim|mptcp-devices)\d*$", p.name))
        shutil.rmtree(base, ignore_errors=True)
        out[dist] = {"wall_s": time.monotonic() - t0, "cpu_s": children_cpu() - c0, "module_fixtures_made": made}
        print(f"  groups, --dist {dist}: {out[dist]['wall_s']:.0f} s, {made} module fixtures made", flush=True)
    results["groups"] = out


# ---------------------------------------------------------------- ingest
INGEST_CHILD = r"""
import resource, sys, time
path, how = sys.argv[1], sys.argv[2]
from mobitrace.energy import power_traces as pt
import pyarrow.csv
rows = 0
t0, c0 = time.monotonic(), time.process_time()  # imports excluded
if how == "mobitrace":
    spec = pt.spec_from_manifest({"format": "power-meter", "units": {"time": "s", "power": "W"}, "max_gap_s": 0.01})
    for t, p in pt.iter_chunks(path, spec):  # 1 GB at 1 kHz: 66 M rows, within Limits.power_rows
        rows += len(t)
else:
    rows = pyarrow.csv.read_csv(path).num_rows
print(rows, time.monotonic() - t0, time.process_time() - c0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def bench_ingest(runs: int, size_mb: float, work: Path, results: dict) -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    from bench_power_trace_memory import write_trace
    path = work / "power-trace.csv"
    write_trace(path, size_mb)
    mb = path.stat().st_size / 1e6
    out = {"file_mb": mb}
    for how in ("mobitrace", "pyarrow"):
        rates, cpu_rates, peaks = [], [], []
        for _ in range(runs):
            done = subprocess.run([sys.executable, "-c", INGEST_CHILD, str(path), how], env=env(ROOT),
                                  capture_output=True, text=True)
            if done.returncode != 0:
                raise SystemExit(f"bench: ingest with {how} failed:\n{done.stderr[-3000:]}")
            _rows, wall, cpu, peak = done.stdout.split()
            rates.append(mb / float(wall))
            cpu_rates.append(mb / float(cpu))
            peaks.append(float(peak))
        out[how] = {"MB/s": summary(rates), "MB per cpu s": summary(cpu_rates), "peak_rss_mb": summary(peaks)}
        print(f"  ingest {how}: {statistics.median(rates):.0f} MB/s, peak {max(peaks):.0f} MB", flush=True)
    out["ratio"] = {k: out["mobitrace"]["MB/s"][k] / out["pyarrow"]["MB/s"][k] for k in ("min", "median")}
    # pyarrow parses on every core; per CPU second is what load cannot skew
    out["ratio per cpu s"] = {k: out["mobitrace"]["MB per cpu s"][k] / out["pyarrow"]["MB per cpu s"][k]
                              for k in ("min", "median")}
    results["ingest"] = out
    path.unlink()


# ---------------------------------------------------------------- bigtrace
BIGTRACE_CHILD = r"""
import resource, sys, time
step, device, interim = sys.argv[1:4]
if step == "ingest":
    from mobitrace.studies.transfer_tuning import ingest as tt
    tt.ingest(device, interim)
else:  # what the chapter computes from the power log: the energies and a power-over-time figure
    import pandas as pd
    from mobitrace.book.figures import save_svg
    from mobitrace.studies.transfer_tuning import analysis as tta
    sys.path.insert(0, sys.argv[4])
    from test_tt_ingest_synthetic import CPU, RADIO
    runs, samples = (pd.read_parquet(f"{interim}/{n}.parquet") for n in ("runs", "samples"))
    measured = tta.measured_power(runs, [f"{interim}/power.parquet"], 0.0)  # streamed, as Chapter.setup does
    table = tta.energy_table(runs, samples, measured, CPU, RADIO, base_w=0.2, tail_tolerance_w=0.0)
    assert set(table["energy_source"]) == {"measured"}
    save_svg(tta.concurrency_power_figure(table, measured, samples, CPU, RADIO, 0.2, "measured"), f"{interim}.svg")
    print("points drawn", len(next(iter(measured.values())).t), file=sys.stderr)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)  # this child's peak (KiB on Linux)
"""


def bench_bigtrace(size_mb: float, work: Path, results: dict) -> None:
    """One fresh child per step, reporting its own peak RSS (RUSAGE_CHILDREN
    here would be the maximum over every earlier child of the bench)."""
    import numpy as np
    sys.path.insert(0, str(ROOT / "tests" / "transfer_tuning"))
    from conftest import write_session
    run = "sweep-video-cc1-p1-io16-r1"
    folder = write_session(work / "raw", [{"run_id": run, "power_log": "time,power\n0,1\n"}],
                           power_trace={"format": "power-meter", "file": "runs/<run_id>/power.csv",
                                        "units": {"time": "s", "power": "W"}, "max_gap_s": 0.3})
    trace = folder / "runs" / run / "power.csv"
    n = int(size_mb * 1e6 / 16)  # about 16 bytes a line
    with open(trace, "w") as fh:  # a 1 W base and a 3 W square wave over [90, 110] s
        fh.write("time,power\n")
        for a in range(0, n, 1_000_000):
            i = np.arange(a, min(n, a + 1_000_000))
            np.savetxt(fh, np.c_[90.0 + i * (20.0 / n), 1 + 2 * ((i // 1000) % 2)], fmt="%.9f,%g")  # ns: distinct times
    out = {"trace_mb": trace.stat().st_size / 1e6, "samples": n, "synthetic": True}
    for step in ("ingest", "chapter"):
        t0 = time.monotonic()
        done = subprocess.run([sys.executable, "-c", BIGTRACE_CHILD, step, str(folder.parent), str(work / "interim"),
                               str(ROOT / "tests" / "transfer_tuning")], env=env(ROOT), capture_output=True, text=True)
        wall = time.monotonic() - t0
        if done.returncode != 0:
            raise SystemExit(f"bench: bigtrace {step} failed:\n{done.stderr[-3000:]}")
        peak = int(done.stdout.split()[-1]) / 1024
        out[step] = {"wall_s": wall, "peak_rss_mb": peak}
        print(f"  bigtrace {step}: {wall:.1f} s, peak RSS {peak:.0f} MB", flush=True)
    results["bigtrace"] = out


# ---------------------------------------------------------------- sampler
SAMPLER_CHILD = r"""
import importlib.util, os, sys, time
kit, period, seconds = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])

def load(rel):
    spec = importlib.util.spec_from_file_location("kit", os.path.join(sys.argv[4], rel))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod

if kit == "idle":
    start = stop = lambda: None
elif kit == "cpu-gbps":  # scripts/capture/capture.py: /proc/stat, cgroup CPU, two processes
    s = load("scripts/capture/capture.py").Sampler(period, {"device": os.getpid(), "peer": os.getppid()})
    start, stop = s.start, s.stop
elif kit == "stack-trim":  # /proc/stat and /proc/cpuinfo MHz
    s = load("scripts/capture/stack_trim/run.py").Sampler(period)
    start, stop = s.start, s.stop
elif kit == "transfer-tuning":  # the client's sampler row, on the same Periodic grid
    from mobitrace.capture.sampler import Periodic
    client = load("scripts/capture/transfer_tuning/client.py")
    cfg, rows = {"server_pids": [os.getppid()], "iface": "lo"}, []
    s = Periodic(period, lambda: rows.append(client.sample_row(cfg, [[0]])))
    start, stop = s.start, s.stop
c0 = time.process_time()
start()
time.sleep(seconds)
stop()
print(time.process_time() - c0)
"""
KITS = ("cpu-gbps", "stack-trim", "transfer-tuning")


def bench_sampler(runs: int, hz: float, seconds: float, results: dict) -> None:
    def cpu(kit: str) -> float:
        done = subprocess.run([sys.executable, "-c", SAMPLER_CHILD, kit, str(1 / hz), str(seconds), str(ROOT)],
                              env=env(ROOT), capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"bench: sampler {kit} failed:\n{done.stderr[-3000:]}")
        return float(done.stdout.split()[-1])

    out = {"hz": hz, "seconds": seconds}
    for kit in KITS:
        pct = []
        for _ in range(runs):
            idle, busy = cpu("idle"), cpu(kit)
            pct.append(max(0.0, busy - idle) / seconds * 100)
        out[kit] = summary(pct)
        print(f"  sampler {kit}: {statistics.median(pct):.3f} % of a core", flush=True)
    results["sampler"] = out


# ---------------------------------------------------------------- report
def table(results: dict) -> str:
    rows = [("figure", "min", "median", "target")]

    def add(name, s, unit, fmt="{:.1f}"):
        rows.append((name, fmt.format(s["min"]) + unit, fmt.format(s["median"]) + unit, TARGETS.get(name, "")))

    for key in ("cold mobitrace repro -f (make)", "cold mobitrace repro -f (cpu s)", "  without the warm server",
                "  without the warm server (cpu s)", "cold dvc repro -f", "cold dvc repro -f (cpu s)"):
        if key in results:
            add(key, results[key], " s")
    commands = results.get("stage commands", {})
    for stage, s in sorted(results.get("stages", {}).items(), key=lambda kv: -kv[1]["median"]):
        add(f"  stage {stage}", s, " s")
        if stage in commands:
            add("    its command alone", commands[stage], " s")
    if commands:
        add("  sum of the commands alone", {k: sum(c[k] for c in commands.values()) for k in ("min", "median")}, " s")
    for key in ("no-op dvc repro", "no-op dvc repro (cpu s)", "no-op mobitrace repro (make)",
                "no-op mobitrace repro (cpu s)", "  without its no-op cuts", "  without its no-op cuts (cpu s)",
                "add-device + mobitrace repro (make)",
                "add-device + mobitrace repro (cpu s)", "book stage alone",
                "book stage alone (cpu s)", "make test", "make test (cpu s)"):
        if key in results:
            add(key, results[key], " s")
    for test, s in results.get("slowest tests", {}).items():
        add(f"  test {test}", s, " s")
    if "ingest" in results:
        ing = results["ingest"]
        for how in ("mobitrace", "pyarrow"):
            add(f"ingest {how} ({ing['file_mb']:.0f} MB)", ing[how]["MB/s"], " MB/s", "{:.0f}")
            add(f"  per CPU second {how}", ing[how]["MB per cpu s"], " MB", "{:.0f}")
            add(f"  peak RSS {how}", ing[how]["peak_rss_mb"], " MB", "{:.0f}")
        add("ingest ratio (mobitrace / pyarrow)", ing["ratio"], "", "{:.2f}")
        add("  ratio per CPU second", ing["ratio per cpu s"], "", "{:.2f}")
    if "bigtrace" in results:  # one run each
        big = results["bigtrace"]
        for step in ("ingest", "chapter"):
            r = big[step]
            rows.append((f"bigtrace {step} ({big['trace_mb']:.0f} MB synthetic trace)", "", f"{r['wall_s']:.1f} s", ""))
            rows.append((f"  peak RSS {step}", "", f"{r['peak_rss_mb']:.0f} MB", "<= 500 MB"))
    for count, g in sorted(results.get("growth", {}).items(), key=lambda kv: int(kv[0])):
        rows.append((f"growth: {count} cpu-gbps devices (synthetic), no-op", "", f"{g['noop_s']:.1f} s", "<= 3 s"))
        rows.append((f"  add a device at {count}: add-device + mobitrace repro", "", f"{g['add_s']:.1f} s",
                     "<= 20 s"))
        rows.append(("  stages run / of them device stages", "",
                     f"{len(g['stages_ran'])} / {len(g['device_stages_ran'])}", "device stages: 1"))
    for dist, g in results.get("groups", {}).items():
        rows.append((f"grouped e2e modules, --dist {dist}: module fixtures made {g['module_fixtures_made']}", "",
                     f"{g['wall_s']:.0f} s", ""))
        rows.append(("  cpu s", "", f"{g['cpu_s']:.0f} s", ""))
    if "sampler" in results:
        for kit in KITS:
            rows.append((f"sampler {kit} at {results['sampler']['hz']:g} Hz",
                         f"{results['sampler'][kit]['min']:.3f} %", f"{results['sampler'][kit]['median']:.3f} %",
                         "<= 0.5 % of a core"))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()
             for r in rows]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


def targets(results: dict) -> str:
    """One line per target measured: its median wall time (of the runs), the
    median CPU s, the 1-minute load average at the runs' ends, and whether
    the wall time meets the target. With the load above the CPUs, a wall
    figure says more about the machine than about the build: the CPU s over
    the CPUs is the wall time the work needs on a quiet machine."""
    lines = ["targets (median of the runs; CPU s: user + system of the whole process tree):"]
    for name, target in TARGETS.items():
        s = results.get(name)
        if not s or "median" not in s or not target.startswith("<="):
            continue
        limit = float(target.split()[1])
        cpu = results.get(name.replace("(make)", "").rstrip() + " (cpu s)")
        lines.append(f"  {name}: {s['median']:.1f} s wall (target {target}: "
                     f"{'met' if s['median'] <= limit else 'not met'})"
                     + (f", {cpu['median']:.1f} CPU s" if cpu else "")
                     + (f", load average {s['load']:.2f} on {os.cpu_count()} CPUs" if "load" in s else ""))
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    # 1000 MB: ~62M lines, within capture_reader's Limits.power_rows (a trace's own bound; file_bytes is 1 GiB)
    ap.add_argument("--bigtrace-mb", type=float, default=1000, help="size of bigtrace's synthetic power trace")
    ap.add_argument("--only", default=",".join(DEFAULT_SECTIONS),
                    help=f"comma-separated, of {','.join(SECTIONS)} (default: all)")
    ap.add_argument("--skip-test", action="store_true", help="leave out `make test` (the longest section)")
    ap.add_argument("--repo", type=Path, default=ROOT, help="the repository to copy and time (default: this one)")
    ap.add_argument("--out", type=Path, default=ROOT / "dist" / "bench.json")
    ap.add_argument("--trace-mb", type=float, default=1024, help="size of the synthetic power trace")
    ap.add_argument("--growth", default="5,20,100", help="device counts of the growth section")
    ap.add_argument("--sampler-hz", type=float, default=10)
    ap.add_argument("--sampler-s", type=float, default=10, help="seconds each sampler runs")
    args = ap.parse_args(argv)
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    if only - set(SECTIONS) or args.runs < 1:
        ap.error(f"--only takes {','.join(SECTIONS)}; --runs at least 1")
    if args.skip_test:
        only.discard("test")
    repo = args.repo.resolve()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=repo, capture_output=True,
                            text=True).stdout.strip()
    results: dict = {"started": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                     "commit": commit, "repo": str(repo), "runs": args.runs, "cpus": os.cpu_count(),
                     "loadavg_start": os.getloadavg()}
    with tempfile.TemporaryDirectory(prefix="mobitrace-bench-") as tmp:
        work = Path(tmp)
        if only & {"cold", "noop", "add", "book"}:
            bench_pipeline(repo, args.runs, only, work, results)
        if "ingest" in only:
            bench_ingest(args.runs, args.trace_mb, work, results)
        if "bigtrace" in only:
            bench_bigtrace(args.bigtrace_mb, work, results)
        if "sampler" in only:
            bench_sampler(args.runs, args.sampler_hz, args.sampler_s, results)
        if "growth" in only:
            results["growth"] = device_growth(repo, [int(c) for c in args.growth.split(",")], work)
        if "test" in only:
            bench_tests(repo, args.runs, results)
        if "groups" in only:
            bench_groups(repo, results)
    results["loadavg_end"] = os.getloadavg()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    print(table(results))
    print(targets(results))
    print(f"load average {results['loadavg_start'][0]:.2f} at start, {results['loadavg_end'][0]:.2f} at end "
          f"({results['cpus']} CPUs); written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`python -m mobitrace repro [-f] [-j N]`: `dvc repro`, the studies side by side.

DVC runs one stage at a time. A study's stages (an "arm": its published
numbers, ingest, per-device analysis and chapters) read nothing another
study writes; only the ledger, the overview and the book read every study.
So the arms are dealt to N workers (default: one per CPU; `bins`: by their
expected time, the longest to the least loaded), each worker runs one `dvc
--wait-for-lock repro <its arms' stages>`, and one `dvc repro` then runs
what is left. Every `dvc` and stage command of the run is a fork of one
warm server (mobitrace.warm) that has imported DVC and the libraries once.
The outputs are those of a plain `dvc repro` (which still works, one stage
after the other). Without -f, only the arms with an output
missing (a fresh clone: all) run side by side: a worker that finds nothing to
do holds DVC's lock for its whole check, so a no-op would take one check per
arm; the last `dvc repro` runs whatever else changed, serially.

Why this is safe: DVC holds its repository lock while it collects the
pipeline, checks a stage and writes dvc.lock, and releases it only while a
stage's command runs (dvc.stage.run.unlocked_repo); --wait-for-lock makes
a worker wait for it instead of failing. dvc.lock is written by re-reading
it under the lock (dvc.dvcfile.Lockfile.dump_stages -> modify_yaml), so a
worker keeps the stages the others wrote. core.autostage's `git add` runs
inside the same lock (dvc.repo.reproduce: @locked around @scm_context), so
two workers never race for .git/index.lock. DVC's read/write locks on each
stage's deps and outs (.dvc/tmp/rwlock) fail loudly if two arms ever did
overlap.

A failing stage stops everything: the other workers get SIGINT (DVC's
Ctrl-C path: the command ends, dvc.lock keeps the stages that finished) and
the runner exits with the failing `dvc repro`'s status after its message.
"""

from __future__ import annotations

import functools
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

from mobitrace import warm
from mobitrace.core import timings
from mobitrace.core.io import safe_yaml
from mobitrace.studies.registry import Study, studies


def arm_stages(study: Study) -> list[str]:
    """The dvc.yaml stages of one study (foreach groups by their name)."""
    chapters = dict.fromkeys(c.stage for c in study.chapters)  # a supplement runs in its chapter's stage
    return [f"ingest_published@{study.slug}", study.ingest_stage,
            *([study.device_stage] if study.device_stage else []), *chapters]


def _yaml(path: Path):
    """A YAML file's data, or None if it is missing (the runner reads
    dvc.yaml and params.yaml before every run, a no-op's included)."""
    try:
        return safe_yaml(path.read_text())
    except FileNotFoundError:
        return None


def stages(root: Path) -> dict[str, list[dict]]:
    """dvc.yaml's stages: {name: [its body]}, a foreach group both as
    {group: [a body per item]} and {group@item: [that body]}, `${item}`
    filled in (the items from params.yaml). Read once per version of the
    two files."""
    files = [root / "dvc.yaml", root / "params.yaml"]
    versions = tuple((st.st_mtime_ns, st.st_size) if (st := _stat(f)) else None for f in files)
    return _stages(str(root.resolve()), versions)


def _stat(path: Path) -> os.stat_result | None:
    try:
        return path.stat()
    except FileNotFoundError:
        return None


@functools.lru_cache(maxsize=8)
def _stages(root: str, versions: tuple) -> dict[str, list[dict]]:
    params = _yaml(Path(root, "params.yaml")) or {}
    out: dict[str, list[dict]] = {}
    for name, stage in _yaml(Path(root, "dvc.yaml"))["stages"].items():
        if "foreach" not in stage:
            out[name] = [stage]
            continue
        items = stage["foreach"]
        if isinstance(items, str):  # "${section.key}"
            section, key = items[2:-1].rsplit(".", 1)
            items = (params.get(section) or {}).get(key) or []
        out[name] = []
        for item in items:
            body = json.loads(json.dumps(stage["do"]).replace("${item}", str(item)))
            out[name].append(body)
            out[f"{name}@{item}"] = [body]
    return out


def cost_of(root: Path):
    """The expected time of a list of stages: the wall time their commands
    took last (.mobitrace/timings.json), a command never timed counting as
    the mean of those that were (so a fresh clone counts commands), plus
    DVC's own ~1 s per stage."""
    bodies, took = stages(root), timings.load(root)
    known = [v["wall_s"] for v in took.values()]
    default = sum(known) / len(known) if known else 1.0

    def cost(names: list[str]) -> float:
        return sum(took.get(b["cmd"], {}).get("wall_s", default) + DVC_PER_STAGE_S
                   for n in names for b in bodies.get(n, []))
    return cost


DVC_PER_STAGE_S = 1.0


def arms(root: Path, cost=None) -> list[tuple[str, list[str]]]:
    """(study slug, its stages) for every study, longest first (`cost`: by
    default cost_of(root))."""
    cost = cost or cost_of(root)
    found = [(s.slug, arm_stages(s)) for s in studies()]
    return sorted(found, key=lambda arm: -cost(arm[1]))


def bins(arm_list: list[tuple[str, list[str]]], jobs: int, cost) -> list[tuple[str, list[str]]]:
    """The arms dealt to `jobs` workers, longest first to the least loaded
    (LPT): ("a+b", a's and b's stages) per worker, so each worker starts DVC
    once (its start and its walk of the repository, ~1-2 s) and not once per arm."""
    loads: list[tuple[float, list[tuple[str, list[str]]]]] = [(0.0, []) for _ in range(min(jobs, len(arm_list)))]
    for arm in sorted(arm_list, key=lambda a: -cost(a[1])):
        i = min(range(len(loads)), key=lambda k: loads[k][0])
        loads[i] = (loads[i][0] + cost(arm[1]), loads[i][1] + [arm])
    dealt = sorted(loads, key=lambda load: -load[0])
    return [("+".join(slug for slug, _ in held), [n for _, names in held for n in names]) for _, held in dealt]


def rest(root: Path, arm_list: list[tuple[str, list[str]]]) -> list[str]:
    """The dvc.yaml stages no arm holds (the ledger, the overview, the
    book), in pipeline order."""
    held = {stage.split("@")[0] for _, names in arm_list for stage in names}  # foreach groups by name
    return [name for name in stages(root) if "@" not in name and name not in held]  # dvc.yaml order


def missing_outputs(root: Path, names: list[str]) -> bool:
    """Whether an output of one of these stages is missing (a fresh clone:
    all of them)."""
    bodies = stages(root)
    for body in (b for n in names for b in bodies.get(n, [])):
        for out in body.get("outs", []) + body.get("metrics", []):
            if not (root / (next(iter(out)) if isinstance(out, dict) else out)).exists():
                return True
    return False


class _Workers:
    """The running `dvc repro` processes, their output prefixed by their arm."""

    def __init__(self, root: Path, out, env: dict):
        self.root, self.out, self.env = root, out, env
        self.procs: dict[str, subprocess.Popen] = {}
        self.failed: tuple[str, int] | None = None
        self.stopping = threading.Event()
        self.print_lock = threading.Lock()

    def run(self, label: str, args: list[str]) -> int:
        # Own process group: a stop reaches dvc and its stage's command, not us.
        proc = subprocess.Popen(args, cwd=self.root, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, process_group=0)
        with self.print_lock:
            self.procs[label] = proc
            if self.stopping.is_set():
                self._interrupt(proc)
        for line in proc.stdout:
            with self.print_lock:
                self.out.write(f"{label} | {line}" if label else line)
                self.out.flush()
        code = proc.wait()
        with self.print_lock:
            del self.procs[label]
            if code != 0 and not self.stopping.is_set():
                self.failed = (label, code)
                self.stop()
        return code

    def stop(self) -> None:
        """Interrupt every running worker (call with print_lock held)."""
        self.stopping.set()
        for proc in self.procs.values():
            self._interrupt(proc)

    @staticmethod
    def _interrupt(proc: subprocess.Popen) -> None:
        # SIGINT, as Ctrl-C would: dvc stops, and its stage's command too. One
        # that lands while dvc forks the command is lost to the child, which then
        # runs on with our pipe open: the group gets SIGTERM after a grace.
        _signal_group(proc.pid, signal.SIGINT)
        timer = threading.Timer(STOP_GRACE_S, _signal_group, (proc.pid, signal.SIGTERM))
        timer.daemon = True
        timer.start()


STOP_GRACE_S = 5.0


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:  # every process of the group has ended
        pass


def repro(root: Path, force: bool = False, jobs: int | None = None, dvc: tuple[str, ...] = ("dvc",),
          out=None, plan: tuple[list[tuple[str, list[str]]], list[str]] | None = None) -> int:
    """Run the pipeline in `root` with `jobs` workers; the exit status of
    the first `dvc repro` that failed (0 if none did). `plan`: (arms, the
    rest), by default the studies' (arms(), rest())."""
    out = out or sys.stdout
    cost = cost_of(root)
    arm_list = plan[0] if plan else arms(root, cost)
    last_stages = plan[1] if plan else rest(root, arm_list)
    if not force:
        # Side by side only the arms with an output missing (see above):
        # finding other changes would cost a `dvc status`, as long as a no-op.
        arm_list = [arm for arm in arm_list if missing_outputs(root, arm[1])]
        if len(arm_list) < 2:  # nothing to run side by side
            arm_list = []
    jobs = max(1, jobs or os.cpu_count() or 1)
    flags = ["-f"] if force else []
    arm_list = bins(arm_list, jobs, cost)
    # One warm server for every process of the run (mobitrace.warm): its
    # forks skip Python's start and the libraries' imports.
    with warm.running({**os.environ, "PYTHONUNBUFFERED": "1"}, cwd=root) as env:
        return _run(root, arm_list, last_stages, force, jobs, flags, _warm_dvc(dvc), out, env)


def _warm_dvc(dvc: tuple[str, ...]) -> tuple[str, ...]:
    """`dvc` as a fork of the warm server too (it preloads DVC first), if
    it is this interpreter's DVC: each `dvc repro` then skips importing it."""
    found = shutil.which(dvc[0]) if dvc == ("dvc",) else None
    if found and Path(found).parent == Path(sys.executable).parent:
        return (sys.executable, "-m", "mobitrace.warm", "run", "dvc")
    return dvc


def _run(root: Path, arm_list, last_stages, force: bool, jobs: int, flags: list[str], dvc, out, env: dict) -> int:
    todo: queue.Queue = queue.Queue()
    for arm in arm_list:
        todo.put(arm)
    workers = _Workers(root, out, env)

    def worker():
        while not workers.stopping.is_set():
            try:
                slug, names = todo.get_nowait()
            except queue.Empty:
                return
            workers.run(slug, [*dvc, "--wait-for-lock", "repro", *flags, *names])

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(jobs)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    except BaseException:  # Ctrl-C, or SIGTERM (the CLI raises it): the workers stop too
        with workers.print_lock:
            workers.stop()
        for t in threads:
            t.join()
        raise
    if workers.failed:
        label, code = workers.failed
        out.write(f"error: {label}: `dvc repro` failed (exit {code}); stopped the other studies\n")
        return code
    # What reads every study. Forced: only those stages (-s), the arms ran;
    # otherwise a plain `dvc repro`, which also runs anything an arm missed.
    if force and not last_stages:
        return 0
    last = [*dvc, "repro", "-f", "-s", *last_stages] if force else [*dvc, "repro"]
    code = workers.run("", last)
    if code:
        out.write(f"error: `{' '.join(last)}` failed (exit {code})\n")
    return code

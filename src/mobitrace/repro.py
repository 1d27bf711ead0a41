"""`python -m mobitrace repro [-f] [-j N]`: `dvc repro`, independent stages side by side.

`dvc repro` runs one stage at a time, and for each it re-reads and rewrites
the whole dvc.lock. This runner does what
`dvc repro` does, with DVC's own functions, in one process that holds DVC's
repository lock for the run:
- the plan is DVC's (dvc.repo.reproduce: the active graph, plan_repro);
- a stage starts when every stage it depends on has finished, on one of N
  workers (default: one per CPU), the one with the longest path still ahead
  first (by each command's last wall time, .mobitrace/timings.json);
- a stage runs as Stage.reproduce/Stage.run run it: skipped unless forced or
  Stage.changed(); its outputs removed; restored from DVC's run cache if the
  cache has that run (not forced); else its command in DVC's shell and
  environment (dvc.stage.run), a fork of the warm server (mobitrace.warm);
  then Stage.save (hashes, run cache) and Stage.commit (DVC's cache). A stage
  without a command of its own to run (a .dvc data source, a frozen stage)
  goes through Stage.reproduce itself;
- dvc.lock is read once and written before a command starts and after a
  batch of stages finishes, if a stage finished since (a command, e.g. the
  book's, sees every stage finished before it, as under `dvc repro`); its
  entries (dvc.stage.serialize.to_lockfile) keep their place and new ones
  follow in the plan's order, as one `dvc repro` would append them. The
  run's last write is DVC's own serializer, so the file ends as DVC writes
  it, and core.autostage `git add`s it (DVC's scm_context);
- DVC asks git whether each output it saves is tracked, and dulwich reads
  all of .git/index each time: here it reads it once per version.
Plain `dvc repro` gives the same outputs and dvc.lock
(tests/unit/test_repro_runner.py, tests/e2e).

Progress: each stage's line names its place ("stage k of N"), each
command's end its wall time, a command still running says so every
HEARTBEAT_S, and the run ends with one line: what ran, what was restored,
what was unchanged, the total time ("up to date" when nothing ran).

A failing stage stops everything: the running commands get SIGINT (as
Ctrl-C would), then SIGTERM after a grace; dvc.lock keeps the stages that
finished, and the runner exits non-zero after the stage's message.
"""

from __future__ import annotations

import bisect
import collections
import contextlib
import logging
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import yaml

from mobitrace import warm
from mobitrace.core import timings
from mobitrace.core.io import safe_yaml

STOP_GRACE_S = 5.0
HEARTBEAT_S = 15.0  # a command running longer says so this often
DVC_PER_STAGE_S = 0.3  # the runner's hashing and caching of one stage, for the order only


def repro(root: Path, force: bool = False, jobs: int | None = None, out=None) -> int:
    """Run the pipeline in `root` with `jobs` workers; 0, or the exit status
    of the first stage that failed (1 if DVC refused a step)."""
    out = out or sys.stdout
    jobs = max(1, jobs or os.cpu_count() or 1)
    with contextlib.ExitStack() as stack, _DvcLog(out):
        return _Run(root, force, jobs, out, stack).run()


class _Run:
    def __init__(self, root: Path, force: bool, jobs: int, out, stack: contextlib.ExitStack):
        self.root, self.force, self.jobs, self.out, self.stack = root, force, jobs, out, stack
        self.env: dict | None = None  # the commands' environment, once one is to run
        self.finished: queue.Queue = queue.Queue()  # (stage, exit status) from the command threads
        self.procs: dict = {}  # stage -> its command's Popen, while it runs
        self.print_lock = threading.Lock()
        self.stopping = False
        self.started = time.monotonic()
        self.total = 0  # stages in the plan
        self.counted = 0  # stages begun, skipped or restored so far
        self.outcome = collections.Counter()  # "ran", "restored", "unchanged" (a data source: checked)

    def _place(self) -> str:
        self.counted += 1
        return f"stage {self.counted} of {self.total}"

    def summary(self) -> str:
        took = f"{time.monotonic() - self.started:.1f} s"
        if not self.outcome["ran"] and not self.outcome["restored"]:
            return f"{self.total} stages unchanged: Data and pipelines are up to date ({took})."
        parts = [f"{n} {what}" for what, n in (("ran", self.outcome["ran"]),
                 ("restored from the run cache", self.outcome["restored"]),
                 ("unchanged", self.outcome["unchanged"])) if n]
        return f"{self.total} stages: {', '.join(parts)}; {took} in all."

    def say(self, line: str) -> None:
        with self.print_lock:
            self.out.write(line + "\n")
            self.out.flush()

    def run(self) -> int:
        from dvc.exceptions import DvcException
        from dvc.repo import Repo, lock_repo
        from dvc.repo.reproduce import collect_stages, get_active_graph, plan_repro

        here = os.getcwd()
        os.chdir(self.root)  # DVC's paths (targets, `git add`) are relative to it, as under its CLI
        try:
            repo = Repo(".", _wait_for_lock=True)
        except DvcException as exc:
            os.chdir(here)
            self.say(f"error: {exc}")
            return 1
        try:
            _read_git_index_once(repo.scm)
            _collect_stage_files_above_sessions()
            _parse_params_once_per_version()
            with lock_repo(repo), repo.scm_context:
                graph = get_active_graph(repo.index.graph)
                plan = plan_repro(graph, collect_stages(repo, ["dvc.yaml"]))
                self.total = len(plan)
                return self._run_plan(repo, graph, plan)
        except DvcException as exc:  # e.g. an output missing after its command, a broken dvc.yaml
            self.say(f"error: {exc}")
            return 1
        finally:
            repo.close()
            os.chdir(here)

    def _run_plan(self, repo, graph, plan: list) -> int:
        in_plan = set(plan)
        upstream = {s: [u for u in graph.successors(s) if u in in_plan] for s in plan}
        ahead = _path_ahead(plan, graph, _cost(self.root))
        locks = _Locks(repo, plan)
        waiting = list(plan)
        done: set = set()
        failed: tuple | None = None
        try:
            while waiting or self.procs:
                while not failed and len(self.procs) < self.jobs:
                    ready = [s for s in waiting if all(u in done for u in upstream[s])]
                    if not ready:
                        break
                    stage = max(ready, key=lambda s: ahead[s])
                    waiting.remove(stage)
                    if not self._start(repo, stage, upstream[stage], locks):
                        done.add(stage)  # skipped, restored, or a data source: nothing runs
                if not self.procs:
                    break
                batch = [self._next_finished()]
                while not self.finished.empty():
                    batch.append(self.finished.get())
                repo._reset()  # as dvc.stage.run's unlocked_repo after a command: e.g. git's view of .gitignore
                for stage, code in batch:
                    self.procs.pop(stage)
                    if code == 0 and not self.stopping:
                        self._record(stage, locks)
                        self.outcome["ran"] += 1
                        done.add(stage)
                    elif not failed:
                        failed = (stage, code)
                        self._stop()
                locks.write()
        except BaseException:  # Ctrl-C or SIGTERM (the CLI raises it), or DVC refusing a step
            self._stop()
            self._drain()
            locks.write(final=True)
            raise
        locks.write(final=True)
        self.say(self.summary())
        if failed:
            stage, code = failed
            self.say(f"error: failed to reproduce '{stage.addressing}': its command exited with {code}; "
                     "stopped the other stages")
            return code if code > 0 else 1
        return 0

    def _start(self, repo, stage, upstream: list, locks: _Locks) -> bool:
        """Begin `stage` as Stage.reproduce would; True if its command now runs."""
        from dvc.stage import PipelineStage
        from dvc.stage.cache import RunCacheNotFoundError

        if not (isinstance(stage, PipelineStage) and stage.cmd and not stage.frozen):
            self._place()
            changed = stage.reproduce(force=self.force, upstream=upstream)  # no command of ours runs
            if changed and isinstance(stage, PipelineStage):
                locks.add(stage)
            elif changed:
                stage.dump(update_pipeline=False)
            self.outcome["ran" if changed and isinstance(stage, PipelineStage) else "unchanged"] += 1
            return False
        if not self.force and not stage.changed(upstream=upstream):
            self.outcome["unchanged"] += 1
            self.say(f"Stage '{stage.addressing}' didn't change, skipping ({self._place()})")
            return False
        stage.remove_outs(ignore_remove=False, force=False)
        if not self.force:
            try:
                repo.stage_cache.restore(stage)
                self._record(stage, locks)
                self.outcome["restored"] += 1
                self.say(f"({self._place()}: '{stage.addressing}' restored)")
                return False
            except RunCacheNotFoundError:
                stage.save_deps()
        locks.write()  # a command sees every stage finished before it in dvc.lock, as under `dvc repro`
        if self.env is None:
            # One warm server for every stage command of the run (mobitrace.warm):
            # its forks skip Python's start and the libraries' imports. Started
            # with the first command: a run with nothing to do needs none.
            self.env = self.stack.enter_context(warm.running({**os.environ, "PYTHONUNBUFFERED": "1"}, cwd=self.root))
        self.procs[stage] = None  # running from now on: its thread starts the command
        threading.Thread(target=self._command, args=(stage, self._place()), daemon=True).start()
        return True

    def _next_finished(self) -> tuple:
        while True:  # a timeout, so that Ctrl-C and SIGTERM reach this thread while it waits
            try:
                return self.finished.get(timeout=1.0)
            except queue.Empty:
                pass

    def _command(self, stage, place: str) -> None:
        """The stage's command lines, one after the other, as dvc.stage.run
        runs them; its output prefixed by the stage's name, then its time."""
        from dvc.stage.run import _enforce_cmd_list, _make_cmd, get_executable, prepare_kwargs

        code = 1  # until its commands have run
        t0 = time.monotonic()
        heartbeat = _Heartbeat(self.say, stage.addressing, t0)
        try:
            kwargs = prepare_kwargs(stage, run_env=self.env)
            code = 0
            for cmd in _enforce_cmd_list(stage.cmd):
                self.say(f"Running stage '{stage.addressing}' ({place}):\n> {cmd}")
                # Own process group: a stop reaches the command and its children, not us.
                with self.print_lock:
                    if self.stopping:
                        code = -signal.SIGINT
                        break
                    proc = subprocess.Popen(_make_cmd(get_executable(), cmd), stdout=subprocess.PIPE,
                                            stderr=subprocess.STDOUT, text=True, process_group=0, **kwargs)
                    self.procs[stage] = proc
                heartbeat.start()
                for line in proc.stdout:
                    self.say(f"{stage.addressing} | {line.rstrip(chr(10))}")
                code = proc.wait()
                if code != 0:
                    break
        except OSError as exc:  # the shell could not start
            self.say(f"{stage.addressing} | {exc}")
            code = 127
        finally:
            heartbeat.stop()
            try:
                if code == 0:
                    self.say(f"Finished stage '{stage.addressing}' in {time.monotonic() - t0:.1f} s")
            finally:  # whatever else fails (a closed output too), the run hears of this stage
                self.finished.put((stage, code))

    def _record(self, stage, locks: _Locks) -> None:
        """Stage.run's end: hashes (and the run cache) then DVC's cache."""
        no_cache_outs = any(not out.use_cache for out in stage.outs if not (out.is_metric or out.is_plot))
        stage.save(run_cache=not no_cache_outs)
        stage.commit()
        locks.add(stage)

    def _stop(self) -> None:
        """SIGINT to every running command, as Ctrl-C would; SIGTERM after a
        grace (a SIGINT that lands while the shell forks is lost)."""
        with self.print_lock:
            self.stopping = True
            for proc in [p for p in self.procs.values() if p is not None]:
                _signal_group(proc.pid, signal.SIGINT)
                timer = threading.Timer(STOP_GRACE_S, _signal_group, (proc.pid, signal.SIGTERM))
                timer.daemon = True
                timer.start()

    def _drain(self) -> None:
        while self.procs:
            stage, _ = self._next_finished()
            self.procs.pop(stage, None)


class _Heartbeat:
    """"still running" every HEARTBEAT_S while a command runs (a command's
    own progress lines, e.g. a notebook's, come between)."""

    def __init__(self, say, name: str, t0: float):
        self.say, self.name, self.t0 = say, name, t0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._beat, daemon=True)

    def start(self) -> None:
        if not self.thread.is_alive() and not self.done.is_set():
            self.thread.start()

    def _beat(self) -> None:
        while not self.done.wait(HEARTBEAT_S):
            self.say(f"... '{self.name}' still running ({time.monotonic() - self.t0:.0f} s)")

    def stop(self) -> None:
        self.done.set()


def _collect_stage_files_above_sessions() -> None:
    """DVC finds stage files by walking the whole workspace, every raw file
    included. Below data/raw/<study>/<device>/ every
    stage file is in .dvcignore (data/raw/**/dvc.yaml, dvc.lock,
    data/raw/*/*/*/**/*.dvc), so that walk finds none there: skip those
    folders. A `<session>.dvc` beside them is still found
    (tests/unit/test_repro_runner.py)."""
    from dvc.repo import index as dvc_index

    full = getattr(dvc_index.collect_files, "__wrapped__", dvc_index.collect_files)

    def collect_files(repo, onerror=None):
        walk = repo.dvcignore.walk
        raw = os.path.join(repo.root_dir, "data", "raw")

        def pruned(fs, path, **kwargs):
            for root, dirs, files in walk(fs, path, **kwargs):
                rel = os.path.relpath(root, raw)
                if not rel.startswith(os.pardir) and rel != os.curdir and len(rel.split(os.sep)) == 2:
                    dirs[:] = []  # session folders: only ignored stage files below
                yield root, dirs, files

        own = vars(repo.dvcignore).copy()
        repo.dvcignore.walk = pruned
        try:
            yield from full(repo, onerror)
        finally:
            if "walk" in own:
                repo.dvcignore.walk = own["walk"]
            else:
                del repo.dvcignore.walk

    collect_files.__wrapped__ = full
    dvc_index.collect_files = collect_files


def _parse_params_once_per_version() -> None:
    """DVC parses params.yaml for each stage that names a parameter: here once per version of the file (its inode, size and
    mtime, as DVC's own state keys a file), each caller getting its own copy."""
    import copy

    from dvc.dependency import param

    full = getattr(param.load_path, "__wrapped__", param.load_path)
    parsed: dict = {}

    def load_path(path, fs, **kwargs):
        if getattr(fs, "protocol", None) != "local" or kwargs:
            return full(path, fs, **kwargs)
        try:
            st = os.stat(path)
        except OSError:
            return full(path, fs, **kwargs)
        key = (os.path.abspath(path), st.st_ino, st.st_size, st.st_mtime_ns)
        if key not in parsed:
            parsed[key] = full(path, fs)
        return copy.deepcopy(parsed[key])

    load_path.__wrapped__ = full
    param.load_path = load_path


def _read_git_index_once(scm) -> None:
    """scm.is_tracked answered from one read of .git/index per version of
    the file. DVC asks it for every output it saves (Output.ignore) and
    dulwich reads the whole index each time: ~0.1 s for our 12,000 tracked
    files, ~70 times in a cold build."""
    index = Path(scm.root_dir, ".git", "index")
    if not index.is_file() or not hasattr(scm, "dulwich"):  # a linked worktree, another backend: DVC's way
        return
    seen: dict = {}

    def is_tracked(path: str) -> bool:
        try:
            st = index.stat()
            version = (st.st_mtime_ns, st.st_size, st.st_ino)
        except FileNotFoundError:
            return False
        if version not in seen:
            seen.clear()
            files = [os.fsdecode(p) for p in scm.dulwich.repo.open_index()]
            seen[version] = (set(files), sorted(files))
        files, ordered = seen[version]
        rel = os.path.relpath(path, scm.root_dir).replace(os.sep, "/")
        i = bisect.bisect_left(ordered, rel + "/")  # a file under it, if it is a folder
        return rel in files or (i < len(ordered) and ordered[i].startswith(rel + "/"))
    scm.is_tracked = is_tracked


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:  # every process of the group has ended
        pass


class _Locks:
    """The dvc.lock of each dvc.yaml in the plan, read once and rewritten by
    write() with the stages add()ed since: Lockfile.dump_stages without a
    parse per stage. Only the last write (final) is DVC's own serializer
    (~0.2 s for our 2,700 lines), so the file ends byte for byte as DVC
    writes it, staged by autostage; the writes before it, for the commands
    that read dvc.lock, carry the same data through libyaml (~0.02 s)."""

    def __init__(self, repo, plan: list):
        self.repo, self.plan = repo, plan
        self.files: dict[str, tuple[dict, set]] = {}  # path -> (data, the stage names it had)
        self.pending: list = []
        self.unfinished: set[str] = set()  # paths whose last write was not DVC's

    def add(self, stage) -> None:
        self.pending.append(stage)

    def write(self, final: bool = False) -> None:
        from dvc.stage import PipelineStage
        from dvc.stage.serialize import to_lockfile

        by_file: dict[str, list] = {}
        modified_now: set[str] = set()
        for stage in self.pending:
            by_file.setdefault(stage.dvcfile._lockfile.path, []).append(stage)
        self.pending = []
        for path, stages in by_file.items():
            if path not in self.files:
                data = (safe_yaml(Path(path).read_text()) if os.path.exists(path) else None) or {}
                self.files[path] = (data, set(data.get("stages", {})))
            data, had = self.files[path]
            if not data:
                data["schema"] = "2.0"  # first, as DVC writes it
            entries = data.setdefault("stages", {})
            modified = False
            for stage in stages:
                entry = to_lockfile(stage)
                modified = modified or entries.get(stage.name, {}) != entry[stage.name]
                entries.update(entry)
            if modified:
                names = [s.name for s in self.plan if isinstance(s, PipelineStage)]
                for name in [n for n in names if n in entries and n not in had]:
                    entries[name] = entries.pop(name)  # new ones in the plan's order
                modified_now.add(path)
        self.unfinished |= modified_now
        for path in sorted(self.unfinished if final else modified_now):
            with open(path, "w", encoding="utf-8") as f:
                f.write(_dump(self.files[path][0], final))
            if final:
                self.repo.scm_context.track_file(os.path.relpath(path))  # as Lockfile.dump_stages
        if final:
            self.unfinished.clear()


def _dump(data: dict, as_dvc: bool) -> str:
    from dvc.utils.serialize._yaml import dumps_yaml

    if as_dvc:
        return dumps_yaml(data)
    return yaml.dump(data, Dumper=_LibyamlDumper, sort_keys=False, allow_unicode=True)


class _LibyamlDumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):
    """yaml's safe dumper (libyaml's if built), taking to_lockfile's OrderedDicts as mappings."""


_LibyamlDumper.add_representer(collections.OrderedDict, lambda d, v: d.represent_dict(v.items()))


def _cost(root: Path):
    """A stage's expected time: its command's last wall time (a command
    never timed: the mean of those that were), plus the runner's own work."""
    took = timings.load(root)
    known = [v["wall_s"] for v in took.values()]
    default = sum(known) / len(known) if known else 1.0

    def cost(stage) -> float:
        cmds = stage.cmd if isinstance(stage.cmd, list) else [stage.cmd] if stage.cmd else []
        return sum(took.get(c, {}).get("wall_s", default) for c in cmds) + DVC_PER_STAGE_S
    return cost


def _path_ahead(plan: list, graph, cost) -> dict:
    """Each stage's cost plus the costliest chain of plan stages that
    depend on it (its "bottom level": list scheduling starts the longest
    first)."""
    ahead: dict = {}
    in_plan = set(plan)
    for stage in reversed(plan):  # plan_repro: every stage after the stages it depends on
        after = [ahead[d] for d in graph.predecessors(stage) if d in in_plan]
        ahead[stage] = cost(stage) + max(after, default=0.0)
    return ahead


class _DvcLog:
    """DVC's messages (a stage restored from the run cache, a data source
    checked, a warning) to `out`, in place of DVC's own handlers (stdout,
    stderr) for the run."""

    def __init__(self, out):
        self.handler = logging.StreamHandler(out)
        self.handler.setFormatter(logging.Formatter("%(message)s"))
        self.logger = logging.getLogger("dvc")

    def __enter__(self):
        import dvc.repo  # noqa: F401  (DVC adds its handlers at import)

        self.saved = (self.logger.level, self.logger.handlers[:])
        self.logger.handlers[:] = [self.handler]
        self.logger.setLevel(logging.INFO)

    def __exit__(self, *exc):
        self.logger.setLevel(self.saved[0])
        self.logger.handlers[:] = self.saved[1]

"""A clone-like copy of the repository, built once by a cold build (`python
-m mobitrace repro`, what `make` runs) and shared by every end-to-end test:
the pipeline, browser, add-device, new-study and payload tests read it or
work in a copy of it (a copy is seconds; a cold build is minutes).

The build starts in the background as soon as the tests are collected
(tests/conftest.py calls start_background_builds), so the unit tests run
meanwhile; the end-to-end tests run last and wait for it. Under
pytest-xdist (`make test` runs `pytest -n <cores + 1>`) the workers share one
build: whoever takes the file lock in the run's common temporary folder
builds, the others wait and reuse it. Every command run in the shared clone,
and every copy taken of it, holds that lock, so no copy sees a half-written
DVC state.

The determinism checks compare this build with the one whose dvc.lock is
committed (another run, on another day or machine), file by file
(committed_digests)."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml

BIN = Path(sys.executable).parent  # the venv's bin: dvc, jupyter-book, python
# What `make` runs: `dvc repro` with independent stages side by side (mobitrace.repro),
# the clone's own runner (PYTHONPATH); the copies rebuild with it too. Plain
# `dvc repro` rebuilds stages in test_pipeline (whose forks' bytes it checks)
# and in test_add_device's fresh clone, so both paths stay tested.
REPRO = [sys.executable, "-m", "mobitrace", "repro"]


def env():
    e = dict(os.environ)
    e["PATH"] = f"{BIN}{os.pathsep}{e.get('PATH', '')}"
    e["DVC_NO_ANALYTICS"] = "1"
    e.setdefault("GIT_AUTHOR_NAME", "mobitrace-test")
    e.setdefault("GIT_AUTHOR_EMAIL", "test@localhost")
    e.setdefault("GIT_COMMITTER_NAME", "mobitrace-test")
    e.setdefault("GIT_COMMITTER_EMAIL", "test@localhost")
    return e


RUNNING: set[subprocess.Popen] = set()  # ended by stop_background_builds on Ctrl-C


def run(args, cwd, environ=None):
    with subprocess.Popen(args, cwd=cwd, env=environ or env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True) as proc:
        RUNNING.add(proc)
        try:
            out, err = proc.communicate()
        finally:
            RUNNING.discard(proc)
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(args)} failed ({proc.returncode}):\n{out}\n{err}")
    return out + err


def _tracked_files(repo: Path) -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         cwd=repo, capture_output=True, text=True, check=True).stdout
    return [f for f in out.split("\0") if f and (repo / f).is_file()]


def digest_tree(root: Path, rels, gitignores: bool = True) -> dict:
    """md5 of every file under root/<rel> for each rel (without the
    .gitignore files DVC writes, if not `gitignores`)."""
    out = {}
    for rel in rels:
        for p in sorted((root / rel).rglob("*")):
            if p.is_file() and (gitignores or p.name != ".gitignore"):
                out[p.relative_to(root).as_posix()] = hashlib.md5(p.read_bytes()).hexdigest()
    return out


def committed_digests(clone: Path, rels) -> dict:
    """{file: md5} of every output under clone/<rel> that the committed
    dvc.lock (HEAD's) pins: a file's own md5, a folder's files' through its
    listing in the clone's DVC cache (there only if the build made the same
    folder; else one entry says which folder differs)."""
    lock = yaml.safe_load(subprocess.run(["git", "show", "HEAD:dvc.lock"], cwd=clone, capture_output=True,
                                         text=True, check=True).stdout)
    cache = clone / ".dvc" / "cache" / "files" / "md5"
    out = {}
    for stage in lock["stages"].values():
        for o in stage.get("outs", []):
            path, md5 = o["path"], o["md5"]
            if not any(path == rel or path.startswith(rel.rstrip("/") + "/") for rel in rels):
                continue
            if not md5.endswith(".dir"):
                out[path] = md5
            elif (cache / md5[:2] / md5[2:]).is_file():
                out.update({f"{path}/{e['relpath']}": e["md5"]
                            for e in json.loads((cache / md5[:2] / md5[2:]).read_text())})
            else:
                out[f"{path}/"] = f"the committed folder {md5}, which this build did not make"
    return out


@contextlib.contextmanager
def _flock(path: Path, blocking: bool = True):
    """An exclusive flock on `path` (yields False if not blocking and busy)."""
    with open(path, "a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


class Built:
    """The shared built clone: its path, the cold build's log, the lock."""

    def __init__(self, shared: Path):
        self.root = shared / "built"
        self.clone, self.tools = self.root / "repo", self.root / "bin"
        self.log_file = self.root / "repro.log"
        self.lock_path = shared / "built.lock"
        # The pipeline sees the venv and git only on PATH (no capture tool:
        # iperf3, ethtool, ip or tc) and imports the clone's own package.
        self.env = self.env_for(self.clone)

    def env_for(self, clone: Path) -> dict:
        # MOBITRACE_WARM_LOG: what the runner's warm server forked (test_pipeline checks it).
        return {**env(), "PATH": f"{BIN}{os.pathsep}{self.tools}", "MPLBACKEND": "Agg",
                "PYTHONPATH": str(clone / "src"), "MOBITRACE_WARM_LOG": str(clone.parent / "warm.log")}

    @property
    def log(self) -> str:
        return self.log_file.read_text()

    def lock(self):
        return _flock(self.lock_path)

    def run(self, args) -> str:
        """A command in the shared clone (under the lock: DVC locks its repository)."""
        with self.lock():
            return run(args, self.clone, self.env)

    def second_repro(self) -> str:
        """The output of `dvc repro` run once more in the built clone, where
        nothing changed since the build; run once per test run (the first
        test to ask, on any worker), its output kept for every test that reads it."""
        log = self.root / "second-repro.log"
        with self.lock():
            if not log.exists():
                log.write_text(run(["dvc", "repro"], self.clone, self.env))
        return log.read_text()

    def copy(self, dest: Path) -> Path:
        """A private copy of the built clone (with its DVC cache), to change
        (`cp -a`: 1.6 s for its 12,900 files, shutil.copytree 2.7 s)."""
        dest.parent.mkdir(parents=True, exist_ok=True)
        with self.lock():
            subprocess.run(["cp", "-a", str(self.clone), str(dest)], check=True)
        return dest

    def build(self, repo: Path) -> None:
        """The cold build, unless done; call with the lock held."""
        if self.log_file.exists():
            return
        if self.root.exists():  # a build that failed half-way
            shutil.rmtree(self.root)
        for name in _tracked_files(repo):
            dst = self.clone / name
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(repo / name, dst)
        self.tools.mkdir()
        (self.tools / "git").symlink_to(shutil.which("git"))
        run(["git", "init", "-q", "-b", "main"], self.clone)
        run(["git", "add", "-A"], self.clone)
        run(["git", "commit", "-q", "-m", "snapshot"], self.clone)
        log = run(REPRO, self.clone, self.env)
        self.log_file.write_text(log)


# The end-to-end xdist units (group, or test module) that take longest after
# the shared build, longest first (`--durations`: the byod rebuild and its
# fresh clone, Lighthouse, the phone checks, the new study's rebuild and its
# tests, the run cache's push and pull). The scheduler (tests/conftest.py)
# hands them out first, so that the last minutes are not one long unit
# alone; the others follow in collection order.
LONGEST_FIRST = ("byod", "tests/e2e/test_lighthouse.py", "test_phone_reading", "test_new_study",
                 "tests/e2e/test_run_cache.py", "test_browser", "test_capture_is_data")


def e2e_rank(scope: str) -> int:
    """An xdist unit's place in LONGEST_FIRST (a test module's units by its path), after it if not there."""
    return next((i for i, name in enumerate(LONGEST_FIRST) if scope == name or scope.startswith(name + "::")),
                len(LONGEST_FIRST))


def shared_dir(tmp_path_factory) -> Path:
    """The temporary folder all xdist workers of this run share (the run's own without xdist)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def start_background_builds(session, repo: Path) -> None:
    """Start the cold build in a thread, when a selected test needs it and
    no other worker has started it. Errors are not raised here: the fixtures
    then build in the foreground and fail with the command's output."""
    if session.config.option.collectonly:
        return
    names = set().union(*(item.fixturenames for item in session.items)) if session.items else set()
    if os.environ.get("MOBITRACE_BOOK_HTML"):
        names.discard("site")
    if not names & {"built", "built_tree", "site"}:
        return
    built = Built(shared_dir(session.config._tmp_path_factory))

    def work(build_lock):
        try:
            with build_lock:
                built.build(repo)
        except Exception:  # noqa: BLE001  (the fixtures redo it and report)
            pass

    build_lock = _flock(built.lock_path, blocking=False)
    if not build_lock.__enter__():  # another worker builds
        build_lock.__exit__(None, None, None)
        return
    held = contextlib.ExitStack()
    held.push(build_lock)
    threading.Thread(target=work, args=(held,), daemon=True, name="e2e-build").start()


def stop_background_builds(interrupted: bool) -> None:
    """At the end of the session: wait for a background build this process
    started (a worker that quit would kill it, and another would start over),
    or, after Ctrl-C, end its commands."""
    for thread in threading.enumerate():
        if thread.name == "e2e-build":
            if interrupted:
                for proc in list(RUNNING):
                    proc.terminate()
            thread.join()


@pytest.fixture(scope="session")
def built_tree(repo, tmp_path_factory) -> Built:
    """A copy of the working tree's tracked and new files, as on a fresh clone,
    after a cold build (`python -m mobitrace repro`); built once per run."""
    built = Built(shared_dir(tmp_path_factory))
    with built.lock():
        built.build(repo)
    return built


@pytest.fixture(scope="session")
def built(built_tree):
    """(clone, log) of the shared cold build. Read it; change only a copy
    (Built.copy) and run commands in it through Built.run."""
    return built_tree.clone, built_tree.log


@pytest.fixture(scope="session")
def byod(built_tree, tmp_path_factory):
    """(copy, outputs of book/byod.md's commands, rebuild log): a copy of the
    built clone with test_payload_escaping's device and test_add_device's
    devices registered, rebuilt once for both modules (one xdist group)."""
    from .test_add_device import register_devices
    from .test_payload_escaping import register_payload_device
    work = built_tree.copy(tmp_path_factory.mktemp("byod") / "repo")
    register_payload_device(work, tmp_path_factory.mktemp("capture"))  # first: under the default threshold, to git
    outputs = register_devices(work)
    return work, outputs, run(REPRO, work)

"""`python -m mobitrace <args>` as a fork of one server process that has
imported mobitrace and validated a capture once (multiprocessing's
forkserver, preloading tests/unit/_add_device_warm.py): a new process per
run, with its own cwd, environment, stdout and stderr, that a real signal
kills, without an interpreter start and the imports each time."""

from __future__ import annotations

import itertools
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

from tests import ROOT

_SERVER = None
_RUNS = itertools.count()  # each run's own stdout and stderr files


def env(**extra) -> dict:
    """The environment of a run: ours without MOBITRACE_* settings, plus `extra`."""
    out = {k: v for k, v in os.environ.items() if not k.startswith("MOBITRACE_")}
    out["PYTHONPATH"] = str(ROOT / "src")
    out.update(extra)
    return out


def _cli_in_child(cwd: str, args: list[str], environ: dict, out: str, err: str) -> None:
    """`python -m mobitrace <args>` in a forked child: its own cwd, environment,
    stdout and stderr files; exits with main()'s status (or is killed)."""
    import tempfile

    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(environ)
    tempfile.tempdir = None  # the server's cached one: a TMPDIR in `environ` counts, as in a new process
    for fd, path in ((1, out), (2, err)):
        with open(path, "wb") as fh:
            os.dup2(fh.fileno(), fd)
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115  (as a real process's streams)
    sys.stderr = open(2, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    from mobitrace.cli import main
    sys.exit(main(args))


def start(cwd: Path, *args: str, logs: Path | None = None, **extra_env) -> tuple:
    """Start `mobitrace <args>` in `cwd` (stdout and stderr to files in `logs`,
    default beside `cwd`); see `wait`."""
    global _SERVER
    if _SERVER is None:
        _SERVER = multiprocessing.get_context("forkserver")
        _SERVER.set_forkserver_preload(["tests.unit._add_device_warm"])
    n = next(_RUNS)
    logs = logs or cwd.parent
    out, err = logs / f"{cwd.name}.{n}.out", logs / f"{cwd.name}.{n}.err"
    proc = _SERVER.Process(target=_cli_in_child, args=(str(cwd), list(args), env(**extra_env), str(out), str(err)))
    proc.start()
    return proc, args, out, err


def wait(run: tuple, timeout: float = 600) -> subprocess.CompletedProcess:
    """How a started run ended: its exit status (-signal if killed), stdout and stderr."""
    proc, args, out, err = run
    proc.join(timeout)
    if proc.exitcode is None:
        proc.kill()
        proc.join()
        raise AssertionError(f"mobitrace {' '.join(args)} did not finish in {timeout} s")
    return subprocess.CompletedProcess(args, proc.exitcode, out.read_text(), err.read_text())


def run(cwd: Path, *args: str, logs: Path | None = None, **extra_env) -> subprocess.CompletedProcess:
    """`mobitrace <args>` in `cwd`, to its end."""
    return wait(start(cwd, *args, logs=logs, **extra_env))

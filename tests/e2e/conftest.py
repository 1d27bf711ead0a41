"""A clone-like copy of the repository, built once by a cold `dvc repro` and
shared by the pipeline and browser tests."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent  # the venv's bin: dvc, jupyter-book, python


def env():
    e = dict(os.environ)
    e["PATH"] = f"{BIN}{os.pathsep}{e.get('PATH', '')}"
    e["DVC_NO_ANALYTICS"] = "1"
    e.setdefault("GIT_AUTHOR_NAME", "mobitrace-test")
    e.setdefault("GIT_AUTHOR_EMAIL", "test@localhost")
    e.setdefault("GIT_COMMITTER_NAME", "mobitrace-test")
    e.setdefault("GIT_COMMITTER_EMAIL", "test@localhost")
    return e


def run(args, cwd):
    done = subprocess.run(args, cwd=cwd, env=env(), capture_output=True, text=True)
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done.stdout + done.stderr


def _tracked_files(repo: Path) -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         cwd=repo, capture_output=True, text=True, check=True).stdout
    return [f for f in out.split("\0") if f and (repo / f).is_file()]


@pytest.fixture(scope="session")
def built(repo, tmp_path_factory):
    """(clone, log): a copy of the working tree's tracked and new files after
    a cold `dvc repro`, as on a fresh clone."""
    clone = tmp_path_factory.mktemp("clone") / "repo"
    for name in _tracked_files(repo):
        dst = clone / name
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(repo / name, dst)
    run(["git", "init", "-q", "-b", "main"], clone)
    run(["git", "add", "-A"], clone)
    run(["git", "commit", "-q", "-m", "snapshot"], clone)
    log = run(["dvc", "repro"], clone)
    return clone, log

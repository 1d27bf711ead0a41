"""`make` fetches the DVC-kept captures a clone lacks before any stage runs
(scripts/pull_captures.py): it says which it fetched, or fails with
one line naming the capture and the remote; it creates a missing local
remote folder."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.waits, pytest.mark.xdist_group("test_pull_captures")]  # tests/conftest.py

from tests import ROOT
SCRIPT = ROOT / "scripts" / "pull_captures.py"
SMOKE = ROOT / "tests" / "fixtures" / "captures" / "cpu-gbps" / "smoke-test" / "20261122T025322Z"
CAP = f"data/raw/cpu-gbps/synthetic-big/{SMOKE.name}"


def _run(project: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=project, capture_output=True, text=True)


@pytest.fixture(scope="module")
def pushed_template(tmp_path_factory) -> Path:
    """A folder holding `project`, a git + DVC project whose one capture is
    kept in DVC, and `store`, the remote it was pushed to (../store from the
    project); the capture and the DVC cache then deleted. Made once: four
    DVC commands."""
    base = tmp_path_factory.mktemp("pushed")
    project = base / "project"
    shutil.copytree(SMOKE, project / CAP)
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    for args in (["init", "-q"], ["remote", "add", "-d", "store", "../store"], ["add", "-q", CAP],
                 ["push", "-q", CAP + ".dvc"]):
        assert _run(project, "-m", "dvc", *args).returncode == 0, args
    shutil.rmtree(project / CAP)
    shutil.rmtree(project / ".dvc" / "cache")
    return base


@pytest.fixture
def pushed(pushed_template, tmp_path) -> Path:
    """A copy of pushed_template in tmp_path: tmp_path/project, its remote tmp_path/store."""
    for name in ("project", "store"):
        shutil.copytree(pushed_template / name, tmp_path / name, symlinks=True)
    return tmp_path / "project"


def test_a_missing_capture_is_fetched_and_named(pushed):
    done = _run(pushed, str(SCRIPT))
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"fetched capture {CAP} from DVC remote 'store' ({pushed.parent / 'store'})\n"
    assert (pushed / CAP / "manifest.yaml").read_bytes() == (SMOKE / "manifest.yaml").read_bytes()
    again = _run(pushed, str(SCRIPT))
    assert (again.returncode, again.stdout, again.stderr) == (0, "", "")


def test_a_capture_the_remote_lacks_is_one_line_and_exit_1(pushed, tmp_path):
    shutil.rmtree(tmp_path / "store")
    done = _run(pushed, str(SCRIPT))
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(f"error: capture {CAP} could not be fetched "
                                                                   f"from DVC remote 'store' ({tmp_path / 'store'}): "
                                                                   "the remote does not have it; nothing was built")
    assert done.stdout == f"created the DVC remote 'store' folder {tmp_path / 'store'}\n"  # as `make` in a fresh clone
    assert not (pushed / CAP).exists()

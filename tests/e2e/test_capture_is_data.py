"""A capture is data, never code, end to end: in a copy of the built
repository, a command is planted in a capture of every study through every
door DVC has (a dvc.yaml stage, a legacy .dvc with a cmd, an import .dvc).
add-device refuses each capture; the real `make` then runs on whatever it let
through and the command never runs. Planted straight into data/raw (a user
unpacking a stranger's archive there), `make` refuses to build in one line,
and plain `dvc repro` does not even see the stage files inside a session."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mobitrace.studies import registry

from .conftest import BIN

# One worker makes the module fixture once (tests/unit/test_xdist_groups.py).
pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("test_capture_is_data")]

STUDIES = [s.slug for s in registry.studies()]


def doors(canary: Path) -> dict[str, tuple[str, str]]:
    """door -> (path relative to a session, or '../x' for the device folder; content)."""
    return {
        "dvc.yaml": ("dvc.yaml", f"stages:\n  evil:\n    cmd: touch {canary}-stage\n"),
        "legacy .dvc with cmd": ("legacy.dvc", f"cmd: touch {canary}-legacy\nouts:\n- path: out\n"),
        "import .dvc": ("../imported.dvc", f"frozen: false\ndeps:\n- path: {canary.parent}/secret\n"
                                           "outs:\n- path: imported\n"),
    }


def first_session(repo: Path, study: str) -> Path:
    device = sorted(p for p in (repo / "data" / "raw" / study).iterdir() if p.is_dir())[0]
    return sorted(p for p in device.iterdir() if p.is_dir())[0]


def make(repo: Path, env: dict) -> subprocess.CompletedProcess:
    """The Makefile's own `repro` target, with the test's venv as the copy's .venv."""
    return subprocess.run([shutil.which("make"), "-o", ".venv/.installed", "repro"], cwd=repo, env=env,
                          capture_output=True, text=True)


@pytest.fixture(scope="module")
def work(built_tree, tmp_path_factory):
    repo = built_tree.copy(tmp_path_factory.mktemp("capture-is-data") / "repo")
    (repo / ".venv").symlink_to(BIN.parent)
    return repo, built_tree.env_for(repo)


def test_add_device_refuses_every_door_and_make_runs_nothing_planted(work, tmp_path):
    repo, env = work
    canary = tmp_path / "PWNED"
    params = (repo / "params.yaml").read_bytes()
    for study in STUDIES:
        for door, (rel, content) in doors(canary).items():
            device = tmp_path / "captures" / study / door.replace(" ", "-") / "evil-device"
            shutil.copytree(first_session(repo, study), device / "s1")
            (device / "s1" / rel).resolve().write_text(content)
            upload = device if rel.startswith("..") else device / "s1"  # a device-level file comes with its folder
            done = subprocess.run([sys.executable, "-m", "mobitrace", "add-device", str(upload), "--device", "evil"],
                                  cwd=repo, env=env, capture_output=True, text=True)
            assert done.returncode == 2, (study, door, done.stdout, done.stderr)
            lines = done.stderr.strip().splitlines()
            assert len(lines) == 1 and Path(rel).name in lines[0], (study, door, lines)
    assert (repo / "params.yaml").read_bytes() == params
    assert not any((repo / "data" / "raw" / s / "evil").exists() for s in STUDIES)
    done = make(repo, env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert not list(tmp_path.glob("PWNED*")), "a planted command ran"


@pytest.mark.parametrize("door", ["dvc.yaml", "legacy .dvc with cmd", "import .dvc"])
def test_make_refuses_a_data_raw_with_a_planted_command(work, tmp_path, door):
    repo, env = work
    canary = tmp_path / "PWNED"
    rel, content = doors(canary)[door]
    planted = []
    for study in STUDIES:
        target = (first_session(repo, study) / rel).resolve()
        target.write_text(content)
        planted.append(target)
    try:
        done = make(repo, env)
        assert done.returncode != 0
        errors = [ln for ln in done.stderr.splitlines() if ln.startswith("error:")]
        assert len(errors) == 1 and str(planted[0].relative_to(repo)) in errors[0], done.stderr
        assert "Traceback" not in done.stderr
        assert not list(tmp_path.glob("PWNED*")), "a planted command ran"
        if door == "dvc.yaml":  # plain `dvc repro`: DVC does not see a stage file inside a capture
            stages = subprocess.run([str(BIN / "dvc"), "stage", "list", "--all", "--name-only"], cwd=repo, env=env,
                                    capture_output=True, text=True)
            assert stages.returncode == 0, stages.stderr
            assert not [s for s in stages.stdout.split() if s.startswith("data/raw")], stages.stdout
    finally:
        for target in planted:
            target.unlink()

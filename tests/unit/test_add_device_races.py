"""add-device run many times at once, and checks that were skipped: every
concurrent add lands or is refused in one line, no temporary file is left,
--append matches hosts only when both sides record one, and stack-trim's run
ids stay unique across a device's sessions."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from mobitrace import devices
from mobitrace.core.errors import InputError
from tests import ROOT
from tests.unit import _forked_cli as forked_cli

pytestmark = pytest.mark.waits  # processes that mostly wait on each other's lock

SMOKE = ROOT / "tests" / "fixtures" / "captures" / "cpu-gbps" / "smoke-test" / "20261122T025322Z"
STACK_TRIM = ROOT / "data" / "raw" / "stack-trim" / "vm-2core" / "s20261125T022842"


def _start(project: Path, *args: str) -> tuple:
    """add-device in its own process (a fork of a warm server: tests/unit/_forked_cli.py)."""
    (project / "dvc.yaml").touch()  # what the CLI finds the project by
    return forked_cli.start(project, "add-device", *args)


def _listed(project: Path) -> list[str]:
    return yaml.safe_load((project / "params.yaml").read_text())["cpu-gbps-measured"]["devices"]


def test_six_adds_at_once_all_land(scratch_project):
    before = _listed(scratch_project)
    names = [f"synthetic-race-{i}" for i in range(6)]
    procs = [_start(scratch_project, str(SMOKE), "--device", name) for name in names]
    results = [(done.returncode, done.stderr) for done in map(forked_cli.wait, procs)]
    assert [code for code, _ in results] == [0] * 6, results
    after = _listed(scratch_project)
    assert after[:len(before)] == before and sorted(after[len(before):]) == names
    assert not list(scratch_project.glob(".params.yaml*")), "a temporary file was left"
    assert not [p for p in (scratch_project / "data" / "raw").iterdir() if p.name.startswith(".staging-")]


def test_one_name_four_times_at_once_lands_once_and_the_rest_are_refused_in_one_line(scratch_project):
    procs = [_start(scratch_project, str(SMOKE), "--device", "synthetic-same") for _ in range(4)]
    results = [(done.returncode, done.stderr) for done in map(forked_cli.wait, procs)]
    assert sorted(code for code, _ in results) == [0, 2, 2, 2], results
    for code, err in results:
        if code:
            lines = err.strip().splitlines()
            assert len(lines) == 1 and "a device name not yet registered" in lines[0], err
    assert _listed(scratch_project).count("synthetic-same") == 1
    assert not list(scratch_project.glob(".params.yaml*"))


def test_append_without_host_metadata_is_refused(tmp_path, scratch_project):
    devices.add_device(SMOKE, "synthetic-host", root=scratch_project)
    second = tmp_path / "second"
    shutil.copytree(SMOKE, second)
    manifest = second / "manifest.yaml"
    doc = yaml.safe_load(manifest.read_text())
    doc.pop("host")
    doc["session"] = "second"
    manifest.write_text(yaml.safe_dump(doc, sort_keys=False))
    with pytest.raises(InputError) as exc:
        devices.add_device(second, "synthetic-host", root=scratch_project, append=True)
    assert "field 'host'" in str(exc.value)


def _first_runs(src: Path, dest: Path, n: int = 3) -> None:
    """The session `src` cut to its first `n` runs (runs.csv and run folders): the check is across sessions."""
    lines = (src / "runs.csv").read_text().splitlines(keepends=True)[: n + 1]
    (dest / "runs").mkdir(parents=True)
    shutil.copy(src / "manifest.yaml", dest / "manifest.yaml")
    (dest / "runs.csv").write_text("".join(lines))
    for line in lines[1:]:
        run = line.split(",")[0]
        shutil.copytree(src / "runs" / run, dest / "runs" / run)


def test_two_stack_trim_sessions_repeating_a_run_id_are_refused_by_validate_naming_both(tmp_path):
    device = tmp_path / "stack-trim" / "synthetic-dup"
    _first_runs(STACK_TRIM, device / "a1")
    _first_runs(STACK_TRIM, device / "a2")
    for name in ("a1", "a2"):
        manifest = device / name / "manifest.yaml"
        manifest.write_text(manifest.read_text().replace("session: s20261125T022842", f"session: {name}")
                            .replace("device: vm-2core", "device: synthetic-dup"))
    _, problems = devices.validate(device)
    assert len(problems) == 1
    message = str(problems[0])
    assert message.startswith(f"{device / 'a2' / 'runs.csv'}: line 2: field 'run_id': ")
    assert "(session a1 has it too;" in message

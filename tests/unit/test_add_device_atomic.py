"""add-device is atomic and validate leaves nothing behind.

`MOBITRACE_KILL_AT=N` makes add-device SIGKILL itself at its N-th checkpoint
(mobitrace.devices._checkpoint: staging created, each file copied, session
staged, journal written, device in place, params.yaml written). At every
point the project holds either nothing of the device or the whole device
(an unlisted, moved-in device is rolled back by the next run, which says
so); the retry then registers it, or refuses it as already registered.

Each add-device run of that test is a fork of one server process that has
imported mobitrace once (tests/unit/_forked_cli.py): a new process per run,
killed by a real SIGKILL, without an interpreter start and the imports each
time."""

from __future__ import annotations

import hashlib
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.waits  # run first, beside the shared build (tests/conftest.py)

from tests import ROOT
from tests.unit import _forked_cli as forked_cli
SMOKE = ROOT / "tests" / "fixtures" / "captures" / "cpu-gbps" / "smoke-test" / "20261122T025322Z"
N_FILES = sum(1 for p in SMOKE.rglob("*") if p.is_file())
# staging created, N_FILES files copied, session staged, journal written,
# device in place, params.yaml about to be written, params.yaml written
N_CHECKPOINTS = 1 + N_FILES + 5
KILL_POINTS = sorted({1, 2, 3, N_FILES // 2, N_FILES, *range(N_FILES + 1, N_CHECKPOINTS + 1)})


def _digest(folder: Path) -> str | None:
    if not folder.exists():
        return None
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        h.update(p.relative_to(folder).as_posix().encode() + (b"/" if p.is_dir() else b""))
        if p.is_file():
            h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


def _project(where: Path) -> Path:
    (where / "data" / "raw").mkdir(parents=True)
    for name in ("params.yaml", "dvc.yaml"):
        shutil.copy(ROOT / name, where / name)
    return where


def _state(project: Path, device: str) -> tuple[str | None, bool]:
    listed = device in yaml.safe_load((project / "params.yaml").read_text())["cpu-gbps-measured"]["devices"]
    return _digest(project / "data" / "raw" / "cpu-gbps" / device), listed


def _staging(project: Path) -> list[Path]:
    return sorted((project / "data" / "raw").glob(".staging-*"))


def test_kill_at_every_point_leaves_nothing_or_the_whole_device(tmp_path):
    assert len(KILL_POINTS) >= 10
    src = tmp_path / "upload" / SMOKE.name
    shutil.copytree(SMOKE, src)
    # the outcome of an uninterrupted run
    ref = _project(tmp_path / "ref")
    done = forked_cli.run(ref, "add-device", str(src.parent), "--device", "killed")
    assert done.returncode == 0, done.stderr
    whole, params_after = _state(ref, "killed")[0], (ref / "params.yaml").read_bytes()
    params_before = (ROOT / "params.yaml").read_bytes()
    assert whole is not None and params_after != params_before and not _staging(ref)

    outcomes = {}
    for n in KILL_POINTS:
        project = _project(tmp_path / f"kill-{n}")
        killed = forked_cli.run(project, "add-device", str(src.parent), "--device", "killed",
                                MOBITRACE_KILL_AT=str(n))
        assert killed.returncode == -signal.SIGKILL, (n, killed.returncode, killed.stderr)
        digest, listed = _state(project, "killed")
        params = (project / "params.yaml").read_bytes()
        assert params in (params_before, params_after), n  # params.yaml is replaced whole or not at all
        assert digest in (None, whole), n                  # no half-copied device
        assert not listed or digest == whole, n            # never listed without its data
        stale = _staging(project)
        # the next run cleans up (saying so) and ends with the whole device
        retry = forked_cli.run(project, "add-device", str(src.parent), "--device", "killed")
        if listed:
            outcomes[n] = "whole"
            assert retry.returncode == 2 and "not yet registered" in retry.stderr, (n, retry.stderr)
        else:
            outcomes[n] = "nothing" if digest is None else "rolled back"
            assert retry.returncode == 0, (n, retry.stderr)
            if digest is not None:
                assert "note: rolled back data/raw/cpu-gbps/killed" in retry.stdout, (n, retry.stdout)
        for s in stale:
            assert f"note: removed data/raw/{s.name} (left by an interrupted add-device)" in retry.stdout, n
        assert "Traceback" not in retry.stderr + killed.stderr
        assert _state(project, "killed") == (whole, True), n
        assert (project / "params.yaml").read_bytes() == params_after, n
        assert not _staging(project), n
        assert sorted(p.name for p in (project / "data" / "raw").iterdir()) == ["cpu-gbps"], n
    assert set(outcomes.values()) >= {"nothing", "rolled back", "whole"}, outcomes


def _validate_until_staged(tmp_path: Path, sig: int) -> tuple[subprocess.CompletedProcess, Path]:
    """Start `validate` on a capture that needs a temporary copy, signal it
    once its private folder exists, return how it ended."""
    src = tmp_path / "upload" / SMOKE.name
    shutil.copytree(SMOKE, src)
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "mobitrace", "validate", str(src.parent)], cwd=ROOT,
                            env=forked_cli.env(TMPDIR=str(tmpdir)), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 300
    while not any(tmpdir.glob("mobitrace-validate-*")) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    seen = any(tmpdir.glob("mobitrace-validate-*"))
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=300)
    if not seen:
        pytest.skip("validate finished before its temporary folder was seen")
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), tmpdir


@pytest.mark.parametrize("sig, status", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_validate_removes_its_private_folder_when_interrupted(tmp_path, sig, status):
    done, tmpdir = _validate_until_staged(tmp_path, sig)
    assert list(tmpdir.iterdir()) == []
    assert "Traceback" not in done.stderr
    if done.returncode != 0:  # it may have finished just before the signal
        assert done.returncode == status, done.stderr
        assert done.stderr.strip().splitlines()[-1].startswith("error: "), done.stderr


def test_validate_removes_its_private_folder_on_an_interrupt_just_after_making_it(tmp_path, monkeypatch):
    """The signal test's race, made certain: Ctrl-C arrives the moment the
    private folder exists (before the code that made it has returned)."""
    import tempfile

    from mobitrace import devices

    src = tmp_path / "upload" / SMOKE.name
    shutil.copytree(SMOKE, src)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    real_mkdir, real_mkdtemp = Path.mkdir, tempfile.mkdtemp

    def interrupted(made):
        if Path(made).name.startswith("mobitrace-validate-"):
            raise KeyboardInterrupt
        return made

    monkeypatch.setattr(Path, "mkdir", lambda self, *a, **k: (real_mkdir(self, *a, **k), interrupted(self))[0])
    monkeypatch.setattr(tempfile, "mkdtemp", lambda *a, **k: interrupted(real_mkdtemp(*a, **k)))
    with pytest.raises(KeyboardInterrupt):
        devices.validate(src.parent)
    assert list((tmp_path / "tmp").iterdir()) == []


def test_validate_writes_nothing(tmp_path):
    src = tmp_path / "upload" / SMOKE.name
    shutil.copytree(SMOKE, src)
    project = _project(tmp_path / "project")
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    before = {p: _digest(p) for p in (tmp_path / "upload", project)}
    done = forked_cli.run(project, "validate", str(src.parent), TMPDIR=str(tmpdir))
    assert done.returncode == 0, done.stderr
    assert {p: _digest(p) for p in before} == before
    assert list(tmpdir.iterdir()) == [] and not (project / ".mobitrace").exists()

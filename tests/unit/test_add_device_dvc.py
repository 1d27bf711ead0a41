"""add-device keeps a big session in DVC: over params.yaml
raw-storage.dvc_threshold_mb, or with --dvc, the session is `dvc add`ed in
place, its .dvc file and .gitignore staged for git, its bytes pushed to the
default remote; smaller ones (or --git) stay in git; a failed push leaves
nothing registered."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from mobitrace import devices, raw_storage
from mobitrace.core.errors import InputError

pytestmark = [pytest.mark.waits, pytest.mark.xdist_group("test_add_device_dvc")]  # tests/conftest.py

from tests import ROOT
SMOKE = ROOT / "tests" / "fixtures" / "captures" / "cpu-gbps" / "smoke-test" / "20261122T025322Z"


def _git(project: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=project, check=True, capture_output=True, text=True).stdout


def _threshold(project: Path, mb) -> None:
    params = project / "params.yaml"
    params.write_text(params.read_text().replace("dvc_threshold_mb: 5", f"dvc_threshold_mb: {mb}"))


def _upload(tmp_path: Path) -> Path:
    src = tmp_path / "upload" / "smoke-test" / SMOKE.name
    shutil.copytree(SMOKE, src)
    return src.parent


def _remote_files(tmp_path: Path) -> list[Path]:
    return [p for p in (tmp_path / "remote").rglob("*") if p.is_file()] if (tmp_path / "remote").exists() else []


def test_a_session_over_the_threshold_goes_to_dvc_and_the_remote(dvc_project, tmp_path):
    assert raw_storage.session_bytes(SMOKE) > 10_000  # the fixture is over the threshold below
    _threshold(dvc_project, 0.01)
    reg = devices.add_device(_upload(tmp_path), "synthetic-big", root=dvc_project)
    session = dvc_project / "data" / "raw" / "cpu-gbps" / "synthetic-big" / SMOKE.name
    assert reg.in_dvc == [session] and reg.remote == "store" and reg.staged
    dvc_file = session.with_name(SMOKE.name + ".dvc")
    assert yaml.safe_load(dvc_file.read_text())["outs"][0]["path"] == SMOKE.name
    assert f"/{SMOKE.name}" in (session.parent / ".gitignore").read_text().splitlines()
    staged = _git(dvc_project, "diff", "--cached", "--name-only").split()
    assert staged == [f"data/raw/cpu-gbps/synthetic-big/{n}" for n in (".gitignore", SMOKE.name + ".dvc")] + ["params.yaml"]
    assert _remote_files(tmp_path)  # pushed
    assert (session / "manifest.yaml").is_file()  # and still in the work tree for `dvc repro`
    assert "synthetic-big" in yaml.safe_load((dvc_project / "params.yaml").read_text())["cpu-gbps-measured"]["devices"]


def test_a_session_under_the_threshold_stays_in_git(dvc_project, tmp_path):
    reg = devices.add_device(_upload(tmp_path), "small", root=dvc_project)
    assert reg.in_dvc == [] and reg.remote is None
    assert not list((dvc_project / "data" / "raw").rglob("*.dvc")) and not _remote_files(tmp_path)


@pytest.mark.parametrize(("mb", "storage", "in_dvc"), [(5, "dvc", True), (0.01, "git", False)])
def test_dvc_and_git_force_either(dvc_project, tmp_path, mb, storage, in_dvc):
    _threshold(dvc_project, mb)
    reg = devices.add_device(_upload(tmp_path), "forced", root=dvc_project, storage=storage)
    assert bool(reg.in_dvc) is in_dvc
    assert bool(list((dvc_project / "data" / "raw").rglob("*.dvc"))) is in_dvc


def test_a_failed_push_registers_nothing(dvc_project, tmp_path):
    (tmp_path / "remote").write_text("a file, not a folder: every push fails\n")
    params = (dvc_project / "params.yaml").read_bytes()
    with pytest.raises(InputError, match="DVC can add and push to remote 'store'"):
        devices.add_device(_upload(tmp_path), "unpushed", root=dvc_project, storage="dvc")
    assert not (dvc_project / "data" / "raw" / "cpu-gbps" / "unpushed").exists()
    assert (dvc_project / "params.yaml").read_bytes() == params
    assert _git(dvc_project, "diff", "--cached", "--name-only") == ""


def test_an_error_of_the_remotes_own_library_is_one_input_error(dvc_project, tmp_path, monkeypatch):
    """botocore raises ConfigNotFound (neither a DvcException nor an OSError)
    before any connection when AWS_CONFIG_FILE is not a regular file."""
    from dvc.config import Config
    with Config(str(dvc_project / ".dvc")).edit() as conf:  # what `dvc remote modify store ...` does, in-process
        conf["remote"]["store"].update(url="s3://synthetic-bucket/x", endpointurl="http://127.0.0.1:9")
    monkeypatch.setenv("AWS_CONFIG_FILE", os.devnull)
    params = (dvc_project / "params.yaml").read_bytes()
    with pytest.raises(InputError, match=r"push to remote 'store', found 'The specified config file \(/dev/null\) could not be found"):
        devices.add_device(_upload(tmp_path), "unpushed", root=dvc_project, storage="dvc")
    assert not (dvc_project / "data" / "raw" / "cpu-gbps" / "unpushed").exists()
    assert (dvc_project / "params.yaml").read_bytes() == params


def test_dvc_without_a_dvc_project_is_refused_before_anything_is_written(scratch_project, tmp_path):
    params = (scratch_project / "params.yaml").read_bytes()
    with pytest.raises(InputError, match=r"expected a DVC project \(.dvc/\)"):
        devices.add_device(_upload(tmp_path), "nodvc", root=scratch_project, storage="dvc")
    assert list((scratch_project / "data" / "raw").iterdir()) == []
    assert (scratch_project / "params.yaml").read_bytes() == params


@pytest.mark.parametrize("bad", ["-1", "lots", "true"])
def test_a_bad_threshold_is_one_input_error(scratch_project, tmp_path, bad):
    _threshold(scratch_project, bad)
    with pytest.raises(InputError, match="field 'raw-storage.dvc_threshold_mb': expected a size in MB"):
        devices.add_device(_upload(tmp_path), "x", root=scratch_project)
    assert list((scratch_project / "data" / "raw").iterdir()) == []

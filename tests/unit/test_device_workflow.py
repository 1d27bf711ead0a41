"""The contributor's workflow around add-device: --dry-run writes nothing,
a registration is staged for git all at once, and a device not yet
committed can be removed or renamed (a committed one cannot: raw captures
are immutable)."""

from __future__ import annotations

import subprocess

import pytest
import yaml

from mobitrace import devices
from mobitrace.core.errors import InputError
from tests import ROOT

SMOKE = ROOT / "tests" / "fixtures" / "captures" / "cpu-gbps" / "smoke-test" / "20261122T025322Z"


def _tree(project: Path) -> dict:
    return {str(p.relative_to(project)): p.read_bytes() for p in project.rglob("*")
            if p.is_file() and ".git" not in p.relative_to(project).parts}


def _listed(project: Path) -> list[str]:
    return yaml.safe_load((project / "params.yaml").read_text())["cpu-gbps-measured"]["devices"]


def _staged(project: Path) -> set[str]:
    out = subprocess.run(["git", "diff", "--cached", "--name-only"], cwd=project, capture_output=True, text=True)
    return set(out.stdout.split())


def test_dry_run_writes_nothing_and_says_what_it_would_do(dvc_project):
    before = _tree(dvc_project)
    reg = devices.add_device(SMOKE, "synthetic-dry", root=dvc_project, dry_run=True)
    assert reg.dry_run and reg.listed and not reg.copied
    assert reg.sessions == [dvc_project / "data" / "raw" / "cpu-gbps" / "synthetic-dry" / SMOKE.name]
    assert _tree(dvc_project) == before


def test_a_registration_is_staged_all_at_once(dvc_project):
    reg = devices.add_device(SMOKE, "synthetic-staged", root=dvc_project)
    assert reg.staged
    staged = _staged(dvc_project)
    assert "params.yaml" in staged
    assert any(p.startswith("data/raw/cpu-gbps/synthetic-staged/") for p in staged)


def test_remove_and_rename_a_device_not_yet_committed(dvc_project):
    devices.add_device(SMOKE, "synthetic-a", root=dvc_project)
    target = devices.rename_device("cpu-gbps", "synthetic-a", "synthetic-b", dvc_project)
    assert target.name == "synthetic-b" and not (target.parent / "synthetic-a").exists()
    manifest = yaml.safe_load((target / SMOKE.name / "manifest.yaml").read_text())
    assert manifest["device"] == "synthetic-b" and manifest["registered_from_device"] == "smoke-test"
    assert "synthetic-b" in _listed(dvc_project) and "synthetic-a" not in _listed(dvc_project)
    assert not any("synthetic-a" in p for p in _staged(dvc_project))
    assert devices.validate(target)[1] == []
    devices.remove_device("cpu-gbps", "synthetic-b", dvc_project)
    assert not target.exists() and "synthetic-b" not in _listed(dvc_project)
    assert not any("synthetic-b" in p for p in _staged(dvc_project))


def test_a_committed_device_is_neither_removed_nor_renamed(dvc_project):
    devices.add_device(SMOKE, "synthetic-kept", root=dvc_project)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-qm", "add"],
                   cwd=dvc_project, check=True)
    for call in (lambda: devices.remove_device("cpu-gbps", "synthetic-kept", dvc_project),
                 lambda: devices.rename_device("cpu-gbps", "synthetic-kept", "other", dvc_project)):
        with pytest.raises(InputError) as exc:
            call()
        assert "committed captures are immutable" in str(exc.value)
    assert "synthetic-kept" in _listed(dvc_project)


def test_the_reference_device_follows_a_rename_and_is_not_removed(dvc_project):
    devices.add_device(SMOKE, "synthetic-ref", root=dvc_project)
    params = dvc_project / "params.yaml"
    params.write_text(params.read_text().replace("reference_device: vm-veth-default", "reference_device: synthetic-ref"))
    devices.rename_device("cpu-gbps", "synthetic-ref", "synthetic-ref2", dvc_project)
    assert yaml.safe_load(params.read_text())["cpu-gbps-measured"]["reference_device"] == "synthetic-ref2"
    with pytest.raises(InputError) as exc:
        devices.remove_device("cpu-gbps", "synthetic-ref2", dvc_project)
    assert "reference_device" in str(exc.value)
    assert (dvc_project / "data" / "raw" / "cpu-gbps" / "synthetic-ref2").is_dir()

"""DVC's shared run cache, end to end: a built clone pushes its stage runs
(`make push`: dvc push --run-cache) to a remote; a fresh clone that pulls
them with the outputs they name (`make pull`: mobitrace.runcache) rebuilds every device stage of
every study without running one, even with those stages missing from its
dvc.lock (as for devices computed on another machine). A clone that did not
pull runs them (the control)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import yaml

from .conftest import run

pytestmark = pytest.mark.e2e


def device_stages(clone: Path) -> list[str]:
    from mobitrace.studies.registry import studies

    params = yaml.safe_load((clone / "params.yaml").read_text())
    return [name for s in studies() for device in params[s.params_section]["devices"]
            for name in s.device_stages(device)]


def smallest_capture_stage(clone: Path, stages: list[str]) -> str:
    """The stage of `stages` that reads the smallest capture (dvc.lock's
    size of its data/raw folder): the control runs it."""
    lock = yaml.safe_load((clone / "dvc.lock").read_text())["stages"]
    sizes = {name: dep["size"] for name in stages for dep in lock.get(name, {}).get("deps", [])
             if dep["path"].startswith("data/raw/")}
    return min(sizes, key=sizes.get)


def fresh_clone(source: Path, dest: Path, remote: Path, env: dict, stages: list[str]) -> Path:
    """A git clone of `source` with `remote` as its default DVC remote and
    `stages` left out of its dvc.lock."""
    run(["git", "clone", "-q", str(source), str(dest)], source.parent, env)
    run(["dvc", "remote", "add", "--local", "-d", "shared", str(remote)], dest, env)
    lock = yaml.safe_load((dest / "dvc.lock").read_text())
    for name in stages:
        lock["stages"].pop(name, None)
    (dest / "dvc.lock").write_text(yaml.safe_dump(lock, sort_keys=False))
    return dest


def test_a_fresh_clone_restores_every_device_stage_from_the_pushed_run_cache(built_tree, tmp_path):
    built = built_tree.copy(tmp_path / "built" / "repo")
    env = built_tree.env_for(built)
    run(["git", "add", "-A"], built, env)  # the build's dvc.lock, as a contributor commits it
    run(["git", "commit", "-q", "-m", "built", "--allow-empty"], built, env)
    remote = tmp_path / "remote"
    run(["dvc", "remote", "add", "--local", "-d", "shared", str(remote)], built, env)
    run(["dvc", "push", "--run-cache"], built, env)  # make push
    stages = device_stages(built)
    assert len(stages) >= 10

    clone = fresh_clone(built, tmp_path / "clone" / "repo", remote, built_tree.env_for(tmp_path / "clone" / "repo"),
                        stages)
    clone_env = built_tree.env_for(clone)
    out = run([sys.executable, "-m", "mobitrace.runcache"], clone, clone_env)  # make pull
    assert re.search(r"run cache: \d+ stage runs known, [1-9]\d* output files fetched", out), out
    # Into the cache only: the working tree is as cloned (but our dvc.lock edit), no output checked out.
    assert run(["git", "diff", "--name-only"], clone, clone_env).split() == ["dvc.lock"]
    assert stages[0].startswith("ingest_analyze_cpu_gbps@")
    assert not (clone / "data" / "interim" / "cpu-gbps" / stages[0].split("@")[1]).exists()
    log = run(["dvc", "repro", *stages], clone, clone_env)
    assert not re.findall(r"Running stage '([^']+)'", log), log
    restored = set(re.findall(r"Stage '([^']+)' is cached - skipping run", log))
    assert restored == set(stages), sorted(set(stages) - restored)
    assert "Data and pipelines are up to date" in run(["dvc", "status", *stages], clone, clone_env)

    # Without the run cache the same stage runs: the check above can fail.
    control = fresh_clone(built, tmp_path / "control" / "repo", tmp_path / "empty-remote",
                          built_tree.env_for(tmp_path / "control" / "repo"), stages)
    stage = smallest_capture_stage(built, stages)
    log = run(["dvc", "repro", stage], control, built_tree.env_for(control))
    assert f"Running stage '{stage}'" in log and "is cached" not in log, log

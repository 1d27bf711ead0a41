"""End to end: a clean clone of the committed repository rebuilds the
measured cpu-gbps chapter from the committed raw captures (no capture tool
needed), a second `dvc repro` does nothing, and `dvc repro -f` reproduces
byte-identical results."""

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

pytestmark = pytest.mark.e2e

RESULTS = ["data/results/cpu-gbps-measured", "data/results/cpu-gbps-devices", "data/interim/cpu-gbps"]


def digest_tree(root: Path, rels) -> dict:
    out = {}
    for rel in rels:
        for p in sorted((root / rel).rglob("*")):
            if p.is_file():
                out[p.relative_to(root).as_posix()] = hashlib.md5(p.read_bytes()).hexdigest()
    return out


def sh(cmd, cwd, env):
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, f"{cmd}: {proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


def test_clean_clone_rebuilds_measured_chapter(root, tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git not installed")
    clone = tmp_path / "repo"
    sh(["git", "clone", "--quiet", "--no-hardlinks", str(root), str(clone)], tmp_path, os.environ)
    # No capture tool is needed: the pipeline sees only the venv and git
    # (no iperf3, ethtool, ip or tc on its PATH).
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "git").symlink_to(shutil.which("git"))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{tools}",
           "DVC_NO_ANALYTICS": "1", "MPLBACKEND": "Agg", "PYTHONPATH": str(clone / "src")}
    sh(["dvc", "repro", "--quiet"], clone, env)
    params = yaml.safe_load((clone / "params.yaml").read_text())["cpu-gbps-measured"]
    claims = pd.read_csv(clone / "data/results/cpu-gbps-measured/claims.csv")
    assert len(claims) >= 2 * len(params["devices"]) + 4
    metrics = json.loads((clone / "data/results/cpu-gbps-measured/metrics.json").read_text())
    for device in params["devices"]:
        m = metrics["devices"][device]["down.stat_total"]
        assert m["gbps_at_50pct"] is not None
    assert (clone / "book/_build/html/chapters/cpu-gbps-measured.html").exists()
    first = digest_tree(clone, RESULTS)
    lock1 = (clone / "dvc.lock").read_bytes()
    # Nothing changed: nothing runs.
    out = sh(["dvc", "repro"], clone, env)
    assert "Running stage" not in out, out
    # Forced rerun: byte-identical outputs and lock.
    sh(["dvc", "repro", "--force", "--quiet"], clone, env)
    assert digest_tree(clone, RESULTS) == first
    assert (clone / "dvc.lock").read_bytes() == lock1

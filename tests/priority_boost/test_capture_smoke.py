"""The capture kit's smoke mode end to end (seconds): needs root, network
namespaces, tc and CFS bandwidth control; skipped with the reason otherwise.
The captures it writes go to a temporary folder and are real (smoke) runs."""

import subprocess
from pathlib import Path

import pandas as pd
import pytest

from mobitrace.capture import netns
from mobitrace.core import capture_reader
from mobitrace.core import safe_yaml
from mobitrace.studies.priority_boost import ingest as pb
from tests.helpers import smoke_command


def _why_not() -> str | None:
    reason = netns.why_not("mtpb-", tools=("ip", "tc", "openssl"))
    if reason:
        return reason
    v2 = Path("/sys/fs/cgroup/cgroup.controllers")
    if not ((v2.exists() and "cpu" in v2.read_text().split()) or Path("/sys/fs/cgroup/cpu/cpu.cfs_quota_us").exists()):
        return "no cgroup CPU bandwidth control"
    return None


REASON = _why_not()


@pytest.mark.capture
@pytest.mark.skipif(REASON is not None, reason=f"capture smoke test skipped: {REASON}")
def test_capture_smoke_then_ingest(tmp_path, pb_repo):
    out = tmp_path / "raw"
    cmd = smoke_command(pb_repo / "scripts/capture/priority_boost/run.py", out)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=pb_repo)
    assert r.returncode == 0, r.stdout + r.stderr
    ns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert "mtpb-" not in ns, "namespaces left behind"
    folder = out / "smoke-host" / "smoke"
    assert (folder / "manifest.yaml").exists()
    pb.ingest(out / "smoke-host", tmp_path / "interim")
    runs = pd.read_parquet(tmp_path / "interim" / "runs.parquet")
    gate = capture_reader.background_load(safe_yaml.read_manifest(folder / "manifest.yaml"))
    assert gate["max_pct"] == 5.0 and set(gate["runs"]) == set(runs["run_id"])  # the idle gate: every run
    assert len(runs) == 12 and (runs["status"] == "ok").all(), runs[["run_id", "status"]]
    assert runs.loc[runs["kind"] == "transfer", "transfer_s"].gt(0).all()
    assert runs.loc[runs["kind"] == "audio", "packets"].eq(50).all()
    boosted = runs[runs["policy"] != "original"]
    assert (boosted["renices"] > 0).all() and (runs.loc[runs["policy"] == "original", "renices"] == 0).all()


def test_capture_smoke_reason_is_printed(capsys):
    print(f"capture smoke test: {'runs' if REASON is None else 'skipped: ' + REASON}")
    assert "capture smoke test" in capsys.readouterr().out

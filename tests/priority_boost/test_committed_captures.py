"""The measured captures committed under data/raw/priority-boost/ and listed
in params.yaml validate, carry their host metadata and seeds, and each
(cell, policy) the chapter uses has the repetitions the manifest states."""

from pathlib import Path

import pandas as pd
import pytest
import yaml

from mobitrace.studies.priority_boost import ingest as pb

REPO = Path(__file__).resolve().parents[2]


def _devices(repo):
    return yaml.safe_load((repo / "params.yaml").read_text())["priority-boost"]["devices"]


def test_listed_devices_drive_the_ingest_stages(pb_repo):
    dvc = yaml.safe_load((pb_repo / "dvc.yaml").read_text())
    assert dvc["stages"]["ingest_priority_boost"]["foreach"] == "${priority-boost.devices}"


@pytest.mark.parametrize("device", _devices(REPO))
def test_committed_capture_ingests(pb_repo, tmp_path, device):
    folder = pb_repo / "data" / "raw" / "priority-boost" / device
    pb.ingest(folder, tmp_path / "out")
    runs = pd.read_parquet(tmp_path / "out" / "runs.parquet")
    sessions = pd.read_parquet(tmp_path / "out" / "sessions.parquet")
    assert not sessions["smoke"].any()
    for session in folder.iterdir():
        manifest = yaml.safe_load((session / "manifest.yaml").read_text())
        for key in ("kernel", "cpu_model", "cpu_count", "governor", "sysctls", "tools"):
            assert key in manifest["host"], key
        assert manifest["configuration"]["seed_base"] is not None
    # Same seed for every policy of a repetition (paired schedules).
    assert (runs.groupby(["session", "cell", "rep"])["seed"].nunique() == 1).all()
    sizes = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())
    assert sizes < 10e6, "raw captures in git should stay lean"

"""The measured captures committed under data/raw/mptcp-dualband/ and listed
in params.yaml ingest, carry their host metadata, and stay lean."""

from pathlib import Path

import pandas as pd
import pytest
import yaml

from mobitrace.studies.mptcp_dualband import ingest as md

REPO = Path(__file__).resolve().parents[2]


def _devices():
    return yaml.safe_load((REPO / "params.yaml").read_text())["mptcp-dualband"]["devices"]


@pytest.mark.parametrize("device", _devices())
def test_committed_capture_ingests(tmp_path, device):
    folder = REPO / "data" / "raw" / "mptcp-dualband" / device
    md.ingest(folder, tmp_path / "out")
    runs = pd.read_parquet(tmp_path / "out" / "runs.parquet")
    for session in folder.iterdir():
        manifest = yaml.safe_load((session / "manifest.yaml").read_text())
        for key in ("kernel", "cpu_model", "cpu_count", "sysctls", "tools", "shared_host"):
            assert key in manifest["host"], key
        assert manifest["config"]["smoke"] is False
        assert manifest["lock"]["held_s"] > 0
    # at least 20 backlogged MPTCP runs per direction for the throughput CDF
    mp = runs[runs["part"] == "mptcp"]
    assert (mp.groupby("direction").size() >= 20).all()
    # every swept ratio has runs in both directions, backlogged
    sw = runs[(runs["part"] == "sweep") & runs["demand_mbps"].isna()]
    assert set(sw["ratio_a_pct"]) >= {0, 10, 20, 30, 40, 50, 60, 66, 70, 73, 80, 83, 90, 100}
    sizes = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())
    assert sizes < 5e6, "raw captures in git should stay lean"

"""The stack-trim captures committed under data/raw/stack-trim/ and listed in
params.yaml validate, carry their host metadata, have at least 10
repetitions per (condition, rate) and stay lean."""

from pathlib import Path

import pandas as pd
import pytest
import yaml

from mobitrace.studies.stack_trim import ingest as st

REPO = Path(__file__).resolve().parents[2]


def _devices():
    return yaml.safe_load((REPO / "params.yaml").read_text())["stack-trim"]["devices"]


@pytest.mark.parametrize("device", _devices())
def test_committed_capture_ingests(tmp_path, device):
    folder = REPO / "data" / "raw" / "stack-trim" / device
    st.ingest(folder, tmp_path / "out")
    runs = pd.read_parquet(tmp_path / "out" / "runs.parquet")
    for session in folder.iterdir():
        manifest = yaml.safe_load((session / "manifest.yaml").read_text())
        for key in ("kernel", "cpu_model", "cpu_count", "cpufreq", "sysctls", "tools", "shared_host_note"):
            assert key in manifest["host"], key
        assert not manifest["configuration"]["smoke"]
    reps = runs.groupby(["condition", "rate_mbps"])["rep"].nunique()
    assert reps.min() >= 10, reps[reps < 10]
    assert runs["rate_mbps"].nunique() >= 6
    size = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())
    assert size < 10e6, "raw captures in git should stay lean"

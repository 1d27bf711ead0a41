"""The measured captures committed under data/raw/mptcp-dualband/ and listed
in params.yaml ingest, carry their host metadata, and stay lean."""

import pytest

from mobitrace.studies.mptcp_dualband import ingest as md
from tests.helpers import assert_lean, committed_devices, ingest_committed

HOST_KEYS = ("kernel", "cpu_model", "cpu_count", "sysctls", "tools", "shared_host")


@pytest.mark.parametrize("device", committed_devices("mptcp-dualband"))
def test_committed_capture_ingests(tmp_path, device):
    folder, runs, manifests = ingest_committed("mptcp-dualband", device, md.ingest, tmp_path / "out", HOST_KEYS)
    for manifest in manifests:
        assert manifest["config"]["smoke"] is False
        assert manifest["lock"]["held_s"] > 0
    # at least 20 backlogged MPTCP runs per direction for the throughput CDF
    mp = runs[runs["part"] == "mptcp"]
    assert (mp.groupby("direction").size() >= 20).all()
    # every swept ratio has runs in both directions, backlogged
    sw = runs[(runs["part"] == "sweep") & runs["demand_mbps"].isna()]
    assert set(sw["ratio_a_pct"]) >= {0, 10, 20, 30, 40, 50, 60, 66, 70, 73, 80, 83, 90, 100}
    assert_lean(folder, 5e6)

"""The transfer-tuning captures committed under data/raw/transfer-tuning/ and
listed in params.yaml ingest, carry their host metadata and testbed
configuration, cover every configuration the chapter plots, and stay lean."""

import pytest

from mobitrace.studies.transfer_tuning import ingest as tt
from tests.helpers import assert_lean, committed_devices, ingest_committed

HOST_KEYS = ("kernel", "cpu_model", "cpus", "cpu_mhz", "loadavg_at_start", "shared_host", "sysctls")  # schema 1


@pytest.mark.parametrize("device", committed_devices("transfer-tuning"))
def test_committed_capture_ingests(tmp_path, device):
    folder, runs, manifests = ingest_committed("transfer-tuning", device, tt.ingest, tmp_path / "out", HOST_KEYS)
    for m in manifests:
        assert m["kind"] == "default"
        conf = m["configuration"]
        assert "delay bridge" in conf["rtt_method"] and conf["rtt_ms"] > 0
        assert all(i["lock_held_s"] >= 0 for i in m["invocations"])
    sweep = runs[runs["kind"] == "sweep"]
    for ds in ("html", "image", "video"):
        d = sweep[sweep["dataset"] == ds]
        assert set(d.loc[(d["parallelism"] == 1) & (d["io_kib"] == 16), "concurrency"]) >= {1, 2, 4, 8, 16, 32}
        assert set(d.loc[(d["concurrency"] == 1) & (d["io_kib"] == 16), "parallelism"]) >= {1, 2, 4, 8, 16, 32}
        assert set(d.loc[(d["concurrency"] == 1) & (d["parallelism"] == 1), "io_kib"]) >= {1, 2, 4, 8, 16, 32, 64}
    assert set(runs.loc[runs["kind"] == "tail", "files"]) == {1, 2}
    # Every run moved its whole dataset and no run beat the shaped link.
    rate = manifests[0]["configuration"]["link"]
    assert (runs["throughput_mbps"] < rate["rate_mbit"]).all()
    assert_lean(folder, 10e6)

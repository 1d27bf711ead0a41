"""The transfer-tuning captures committed under data/raw/transfer-tuning/ and
listed in params.yaml ingest, carry their host metadata and testbed
configuration, cover every configuration the chapter plots, and stay lean."""

from pathlib import Path

import pandas as pd
import pytest
import yaml

from mobitrace.studies.transfer_tuning import ingest as tt

REPO = Path(__file__).resolve().parents[2]
PARAMS = yaml.safe_load((REPO / "params.yaml").read_text())


@pytest.mark.parametrize("device", PARAMS["transfer-tuning"]["devices"])
def test_committed_capture_ingests(tmp_path, device):
    folder = REPO / "data" / "raw" / "transfer-tuning" / device
    tt.ingest(folder, tmp_path / "out")
    runs = pd.read_parquet(tmp_path / "out" / "runs.parquet")
    for session in folder.iterdir():
        m = yaml.safe_load((session / "manifest.yaml").read_text())
        assert m["kind"] == "default"
        for key in ("kernel", "cpu_model", "cpus", "cpu_mhz", "loadavg_at_start", "shared_host", "sysctls"):
            assert key in m["host"], key
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
    rate = yaml.safe_load(next(folder.iterdir()).joinpath("manifest.yaml").read_text())["configuration"]["link"]
    assert (runs["throughput_mbps"] < rate["rate_mbit"]).all()
    sizes = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())
    assert sizes < 10e6, "raw captures in git should stay lean"

"""The raw cpu-gbps captures the book is built from: present for every
device in params.yaml, made with the default settings, lean, and parseable
(the header of each session; the full ingest runs in the pipeline)."""

import yaml

from mobitrace.core import capture_reader
from mobitrace.studies.cpu_gbps import ingest as captures


def measured_params(repo):
    return yaml.safe_load((repo / "params.yaml").read_text())["cpu-gbps-measured"]


def test_every_device_has_default_captures(repo):
    params = measured_params(repo)
    assert len(params["devices"]) >= 3
    for device in params["devices"]:
        folder = repo / "data" / "raw" / "cpu-gbps" / device
        sessions = capture_reader.session_folders(folder)
        for session in sessions:
            rec = captures.parse_session_manifest(session / "manifest.yaml")
            assert rec["device"] == device
            assert rec["kind"] == "default", (device, session.name)
            assert rec["repetitions"] >= 3 and rec["duration_s"] >= 10, (device, session.name)
            assert rec["sample_period_ms"] <= 100
            rates = yaml.safe_load((session / "manifest.yaml").read_text())["configuration"]["rates"]
            assert rates[0] == "100M" and "max" in rates


def test_raw_captures_are_lean(repo):
    raw = repo / "data" / "raw" / "cpu-gbps"
    total = sum(p.stat().st_size for p in raw.rglob("*") if p.is_file())
    assert total < 10e6, f"{total / 1e6:.1f} MB of raw cpu-gbps captures"


def test_dvc_stages_cover_the_devices(repo):
    dvc = yaml.safe_load((repo / "dvc.yaml").read_text())["stages"]
    assert dvc["ingest_analyze_cpu_gbps"]["foreach"] == "${cpu-gbps-measured.devices}"
    assert "analyze_cpu_gbps_measured" in dvc


def test_every_superseded_session_is_kept_in_data_raw(repo):
    # raw data is immutable: a superseded session stays, and names a reason
    for key, why in (measured_params(repo).get("superseded") or {}).items():
        assert (repo / "data" / "raw" / "cpu-gbps" / key / "manifest.yaml").is_file(), key
        assert why.strip()

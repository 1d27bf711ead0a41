"""The background load per capture as the chapters show it
(capture_reader.background_text), on synthetic idle-gate records. On the
committed stack-trim and priority-boost captures it is checked where they
are ingested anyway (tests/<study>/test_committed_captures.py)."""

from pathlib import Path

from mobitrace.core import capture_reader
from mobitrace.studies.cpu_gbps import ingest
from tests import ROOT


def test_synthetic_gate_record_by_hand():
    manifest = {"idle_gate": {"max_pct": 5, "runs": {
        "r1": {"before_pct": 0.5, "during_pct": 1.0, "flagged": False},
        "r2": {"before_pct": 0.5, "during_pct": 3.0, "flagged": False},
        "r3": {"before_pct": 9.0, "during_pct": 8.0, "flagged": True}}}}
    text = capture_reader.background_text(capture_reader.background_load(manifest))
    assert text == ("measured: median 3.0%, largest 8.0% of one core during runs; "
                    "1 of 3 runs flagged (threshold 5%)")


def test_a_capture_without_the_gate_says_not_measured():
    assert capture_reader.background_text(capture_reader.background_load({"study": "x"})) == \
        "not measured (captured before the idle gate)"


def test_committed_capture_before_the_gate_reads_not_measured():
    raw = ROOT / "data/raw/cpu-gbps/vm-veth-default"
    manifests = sorted(raw.glob("*/manifest.yaml"))
    assert manifests
    for path in manifests:
        assert ingest.parse_session_manifest(path)["background_load"] == capture_reader.NOT_MEASURED

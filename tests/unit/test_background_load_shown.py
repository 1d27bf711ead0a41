"""The background load per capture as the chapters show it
(capture_reader.background_text), on synthetic idle-gate records."""

from pathlib import Path

from mobitrace.core import capture_reader
from mobitrace.studies.cpu_gbps import ingest


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
    raw = Path(__file__).resolve().parents[2] / "data/raw/cpu-gbps/vm-veth-default"
    manifests = sorted(raw.glob("*/manifest.yaml"))
    assert manifests
    for path in manifests:
        assert ingest.parse_session_manifest(path)["background_load"] == capture_reader.NOT_MEASURED


def test_stack_trim_and_priority_boost_sessions_carry_the_gate_record(tmp_path):
    """The committed stack-trim re-capture ran under the gate (its sessions
    row says "measured"); the pre-gate priority-boost captures say "not measured"."""
    import pandas as pd
    import yaml

    from mobitrace.studies.priority_boost import ingest as pb
    from mobitrace.studies.stack_trim import analysis as sta
    from mobitrace.studies.stack_trim import ingest as st
    repo = Path(__file__).resolve().parents[2]
    params = yaml.safe_load((repo / "params.yaml").read_text())
    with capture_reader.superseding(params["stack-trim"]["superseded"]):
        st.ingest(repo / "data/raw/stack-trim/vm-2core", tmp_path / "st")
    sessions = pd.read_parquet(tmp_path / "st" / "sessions.parquet")
    shown = sta.sessions_shown(sessions)
    assert shown["background load (idle gate)"].str.startswith("measured: median").all()
    device = params["priority-boost"]["devices"][0]
    pb.ingest(repo / "data/raw/priority-boost" / device, tmp_path / "pb")
    pb_sessions = pd.read_parquet(tmp_path / "pb" / "sessions.parquet")
    for row in pb_sessions.itertuples():
        manifest = yaml.safe_load((repo / "data/raw/priority-boost" / device / row.session / "manifest.yaml")
                                  .read_text())
        gated = "idle_gate" in manifest
        assert row.background_load.startswith("measured: ") == gated, row.session
        assert (row.background_load == capture_reader.NOT_MEASURED) == (not gated), row.session

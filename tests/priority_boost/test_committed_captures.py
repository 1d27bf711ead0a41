"""The measured captures committed under data/raw/priority-boost/ and listed
in params.yaml validate, carry their host metadata and seeds, each (cell,
policy) the chapter uses has the repetitions the manifest states, and the
background load reads "measured" exactly where the idle gate ran."""

import pandas as pd
import pytest
import yaml

from mobitrace.core import capture_reader
from mobitrace.studies.priority_boost import ingest as pb
from tests.helpers import assert_lean, committed_devices, ingest_committed


def test_listed_devices_drive_the_ingest_stages(pb_repo):
    dvc = yaml.safe_load((pb_repo / "dvc.yaml").read_text())
    assert dvc["stages"]["ingest_priority_boost"]["foreach"] == "${priority-boost.devices}"

HOST_KEYS = ("kernel", "cpu_model", "cpu_count", "governor", "sysctls", "tools")


@pytest.mark.parametrize("device", committed_devices("priority-boost"))
def test_committed_capture_ingests(tmp_path, device):
    folder, runs, manifests = ingest_committed("priority-boost", device, pb.ingest, tmp_path / "out", HOST_KEYS)
    sessions = pd.read_parquet(tmp_path / "out" / "sessions.parquet")
    assert not sessions["smoke"].any()
    for manifest in manifests:
        assert manifest["configuration"]["seed_base"] is not None
    # Same seed for every policy of a repetition (paired schedules).
    assert (runs.groupby(["session", "cell", "rep"])["seed"].nunique() == 1).all()
    for row in sessions.itertuples():
        gated = "idle_gate" in yaml.safe_load((folder / row.session / "manifest.yaml").read_text())
        assert row.background_load.startswith("measured: ") == gated, row.session
        assert (row.background_load == capture_reader.NOT_MEASURED) == (not gated), row.session
    assert_lean(folder, 10e6)

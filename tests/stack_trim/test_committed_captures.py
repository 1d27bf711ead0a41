"""The stack-trim captures committed under data/raw/stack-trim/ and listed in
params.yaml validate, carry their host metadata, have at least 10
repetitions per (condition, rate) and stay lean."""

import pytest

from mobitrace.studies.stack_trim import ingest as st
from tests.helpers import assert_lean, committed_devices, ingest_committed

HOST_KEYS = ("kernel", "cpu_model", "cpu_count", "cpufreq", "sysctls", "tools", "shared_host_note")


@pytest.mark.parametrize("device", committed_devices("stack-trim"))
def test_committed_capture_ingests(tmp_path, device):
    folder, runs, manifests = ingest_committed("stack-trim", device, st.ingest, tmp_path / "out", HOST_KEYS)
    for manifest in manifests:
        assert not manifest["configuration"]["smoke"]
    reps = runs.groupby(["condition", "rate_mbps"])["rep"].nunique()
    assert reps.min() >= 10, reps[reps < 10]
    assert runs["rate_mbps"].nunique() >= 6
    assert_lean(folder, 10e6)

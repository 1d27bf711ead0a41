"""The stack-trim captures committed under data/raw/stack-trim/ and listed in
params.yaml validate, carry their host metadata, have the repetitions
their manifest records per (condition, rate) (at least 5; the sequential
rule's record when it ran), show their background load as the chapter does
(measured where the idle gate ran, as it did for the re-capture), stay
lean, and give the robustness's shortcut the full analysis's claims."""

import dataclasses

import pandas as pd
import pytest

from mobitrace.core import capture_reader
from mobitrace.studies.stack_trim import analysis as sta
from mobitrace.studies.stack_trim import shown
from mobitrace.studies.stack_trim import ingest as st
from tests import ROOT
from tests.helpers import assert_lean, committed_devices, ingest_committed

HOST_KEYS = ("kernel", "cpu_model", "cpu_count", "cpufreq", "sysctls", "tools", "shared_host_note")  # schema 1
DEVICES = committed_devices("stack-trim")

# `ingested` is made once per module: both tests read one ingest (tests/conftest.py groups by xdist_group).
pytestmark = pytest.mark.xdist_group("stack_trim_committed")


@pytest.fixture(scope="module")
def ingested(tmp_path_factory):
    """device -> (raw folder, runs, manifests, ingest output folder): each
    committed device ingested once, on first use; the tests only read it."""
    done = {}

    def get(device):
        if device not in done:
            out = tmp_path_factory.mktemp(f"ingested-{device}") / "out"
            done[device] = (*ingest_committed("stack-trim", device, st.ingest, out, HOST_KEYS), out)
        folder, runs, manifests, out = done[device]
        return folder, runs.copy(), manifests, out  # a test's change to its table stays its own
    return get


@pytest.mark.parametrize("device", DEVICES)
def test_committed_capture_ingests(ingested, device):
    folder, runs, manifests, out = ingested(device)
    for manifest in manifests:
        assert not manifest["configuration"]["smoke"]
    sessions = pd.read_parquet(out / "sessions.parquet")
    done = sessions.set_index("session")["reps_done"]
    reps = runs.groupby(["session", "condition", "rate_mbps"])["rep"].nunique()
    expected = reps.index.get_level_values("session").map(done)
    assert (reps.to_numpy() == expected.to_numpy()).all(), reps[reps.to_numpy() != expected.to_numpy()]
    assert reps.min() >= 5, reps[reps < 5]
    assert runs["rate_mbps"].nunique() >= 6
    # The chapter's sessions table: "measured" where the session ran under the idle gate, else "not measured".
    gated = {m["session"] for m in manifests if "idle_gate" in m}
    # The runs the idle gate flagged reach the ingested table, and the chapter leaves them out.
    flagged = {(m["session"], r) for m in manifests if "idle_gate" in m
               for r, rec in m["idle_gate"]["runs"].items() if rec["flagged"]}
    marked = set(zip(runs.loc[runs["gate_flagged"], "session"], runs.loc[runs["gate_flagged"], "run_id"]))
    assert marked == flagged & set(zip(runs["session"], runs["run_id"]))
    kept, sessions = sta.without_flagged(runs, sessions)
    assert len(kept) == len(runs) - len(marked) and not kept["gate_flagged"].any()
    assert sessions["left_out"].sum() == len(marked)
    loads = shown.sessions_shown(sessions).set_index("session")["background load (idle gate)"]
    assert gated & set(loads.index), "no committed session ran under the idle gate"
    for session, text in loads.items():
        assert text.startswith("measured: median") == (session in gated), (session, text)
        assert (text == capture_reader.NOT_MEASURED) == (session not in gated), (session, text)
    assert_lean(folder, 10e6)


@pytest.mark.parametrize("device", DEVICES)
def test_robustness_shortcut_gives_the_full_claims(tmp_path, ingested, device):
    # The robustness recomputes the claims at a dozen coefficient sets with
    # analysis_at(claims_only=True), which skips the one-copy table of the
    # CPU-time basis the claims do not read: on the committed captures its
    # claims table must be the full analysis's, value for value.
    from mobitrace.core import published
    from mobitrace.core.params import load as load_params
    from mobitrace.energy.power_models import cpu_models

    _, runs, _, out = ingested(device)
    p = load_params(ROOT)
    section = p["stack-trim"]
    model = cpu_models(p["power-models"])[section["power_model"]]
    runs, _ = sta.without_flagged(runs, pd.read_parquet(out / "sessions.parquet"))
    published.ingest(ROOT / "data" / "published" / "stack-trim.yaml", tmp_path / "published")  # a fresh clone has no interim
    values = published.Values(tmp_path / "published")
    # the robustness's halved and raised coefficients, as well as the assumed ones
    for factor in (1.0, 0.5):
        varied = dataclasses.replace(model, mw_per_ghz=model.mw_per_ghz * factor)
        full, short = (sta.analysis_at(
            sta.price(runs, model), varied, values, study="stack-trim",
            device=device, **{k: section[k] for k in ("cpu_basis", "alpha", "n_resamples", "seed", "min_delivered",
                                                       "wifi_link", "wifi_max_mbps", "rel_tol_approx")},
            claims_only=claims_only) for claims_only in (False, True))
        pd.testing.assert_frame_equal(full["claims"], short["claims"], check_exact=True)
        assert set(short["onecopy"]["basis"]) == {section["cpu_basis"]} != set(full["onecopy"]["basis"])

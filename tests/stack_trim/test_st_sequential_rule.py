"""The stack-trim kit's sequential stopping rule (--until-ci-pp, --max-reps) on synthetic runs."""

import importlib.util
import math
from pathlib import Path
from tests import ROOT

import numpy as np
import pandas as pd

KIT = ROOT / "scripts" / "capture" / "stack_trim" / "run.py"
_spec = importlib.util.spec_from_file_location("st_capture_kit_seq", KIT)
kit = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(kit)


def rows(n: int, sd: float, seed: int = 1) -> list[dict]:
    """n reps of copy (CPU 1.0 s) and onecopy (0.8 s: a 20% saving), noise sd, one condition."""
    rng = np.random.default_rng(seed)
    out = []
    for mode, mean in (("copy", 1.0), ("onecopy", 0.8)):
        for x in rng.normal(mean, sd, n):
            out.append({"experiment": "onecopy", "status": "ok", "link": "lo", "direction": "up",
                        "rate_mbps": 100.0, "sender_mode": mode, "receiver_mode": "copy", "cpu_s": float(x)})
    return out


def test_halfwidth_is_inf_below_two_reps_and_shrinks_with_reps():
    assert kit.onecopy_halfwidths(rows(1, 0.05)) == {"lo-up-r100": math.inf}
    few = kit.onecopy_halfwidths(rows(3, 0.05))["lo-up-r100"]
    many = kit.onecopy_halfwidths(rows(40, 0.05))["lo-up-r100"]
    assert 0 < many < few


def test_stop_rule_target_cap_or_continue():
    noisy = kit.onecopy_halfwidths(rows(5, 0.2))   # wide interval
    quiet = kit.onecopy_halfwidths(rows(5, 0.005))  # narrow interval
    assert noisy["lo-up-r100"] > 2 and quiet["lo-up-r100"] < 2
    assert kit.stop_adding(quiet, 2.0, 5, 30) == "target"
    assert kit.stop_adding(noisy, 2.0, 5, 30) is None
    assert kit.stop_adding(noisy, 2.0, 30, 30) == "cap"
    assert kit.stop_adding({**quiet, "veth-up-r100": noisy["lo-up-r100"]}, 2.0, 5, 30) is None  # every condition
    assert kit.stop_adding({}, 2.0, 5, 30) is None  # nothing measured yet: no target reached


def test_failed_and_transport_runs_do_not_count():
    r = rows(3, 0.05) + [dict(x, status="failed", cpu_s=99.0) for x in rows(3, 0.05)]
    r += [dict(x, experiment="transport", cpu_s=50.0) for x in rows(3, 0.05)]
    assert kit.onecopy_halfwidths(r) == kit.onecopy_halfwidths(rows(3, 0.05))


# --- what ingest and the chapter make of the kit's record -------------------------------------

import pytest  # noqa: E402

from mobitrace.core.errors import InputError  # noqa: E402
from mobitrace.studies.stack_trim import analysis as sta  # noqa: E402
from mobitrace.studies.stack_trim.ingest import sequential_record  # noqa: E402


def _manifest(seq=None, reps=5):
    man = {"configuration": {"reps": reps}}
    if seq is not None:
        man["sequential"] = seq
    return man


def _seq(stopped_by="cap", widths=None):
    return {"target_pp": 2.0, "reps_done": 8, "stopped_by": stopped_by, "max_reps": 8,
            "reached_halfwidth_pp": widths or {"lo-up-r1": 1.5, "lo-up-r10": 45.4, "veth-down-r10": 51.7}}


def test_sequential_record_of_a_capped_session_synthetic():
    rec = sequential_record(_manifest(_seq()), Path("m.yaml"))
    assert rec == {"reps_done": 8, "stopped_by": "cap", "target_pp": 2.0, "widest_halfwidth_pp": 51.7,
                   "n_at_target": 1, "n_halfwidths": 3}
    text = sta.sequential_summary(pd.DataFrame([rec]))["oc_seq_text"]
    assert "stopped at that cap with 1 of 3 conditions" in text and "51.7" in text and "inconclusive" in text


def test_sequential_record_of_a_session_that_reached_its_target_synthetic():
    rec = sequential_record(_manifest(_seq("target", {"lo-up-r1": 1.5, "lo-up-r10": 1.9})), Path("m.yaml"))
    text = sta.sequential_summary(pd.DataFrame([rec]))["oc_seq_text"]
    assert "which it reached after 8 repetitions" in text and "inconclusive" not in text


def test_fixed_repetitions_have_no_target_synthetic():
    rec = sequential_record(_manifest(reps=10), Path("m.yaml"))
    assert rec["stopped_by"] == "fixed" and rec["reps_done"] == 10 and math.isnan(rec["target_pp"])
    assert "fixed in advance (10 per condition" in sta.sequential_summary(pd.DataFrame([rec]))["oc_seq_text"]
    assert sta.sequential_rule_text(rec) == "fixed"


@pytest.mark.parametrize("seq, field", [
    ({**_seq(), "stopped_by": "tired"}, "sequential.stopped_by"),
    ({**_seq(), "reps_done": -1}, "sequential.reps_done"),
    ({**_seq(), "reached_halfwidth_pp": {"<script>": 1.0}}, "sequential.reached_halfwidth_pp"),
    ({**_seq(), "reached_halfwidth_pp": {"lo-up-r1": "wide"}}, "sequential.reached_halfwidth_pp.lo-up-r1"),
    ("all of them", "sequential"),
])
def test_a_tampered_sequential_record_is_one_line_error(seq, field):
    with pytest.raises(InputError) as err:
        sequential_record(_manifest(seq), Path("m.yaml"))
    assert field in str(err.value) and "\n" not in str(err.value)

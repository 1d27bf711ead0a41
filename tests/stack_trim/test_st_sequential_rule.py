"""The stack-trim kit's sequential stopping rule (--until-ci-pp, --max-reps) on synthetic runs."""

import importlib.util
import math
from pathlib import Path

import numpy as np

KIT = Path(__file__).resolve().parents[2] / "scripts" / "capture" / "stack_trim" / "run.py"
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

"""The idle gate (mobitrace.capture.idle) and its manifest record
(capture_reader.background_load). The accounting cases are synthetic
snapshots, checked by hand; the process cases use synthetic child processes
(a busy loop at a 30% duty cycle, a sleeper) and look only at those
processes, so that other load on the machine does not decide them."""

import math
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import yaml

from mobitrace import devices
from mobitrace.capture import idle
from mobitrace.capture.idle import IdleGate, NotIdle, Proc, outside_ticks
from mobitrace.core import capture_reader
from mobitrace.core import safe_yaml
from mobitrace.core.errors import InputError
from mobitrace.studies import registry

pytestmark = pytest.mark.waits  # run first, beside the shared build (tests/conftest.py)

from tests import ROOT
KIT = 200  # the kit's pid in the synthetic snapshots


def P(ppid, own, reaped=0, kthread=False):
    return Proc(ppid=ppid, own=own, reaped=reaped, kthread=kthread)


# --------------------------------------------------------------------------- accounting, by hand

def test_synthetic_snapshots_background_by_hand():
    a = {
        (1, 0): P(0, 0, 0),            # init
        (2, 0): P(0, 5, kthread=True),  # a kernel thread
        (100, 5): P(1, 10),            # a background daemon ...
        (300, 8): P(100, 40),          # ... and its child, which exits: 40 ticks seen, 45 at exit
        (500, 1): P(1, 100),           # exits, reaped by init at 103; pid 500 is then reused
        (KIT, 6): P(1, 50),            # the kit ...
        (201, 7): P(KIT, 30),          # ... its child ...
        (202, 7): P(KIT, 20),          # ... one that exits, reaped by the kit
        (203, 7): P(201, 9),           # ... and a grandchild
    }
    b = {
        (1, 0): P(0, 0, 103),
        (2, 0): P(0, 8, kthread=True),
        (100, 5): P(1, 25, 45),
        (400, 9): P(1, 7),             # started in the interval
        (500, 12): P(1, 2),            # the reused pid: a new process
        (KIT, 6): P(1, 80, 25),
        (201, 7): P(KIT, 90),
        (203, 7): P(201, 70),
    }
    # daemon 15 own + (45 - 40) of its exited child; new 7; init 103 - 100; reused pid 2
    assert outside_ticks(a, b, {KIT}) == (15 + 5 + 7 + 3 + 2, 3)
    # the kit's tree, at any depth, counts nothing
    only_kit = {k: v for k, v in b.items() if k[0] in (KIT, 201, 203)}
    assert outside_ticks({k: v for k, v in a.items() if k[0] in (KIT, 201, 203)}, only_kit, {KIT}) == (0, 0)
    # seen from another root, the kit's tree is background: the kit 30 own + 25 reaped, its child 60, grandchild 61
    assert outside_ticks({k: a[k] for k in only_kit}, only_kit, {999}) == (30 + 25 + 60 + 61, 0)


def test_synthetic_an_interval_never_goes_below_zero():
    # a process auto-reaped (SIGCHLD ignored) leaves no trace in a reaper
    a = {(1, 0): P(0, 0), (300, 3): P(1, 500)}
    b = {(1, 0): P(0, 0)}
    assert outside_ticks(a, b, {KIT}) == (0, 0)


def test_parse_stat_takes_a_command_name_with_spaces_and_parentheses():
    fields = ["S", "7"] + ["0"] * 4 + [str(idle.PF_KTHREAD)] + ["0"] * 4 + ["11", "22", "3", "4"] + ["0"] * 4 + ["99"]
    start, p = idle.parse_stat("42 (a (b) c) " + " ".join(fields))
    assert start == 99 and p == Proc(ppid=7, own=33, reaped=7, kthread=True)


# --------------------------------------------------------------------------- the policy, with fake measurements

def fake_gate(values, **kw):
    slept = []
    gate = IdleGate(sleep=slept.append, **kw)
    seq = iter(values)
    gate.measure = lambda seconds: (next(seq), 0.0)
    return gate, slept


def test_synthetic_idle_passes_at_once():
    gate, slept = fake_gate([1.0], wait_s=10, retries=3)
    assert gate.before() == {"before_pct": 1.0, "kthreads_before_pct": 0.0, "attempts": 1, "waited_s": 0.0,
                             "clean_before": True}
    assert slept == []


def test_synthetic_busy_then_idle_waits_and_retries():
    gate, slept = fake_gate([30.0, 30.0, 4.9], wait_s=10, retries=3)
    rec = gate.before()
    assert (rec["attempts"], rec["waited_s"], rec["clean_before"], rec["before_pct"]) == (3, 20.0, True, 4.9)
    assert slept == [10, 10]


def test_synthetic_never_idle_is_flagged_or_stops_with_strict():
    gate, slept = fake_gate([30.0, 30.0, 30.0], wait_s=5, retries=2)
    rec = gate.before()
    assert (rec["attempts"], rec["waited_s"], rec["clean_before"]) == (3, 10.0, False)
    strict, _ = fake_gate([30.0, 30.0, 30.0], wait_s=5, retries=2, strict=True)
    with pytest.raises(NotIdle, match=r"30.0% of a core > 5% after 3 measurements"):
        strict.before()


def test_the_threshold_itself_is_clean():
    gate, _ = fake_gate([5.0], max_pct=5.0)
    assert gate.before()["clean_before"]


# --------------------------------------------------------------------------- synthetic processes

BUSY = """
import time
while True:  # ~30% of one core: 30 ms of CPU, then 70 ms asleep
    c = time.process_time()
    while time.process_time() - c < 0.03:
        pass
    time.sleep(0.07)
"""


@pytest.fixture
def busy_child():
    p = subprocess.Popen([sys.executable, "-c", textwrap.dedent(BUSY)])
    yield p
    p.kill()
    p.wait()


@pytest.fixture
def sleeper():
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    yield p
    p.kill()
    p.wait()


def only(*pids):
    """A snapshot of just these processes (the rest of this shared machine is not the test)."""
    return lambda: {k: v for k, v in idle.snapshot().items() if k[0] in pids}


def test_synthetic_busy_process_outside_the_kit_is_flagged(busy_child, sleeper):
    time.sleep(0.3)  # the interpreter's start-up is not part of the duty cycle
    # `sleeper` plays the kit; the busy loop is not in its tree
    gate = IdleGate(max_pct=5, wait_s=0.1, retries=1, window_s=2.0, period_s=0.5, roots={sleeper.pid},
                    snap=only(sleeper.pid, busy_child.pid))
    user, _ = gate.measure(2.0)
    assert 5 <= user <= 36, user  # <= 30% duty + 2 ticks in 2 s + rounding of the sleeps
    with gate.run("r1") as rec:
        time.sleep(2.0)
    assert rec["attempts"] == 2 and rec["flagged"] and rec["during_pct"] >= 5, rec
    assert not math.isnan(rec["cost_pct"]) and rec["cost_pct"] >= 0
    doc = {"idle_gate": gate.manifest()}
    assert capture_reader.background_load(doc)["runs"]["r1"]["flagged"] is True
    strict = IdleGate(max_pct=5, wait_s=0.1, retries=0, window_s=1.0, strict=True, roots={sleeper.pid},
                      snap=only(sleeper.pid, busy_child.pid))
    with pytest.raises(NotIdle):
        with strict.run("r1"):
            pass
    assert strict.runs == {}


def test_synthetic_busy_child_of_the_kit_is_excluded(busy_child):
    time.sleep(0.3)
    # this test process plays the kit: its child is the experiment
    gate = IdleGate(max_pct=5, wait_s=0.1, retries=1, window_s=1.0, period_s=0.5,
                    snap=only(os.getpid(), busy_child.pid))
    assert gate.measure(1.0) == (0.0, 0.0)
    with gate.run("r1") as rec:
        time.sleep(1.0)
    assert (rec["attempts"], rec["before_pct"], rec["during_pct"], rec["flagged"]) == (1, 0.0, 0.0, False)


def test_synthetic_idle_process_passes(sleeper):
    time.sleep(0.5)  # past the interpreter's start-up
    # the sleeper is outside the kit (no kit process in the snapshot): it is all the machine there is
    gate = IdleGate(max_pct=5, wait_s=10, retries=3, window_s=1.0, period_s=0.5, roots=set(),
                    snap=only(sleeper.pid))
    t0 = time.monotonic()
    with gate.run("r1") as rec:
        pass
    assert time.monotonic() - t0 < 5  # no wait
    assert (rec["attempts"], rec["waited_s"], rec["before_pct"], rec["flagged"]) == (1, 0.0, 0.0, False)


def test_a_disabled_gate_records_nothing():
    gate = IdleGate(enabled=False)
    with gate.run("r1") as rec:
        pass
    assert rec == {} and gate.manifest() is None


def test_a_resumed_session_keeps_the_records_of_earlier_runs():
    gate, _ = fake_gate([1.0], period_s=0.05)
    gate.snap = lambda: {}
    with gate.run("r2"):
        pass
    prev = {"runs": {"r1": {"before_pct": 9.0, "during_pct": 1.0, "flagged": True}}}
    doc = gate.manifest(prev)
    assert sorted(doc["runs"]) == ["r1", "r2"] and doc["n_flagged"] == 1


# --------------------------------------------------------------------------- the manifest record

def committed_manifests():
    return sorted((ROOT / "data" / "raw").glob("*/*/*/manifest.yaml"))


def test_captures_without_the_gate_have_no_background_load():
    # captures made before the gate read as None; the re-captures carry a record
    paths = committed_manifests()
    assert len(paths) >= 5
    docs = {path: safe_yaml.read_manifest(path) for path in paths}  # each read once
    loads = {path: capture_reader.background_load(doc, path) for path, doc in docs.items()}
    for path, load in loads.items():
        assert (load is None) == ("idle_gate" not in docs[path]), path
    assert sum(load is None for load in loads.values()) >= 5
    assert capture_reader.background_load({"schema": 2, "host": {}}) is None


GOOD = {"max_pct": 5.0, "runs": {"up-100M-r1": {"before_pct": 0.5, "during_pct": 7.25, "flagged": True,
                                                "kthreads_before_pct": 0.0, "cost_pct": 0.4}}}


@pytest.mark.parametrize("change,message", [
    (("runs", "up-100M-r1", "during_pct", -1), "field 'idle_gate.runs.up-100M-r1.during_pct': expected a number >= 0, found -1"),
    (("runs", "up-100M-r1", "before_pct", float("nan")), "idle_gate.runs.up-100M-r1.before_pct': expected a finite number"),
    (("runs", "up-100M-r1", "before_pct", "low"), "before_pct': expected a number, found 'low'"),
    (("runs", "up-100M-r1", "cost_pct", -0.1), "cost_pct': expected a number >= 0"),
    (("runs", "up-100M-r1", "flagged", "yes"), "flagged': expected true or false, found 'yes'"),
    (("max_pct", float("inf")), "idle_gate.max_pct': expected a finite number"),
])
def test_a_bad_gate_record_is_refused_naming_the_field(change, message):
    gate = yaml.safe_load(yaml.safe_dump(GOOD))
    *keys, last, value = change
    node = gate
    for k in keys:
        node = node[k]
    node[last] = value
    assert capture_reader.background_load({"idle_gate": GOOD})["runs"]["up-100M-r1"]["during_pct"] == 7.25
    with pytest.raises(InputError, match=re.escape(message)):
        capture_reader.background_load({"idle_gate": gate}, "manifest.yaml")


def test_a_bad_run_id_in_the_gate_record_is_refused():
    with pytest.raises(InputError, match="idle_gate.runs"):
        capture_reader.background_load({"idle_gate": {"max_pct": 5, "runs": {"../x": GOOD["runs"]["up-100M-r1"]}}})


def test_validate_checks_the_gate_record_of_a_session(tmp_path):
    src = ROOT / "data/raw/mptcp-dualband/vm-veth-2path/s20261122b"
    dst = tmp_path / "vm-veth-2path" / src.name
    shutil.copytree(src, dst)
    doc = yaml.safe_load((dst / "manifest.yaml").read_text())
    doc["idle_gate"] = yaml.safe_load(yaml.safe_dump(GOOD))
    (dst / "manifest.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    study, problems = devices.validate(dst)
    assert study is not None and problems == [], problems
    doc["idle_gate"]["runs"]["up-100M-r1"]["during_pct"] = -3
    (dst / "manifest.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    _, problems = devices.validate(dst)
    assert any("idle_gate.runs.up-100M-r1.during_pct" in str(p) for p in problems), problems


@pytest.mark.parametrize("study", [s for s in registry.studies() if s.capture_kit], ids=lambda s: s.slug)
def test_every_kit_gates_its_runs(study):
    kit = ROOT / study.capture_kit
    source = kit.read_text(encoding="utf-8")
    assert "gate.run(" in source and "IdleGate.add_arguments" in source, kit
    assert 'idle_gate"] = ' in source, f"{kit} does not write the gate's record into the manifest"
    out = subprocess.run([sys.executable, str(kit), "--help"], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    assert out.returncode == 0 and "--idle-max-pct" in out.stdout and "--idle-strict" in out.stdout, out.stderr


def test_smoke_captures_measure_and_flag_but_do_not_wait():
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--smoke", action="store_true")
    IdleGate.add_arguments(ap)
    full, smoke = IdleGate.from_args(ap.parse_args([])), IdleGate.from_args(ap.parse_args(["--smoke"]))
    assert (full.retries, full.window_s, full.max_pct, full.wait_s) == (3, 2.0, 5.0, 10.0)
    assert (smoke.retries, smoke.window_s, smoke.enabled) == (0, 0.5, True)
    given = IdleGate.from_args(ap.parse_args(["--smoke", "--idle-retries", "2", "--idle-window-s", "1"]))
    assert (given.retries, given.window_s) == (2, 1.0)
    with pytest.raises(SystemExit, match="--idle-max-pct: expected a number >= 0"):
        IdleGate.from_args(ap.parse_args(["--idle-max-pct", "nan"]))
    assert not IdleGate.from_args(ap.parse_args(["--no-idle-gate"])).enabled

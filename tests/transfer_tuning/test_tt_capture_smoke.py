"""The transfer-tuning capture kit's smoke mode end to end (seconds): nginx,
the delay bridge and the client in three namespaces; needs root, network
namespaces, tc, ethtool and nginx, skipped with the reason otherwise. The
capture it writes goes to a temporary folder and is real (a smoke run)."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from mobitrace import devices
from mobitrace.core import capture_reader
from mobitrace.core import safe_yaml
from mobitrace.studies.transfer_tuning import ingest as tt
from tests.helpers import lock_args, smoke_command

from tests import ROOT as REPO
KIT = REPO / "scripts" / "capture" / "transfer_tuning" / "run.py"
_spec = importlib.util.spec_from_file_location("mttt_capture_kit", KIT)
kit = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(kit)

REASON = kit.why_not()


def _namespaces() -> str:
    return subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout


@pytest.mark.capture
@pytest.mark.skipif(REASON is not None, reason=f"transfer-tuning capture smoke test skipped: {REASON}")
def test_tt_capture_smoke_then_ingest(tmp_path):
    out = tmp_path / "raw"
    cmd = smoke_command(KIT, out)
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    finally:
        for ns in ("mttt-cli", "mttt-dly", "mttt-srv"):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    assert r.returncode == 0, r.stdout + r.stderr
    folder = out / "smoke-host" / "smoke"
    study, problems = devices.validate(folder)
    assert problems == [] and study.slug == "transfer-tuning"
    tt.ingest(out / "smoke-host", tmp_path / "interim")
    runs = pd.read_parquet(tmp_path / "interim" / "runs.parquet")
    gate = capture_reader.background_load(safe_yaml.read_manifest(folder / "manifest.yaml"))
    assert gate["max_pct"] == 5.0 and set(gate["runs"]) == set(runs["run_id"])  # the idle gate: every run
    assert len(runs) == 9
    assert (runs["bytes"] > 0).all() and (runs["throughput_mbps"] > 0).all()
    # The link is shaped: no run beats the tbf rate (40 Mbit/s by default).
    assert (runs["throughput_mbps"] < 40.0).all()
    # Each run records the configured rate and its achieved one (goodput as ingest derives it).
    assert (runs["rate_mbit"] == 40.0).all()
    assert runs["achieved_mbit"].to_numpy() == pytest.approx(runs["throughput_mbps"].to_numpy(), rel=1e-3)
    assert (runs["link_peak_mbit"] < 40.0 * 1.05).all()
    man = safe_yaml.read_manifest(folder / "manifest.yaml")
    assert man["achieved_rate"]["configured_mbit"] == 40.0 and man["achieved_rate"]["runs"] == 9
    assert man["tools"]["delay_bridge"]["source"].endswith("delay_bridge.c")
    # The delay bridge adds the RTT: a first request on a new connection waits >= 1 RTT (50 ms).
    assert (runs["transfer_s"] > 0.05).all()


@pytest.mark.capture
@pytest.mark.skipif(REASON is not None, reason=f"transfer-tuning capture smoke test skipped: {REASON}")
def test_tt_kit_removes_its_namespaces_on_sigterm(tmp_path):
    import signal
    import time
    cmd = [sys.executable, str(KIT), "--device", "t", "--out", str(tmp_path), "--smoke", *lock_args()]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(200):
            if "mttt-srv" in _namespaces():
                break
            time.sleep(0.05)
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    assert "mttt-" not in _namespaces()


def test_tt_capture_smoke_reason_is_printed(capsys):
    print(f"transfer-tuning capture smoke test: {'runs' if REASON is None else 'skipped: ' + REASON}")
    assert "capture smoke test" in capsys.readouterr().out

"""The capture kit's smoke mode (2 rates x 1 s), on a machine that can
capture (root, iperf3, ethtool, network namespaces); skipped with the reason
otherwise. The namespaces it creates must be gone afterwards, also after
Ctrl-C."""

import os
import signal
import subprocess
import sys
import time

import pytest

from mobitrace.core import capture_reader
from mobitrace.core import safe_yaml
from mobitrace.studies.cpu_gbps import ingest as captures

CAPTURE = ["scripts/capture/capture.py"]


def why_not(repo):
    sys.path.insert(0, str(repo / "scripts" / "capture"))
    try:
        import capture
    finally:
        sys.path.pop(0)
    return capture.can_capture()


# The kit's namespace names (capture.py); other kits' namespaces may come and go meanwhile.
KIT_PREFIXES = ("mtdev", "mtpeer", "mtprobe")


def namespaces():
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip() and line.startswith(KIT_PREFIXES)}


@pytest.fixture
def capture_ok(repo):
    reason = why_not(repo)
    if reason:
        print(f"SKIP capture smoke test: {reason}")
        pytest.skip(f"cannot capture on this machine: {reason}")


@pytest.mark.capture
def test_smoke_capture_and_ingest(capture_ok, repo, tmp_path):
    before = namespaces()
    proc = subprocess.run([sys.executable, *CAPTURE, "--device", "ci-smoke", "--smoke", "--out", str(tmp_path),
                           "--session", "smoke"], cwd=repo, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert namespaces() == before
    device_dir = tmp_path / "cpu-gbps" / "ci-smoke"
    sessions, runs = captures.load_device(device_dir)
    gate = capture_reader.background_load(safe_yaml.read_manifest(device_dir / "smoke" / "manifest.yaml"))
    assert gate["max_pct"] == 5.0 and set(gate["runs"]) == set(runs["run_id"])  # the idle gate: every run
    assert sessions.iloc[0]["kind"] == "smoke"
    assert len(runs) == 4 and set(runs["direction"]) == {"down", "up"}
    assert (runs["throughput_gbps"] > 0).all()
    captures.ingest(device_dir, tmp_path / "interim")
    assert (tmp_path / "interim" / "runs.parquet").exists()


@pytest.mark.capture
def test_ctrl_c_removes_namespaces_and_partial_session(capture_ok, repo, tmp_path):
    before = namespaces()
    proc = subprocess.Popen([sys.executable, *CAPTURE, "--device", "ci-int", "--rates", "100M", "--reps", "1",
                             "--duration", "30", "--directions", "down", "--out", str(tmp_path),
                             "--session", "int"], cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    # Wait until the test bed is up, then interrupt as Ctrl-C would.
    for _ in range(100):
        if len(namespaces() - before) == 2:
            break
        time.sleep(0.1)
    time.sleep(1.5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert namespaces() == before
    assert not (tmp_path / "cpu-gbps" / "ci-int" / "int").exists()
    assert not (tmp_path / "cpu-gbps" / "ci-int" / "int.partial").exists()
    assert "namespaces removed" in err


def test_not_root_or_no_tools_is_a_skip_with_reason(repo):
    """Exit status 77 and a printed reason when capture is impossible."""
    if os.geteuid() == 0:
        env = {**os.environ, "PATH": "/nonexistent"}
        proc = subprocess.run([sys.executable, *CAPTURE, "--device", "x", "--smoke", "--out", "/tmp/unused"],
                              cwd=repo, capture_output=True, text=True, env=env)
    else:
        proc = subprocess.run([sys.executable, *CAPTURE, "--device", "x", "--smoke", "--out", "/tmp/unused"],
                              cwd=repo, capture_output=True, text=True)
    assert proc.returncode == 77
    assert "SKIP" in proc.stdout

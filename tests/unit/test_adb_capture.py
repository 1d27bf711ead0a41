"""The Android capture kit (scripts/capture/android/adb_capture.py) against a
fake adb answering from a synthetic phone (tests/fixtures/android/)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mobitrace import devices
from mobitrace.core.host_info import hostname_hash
from mobitrace.studies.cpu_gbps import ingest as captures

pytestmark = [pytest.mark.waits, pytest.mark.xdist_group("test_adb_capture")]  # tests/conftest.py

from tests import ROOT
KIT = ROOT / "scripts" / "capture" / "android" / "adb_capture.py"
FAKE = ROOT / "tests" / "fixtures" / "android" / "fake_adb.py"


def run_kit(tmp_path, *extra, adb=None):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    if adb is None:
        (bin_dir / "adb").symlink_to(FAKE)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "FAKE_ADB_LOG": str(tmp_path / "adb.log")}
    cmd = [sys.executable, str(KIT), "--device", "synthetic-phone", "--server", "192.0.2.1",
           "--sample-ms", "10", "--out", str(tmp_path / "raw"), *extra]
    if adb is not None:
        cmd += ["--adb", adb]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)


@pytest.fixture(scope="module")
def synthetic_phone_session(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("adb")
    out = run_kit(tmp, "--smoke")
    assert out.returncode == 0, out.stderr
    (session,) = (tmp / "raw" / "synthetic-phone").iterdir()
    return tmp, session


def test_synthetic_phone_capture_validates(synthetic_phone_session):
    _, session = synthetic_phone_session
    study, problems = devices.validate(session)
    assert problems == [] and study.slug == "cpu-gbps"
    runs = sorted(p.name for p in (session / "runs").iterdir())
    assert runs == ["down-100M-r1", "down-max-r1", "up-100M-r1", "up-max-r1"]
    for run in runs:
        names = sorted(p.name for p in (session / "runs" / run).iterdir())
        assert names == ["battery.csv.gz", "iperf3.json.gz", "manifest.yaml", "proc_pid.txt.gz", "proc_stat.txt.gz"]


def test_synthetic_phone_values_are_the_hand_computed_ones(synthetic_phone_session):
    _, session = synthetic_phone_session
    sessions, runs = captures.load_device(session.parent)
    s = sessions.iloc[0]
    # schema 2: the host name is recorded as a hash (host_info.hostname_hash)
    assert (s["n_cpus"], s["cpu_model"], s["hostname"], s["rps_device"]) == (8, "SYNTH8", hostname_hash("testphone"),
                                                                             "rx-0=0")
    r = runs.set_index("run_id").loc["down-100M-r1"]
    # `times` children line 0m0.12s 0m0.34s
    assert r["client_cpu_s"] == pytest.approx(0.46)
    # run 1000.50..1001.60 s brackets samples 5..16: 11 steps of 250 + 125 us
    assert r["ksoftirqd_cpu_s"] == pytest.approx(11 * 375e-6)
    # per step: busy 24 user + 4 system + 2 softirq = 30 ticks, idle 56 -> 30/86
    assert r["stat_all_total_pct"] == pytest.approx(100 * 30 / 86)
    assert r["stat_all_softirq_pct"] == pytest.approx(100 * 2 / 86)


def test_synthetic_phone_battery_log_keeps_sysfs_units(synthetic_phone_session):
    import gzip
    _, session = synthetic_phone_session
    text = gzip.decompress((session / "runs" / "down-max-r1" / "battery.csv.gz").read_bytes()).decode()
    lines = text.splitlines()
    assert lines[0] == "time,voltage_now,current_now"
    assert lines[1] == "1000000000000,4100000,-350000"
    import yaml
    manifest = yaml.safe_load((session / "manifest.yaml").read_text())
    trace = manifest["power_trace"]
    assert (trace["format"], trace["units"]) == ("android-battery", {"time": "ns", "voltage": "uV", "current": "uA"})
    # the synthetic phone is discharging with a negative current_now
    assert trace["current_sign"] == "discharge-negative"
    assert trace["current_sign_evidence"] == "status=Discharging, current_now=-352000 at session start"
    assert manifest["android"]["ro.product.model"] == "Test Phone 1"


def test_kit_only_reads_from_the_phone(synthetic_phone_session):
    tmp, _ = synthetic_phone_session
    calls = (tmp / "adb.log").read_text().splitlines()
    shell = [c for c in calls if c.startswith("['shell'")]
    allowed = ("['shell', 'cat ", "['shell', 'getprop'", "['shell', 'uname ", "['shell', 'ls ",
               "['shell', '# mobitrace-", "['shell', \"pkill -f 'mobitrace-sampler'", "['shell', '/data/local/tmp/iperf3 --version'")
    assert shell and all(c.startswith(allowed) for c in shell), [c for c in shell if not c.startswith(allowed)]


def test_kit_without_adb_exits_77_with_reason(tmp_path):
    out = run_kit(tmp_path, "--smoke", adb="no-such-adb-binary")
    assert out.returncode == 77 and "no 'no-such-adb-binary' on PATH" in out.stderr
    assert not (tmp_path / "raw").exists()


def test_kit_leaves_no_partial_session_when_the_phone_fails(tmp_path):
    phone = tmp_path / "broken-phone"
    import shutil
    shutil.copytree(FAKE.with_name("phone"), phone)
    (phone / "sampler.txt").write_text("T 1000.00 1.0\nP 12 ksoftirqd/0 oops\n")
    env_phone = {"FAKE_ADB_PHONE": str(phone)}
    os.environ.update(env_phone)
    try:
        # Its sampler never prints a sample: the kit gives up after --sampler-timeout (30 s by default).
        out = run_kit(tmp_path, "--smoke", "--sampler-timeout", "2")
    finally:
        del os.environ["FAKE_ADB_PHONE"]
    assert out.returncode != 0
    assert "printed no sample within 2 s" in out.stderr, out.stderr
    assert list((tmp_path / "raw" / "synthetic-phone").iterdir()) == []

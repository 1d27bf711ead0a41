"""mobitrace.capture, the library every capture kit imports, and the reader's
mapping of the committed schema-1 host metadata to schema 2. Each case is
small enough to check by hand. Namespace cases need root and `ip netns`; they
are skipped with the reason otherwise."""

import hashlib
import io
import os
import platform
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import yaml

from mobitrace.capture import MeasurementLock, Progress, SessionWriter, run
from mobitrace.capture import host as capture_host
from mobitrace.capture import netns
from mobitrace.core import host_info
from mobitrace.core.host_info import HOST_KEYS
from mobitrace.core.errors import InputError
from mobitrace.studies import registry

from tests import ROOT
SRC = ROOT / "src"
PREFIX = "mtlib-"
NETNS_REASON = netns.why_not(PREFIX)


def child(code: str, **kw) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


# --------------------------------------------------------------------------- namespaces

# `make test-capture` runs these (root, network namespaces).
_skip_without_netns = pytest.mark.skipif(NETNS_REASON is not None, reason=f"needs network namespaces: {NETNS_REASON}")


def needs_netns(test):
    return pytest.mark.capture(_skip_without_netns(test))


@needs_netns
def test_namespaces_and_veth_are_removed_after_an_exception():
    ns = netns.Namespaces(PREFIX, ["a", "b"])
    with pytest.raises(RuntimeError, match="boom"):
        with ns:
            ns.veth("a", "mtlibva", "b", "mtlibvb")
            ns.address("a", "mtlibva", "10.99.0.1/30")
            assert {ns["a"], ns["b"]} <= netns.listing(PREFIX)
            raise RuntimeError("boom")
    assert not ({ns["a"], ns["b"]} & netns.listing(PREFIX))
    assert subprocess.run(["ip", "link", "show", "mtlibva"], capture_output=True).returncode != 0


@needs_netns
def test_namespaces_are_removed_when_the_process_holding_them_gets_sigterm():
    p = child(f"""
        import time
        from mobitrace.capture.netns import Namespaces, handle_signals, Interrupted
        try:
            with handle_signals(), Namespaces("{PREFIX}", ["t"]) as ns:
                print(ns["t"], flush=True)
                time.sleep(60)
        except Interrupted as exc:
            raise SystemExit(exc.status)
    """)
    name = p.stdout.readline().strip()
    assert name == f"{PREFIX}t{p.pid}" and name in netns.listing(PREFIX)
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=30) == 128 + signal.SIGTERM
    assert name not in netns.listing(PREFIX)


@needs_netns
def test_fixed_names_replace_a_stale_namespace():
    stale = netns.Namespaces(PREFIX, ["fixed"], per_process=False)
    subprocess.run(["ip", "netns", "add", stale["fixed"]], check=True)  # left by a killed run
    with netns.Namespaces(PREFIX, ["fixed"], per_process=False) as ns:
        assert ns["fixed"] == f"{PREFIX}fixed" and netns.exists(ns["fixed"])
    assert not netns.exists(f"{PREFIX}fixed")


def test_not_root_or_missing_tool_is_a_reason():
    reason = netns.why_not(PREFIX, tools=("no-such-tool-xyz",))
    assert reason in ("not root", netns.missing_tool("no-such-tool-xyz"))
    assert reason == "not root" or reason.startswith("no-such-tool-xyz not installed (Debian/Ubuntu: apt-get install")


# --------------------------------------------------------------------------- lock


def test_the_lock_excludes_a_second_process(tmp_path):
    path = tmp_path / "capture.lock"
    holder = child(f"""
        import time
        from mobitrace.capture import MeasurementLock
        with MeasurementLock("{path}"):
            print("held", flush=True)
            time.sleep(1.5)
    """)
    assert holder.stdout.readline().strip() == "held"
    lock = MeasurementLock(path)
    t0 = time.monotonic()
    lock.acquire()  # blocks until the holder lets go (about 1.5 s)
    waited = time.monotonic() - t0
    assert holder.wait(timeout=30) == 0
    assert 0.5 < waited < 10 and lock.waited_s == pytest.approx(waited, abs=0.1)
    lock.release()
    assert lock.held_s >= 0 and not lock.held


def test_without_a_path_the_lock_is_a_no_op():
    with MeasurementLock(None) as lock:
        assert not lock.held
    assert lock.held_s == 0


def test_release_if_held_longer_than(tmp_path):
    lock = MeasurementLock(tmp_path / "l")
    lock.acquire()
    assert lock.release_if_held(60) is False and lock.held
    assert lock.release_if_held(0) is True and not lock.held


# --------------------------------------------------------------------------- command


def test_timeout_kills_the_sleeping_process_group():
    t0 = time.monotonic()
    res = run(["sh", "-c", "sleep 30 & echo $!; wait"], timeout=0.5)
    assert res.timed_out and res.returncode is None
    assert time.monotonic() - t0 < 10
    grandchild = int(res.stdout.split()[0])
    time.sleep(0.2)
    state = Path(f"/proc/{grandchild}/stat")
    # the background sleep was in the group: gone, or a zombie waiting for init
    assert not state.exists() or state.read_text().rsplit(")", 1)[1].split()[0] == "Z"


def test_run_returns_status_output_and_rusage():
    res = run([sys.executable, "-c", "import sys; sum(range(3_000_000)); print('out'); print('err', file=sys.stderr); "
                                     "sys.exit(3)"], timeout=60)
    assert (res.returncode, res.stdout, res.stderr, res.timed_out) == (3, "out\n", "err\n", False)
    assert set(res.rusage) == {"utime_s", "stime_s", "maxrss_kb", "nvcsw", "nivcsw"}
    assert res.rusage["utime_s"] > 0 and not res.ok


# --------------------------------------------------------------------------- host metadata


def test_host_metadata_has_exactly_the_schema_2_keys():
    host = capture_host.collect(sysctls=("net.core.somaxconn",), tools={"sh": ["sh", "-c", "echo v1; echo v2"]},
                                note="shared")
    assert tuple(host) == HOST_KEYS and capture_host.SCHEMA == 2
    assert host["hostname_hash"] == hashlib.sha256(platform.node().encode()).hexdigest()[:12]
    assert platform.node() not in yaml.safe_dump(host) or platform.node() in ("", "localhost")
    assert host["cpu_count"] == os.cpu_count() and host["user_hz"] == os.sysconf("SC_CLK_TCK")
    assert host["kernel"] == platform.release() and isinstance(host["cpu_model"], list)
    assert "net.core.somaxconn" in host["sysctls"] and "net.ipv4.tcp_rmem" in host["sysctls"]
    assert host["tools"]["sh"] == "v1" and host["note"] == "shared"
    # a schema-2 manifest reads back unchanged
    assert host_info.host_metadata({"schema": 2, "host": host}, "m.yaml") == host


# --------------------------------------------------------------------------- session writer


def test_session_is_renamed_on_success_and_carries_schema_2(tmp_path):
    with SessionWriter(tmp_path / "dev", "s1") as s:
        s.write("runs/r1/data.txt", "x\n", gz=True)
        s.write_manifest({"study": "toy", "device": "dev"})
        assert s.partial.is_dir() and not s.final.exists()
        final = s.finish()
    assert sorted(p.name for p in (tmp_path / "dev").iterdir()) == ["s1"]
    doc = yaml.safe_load((final / "manifest.yaml").read_text())
    assert list(doc) == ["study", "schema", "device"] and doc["schema"] == 2
    assert (final / "runs/r1/data.txt.gz").read_bytes()[:2] == b"\x1f\x8b"


def test_an_interrupted_session_leaves_only_partial(tmp_path):
    p = child(f"""
        import time
        from mobitrace.capture import SessionWriter
        s = SessionWriter("{tmp_path / 'dev'}", "s1").open()
        s.write("runs.csv", "run_id\\n")
        print("writing", flush=True)
        time.sleep(60)
        s.finish()
    """)
    assert p.stdout.readline().strip() == "writing"
    p.kill()  # a crash: no handler runs
    p.wait(timeout=30)
    assert sorted(x.name for x in (tmp_path / "dev").iterdir()) == ["s1.partial"]


def test_an_exception_keeps_or_discards_partial(tmp_path):
    with pytest.raises(KeyError):
        with SessionWriter(tmp_path / "dev", "kept") as s:
            s.write("a.txt", "a")
            raise KeyError("x")
    with pytest.raises(KeyError):
        with SessionWriter(tmp_path / "dev", "gone", keep_partial=False) as s:
            s.write("a.txt", "a")
            raise KeyError("x")
    assert sorted(x.name for x in (tmp_path / "dev").iterdir()) == ["kept.partial"]


def test_resume_continues_partial_and_reopens_a_finished_session(tmp_path):
    s = SessionWriter(tmp_path / "dev", "s1", resume=True).open()
    s.append_row("runs.csv", ["run_id", "status"], {"run_id": "r1", "status": "ok"})
    # the kit is interrupted here; the next invocation resumes
    s = SessionWriter(tmp_path / "dev", "s1", resume=True).open()
    s.append_row("runs.csv", ["run_id", "status"], {"run_id": "r2", "status": "ok"})
    s.finish()
    s = SessionWriter(tmp_path / "dev", "s1", resume=True).open()  # more runs into a finished session
    assert [r["run_id"] for r in s.read_rows("runs.csv")] == ["r1", "r2"] and not s.final.exists()
    s.finish()
    with pytest.raises(FileExistsError, match="immutable"):
        SessionWriter(tmp_path / "dev", "s1").open()


# --------------------------------------------------------------------------- progress


def test_progress_line_counts_and_eta():
    out = io.StringIO()
    bar = Progress(4, "kit", stream=out, width=8)
    bar.t0 -= 10  # as if the first run took 10 s
    bar.step("r1 ok")
    line = out.getvalue().strip()
    assert line.startswith("[kit] [##......] 1/4  25%") and "ETA 0:30" in line and line.endswith("r1 ok")


# --------------------------------------------------------------------------- schema-1 manifests


def committed(study):
    return sorted((ROOT / "data" / "raw" / study).glob("*/*/manifest.yaml"))


VM = hashlib.sha256(b"vm").hexdigest()[:12]  # every committed capture was made on the host 'vm'


@pytest.mark.parametrize("study,cpu_model,user_hz,cpufreq", [
    ("cpu-gbps", ["AMD EPYC"], 100, list),                                   # host.cpu.model, host.user_hz
    ("priority-boost", ["AMD EPYC"], 100, list),                             # kernel_hz_hint '100'
    ("stack-trim", ["Intel(R) Xeon(R) Processor"], 100, str),               # cpufreq: a note
    ("transfer-tuning", ["Intel(R) Xeon(R) Processor"], None, str),          # no USER_HZ recorded
    ("mptcp-dualband", ["Intel(R) Xeon(R) Processor"], 100, str),           # kernel_hz_hint, cpu_mhz_source
])
def test_committed_schema_1_manifests_map_to_the_schema_2_keys(study, cpu_model, user_hz, cpufreq):
    # Captures made since the capture library (schema 2, e.g. cpu-gbps 2026-11-23) are not this test's.
    # each manifest parsed once, by libyaml (test_capture_reader: it reads them as the Python loader does)
    docs = [(p, yaml.load(p.read_text(), Loader=yaml.CSafeLoader)) for p in committed(study)]
    schema_1 = [(p, doc) for p, doc in docs if host_info.manifest_schema(doc) == 1]
    assert schema_1
    for path, doc in schema_1:
        host = host_info.host_metadata(doc, path)
        assert tuple(host) == HOST_KEYS
        assert host["hostname_hash"] == VM and host["cpu_count"] == 2 and host["machine"] == "x86_64"
        assert host["cpu_model"] == cpu_model and host["user_hz"] == user_hz
        assert host["kernel"].startswith("6.18.44-fc-") and isinstance(host["cpufreq"], cpufreq)
        assert all(isinstance(m, float) for m in host["cpu_mhz"])


def test_schema_1_sources_are_named_as_in_the_file():
    tt = yaml.safe_load(committed("transfer-tuning")[0].read_text())
    src = host_info.host_sources(tt)
    assert src["cpu_count"] == ("host", "cpus") and src["hostname_hash"] == ("host", "hostname")
    assert src["user_hz"] is None
    tt["host"]["cpus"] = -2
    with pytest.raises(InputError, match=r"field 'host.cpus': expected an integer >= 1, found -2"):
        host_info.host_metadata(tt, "manifest.yaml")
    gbps = yaml.safe_load(committed("cpu-gbps")[0].read_text())
    assert host_info.host_sources(gbps)["cpu_count"] == ("host", "cpu", "count")
    assert host_info.host_metadata(gbps, "m")["os"] == "Debian GNU/Linux 12 (bookworm)"


@pytest.mark.parametrize("study", [s for s in registry.studies() if s.capture_kit], ids=lambda s: s.slug)
def test_every_kit_imports_the_library_and_takes_the_measurement_lock(study):
    kit = ROOT / study.capture_kit
    source = kit.read_text(encoding="utf-8")
    assert "from mobitrace.capture import" in source, kit
    assert "MeasurementLock" in source, f"{kit} does not use the one machine-wide lock"
    out = subprocess.run([sys.executable, str(kit), "--help"], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(SRC)})
    assert out.returncode == 0 and "--lock" in out.stdout, out.stdout + out.stderr

"""Parsers and ingest of raw cpu-gbps captures: a real smoke capture
(tests/fixtures/captures, made with `capture.py --smoke` on the development
VM) and a corpus of malformed files (tests/fixtures/malformed/cpu-gbps)."""

import gzip
import shutil

import pandas as pd
import pytest

from mobitrace.studies.cpu_gbps import ingest as captures
from mobitrace.core.errors import InputError

DEVICE = "smoke-test"
SESSION = "20261122T025322Z"


@pytest.fixture
def device_dir(fixtures, tmp_path):
    """A writable copy of the smoke capture's device folder."""
    src = fixtures / "captures" / "cpu-gbps" / DEVICE
    dst = tmp_path / "raw" / "cpu-gbps" / DEVICE
    shutil.copytree(src, dst)
    return dst


def run_dir(device_dir, run_id="down-100M-r1"):
    return device_dir / SESSION / "runs" / run_id


def test_smoke_capture_parses(device_dir):
    sessions, runs = captures.load_device(device_dir)
    assert len(sessions) == 1 and len(runs) == 4
    s = sessions.iloc[0]
    assert s["config"] == "default" and s["kind"] == "smoke" and s["n_cpus"] >= 1
    assert s["gro_device"] == "on"
    assert set(runs["direction"]) == {"down", "up"}
    assert (runs["throughput_gbps"] > 0.05).all()
    for col in ("stat_all_total_pct", "stat_all_softirq_pct", "precise_total_pct", "iperf3_total_pct"):
        assert runs[col].between(0, 100).all(), col
    # The unlimited runs move far more data than the 100 Mbps ones.
    by_rate = runs.groupby("target_rate_bps")["throughput_gbps"].mean()
    assert by_rate.loc[0] > 10 * by_rate.loc[100_000_000]


def test_gzip_and_plain_give_the_same(device_dir, tmp_path):
    gz = run_dir(device_dir) / "proc_stat.txt.gz"
    plain = tmp_path / "proc_stat.txt"
    plain.write_bytes(gzip.decompress(gz.read_bytes()))
    pd.testing.assert_frame_equal(captures.parse_proc_stat(gz), captures.parse_proc_stat(plain))
    # A name without .gz finds the compressed file.
    pd.testing.assert_frame_equal(captures.parse_proc_stat(gz.with_suffix("")), captures.parse_proc_stat(plain))


def test_proc_stat_utilization_hand_computed(tmp_path):
    # Two samples 1 s apart on one CPU: 10 ticks busy (6 user, 1 system,
    # 3 softirq) out of 100 -> total 10 %, softirq 3 %.
    p = tmp_path / "proc_stat.txt"
    p.write_text("0 cpu 100 0 50 1000 0 0 10 0 0 0\n"
                 "1000000000 cpu 106 0 51 1090 0 0 13 0 0 0\n")
    stat = captures.parse_proc_stat(p)
    u = captures.proc_stat_utilization(stat, 100, 900_000_000, p)
    assert u["stat_all_total_pct"] == pytest.approx(10.0)
    assert u["stat_all_softirq_pct"] == pytest.approx(3.0)
    assert u["stat_window_s"] == pytest.approx(1.0)


def test_iowait_may_decrease(fixtures):
    """proc(5): iowait "may decrease in certain situations"; real captures
    show it (e.g. 729 -> 725 ticks on cpu0), so it is not an error."""
    stat = captures.parse_proc_stat(fixtures / "malformed" / "cpu-gbps" / "proc_stat_iowait_decreases.txt")
    assert len(stat) == 9


def test_window_not_covered_by_samples(tmp_path):
    p = tmp_path / "proc_stat.txt"
    p.write_text("5 cpu 1 0 0 1 0 0 0 0 0 0\n9 cpu 2 0 0 2 0 0 0 0 0 0\n")
    stat = captures.parse_proc_stat(p)
    with pytest.raises(InputError, match="t_ns"):
        captures.proc_stat_utilization(stat, 0, 8, p)


MALFORMED = [
    # (file in the run folder it replaces, malformed fixture, substrings the error must name)
    ("iperf3.json.gz", "iperf3_truncated.json", ["iperf3.json", "line", "valid JSON"]),
    ("iperf3.json.gz", "iperf3_error.json", ["field 'error'", "Connection refused"]),
    ("iperf3.json.gz", "iperf3_bad_throughput.json", ["received_bps", "a number", "fast"]),
    ("iperf3.json.gz", "iperf3_missing_cpu.json", ["end.cpu_utilization_percent", "found 'nothing'"]),
    ("proc_stat.txt.gz", "proc_stat_non_numeric.txt", ["line 5", "field 'system'", "12x"]),
    ("proc_stat.txt.gz", "proc_stat_short_line.txt", ["line 7", "8 to 10 counters"]),
    ("proc_stat.txt.gz", "proc_stat_decreasing.txt", ["line 4", "field 'user'", "non-decreasing per cpu"]),
    ("proc_pid.txt.gz", "proc_pid_bad_header.txt", ["line 1", "field 'header'"]),
    ("proc_pid.txt.gz", "proc_pid_bad_role.txt", ["line 5", "field 'role'", "kworker/0"]),
    ("manifest.yaml", "run_manifest_missing_rusage.yaml", ["line 8", "client.rusage", "nothing"]),
    ("manifest.yaml", "run_manifest_bad_direction.yaml", ["field 'direction'", "sideways"]),
]


@pytest.mark.parametrize("target,bad,expected", MALFORMED, ids=[m[1] for m in MALFORMED])
def test_malformed_input_is_named(device_dir, fixtures, tmp_path, target, bad, expected):
    rd = run_dir(device_dir)
    (rd / target).unlink()
    dest = rd / target.removesuffix(".gz") if target.endswith(".gz") else rd / target
    shutil.copy(fixtures / "malformed" / "cpu-gbps" / bad, dest)
    out = tmp_path / "interim" / DEVICE
    with pytest.raises(InputError) as err:
        captures.ingest(device_dir, out)
    msg = str(err.value)
    assert str(dest.name) in msg
    for part in expected:
        assert part in msg, (part, msg)
    assert "expected" in msg and "found" in msg
    # No partial output, and no temporary folder left behind.
    assert not out.exists()
    assert list(out.parent.iterdir()) == [] if out.parent.exists() else True


def test_malformed_session_manifest(device_dir, fixtures, tmp_path):
    shutil.copy(fixtures / "malformed" / "cpu-gbps" / "session_manifest_bad_count.yaml",
                device_dir / SESSION / "manifest.yaml")
    with pytest.raises(InputError) as err:
        captures.ingest(device_dir, tmp_path / "out")
    msg = str(err.value)
    assert "manifest.yaml" in msg and "host.cpu.count" in msg and "line 201" in msg and "'two'" in msg
    assert not (tmp_path / "out").exists()


def test_run_listed_but_missing(device_dir, tmp_path):
    shutil.rmtree(run_dir(device_dir, "up-max-r1"))
    with pytest.raises(InputError, match="runs/up-max-r1"):
        captures.ingest(device_dir, tmp_path / "out")


def test_device_name_must_match_folder(device_dir, tmp_path):
    renamed = device_dir.with_name("other-device")
    device_dir.rename(renamed)
    with pytest.raises(InputError, match="field 'device'"):
        captures.load_device(renamed)


def test_partial_sessions_are_ignored(device_dir, tmp_path):
    (device_dir / "20990101T000000Z.partial" / "runs").mkdir(parents=True)
    sessions, runs = captures.load_device(device_dir)
    assert list(sessions["session"]) == [SESSION]


def test_ingest_writes_parquet_and_replaces_old_output(device_dir, tmp_path):
    out = tmp_path / "interim" / DEVICE
    out.mkdir(parents=True)
    (out / "stale.parquet").write_text("old")
    captures.ingest(device_dir, out)
    assert sorted(p.name for p in out.iterdir()) == ["runs.parquet", "sessions.parquet"]
    runs = pd.read_parquet(out / "runs.parquet")
    assert len(runs) == 4
    assert list(out.parent.iterdir()) == [out]


def test_session_hash_is_stable_and_sensitive(device_dir):
    folder = device_dir / SESSION
    h1 = captures.session_hash(folder)
    assert h1 == captures.session_hash(folder)
    (folder / "runs" / "down-100M-r1" / "manifest.yaml").write_text(
        (folder / "runs" / "down-100M-r1" / "manifest.yaml").read_text() + "\n")
    assert captures.session_hash(folder)[0] != h1[0]


def test_cpuacct_hand_computed(tmp_path):
    # 2 CPUs, 1 s apart: 0.3 s + 0.1 s of CPU time -> 20 % of both CPUs.
    p = tmp_path / "cpuacct.txt"
    p.write_text("0 cpuacct_percpu_ns 1000000000 5000000000\n"
                 "1000000000 cpuacct_percpu_ns 1300000000 5100000000\n")
    acct = captures.parse_cpuacct(p)
    assert len(acct) == 4
    assert captures.cpuacct_utilization(acct, 10, 999_000_000, 2, p) == pytest.approx(20.0)


@pytest.mark.parametrize("bad,expected", [
    ("cpuacct_decreasing.txt", ["line 3", "field 'usage_ns'", "non-decreasing per cpu", "1400"]),
    ("cpuacct_bad_source.txt", ["line 2", "field 'source'", "cpuacct_total"]),
])
def test_malformed_cpuacct_is_named(device_dir, fixtures, tmp_path, bad, expected):
    shutil.copy(fixtures / "malformed" / "cpu-gbps" / bad, run_dir(device_dir) / "cpuacct.txt")
    out = tmp_path / "interim" / DEVICE
    with pytest.raises(InputError) as err:
        captures.ingest(device_dir, out)
    msg = str(err.value)
    assert "cpuacct.txt" in msg
    for part in expected:
        assert part in msg, (part, msg)
    assert not out.exists()

"""Raw priority-boost captures -> parquet, on SYNTHETIC session folders built
here (not measurements), including a malformed-input corpus: every bad input
raises InputError naming file, line/record, field, expected and found, and
leaves no output behind."""

import gzip
import json

import numpy as np
import pandas as pd
import pytest
import yaml

from mobitrace.studies.priority_boost import ingest as pb
from mobitrace.core.errors import InputError

HEADER = ",".join(pb.RUN_FIELDS)


def synthetic_session(root, device="synthetic-dev", session="s1"):
    folder = root / device / session
    (folder / "runs").mkdir(parents=True)
    (folder / "manifest.yaml").write_text(yaml.safe_dump({
        "study": "priority-boost", "device": device, "session": session, "smoke": False,
        "configuration": {"file_bytes": 1000, "repetitions_per_cell": 2,
                          "slow_cpu": {"quota_us": 1300, "period_us": 10000, "mechanism": "cgroup v2 cpu.max"}},
        "host": {"kernel": "synthetic", "cpu_model": ["none"], "cpu_count": 1},
    }))
    lines = [HEADER]
    for pol, dur in (("original", [2.0, 2.2]), ("incr", [1.5, 1.6])):
        for rep, d in enumerate(dur):
            rid = f"cpu-c1-x0-{pol}-r{rep:02d}"
            lines.append(f"{rid},cpu,transfer,cpu-c1-x0,{pol},1,0,{rep},{100 + rep},ok,{d + 1:.3f},2026-01-01T00:00:00Z")
            rdir = folder / "runs" / rid
            rdir.mkdir()
            (rdir / "transfer.json").write_text(json.dumps({
                "bytes_plain": 1000, "bytes_sent": 1008, "bytes_acked": 1008, "duration_s": d,
                "openssl_rc": 0, "cpu_user_s": 0.1, "cpu_sys_s": 0.01}))
            with gzip.open(rdir / "oracle.csv.gz", "wt") as fh:
                fh.write("t_s,event,pid,value\n0.0,link_up,-1,0\n1.0,link_down,-1,0\n1.5,link_up,-1,0\n")
                if pol == "incr":
                    fh.write("1.6,nice,42,-1\n1.7,nice,42,-20\n")
                fh.write(f"{d:.3f},stop,-1,0\n")
    rid = "audio-c0-x0-original-r00"
    lines.append(f"{rid},audio,audio,audio-c0-x0,original,0,0,0,100,ok,7.0,2026-01-01T00:00:00Z")
    rdir = folder / "runs" / rid
    rdir.mkdir()
    with gzip.open(rdir / "audio.csv.gz", "wt") as fh:
        fh.write("seq,t_ns,errno\n")
        # gaps 20.0, 20.1, 19.8 ms -> |dev| = 0, 100, 200 us
        for i, t in enumerate([1_000_000_000, 1_020_000_000, 1_040_100_000, 1_059_900_000]):
            fh.write(f"{i},{t},0\n")
    with gzip.open(rdir / "oracle.csv.gz", "wt") as fh:
        fh.write("t_s,event,pid,value\n0.0,link_up,-1,0\n6.0,stop,-1,0\n")
    # A failed attempt that was retried: ignored except in the count.
    lines.insert(1, "cpu-c1-x0-incr-r00,cpu,transfer,cpu-c1-x0,incr,1,0,0,100,error rc=1,0.5,2026-01-01T00:00:00Z")
    (folder / "runs.csv").write_text("\n".join(lines) + "\n")
    return folder


def test_ingest_synthetic_session(tmp_path):
    folder = synthetic_session(tmp_path / "raw")
    out = tmp_path / "out"
    pb.ingest(folder.parent, out)
    runs = pd.read_parquet(out / "runs.parquet")
    sessions = pd.read_parquet(out / "sessions.parquet")
    assert len(runs) == 5 and set(runs["status"]) == {"ok"}
    r = runs.set_index("run_id")
    assert r.loc["cpu-c1-x0-incr-r01", "transfer_s"] == 1.6
    assert r.loc["cpu-c1-x0-incr-r00", "min_nice"] == -20 and r.loc["cpu-c1-x0-incr-r00", "renices"] == 2
    # link up 0-1 s and 1.5-1.5 s(stop): 1.0 + 0.0 over 1.5 s
    assert r.loc["cpu-c1-x0-original-r00", "link_up_fraction"] == pytest.approx(1.5 / 2.0)
    assert r.loc["audio-c0-x0-original-r00", "jitter_sd_us"] == pytest.approx(100.0)
    assert r.loc["audio-c0-x0-original-r00", "jitter_mean_us"] == pytest.approx(100.0)
    assert sessions.loc[0, "runs_failed_attempts"] == 1 and len(sessions.loc[0, "capture_sha256"]) == 64


def test_a_failed_attempts_message_with_commas_and_quotes_is_one_field_synthetic(tmp_path):
    """The kit writes runs.csv with csv.DictWriter: a timed-out command's
    message, holding commas, quotes and a line break, is one quoted field."""
    folder = synthetic_session(tmp_path / "raw")
    text = (folder / "runs.csv").read_text()
    failed = ",error rc=1,0.5,"
    message = '"timeout after 60 s: openssl s_client -connect 10.0.0.1:443, killed ""SIGKILL""\nstderr: none"'
    assert failed in text
    (folder / "runs.csv").write_text(text.replace(failed, f",{message},0.5,", 1))
    out = tmp_path / "out"
    pb.ingest(folder.parent, out)
    sessions = pd.read_parquet(out / "sessions.parquet")
    assert len(pd.read_parquet(out / "runs.parquet")) == 5 and sessions.loc[0, "runs_failed_attempts"] == 1


def test_ingest_is_deterministic_synthetic(tmp_path):
    folder = synthetic_session(tmp_path / "raw")
    pb.ingest(folder.parent, tmp_path / "a")
    pb.ingest(folder.parent, tmp_path / "b")
    for name in ("runs.parquet", "sessions.parquet"):
        assert pd.read_parquet(tmp_path / "a" / name).equals(pd.read_parquet(tmp_path / "b" / name))


def test_audio_jitter_hand_case_synthetic():
    sd, mean = pb.audio_jitter(np.array([0, 20_000_000, 40_300_000, 60_300_000]))
    # |gaps - 20 ms| = 0, 300, 0 us
    assert mean == pytest.approx(100.0) and sd == pytest.approx(np.std([0, 300, 0], ddof=1))


def _rewrite_gz(path, text):
    with gzip.open(path, "wt") as fh:
        fh.write(text)


MALFORMED = {
    "malformed_runs_int": (lambda f: f.joinpath("runs.csv").write_text(
        f.joinpath("runs.csv").read_text().replace(",1,0,1,101,ok", ",one,0,1,101,ok", 1)),
        "runs.csv", "line", "cpu_procs"),
    "malformed_runs_header": (lambda f: f.joinpath("runs.csv").write_text(
        "run,table\n" + "\n".join(f.joinpath("runs.csv").read_text().splitlines()[1:])), "runs.csv", "line 1", "header"),
    "malformed_runs_policy": (lambda f: f.joinpath("runs.csv").write_text(
        f.joinpath("runs.csv").read_text().replace(",original,1,0,0", ",boost,1,0,0", 1)), "runs.csv", "line", "policy"),
    "malformed_runs_short_line": (lambda f: f.joinpath("runs.csv").write_text(
        f.joinpath("runs.csv").read_text() + "x,cpu\n"), "runs.csv", "line 8", None),
    "malformed_transfer_missing": (lambda f: f.joinpath("runs/cpu-c1-x0-original-r00/transfer.json").write_text(
        json.dumps({"bytes_plain": 1})), "transfer.json", "record 1", "bytes_sent"),
    "malformed_transfer_json": (lambda f: f.joinpath("runs/cpu-c1-x0-original-r00/transfer.json").write_text(
        "{not json"), "transfer.json", "line 1", None),
    "malformed_transfer_unacked": (lambda f: f.joinpath("runs/cpu-c1-x0-original-r00/transfer.json").write_text(
        json.dumps({"bytes_plain": 1000, "bytes_sent": 1008, "bytes_acked": 500, "duration_s": 2.0,
                    "openssl_rc": 0, "cpu_user_s": 0.1, "cpu_sys_s": 0.0})), "transfer.json", "record 1", None),
    "malformed_audio_time": (lambda f: _rewrite_gz(f / "runs/audio-c0-x0-original-r00/audio.csv.gz",
                                                   "seq,t_ns,errno\n0,100,0\n1,50,0\n2,200,0\n"),
                             "audio.csv.gz", "line", None),
    "malformed_audio_value": (lambda f: _rewrite_gz(f / "runs/audio-c0-x0-original-r00/audio.csv.gz",
                                                    "seq,t_ns,errno\n0,100,0\n1,abc,0\n"),
                              "audio.csv.gz", "line 3", "t_ns"),
    "malformed_oracle_event": (lambda f: _rewrite_gz(f / "runs/cpu-c1-x0-original-r00/oracle.csv.gz",
                                                     "t_s,event,pid,value\n0.0,link_sideways,-1,0\n"),
                               "oracle.csv.gz", "line 2", "event"),
    "malformed_oracle_not_gzip": (lambda f: f.joinpath("runs/cpu-c1-x0-original-r00/oracle.csv.gz").write_text(
        "plain"), "oracle.csv.gz", None, None),
    "malformed_manifest_key": (lambda f: f.joinpath("manifest.yaml").write_text("study: priority-boost\n"),
                               "manifest.yaml", None, "device"),
    "malformed_manifest_yaml": (lambda f: f.joinpath("manifest.yaml").write_text("study: [\n"),
                                "manifest.yaml", "line", None),
    "malformed_missing_run_folder": (lambda f: __import__("shutil").rmtree(f / "runs/cpu-c1-x0-incr-r01"),
                                     "oracle.csv.gz", None, None),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_raw_synthetic(tmp_path, case):
    mutate, file_part, where_part, field = MALFORMED[case]
    folder = synthetic_session(tmp_path / "raw")
    mutate(folder)
    out = tmp_path / "out"
    with pytest.raises(InputError) as info:
        pb.ingest(folder.parent, out)
    err = info.value
    assert file_part in err.path, (case, str(err))
    if where_part:
        assert err.where and where_part in err.where, (case, str(err))
    if field:
        assert err.field == field, (case, str(err))
    assert err.expected and "expected" in str(err) and "found" in str(err)
    assert not out.exists()
    assert not list(tmp_path.glob(".ingest-*"))


def test_no_sessions(tmp_path):
    (tmp_path / "dev").mkdir()
    with pytest.raises(InputError):
        pb.ingest(tmp_path / "dev", tmp_path / "out")

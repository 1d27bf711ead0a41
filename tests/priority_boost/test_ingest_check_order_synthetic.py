"""Ingest checks a session's raw files against their schemas once per schema
(mobitrace.studies.priority_boost.ingest._Checks), not once per file: the
error must still be the one a check per file, on reading, raised first.
SYNTHETIC session folders (test_raw_ingest_synthetic.synthetic_session);
run order there: cpu original r00, r01, incr r00, r01, then the audio run."""

import json
import shutil

import pytest

from mobitrace.core.errors import InputError
from mobitrace.studies.priority_boost import ingest as pb

from tests.priority_boost.test_raw_ingest_synthetic import _rewrite_gz, synthetic_session

UNACKED = json.dumps({"bytes_plain": 1000, "bytes_sent": 1008, "bytes_acked": 500, "duration_s": 2.0,
                      "openssl_rc": 0, "cpu_user_s": 0.1, "cpu_sys_s": 0.0})


def _bad_event(folder, run):
    _rewrite_gz(folder / f"runs/{run}/oracle.csv.gz", "t_s,event,pid,value\n0.0,link_up,-1,0\n0.5,link_sideways,-1,0\n")


def _first_error(folder) -> InputError:
    with pytest.raises(InputError) as info:
        pb.read_session(folder)
    return info.value


def test_the_first_file_in_reading_order_is_named_synthetic(tmp_path):
    folder = synthetic_session(tmp_path / "raw")
    (folder / "runs/cpu-c1-x0-incr-r00/transfer.json").write_text(UNACKED)
    _bad_event(folder, "cpu-c1-x0-original-r01")
    err = _first_error(folder)
    assert "cpu-c1-x0-original-r01/oracle.csv.gz" in err.path and err.where == "line 3" and err.field == "event"


def test_a_schema_failure_comes_before_a_later_files_read_error_synthetic(tmp_path):
    folder = synthetic_session(tmp_path / "raw")
    (folder / "runs/cpu-c1-x0-original-r00/transfer.json").write_text(UNACKED)
    shutil.rmtree(folder / "runs/cpu-c1-x0-incr-r01")
    err = _first_error(folder)
    assert "cpu-c1-x0-original-r00/transfer.json" in err.path and err.where == "record 1"


def test_a_read_error_comes_before_a_later_files_schema_failure_synthetic(tmp_path):
    folder = synthetic_session(tmp_path / "raw")
    shutil.rmtree(folder / "runs/cpu-c1-x0-original-r00")
    _bad_event(folder, "cpu-c1-x0-incr-r00")
    err = _first_error(folder)
    assert "cpu-c1-x0-original-r00/oracle.csv.gz" in err.path


def test_a_files_schema_failure_comes_before_its_step_check_synthetic(tmp_path):
    """audio.csv.gz: a negative errno (schema, line 2) before a time going back (step check, line 3)."""
    folder = synthetic_session(tmp_path / "raw")
    _rewrite_gz(folder / "runs/audio-c0-x0-original-r00/audio.csv.gz", "seq,t_ns,errno\n0,100,-1\n1,50,0\n")
    err = _first_error(folder)
    assert "audio.csv.gz" in err.path and err.where == "line 2" and err.field == "errno"


def test_a_valid_session_reads_as_checked_file_by_file_synthetic(tmp_path):
    folder = synthetic_session(tmp_path / "raw")
    session, runs = pb.read_session(folder)
    assert len(runs) == 5 and session["runs_ok"] == 5

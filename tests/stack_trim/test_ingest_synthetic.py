"""Stack-trim ingest on a synthetic session: hand-checkable derived columns,
and malformed inputs stop with an InputError naming the file, the line or
record and the field, leaving no output behind."""

import gzip
import json

import pandas as pd
import pytest

from mobitrace import devices
from mobitrace.studies.stack_trim import ingest as st
from mobitrace.core.errors import InputError

RUN = "lo-up-tcp16384-copy-mem-r10-00"  # the run the malformed cases edit


def test_ingest_synthetic_values(synthetic_session, tmp_path):
    out = tmp_path / "interim"
    st.ingest(synthetic_session.parent, out)
    runs = pd.read_parquet(out / "runs.parquet").set_index("run_id")
    r = runs.loc["lo-up-tcp16384-copy-mem-r10-00"]
    assert r["device_side"] == "sender" and r["device_mode"] == "copy"
    assert r["device_cpu_s"] == pytest.approx(0.010)
    assert r["both_cpu_s"] == pytest.approx(0.012)
    assert r["sender_cpu_wait4_s"] == pytest.approx(0.012)
    assert r["goodput_mbps"] == pytest.approx(10.0)  # 1.25 MB in 1 s
    assert r["delivered_fraction"] == 1.0
    # /proc/stat: 30 user + 20 softirq jiffies at 100 Hz over 1 s.
    assert r["stat_busy_s"] == pytest.approx(0.5) and r["stat_softirq_s"] == pytest.approx(0.2)
    assert r["mean_mhz"] == 2000.0
    samples = pd.read_parquet(out / "samples.parquet")
    s = samples[samples["run_id"] == "lo-up-tcp16384-copy-mem-r10-00"].set_index("cpu")
    assert s.loc[0, "busy"] == pytest.approx(50 / 100) and s.loc[1, "busy"] == 0.0
    sessions = pd.read_parquet(out / "sessions.parquet")
    assert sessions["runs"].tolist() == [4] and len(sessions["md5"].iloc[0]) == 32


def test_idle_gate_flag_reaches_the_runs_and_the_run_is_left_out_synthetic(synthetic_session, tmp_path):
    """A run the idle gate flagged is marked in runs.parquet, and the
    chapter's loader leaves it out and counts it; a capture without the
    gate flags nothing."""
    import yaml
    from mobitrace.studies.stack_trim import analysis as sta
    from mobitrace.studies.stack_trim import shown
    from tests.stack_trim.test_st_chapter_steps import MODEL

    out = tmp_path / "interim"
    st.ingest(synthetic_session.parent, out / "synthetic-host")
    assert not pd.read_parquet(out / "synthetic-host" / "runs.parquet")["gate_flagged"].any()
    path = synthetic_session / "manifest.yaml"
    man = yaml.safe_load(path.read_text())
    man["idle_gate"] = {"max_pct": 5.0, "runs": {
        RUN: {"before_pct": 1.0, "during_pct": 22.0, "flagged": True},
        "lo-up-tcp16384-copy-mem-r10-01": {"before_pct": 1.0, "during_pct": 1.0, "flagged": False}}}
    path.write_text(yaml.safe_dump(man))
    st.ingest(synthetic_session.parent, out / "synthetic-host")
    runs = pd.read_parquet(out / "synthetic-host" / "runs.parquet").set_index("run_id")
    assert runs["gate_flagged"].to_dict() == {r: r == RUN for r in runs.index}
    kept, sessions = sta.load_measured(out, ["synthetic-host"], MODEL)["synthetic-host"]
    assert RUN not in set(kept["run_id"]) and len(kept) == 3
    assert sta.gate_numbers(sessions) == {"n_gate_left_out": 1, "n_runs_ingested": 4}
    assert shown.sessions_shown(sessions)["runs left out (idle gate flagged)"].tolist() == [1]


def test_validate_synthetic_registers_study(synthetic_session):
    study, problems = devices.validate(synthetic_session)
    assert problems == [] and study.slug == "stack-trim"


def _expect(folder, tmp_path, match_path, field):
    out = tmp_path / "interim"
    with pytest.raises(InputError) as err:
        st.ingest(folder.parent, out)
    assert match_path in err.value.path
    assert err.value.field == field
    assert not out.exists(), "no partial output"
    return err.value


def test_bad_runs_header_synthetic(synthetic_session, tmp_path):
    p = synthetic_session / "runs.csv"
    p.write_text(p.read_text().replace("rate_mbps", "rate"))
    e = _expect(synthetic_session, tmp_path, "runs.csv", "header")
    assert e.where == "line 1"


def test_bad_rate_synthetic(synthetic_session, tmp_path):
    p = synthetic_session / "runs.csv"
    lines = p.read_text().splitlines()
    lines[2] = lines[2].replace(",10.0,", ",ten,")
    p.write_text("\n".join(lines) + "\n")
    e = _expect(synthetic_session, tmp_path, "runs.csv", "rate_mbps")
    assert e.where == "line 3" and e.found == "ten"


def test_missing_run_folder_synthetic(synthetic_session, tmp_path):
    import shutil
    shutil.rmtree(synthetic_session / "runs" / "lo-up-tcp16384-onecopy-mem-r10-01")
    e = _expect(synthetic_session, tmp_path, "runs.csv", "run_id")
    assert "no such folder" in str(e)


def test_report_missing_field_synthetic(synthetic_session, tmp_path):
    p = synthetic_session / "runs" / RUN / "sender.json"
    doc = json.loads(p.read_text())
    del doc["phase_stime_s"]
    p.write_text(json.dumps(doc))
    e = _expect(synthetic_session, tmp_path, "sender.json", "phase_stime_s")
    assert e.found == "nothing"


def _replace(session, name, old, new):
    """Replace `old` (which must be there) by `new` in runs/<RUN>/<name>, gzipped or not."""
    p = session / "runs" / RUN / name
    opener = gzip.open if name.endswith(".gz") else open
    with opener(p, "rt") as fh:
        text = fh.read()
    assert old in text, (name, old)
    with opener(p, "wt") as fh:
        fh.write(text.replace(old, new))


def test_report_wrong_mode_synthetic(synthetic_session, tmp_path):
    _replace(synthetic_session, "sender.json", '"mode": "copy"', '"mode": "onecopy"')
    _expect(synthetic_session, tmp_path, "sender.json", "mode")


def test_proc_stat_decreasing_synthetic(synthetic_session, tmp_path):
    _replace(synthetic_session, "proc_stat.txt.gz", "cpu0 80 0 0 550", "cpu0 10 0 0 550")
    _expect(synthetic_session, tmp_path, "proc_stat.txt.gz", "jiffies")


def test_proc_stat_bad_line_synthetic(synthetic_session, tmp_path):
    _replace(synthetic_session, "proc_stat.txt.gz", "mhz 1 2000.0\n# t_ns 2", "mhz 1 fast\n# t_ns 2")
    e = _expect(synthetic_session, tmp_path, "proc_stat.txt.gz", "mhz")
    assert e.where == "line 6"


def test_more_received_than_sent_synthetic(synthetic_session, tmp_path):
    _replace(synthetic_session, "receiver.json", '"bytes": 1250000', '"bytes": 9250000')
    _expect(synthetic_session, tmp_path, "receiver.json", "bytes")


def test_validate_reports_every_problem_synthetic(synthetic_session):
    for run in ("lo-up-tcp16384-copy-mem-r10-00", "lo-up-tcp16384-onecopy-mem-r10-01"):
        (synthetic_session / "runs" / run / "sender.json").write_text("not json")
    _, problems = devices.validate(synthetic_session)
    assert len(problems) == 2 and all("sender.json" in e.path for e in problems)

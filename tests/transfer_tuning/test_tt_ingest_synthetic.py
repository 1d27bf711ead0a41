"""Ingest (mobitrace.studies.transfer_tuning.ingest) and energy
(mobitrace.studies.transfer_tuning.analysis) of synthetic transfer-tuning
sessions (hand-computable)."""


import pandas as pd
import pyarrow.parquet as pq
import pytest

from conftest import write_session
from mobitrace import devices
from mobitrace.studies.transfer_tuning import analysis as tta
from mobitrace.studies.transfer_tuning import ingest as tt
from mobitrace.core.errors import InputError
from mobitrace.energy.power_models import CpuPowerModel, RadioPowerModel

CPU = CpuPowerModel("c", mw_per_ghz=400.0, mw_at_zero_ghz=200.0, idle_mw=0.0, nominal_ghz=2.0,
                    provenance="assumed", source="test")  # a busy core: 1000 mW
RADIO = RadioPowerModel("r", idle_mw=0.0, tx_active_mw=500.0, rx_active_mw=500.0, max_rate_mbps=1.0,
                        provenance="assumed", source="test")


def test_synthetic_ingest_derives_throughput_and_cpu(synthetic_session, tmp_path):
    out = tmp_path / "interim"
    tt.ingest(synthetic_session.parent, out)
    runs = pd.read_parquet(out / "runs.parquet").set_index("run_id")
    r = runs.loc["sweep-video-cc1-p1-io16-r1"]
    assert r["bytes"] == 1_000_000 and r["transfer_s"] == pytest.approx(1.0)
    assert r["throughput_mbps"] == pytest.approx(8.0)  # 8e6 bit / 1 s
    assert r["client_cpu_s"] == pytest.approx(0.5)
    assert r["server_cpu_s"] == pytest.approx(0.05)
    assert runs.loc["sweep-video-cc4-p1-io16-r1", "throughput_mbps"] == pytest.approx(16.0)
    sess = pd.read_parquet(out / "sessions.parquet")
    assert sess["power_source"].tolist() == ["modeled"]


def test_synthetic_idle_gate_flag_is_carried_into_the_runs_table(tmp_path):
    """The idle gate's record of each run (manifest idle_gate) lands in
    runs.parquet: its background load and whether it was flagged; a capture
    without the gate has neither (missing, not made up)."""
    runs = [{"run_id": "sweep-video-cc1-p1-io16-r1"},
            {"run_id": "sweep-video-cc4-p1-io16-r1", "cc": 4, "t0_s": 200.0}]
    gated = write_session(tmp_path / "raw", runs, device="synthetic-gated",
                          idle_gate={"sweep-video-cc1-p1-io16-r1": 2.5, "sweep-video-cc4-p1-io16-r1": 6.9})
    ungated = write_session(tmp_path / "raw", runs, device="synthetic-ungated")
    for folder in (gated, ungated):
        tt.ingest(folder.parent, tmp_path / "interim" / folder.parent.name)
    g = pd.read_parquet(tmp_path / "interim/synthetic-gated/runs.parquet").set_index("run_id")
    assert g["gate_flagged"].tolist() == [False, True]
    assert g["background_pct"].tolist() == [2.5, 6.9]
    u = pd.read_parquet(tmp_path / "interim/synthetic-ungated/runs.parquet")
    assert u["gate_flagged"].isna().all() and u["background_pct"].isna().all()


def test_synthetic_modeled_energy_is_hand_computable(synthetic_session, tmp_path):
    out = tmp_path / "interim"
    tt.ingest(synthetic_session.parent, out)
    runs = pd.read_parquet(out / "runs.parquet")
    samples = pd.read_parquet(out / "samples.parquet")
    power = pd.read_parquet(out / "power.parquet")
    table = tta.energy_table(runs, samples, power, CPU, RADIO, base_w=0.2, tail_tolerance_w=0.0).set_index("run_id")
    r = table.loc["sweep-video-cc1-p1-io16-r1"]
    # during the transfer: 0.5 CPU x 1000 mW + radio at 8 Mbps >= r_max -> 500 mW: 1.0 W above base for 1 s.
    # Readings are interval averages stamped at interval ends and the transfer starts and ends on
    # sample times, so the trace ramps over one 0.1 s interval after each edge: E_d over [start, end]
    # = 1.0 J - 0.5 x 0.1 s x 1 W (ramp up) = 0.95 J; the tail is the other half-ramp, 0.05 J.
    assert r["energy_source"] == "modeled"
    assert r["base_w"] == pytest.approx(0.2)
    assert r["energy_j"] == pytest.approx(0.95)
    assert r["energy_per_100mb_j"] == pytest.approx(95.0)
    assert r["tail_j"] == pytest.approx(0.05) and r["tail_s"] == pytest.approx(0.1) and r["tail_ended"]
    s = table.loc["sweep-video-cc4-p1-io16-r1"]
    assert s["energy_j"] == pytest.approx(0.45)  # 1 W x 0.5 s - 0.05 J ramp


def test_synthetic_measured_power_log_replaces_the_model(tmp_path):
    # A power-meter log at 10 Hz: 1 W base, 3 W while transferring [100, 101] s.
    rows = ["time,power"] + [f"{99.5 + 0.1 * i:.1f},{3 if 100.0 <= 99.5 + 0.1 * i <= 101.0 + 1e-9 else 1}"
                             for i in range(21)]
    folder = write_session(tmp_path / "raw", [
        {"run_id": "sweep-video-cc1-p1-io16-r1", "power_log": "\n".join(rows) + "\n"}],
        power_trace={"format": "power-meter", "file": "runs/<run_id>/power.csv",
                     "units": {"time": "s", "power": "W"}, "max_gap_s": 0.3})
    out = tmp_path / "interim"
    tt.ingest(folder.parent, out)
    table = tta.energy_table(*(pd.read_parquet(out / f"{n}.parquet") for n in ("runs", "samples", "power")),
                             CPU, RADIO, base_w=0.2, tail_tolerance_w=0.0)
    r = table.iloc[0]
    # base window [99.5, 100]: 1 W except the last 0.1 s ramp 1->3 W: (0.4 x 1 + 0.1 x 2) / 0.5 = 1.2 W
    assert r["energy_source"] == "measured" and r["base_w"] == pytest.approx(1.2)
    # E_d = int_100^101 P dt - 1.2 W x 1 s = 3 - 1.2 = 1.8 J
    assert r["energy_j"] == pytest.approx(1.8)
    assert pd.read_parquet(out / "sessions.parquet")["power_source"].tolist() == ["measured"]


def test_synthetic_sweep_summary_xfold_and_saving():
    t = pd.DataFrame({"device": "d", "kind": "sweep", "dataset": "html", "concurrency": [1, 1, 4, 4],
                      "parallelism": 1, "io_kib": 16, "rep": [1, 2, 1, 2],
                      "throughput_mbps": [2.0, 4.0, 9.0, 9.0], "energy_per_100mb_j": [100.0, 100.0, 30.0, 50.0],
                      "client_cpu_s": 0.1})
    s = tta.sweep_summary(t, "concurrency", {"parallelism": 1}).set_index("level")
    assert s.loc[4, "x_fold"] == pytest.approx(3.0)       # 9 / mean(2, 4)
    assert s.loc[4, "saving_pct"] == pytest.approx(60.0)  # 1 - 40 / 100
    assert s.loc[1, "n"] == 2


@pytest.mark.parametrize("breakage, where", [
    ("bytes", "transfers.csv.gz"),
    ("time_backwards", "samples.csv.gz"),
    ("study", "manifest.yaml"),
    ("unit_missing", "manifest.yaml"),
])
def test_synthetic_malformed_session_writes_nothing(synthetic_session, tmp_path, breakage, where):
    import gzip
    rdir = synthetic_session / "runs" / "sweep-video-cc1-p1-io16-r1"
    if breakage == "bytes":
        text = gzip.decompress((rdir / "transfers.csv.gz").read_bytes()).decode()
        (rdir / "transfers.csv.gz").write_bytes(gzip.compress(text.replace(",1000000,ok", ",999999,ok").encode()))
    elif breakage == "time_backwards":
        lines = gzip.decompress((rdir / "samples.csv.gz").read_bytes()).decode().splitlines()
        lines[3], lines[4] = lines[4], lines[3]
        (rdir / "samples.csv.gz").write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    elif breakage == "study":
        m = synthetic_session / "manifest.yaml"
        m.write_text(m.read_text().replace("study: transfer-tuning", "study: transfer-tunning"))
    elif breakage == "unit_missing":
        m = synthetic_session / "manifest.yaml"
        m.write_text(m.read_text().replace("power_trace: null",
                                           "power_trace: {format: power-meter, file: 'runs/<run_id>/p.csv', "
                                           "units: {time: s}}"))
    out = tmp_path / "interim"
    with pytest.raises(InputError) as exc:
        tt.ingest(synthetic_session.parent, out)
    assert where in exc.value.path
    assert not out.exists()


def test_synthetic_bytes_error_names_file_field_expected_found(synthetic_session, tmp_path):
    import gzip
    rdir = synthetic_session / "runs" / "sweep-video-cc1-p1-io16-r1"
    text = gzip.decompress((rdir / "transfers.csv.gz").read_bytes()).decode()
    (rdir / "transfers.csv.gz").write_bytes(gzip.compress(text.replace(",1000000,ok", ",999999,ok").encode()))
    with pytest.raises(InputError) as exc:
        tt.read_session(synthetic_session)
    assert exc.value.path.endswith("transfers.csv.gz") and exc.value.where == "line 2"
    assert exc.value.found == {"file": 0, "part": 0, "conn": 0, "offset": 0, "length": 1000000,
                               "t_start_ns": 100000000000, "t_first_byte_ns": 100000001000,
                               "t_end_ns": 101000000000, "bytes": 999999, "status": "ok"}


def test_synthetic_session_validates_for_byod(synthetic_session):
    study, problems = devices.validate(synthetic_session)
    assert problems == [] and study.slug == "transfer-tuning"
    (synthetic_session / "runs.csv").write_text("garbage\n")
    _, problems = devices.validate(synthetic_session)
    assert len(problems) == 1 and "runs.csv" in problems[0].path


RUNS2 = [{"run_id": "sweep-video-cc1-p1-io16-r1", "cc": 1, "size": 1_000_000, "dur_s": 1.0},
         {"run_id": "sweep-video-cc4-p1-io16-r1", "cc": 4, "size": 1_000_000, "dur_s": 0.5, "t0_s": 200.0}]


def test_synthetic_achieved_rate_is_read_and_missing_in_older_captures(tmp_path):
    new = write_session(tmp_path / "new", RUNS2, rates=[(40, 7.5), (40, 16.25)])
    tt.ingest(new.parent, tmp_path / "i-new")
    runs = pd.read_parquet(tmp_path / "i-new" / "runs.parquet").set_index("run_id")
    assert runs["achieved_mbit"].tolist() == [7.5, 16.25] and (runs["rate_mbit"] == 40.0).all()
    assert (runs["link_peak_mbit"] == 40.0).all()
    old = write_session(tmp_path / "old", RUNS2)  # the runs.csv header before the rates were recorded
    tt.ingest(old.parent, tmp_path / "i-old")
    runs = pd.read_parquet(tmp_path / "i-old" / "runs.parquet")
    assert runs[["achieved_mbit", "link_peak_mbit"]].isna().all().all() and (runs["rate_mbit"] == 40.0).all()


@pytest.mark.parametrize("rates, field", [([(35, 7.5), (40, 16.0)], "rate_mbit"),
                                          ([(40, "x"), (40, 16.0)], "achieved_mbit"),
                                          ([(40, ""), (40, 16.0)], "achieved_mbit")])
def test_synthetic_bad_rate_columns_are_one_line_errors(tmp_path, rates, field):
    folder = write_session(tmp_path / "raw", RUNS2, rates=rates)
    with pytest.raises(InputError) as e:
        tt.ingest(folder.parent, tmp_path / "interim")
    assert field in str(e.value) and "runs.csv" in str(e.value) and "\n" not in str(e.value)


def test_synthetic_power_streamed_in_chunks_equals_whole_file(tmp_path):
    """Ingest streams power traces into power.parquet chunk by chunk; with a
    3-row chunk the table equals the one read whole (read_trace)."""
    rows = ["time,power"] + [f"{99.5 + 0.1 * i:.1f},{1 + (i % 4)}" for i in range(21)]
    folder = write_session(tmp_path / "raw", [
        {"run_id": "sweep-video-cc1-p1-io16-r1", "power_log": "\n".join(rows) + "\n"},
        {"run_id": "sweep-video-cc4-p1-io16-r1", "power_log": "\n".join(rows) + "\n"}],
        power_trace={"format": "power-meter", "file": "runs/<run_id>/power.csv",
                     "units": {"time": "s", "power": "W"}, "max_gap_s": 0.3})
    whole = tt.read_session(folder)["power"]
    parts = tt.read_session(folder, stream_power=True)
    assert parts["power"].empty and len(parts["power_files"]) == 2
    out = tmp_path / "power.parquet"
    tt._write_power(parts["power_files"], out, folder.parent, chunk_rows=3)
    assert pq.ParquetFile(out).metadata.num_row_groups == 14  # 7 chunks of 3 rows per run
    pd.testing.assert_frame_equal(pd.read_parquet(out), whole)
    tt.ingest(folder.parent, tmp_path / "interim")
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "interim" / "power.parquet"), whole)


def test_synthetic_measured_power_streams_power_parquet_in_batches(tmp_path, monkeypatch):
    """The chapter never loads power.parquet whole: measured_power reads it a
    batch at a time (3 rows here) and gives the energies of the whole table,
    and the figure's trace is thinned to at most max_points samples."""
    rows = ["time,power"] + [f"{99.5 + 0.01 * i:.2f},{3 if 100.0 <= 99.5 + 0.01 * i <= 101.0 + 1e-9 else 1}"
                             for i in range(201)]
    folder = write_session(tmp_path / "raw", [
        {"run_id": "sweep-video-cc1-p1-io16-r1", "power_log": "\n".join(rows) + "\n"},
        {"run_id": "sweep-video-cc4-p1-io16-r1", "t0_s": 100.0, "dur_s": 0.5, "power_log": "\n".join(rows) + "\n"}],
        power_trace={"format": "power-meter", "file": "runs/<run_id>/power.csv",
                     "units": {"time": "s", "power": "W"}, "max_gap_s": 0.3})
    out = tmp_path / "interim"
    tt.ingest(folder.parent, out)
    runs, samples, power = (pd.read_parquet(out / f"{n}.parquet") for n in ("runs", "samples", "power"))
    whole = tta.energy_table(runs, samples, power, CPU, RADIO, base_w=0.2, tail_tolerance_w=0.0)
    monkeypatch.setattr(tta, "POWER_BATCH_ROWS", 3)
    measured = tta.measured_power(runs, [out / "power.parquet"], 0.0, max_points=50)
    streamed = tta.energy_table(runs, samples, measured, CPU, RADIO, base_w=0.2, tail_tolerance_w=0.0)
    pd.testing.assert_frame_equal(streamed, whole, rtol=1e-12)
    r = streamed.set_index("run_id").loc["sweep-video-cc1-p1-io16-r1"]
    assert r["energy_source"] == "measured" and r["energy_j"] == pytest.approx(1.98)
    # base over [99.5, 100]: 1 W, but the last 0.01 s ramps 1 -> 3 W: (0.49 + 0.02) / 0.5 = 1.02 W; E_d = 3 - 1.02 J
    m = measured[("synthetic-host", "sweep-video-cc1-p1-io16-r1")]
    assert len(m.t) <= 50 and m.p.max() == 3.0 and m.p.min() == 1.0
    assert m.t[0] == pytest.approx(99.5) and m.t[-1] == pytest.approx(101.5)
    full = tta.measured_power(runs, power, 0.0)  # under TRACE_POINTS samples: the trace as logged
    assert len(full[("synthetic-host", "sweep-video-cc1-p1-io16-r1")].t) == 201


@pytest.mark.parametrize("name", ["transfers.csv.gz", "samples.csv.gz"])
def test_synthetic_rows_one_field_wider_than_the_header_are_refused_not_shifted(synthetic_session, name):
    """Every data row with one field more than the header: pandas would read
    the first field as an index and shift every value one column; the file
    is refused, naming its first wide line."""
    import gzip
    rdir = synthetic_session / "runs" / "sweep-video-cc1-p1-io16-r1"
    header, *rows = gzip.decompress((rdir / name).read_bytes()).decode().splitlines()
    (rdir / name).write_bytes(gzip.compress(("\n".join([header, *(f"0,{r}" for r in rows)]) + "\n").encode()))
    with pytest.raises(InputError) as exc:
        tt.read_session(synthetic_session)
    assert exc.value.path.endswith(name)
    assert exc.value.where == "line 2" and exc.value.found == f"{header.count(',') + 2} fields"

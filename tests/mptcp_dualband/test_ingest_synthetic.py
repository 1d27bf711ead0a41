"""Ingest of the kit's raw format, on synthetic sessions with hand-computable
numbers, and its errors on malformed input (file, line, field, expected,
found; no partial output)."""

import gzip
import json

import pandas as pd
import pytest

from mobitrace.studies.mptcp_dualband import ingest as md
from mobitrace.core.errors import InputError

from .conftest import synthetic_run, write_session


def test_synthetic_striped_and_mptcp_runs_ingest(tmp_path):
    recs = [
        synthetic_run(),  # 125 MB in 1 s = 1000 Mbps, 75:25 on the two connections
        synthetic_run(run_id="0001-mptcp-default-dl-mp-bl-0", transport="mptcp", ratio=None, part="mptcp",
                      bytes_a=100_000_000, bytes_b=25_000_000, iface_a=3_000_000, iface_b=1_000_000),
        synthetic_run(run_id="0002-sweep-default-ul-r050-d500-0", direction="uplink", ratio=50.0, demand=500.0,
                      bytes_a=31_250_000, bytes_b=31_250_000, seconds=0.5),
    ]
    write_session(tmp_path / "raw", recs)
    md.ingest(tmp_path / "raw" / "synthetic-host", tmp_path / "out")
    runs = pd.read_parquet(tmp_path / "out" / "runs.parquet").set_index("run_id")
    r = runs.loc["0000-sweep-default-dl-r075-bl-0"]
    assert r["tput_mbps"] == pytest.approx(1000) and r["tput_a_mbps"] == pytest.approx(750)
    assert r["tput_b_mbps"] == pytest.approx(250)
    assert r["phone_cpu_s"] == pytest.approx(0.25) and r["ap_cpu_s"] == pytest.approx(0.2)
    assert r["procstat_busy_s"] == pytest.approx(1.5) and r["procstat_softirq_s"] == pytest.approx(0.2)
    # MPTCP: the payload split by the interface counters' shares (3:1), not by the tool's one socket
    m = runs.loc["0001-mptcp-default-dl-mp-bl-0"]
    assert m["tput_mbps"] == pytest.approx(1000) and m["tput_a_mbps"] == pytest.approx(750)
    u = runs.loc["0002-sweep-default-ul-r050-d500-0"]
    assert u["direction"] == "uplink" and u["tput_mbps"] == pytest.approx(1000) and u["demand_mbps"] == 500
    assert json.loads((tmp_path / "out" / "manifests.json").read_text())["s1"]["config"]["scale"] == 1.0


@pytest.mark.parametrize("mutate,field", [
    (lambda r: r["spec"].update(direction="sideways"), "spec.direction"),
    (lambda r: r["spec"].update(ratio_a_pct=140), "spec.ratio_a_pct"),
    (lambda r: r["spec"].update(demand_mbps=-3), "spec.demand_mbps"),
    (lambda r: r.pop("ap"), "ap"),
    (lambda r: r["phone"].update(utime_us="lots"), "utime_us"),
    (lambda r: r["if_after"]["pb"].update(rx_bytes=-1), "if_after.pb.rx_bytes"),
    (lambda r: r.update(proc_stat_after=["cpu0 1 2 3"]), "proc_stat_after"),
    (lambda r: r["phone"]["conns"][0].update(local="192.168.1.1:5"), "conns.local"),
])
def test_malformed_run_names_file_line_and_field(tmp_path, mutate, field):
    bad = synthetic_run(run_id="0001-bad")
    mutate(bad)
    write_session(tmp_path / "raw", [synthetic_run(), bad])
    with pytest.raises(InputError) as err:
        md.ingest(tmp_path / "raw" / "synthetic-host", tmp_path / "out")
    assert err.value.path.endswith("runs.jsonl.gz")
    assert err.value.where.startswith("line 2")
    assert err.value.field == field
    assert not (tmp_path / "out").exists(), "no partial output"


def test_invalid_json_line_and_run_count(tmp_path):
    write_session(tmp_path / "raw", [synthetic_run(), "{not json"])
    with pytest.raises(InputError, match="line 2"):
        md.ingest(tmp_path / "raw" / "synthetic-host", tmp_path / "out")
    write_session(tmp_path / "raw2", [synthetic_run()], n_runs=3)
    with pytest.raises(InputError) as err:
        md.ingest(tmp_path / "raw2" / "synthetic-host", tmp_path / "out")
    assert err.value.field == "n_runs"


def test_manifest_errors(tmp_path):
    folder = write_session(tmp_path / "raw", [synthetic_run()], scale=0)
    with pytest.raises(InputError) as err:
        md.read_session(folder)
    assert err.value.field == "config.scale" and err.value.path.endswith("manifest.yaml")
    folder2 = write_session(tmp_path / "raw2", [synthetic_run()], session="s2")
    (folder2 / "manifest.yaml").write_text((folder2 / "manifest.yaml").read_text().replace("session: s2", "session: other"))
    with pytest.raises(InputError) as err:
        md.read_session(folder2)
    assert err.value.field == "session"


def test_not_gzip(tmp_path):
    folder = write_session(tmp_path / "raw", [synthetic_run()])
    (folder / "runs.jsonl.gz").write_bytes(b"plain text, not gzip")
    with pytest.raises(InputError, match="gzip"):
        md.read_session(folder)


def test_validate_via_devices_registry(tmp_path):
    from mobitrace import devices
    folder = write_session(tmp_path / "mptcp-dualband", [synthetic_run()])
    study, problems = devices.validate(folder)
    assert study.slug == "mptcp-dualband" and problems == []
    with gzip.open(folder / "runs.jsonl.gz", "wt") as fh:
        fh.write("[]\n")
    study, problems = devices.validate(folder)
    assert len(problems) == 1 and "JSON object" in str(problems[0])

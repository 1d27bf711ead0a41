"""The published-values loader: the real file, and malformed copies of it."""

import pandas as pd
import pytest

from mobitrace.core import published
from mobitrace.core.errors import InputError

GOOD_RECORD = '  - {id: pixel2_baseline_tput, device: Pixel 2, quantity: backlogged downlink throughput, value: 542, unit: Mbps, relation: "=", location: "§3.1", quote: "maximum downlink throughput of 542 Mbps"}'


@pytest.fixture
def cpu_gbps_text(repo):
    return (repo / "data" / "published" / "cpu-gbps.yaml").read_text(encoding="utf-8")


def test_cpu_gbps_file_loads_with_the_papers_numbers(repo):
    meta, values, text_tables = published.load(repo / "data" / "published" / "cpu-gbps.yaml")
    assert meta["study"] == "cpu-gbps"
    assert meta["seed"] == "000_6414a03c698305ab.txt"
    # Table 2 as printed in the paper.
    assert published.value_of(values, "t2_big_discharging") == 1183.56
    assert published.value_of(values, "t2_little_discharging") == 366.17
    assert published.value_of(values, "t2_big_charging") == 1557.44
    assert published.value_of(values, "t2_little_charging") == 620.95
    # §3.2 bounds keep their qualifier.
    row = values.set_index("id").loc["rog_cpu_at_1p7"]
    assert (row["relation"], row["value"], row["throughput_gbps"]) == ("<", 15.0, 1.7)
    assert values["id"].is_unique
    assert (values["line"] > 0).all()
    table1 = text_tables[text_tables["table"] == "table1"]
    assert set(table1["row"]) == {"CPU", "RAM", "Battery", "WiFi", "OS"}
    assert table1.set_index(["row", "column"]).loc[("RAM", "ASUS ROG Phone"), "text"] == "8GB"


def test_value_of_unknown_id_raises(repo):
    _, values, _ = published.load(repo / "data" / "published" / "cpu-gbps.yaml")
    with pytest.raises(KeyError, match="no_such_id"):
        published.value_of(values, "no_such_id")


def _write(tmp_path, text, name="cpu-gbps.yaml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _line_of(text, needle):
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.mark.parametrize(
    "replace, field, expected, found",
    [
        ("value: 542,", "value", "a number", "'542 Mbps'"),
        ("unit: Mbps,", "unit", "one of %", "'Mbit'"),
        ('relation: "=",', "relation", "one of =", "'=='"),
        ('location: "§3.1",', "location", "a value", "''"),
        ("quote:", "quoted", "one of id", "'an unknown field'"),
    ],
)
def test_malformed_record_names_file_line_field_expected_found(tmp_path, cpu_gbps_text, replace, field, expected, found):
    bad_value = {"value: 542,": "value: 542 Mbps,", "unit: Mbps,": "unit: Mbit,",
                 'relation: "=",': 'relation: "==",', 'location: "§3.1",': 'location: "",',
                 "quote:": "quoted:"}[replace]
    bad_record = GOOD_RECORD.replace(replace, bad_value, 1)
    text = cpu_gbps_text.replace(GOOD_RECORD, bad_record)
    assert text != cpu_gbps_text
    path = _write(tmp_path, text)
    with pytest.raises(InputError) as err:
        published.load(path)
    message = str(err.value)
    line = _line_of(text, "id: pixel2_baseline_tput")
    assert message.startswith(str(path))
    assert f"line {line}," in message
    assert "id=pixel2_baseline_tput" in message
    assert f"field '{field}'" in message
    assert f"expected {expected}" in message
    assert f"found {found}" in message


def test_duplicate_id_is_reported_with_its_record(tmp_path, cpu_gbps_text):
    text = cpu_gbps_text.replace("id: rog_battery,", "id: pixel2_battery,")
    with pytest.raises(InputError, match=r"line \d+, record 2 \(id=pixel2_battery\): field 'id': expected an id no earlier record uses"):
        published.load(_write(tmp_path, text))


def test_broken_yaml_names_the_line(tmp_path, cpu_gbps_text):
    text = cpu_gbps_text.replace(GOOD_RECORD, GOOD_RECORD.rstrip("}"))
    with pytest.raises(InputError, match=r"cpu-gbps.yaml: line \d+: expected valid YAML"):
        published.load(_write(tmp_path, text))


def test_study_must_match_file_name(tmp_path, cpu_gbps_text):
    with pytest.raises(InputError, match="field 'study': expected 'other-study'"):
        published.load(_write(tmp_path, cpu_gbps_text, name="other-study.yaml"))


def test_empty_and_binary_files_are_refused(tmp_path):
    with pytest.raises(InputError, match="expected a mapping"):
        published.load(_write(tmp_path, ""))
    path = tmp_path / "cpu-gbps.yaml"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(InputError, match="expected UTF-8 text"):
        published.load(path)


def test_text_table_with_a_missing_cell_is_refused(tmp_path, cpu_gbps_text):
    text = cpu_gbps_text.replace("RAM: [4GB, 8GB]", "RAM: [4GB]")
    with pytest.raises(InputError, match=r"text_tables.table1.rows.RAM: field 'cells': expected 2 cells"):
        published.load(_write(tmp_path, text))


def test_ingest_writes_parquet(tmp_path, repo):
    out = tmp_path / "out"
    published.ingest(repo / "data" / "published" / "cpu-gbps.yaml", out)
    values = pd.read_parquet(out / "values.parquet")
    assert (values["study"] == "cpu-gbps").all()
    assert sorted(p.name for p in out.iterdir()) == ["text_tables.parquet", "values.parquet"]


def test_ingest_of_bad_input_leaves_no_output(tmp_path, cpu_gbps_text):
    src = _write(tmp_path, cpu_gbps_text.replace("value: 542,", "value: null,"))
    out = tmp_path / "out"
    with pytest.raises(InputError):
        published.ingest(src, out)
    assert not out.exists()

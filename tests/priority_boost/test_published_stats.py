"""data/published/priority-boost.yaml: the three result tables and the p-values,
and InputError on malformed stat tables."""

import pytest

from mobitrace.core import published
from mobitrace.core.errors import InputError


@pytest.fixture(scope="module")
def stats(pb_repo):
    return published.load_stat_tables(pb_repo / "data" / "published" / "priority-boost.yaml")


def test_values_load(pb_repo):
    meta, values, _ = published.load(pb_repo / "data" / "published" / "priority-boost.yaml")
    assert meta["study"] == "priority-boost"
    assert published.value_of(values, "repetitions") == 10
    assert published.value_of(values, "abstract_bytes") == 312.5


def test_all_tables_present(stats):
    counts = stats.groupby("table").size().to_dict()
    # 3 policies x 5 columns x (mean, sd); 2 x 5 p; 3 x 6 x 2; 3 x 6
    assert counts == {"transfer_cpu": 30, "transfer_cpu_p": 10, "transfer_net": 36, "audio_jitter": 18}
    assert set(stats["n"]) == {10}


def test_printed_precision_and_bounds(stats):
    row = stats[(stats.table == "transfer_cpu") & (stats.policy == "original") & (stats.column == 1)]
    mean = row[row.statistic == "mean"].iloc[0]
    assert (mean.value, mean.text, mean.decimals) == (81.0, "81", 0)
    p = stats[(stats.table == "transfer_cpu_p") & (stats.policy == "incr") & (stats.cpu_procs == 30)].iloc[0]
    assert (p.relation, p.value, p.decimals) == ("<", 0.0001, 4)


def test_mean_sd_table(stats):
    t = published.mean_sd_table(stats, "transfer_net")
    assert len(t) == 18
    r = t[(t.policy == "incr") & (t.cpu_procs == 1) & (t.cross_pct == 50)].iloc[0]
    assert (r["mean"], r["sd"], r["mean_decimals"], r["sd_decimals"]) == (96.9, 0.57, 1, 2)


def test_parse_number():
    assert published.parse_number("< 0.0001") == ("<", 0.0001, 4)
    assert published.parse_number("80") == ("=", 80.0, 0)
    for bad in ("", "abc", "1.2.3", "-1", "."):
        with pytest.raises(ValueError):
            published.parse_number(bad)


GOOD = """study: {stem}
citation: x
seed: x
values:
  - {{id: a, device: d, quantity: q, value: 1, unit: s, relation: "=", location: L, quote: Q}}
stat_tables:
  t:
    location: "§4"
    title: T
    quantity: time
    unit: s
    statistic: {statistic}
    n: {n}
    columns:
      - {{cpu_procs: 0, cross_pct: 0}}
      - {{cpu_procs: 1, cross_pct: 0}}
    rows:
      original: {row}
"""


@pytest.mark.parametrize("case, fields, where, field", [
    ("malformed_cell_text", dict(row='["80.8/0.63", "81/x"]'), "cell 2", "sd"),
    ("malformed_cell_count", dict(row='["80.8/0.63"]'), "line 18", "cells"),
    ("malformed_missing_sd", dict(row='["80.8/0.63", "81"]'), "cell 2", "text"),
    ("malformed_p_above_one", dict(statistic="p", row='["0.5", "1.5"]'), "cell 2", "p"),
    ("malformed_n", dict(n="1"), "stat_tables.t", "n"),
    ("malformed_statistic", dict(statistic="median"), "stat_tables.t", "statistic"),
])
def test_malformed_stat_tables(tmp_path, case, fields, where, field):
    args = dict(stem="fixture", statistic="mean/sd", n="10", row='["80.8/0.63", "81/0.82"]')
    args.update(fields)
    path = tmp_path / "fixture.yaml"
    path.write_text(GOOD.format(**args))
    with pytest.raises(InputError) as info:
        published.load_stat_tables(path)
    err = info.value
    assert err.path == str(path) and where in (err.where or "") and err.field == field, (case, str(err))


def test_good_fixture_loads(tmp_path):
    path = tmp_path / "fixture.yaml"
    path.write_text(GOOD.format(stem="fixture", statistic="mean/sd", n="10", row='["80.8/0.63", "81/0.82"]'))
    frame = published.load_stat_tables(path)
    assert len(frame) == 4 and frame["line"].iloc[0] == 18


def test_ingest_writes_stat_tables(tmp_path, pb_repo):
    published.ingest(pb_repo / "data" / "published" / "priority-boost.yaml", tmp_path / "out")
    assert (tmp_path / "out" / "stat_tables.parquet").exists()

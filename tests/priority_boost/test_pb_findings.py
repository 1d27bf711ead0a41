"""The chapter's numbers, claims and schemas (moved out of the notebook):
hand-computable cases on the paper's own tables and on synthetic runs."""

import json
import math

import numpy as np
import pandas as pd
import pandera.pandas as pa
import pytest

from mobitrace.book.checked_outputs import SchemaCheckedOutputs
from mobitrace.core import published
from mobitrace.core.claims import NOT_CHECKABLE, REPRODUCED
from mobitrace.studies.priority_boost import analysis as pba
from mobitrace.studies.priority_boost import chapter as pbn
from mobitrace.studies.priority_boost import findings as pbf
from mobitrace.studies.priority_boost import schema


@pytest.fixture(scope="module")
def yaml_path(pb_repo):
    return pb_repo / "data" / "published" / "priority-boost.yaml"


@pytest.fixture(scope="module")
def stats(yaml_path):
    return published.load_stat_tables(yaml_path)


@pytest.fixture(scope="module")
def values(yaml_path, tmp_path_factory):
    out = tmp_path_factory.mktemp("published")
    published.ingest(yaml_path, out)
    return published.Values(out)


@pytest.fixture(scope="module")
def audits(stats):
    return (pba.audit_published(stats, "transfer_cpu", "transfer_cpu_p", grid=5, alpha=0.05),
            pba.audit_published(stats, "transfer_net", None, grid=5, alpha=0.05))


def test_audio_change_is_policy_minus_original_from_the_paper_table(stats):
    # Third table, first column: original 278, INCR 896, DECR 433 (µs).
    change = pba.audio_change(stats)
    assert list(change.columns) == ["incr", "decr", "cpu_procs", "cross_pct"]
    assert change.iloc[0][["incr", "decr"]].tolist() == [618.0, 155.0]
    # 1 proc, 0%: DECR 118 against 847 -> -729, the one large drop.
    assert change["decr"].min() == -729.0


def test_conclusion_numbers_do_the_abstract_arithmetic(stats, values):
    n = pbf.conclusion_numbers(stats, values)
    assert n["abstract_mb"] == 50 * 5 / 8  # 31.25 MB, not the paper's 312.5
    assert n["abstract_mb_paper"] == 312.5
    assert n["abstract_rtts"] == 2500.0  # 5 s / 2 ms
    assert n["audio_kbps"] == 32.0  # 80 B * 8 / 20 ms
    assert n["cpu_max_procs"] == 30
    # Largest gain: 30 proc, original 82.7, INCR 80.2 -> 2.5 / 82.7.
    assert n["cpu_max_gain_pct"] == pytest.approx(100 * 2.5 / 82.7)
    assert n["audio_n_boosted"] == 12


def test_net_numbers_compare_decr_with_incr(stats, audits):
    n = pbf.net_numbers(audits[1], stats, 0.05)
    d = pbf.decr_minus_incr(stats)
    # Column 1: DECR 87 - INCR 85.7 = 1.3 s.
    assert d.iloc[0] == pytest.approx(1.3)
    assert n["net_cols"] == 6 and n["net_incr_cols"] == 6
    # The word comes from the interval of the mean difference, which holds the mean.
    lo, hi = n["net_decr_minus_incr_lo"], n["net_decr_minus_incr_hi"]
    assert lo < d.mean() < hi and n["net_decr_minus_incr"] == pytest.approx(d.mean())
    assert n["net_decr_vs_incr"] == ("slower than" if lo > 0 else "faster than" if hi < 0
                                     else "not distinguishable from")


def test_net_decr_better_compares_decr_with_the_original(stats, values, audits):
    # The paper's baseline is the original: DECR 87 - original 87.5 = -0.5 s in column 1, lower in all 6.
    d = pbf.decr_minus_original(stats)
    assert d.iloc[0] == pytest.approx(-0.5)
    n = pbf.net_numbers(audits[1], stats, 0.05)
    assert (n["net_decr_lower_cols"], n["net_decr_vs_orig"], n["net_decr_better_verdict"]) == (
        6, "faster than", "holds")
    claim = pbn.chapter_claims("priority-boost", *audits, stats, values, {}, alpha=0.05, marginal_pct=5.0,
                               rel_tol=0.1).frame().set_index("claim_id").loc["net_decr_better"]
    assert claim["artifact_value"] == pytest.approx(d.mean()) and claim["verdict"] == REPRODUCED


def test_net_decr_words_flip_when_decr_and_original_swap_synthetic(stats, audits):
    net = stats["table"] == "transfer_net"
    swapped = stats.copy()
    swapped.loc[net, "policy"] = stats.loc[net, "policy"].replace({"decr": "original", "original": "decr"})
    n = pbf.net_numbers(audits[1], swapped, 0.05)
    assert (n["net_decr_lower_cols"], n["net_decr_vs_orig"], n["net_decr_better_verdict"]) == (
        0, "slower than", "does not hold")


def test_audit_numbers_flag_the_unattainable_p(audits):
    n = pbf.audit_numbers(audits[0], 0.05)
    assert n["n_published_p"] == 10 and n["n_cpu_tests"] == 10
    assert n["incr_faster0"] == pytest.approx(0.8)  # 80.8 - 80
    assert n["incr_faster30"] == pytest.approx(2.5)  # 82.7 - 80.2
    # Both INCR differences are significant (Welch p < 0.05); the change of the gain with load is not.
    assert (n["incr_faster0_word"], n["incr_faster30_word"]) == ("faster than", "faster than")
    assert n["incr_gain_trend"] == "changes indistinguishably"


def synthetic_comparisons():
    comp = pd.DataFrame({
        "table": ["cpu", "cpu", "cpu", "cpu", "audio"], "cpu_procs": [0, 0, 30, 30, 0], "cross_pct": [0] * 5,
        "policy": ["incr", "decr", "incr", "decr", "incr"], "p": [0.5, 0.2, 0.01, 0.04, 0.001],
        "rel_diff": [0.01, -0.02, -0.10, 0.05, -0.5], "diff": [0.1, -0.2, -1.0, 0.5, -50.0],
        "reject_holm": [False, False, True, False, True], "reject_unadjusted": [False, False, True, True, True]})
    paired = pd.DataFrame({"table": ["cpu"], "reject_holm": [True], "p_wilcoxon": [0.01], "median_ratio": [0.9]})
    return comp, paired


def synthetic_runs():
    runs = pd.DataFrame({"table": ["cpu", "cpu", "audio"], "cpu_procs": [0, 30, 0], "cross_pct": [0, 0, 0],
                         "status": ["ok", "ok", "timeout"], "transfer_s": [2.0, 5.0, np.nan],
                         "link_up_fraction": [0.8, 0.6, 0.7], "cell": ["a", "b", "c"],
                         "send_refused": pd.array([pd.NA, pd.NA, 3], dtype="Int64")})
    sessions = pd.DataFrame({"configuration": [json.dumps({"audio": {"duration_s": 30}})],
                             "file_bytes": [2_000_000]})
    return runs, sessions


def test_device_numbers_synthetic(stats):
    comp, paired = synthetic_comparisons()
    runs, sessions = synthetic_runs()
    m = pbf.device_numbers(runs, sessions, comp, paired, stats)
    assert (m["runs_ok"], m["timeouts"]) == (2, 1)
    assert m["cpu_comparisons"] == 4 and m["cpu_holm_sig"] == 1
    assert m["cpu_incr_p0"] == 0.5 and m["cpu_incr_gain0_pct"] == -1.0
    assert m["cpu_incr_gain_top_pct"] == 10.0 and m["cpu_top_procs"] == 30
    assert m["cpu_incr_top_sig"] and m["cpu_decr_top_sig"]
    assert m["cpu_gain_max_pct"] == 10.0
    assert m["audio_incr_holm_lower"] == 1 and m["audio_decr_holm_lower"] == 0
    assert m["cpu_paired_faster_sig"] == 1 and m["net_paired_comparisons"] == 0
    assert (m["file_mb"], m["audio_s"], m["t_unloaded_s"], m["link_up_min"]) == (2.0, 30.0, 2.0, 0.6)
    assert m["n_cells"] == 3
    assert m["missing_cells"].startswith("cpu 1 proc/0%")
    assert pba.refused_sends(runs) == {"m_refused_cells": "c", "m_refused_max": 3}


def test_reference_numbers_fill_missing_keys_and_words_synthetic():
    ref = pbf.reference_numbers("dev", {"runs_ok": 3, "cpu_incr_gain_top_pct": -4.0, "cpu_incr_top_sig": True})
    assert list(ref)[:3] == ["ref_device", "m_runs_ok", "m_cpu_incr_gain_top_pct"]
    assert math.isnan(ref["m_cpu_incr_p0"]) and math.isnan(ref["m_cpu_top_procs"])
    assert ref["m_cpu_incr_top_verb"] == "costs" and ref["m_cpu_incr_gain_top_abs_pct"] == 4.0
    # No gain measured: no direction word (it used to read "saves").
    assert ref["m_cpu_decr_top_verb"] == "–" and math.isnan(ref["m_cpu_decr_gain_top_abs_pct"])


def test_chapter_claims_take_paper_numbers_from_the_published_file(stats, values, audits):
    claims = pbn.chapter_claims("priority-boost", *audits, stats, values, {}, alpha=0.05, marginal_pct=5.0,
                                rel_tol=0.1).frame().set_index("claim_id")
    assert claims.loc["audio_pct_low", "claim"] == "300 µs is about 1.5% of 20,000 µs"
    assert claims.loc["audio_pct_low", "artifact_value"] == pytest.approx(1.5)
    assert claims.loc["audio_pct_low", "verdict"] == REPRODUCED
    assert claims.loc["abstract_bytes", "claim"] == "A 5 s connection at 50 Mbps can transfer up to 312.5 MB"
    assert claims.loc["abstract_bytes", "artifact_value"] == 31.25
    assert claims.loc["abstract_rtts", "claim"] == "A 5 s connection with a 2 ms RTT is 2500 RTTs"
    more = claims.loc["more_than_30"]
    assert (more["paper_relation"], more["paper_value"], more["location"]) == (">", 30.0, "§5")
    assert more["verdict"] == NOT_CHECKABLE and more["basis"] == "the tables stop at 30 processes"
    # "All the same" is decided by equivalence over every comparison of the table.
    net = claims.loc["net_same"]
    assert "comparison of the second table (12)" in net["basis"]
    assert net["tolerance"].startswith("equivalence (TOST, alpha 0.05): whole 90% CI")
    assert net["ci_low"] <= net["artifact_value"] <= net["ci_high"]


def test_chapter_metrics_round_and_count_synthetic(audits):
    counts = {"reproduced": 2, "not reproduced": 1, "not checkable": 0}
    m = pbn.chapter_metrics(*audits, {"dev": {"x": 1 / 3, "n": 2, "s": "none"}}, counts)
    assert m["measured"]["dev"] == {"n": 2, "s": "none", "x": 0.333333}
    assert m["claims"] == {"reproduced": 2, "not_reproduced": 1, "not_checkable": 0}
    assert m["audit"]["published_p_values"] == 10


def test_headline_lists_the_reference_device_claims():
    assert pbn.headline([])[-1] == "net_decr_better"
    assert pbn.headline(["a", "b"])[-2:] == ["a_incr_significant", "a_cpu_marginal"]


def test_result_schema_names_every_table_the_chapter_writes():
    for name in ("published_transfer_cpu", "published_means_ci", "audit_transfer_cpu", "audit_transfer_net",
                 "audit_audio_change_us", "measured_my-dev_sessions", "measured_my-dev_cpu", "measured_my-dev_welch",
                 "measured_my-dev_paired", "measured_my-dev_conditions", "key_findings"):
        assert schema.result_schema(name) is not None
    assert schema.result_schema("audit_transfer_cpu") is schema.AUDIT_WITH_P_SCHEMA
    with pytest.raises(KeyError):
        schema.result_schema("something_else")


def test_audit_tables_pass_their_schemas(audits):
    schema.AUDIT_WITH_P_SCHEMA.validate(audits[0])
    schema.AUDIT_SCHEMA.validate(audits[1])


def test_checked_outputs_refuse_a_table_that_fails_its_schema_synthetic(tmp_path):
    out = SchemaCheckedOutputs(tmp_path, "stage", schema.result_schema)
    good = pd.DataFrame({"incr": [1.0], "decr": [-2.0], "cpu_procs": [0], "cross_pct": [50]})
    out.save_table(good, "audit_audio_change_us")
    assert (tmp_path / "tables" / "audit_audio_change_us.csv").read_text() == "incr,decr,cpu_procs,cross_pct\n1,-2,0,50\n"
    with pytest.raises(pa.errors.SchemaError):
        out.save_table(good.assign(cross_pct=[150]), "audit_audio_change_us")
    with pytest.raises(KeyError):
        out.save_table(good, "not_a_table")

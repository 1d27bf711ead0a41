"""The chapter's derivations (mobitrace.studies.mptcp_dualband.analysis) on
synthetic, hand-computable tables, the results schemas, and the ingest kept
apart from the analysis."""

import ast
from pathlib import Path

import numpy as np
import pandas as pd
import pandera.pandas as pa
import pytest

from mobitrace.core import claims as cl
from mobitrace.studies.mptcp_dualband import analysis as mda
from mobitrace.studies.mptcp_dualband import schema as sc
from tests import ROOT

STUDY_DIR = Path(mda.__file__).parent

PAPER = {"dl_single_ad_ratio": 100.0, "ul_tput_opt_ratio": 70.0, "ul_energy_opt_ratio": 90.0,
         "demand_high": 1750.0, "demand_mid_dl": 1500.0, "demand_mid_ul": 1400.0, "demand_low": 500.0,
         "dl_1750_energy_opt": 66.0, "dl_1500_energy_opt": 100.0, "dl_500_energy_opt": 0.0,
         "ul_1750_energy_opt": 83.0, "ul_1400_energy_opt": 100.0, "ul_500_energy_opt": 100.0,
         "ratio_dl_tput_opt": 73.0}


def synthetic_summary():
    """Backlogged sweep means: downlink 73 -> 2000 Mbps, 100 -> 1600; uplink 70 -> 2000, 90 -> 1600."""
    rows = [("downlink", 73.0, 2000.0, 1.50), ("downlink", 100.0, 1600.0, 1.25),
            ("uplink", 70.0, 2000.0, 2.40), ("uplink", 90.0, 1600.0, 2.00)]
    return pd.DataFrame([{"direction": d, "demand": 0.0, "ratio_a_pct": r, "tput_mbps": t, "nj_per_bit": e}
                         for d, r, t, e in rows])


def synthetic_opt():
    return pd.DataFrame([{"direction": "downlink", "demand": 0.0, "tput_opt_ratio": 73.0, "energy_opt_ratio": 100.0,
                          "energy_opt_both_ratio": 73.0},
                         {"direction": "uplink", "demand": 0.0, "tput_opt_ratio": 70.0, "energy_opt_ratio": 90.0,
                          "energy_opt_both_ratio": 90.0}])


def test_at_and_change_pct_synthetic():
    s = synthetic_summary()
    assert mda.at(s, "downlink", 0.0, 73.0, "tput_mbps") == 2000.0
    assert np.isnan(mda.at(s, "downlink", 0.0, 50.0, "tput_mbps"))
    assert mda.change_pct(s, "downlink", 73.0, 100.0, "tput_mbps") == pytest.approx(25.0)
    assert mda.change_pct(s, "uplink", 70.0, 90.0, "nj_per_bit") == pytest.approx(20.0)


def test_comparisons_use_the_papers_ratios_synthetic():
    c = mda.comparisons(synthetic_summary(), synthetic_opt(), PAPER.get)
    assert (c.dl_t, c.dl_against, c.ul_a, c.ul_b, c.ul_e) == (73.0, 100.0, 70.0, 90.0, 90.0)
    assert c.dl_tput_gain == pytest.approx(25.0) and c.dl_energy_cost == pytest.approx(20.0)
    assert c.ul_tput_gain == pytest.approx(25.0) and c.ul_energy_cost == pytest.approx(20.0)
    cis = {k: (0.0, 50.0) for k in ("dl_tput_gain", "dl_energy_cost", "ul_tput_gain", "ul_energy_cost",
                                    "ul_power_excess")}
    values = {**PAPER, "dl_tput_gain_pct": 32.0, "dl_energy_cost_pct": 1.4, "ul_tput_gain_pct": 25.0,
              "ul_energy_cost_pct": 12.0, "ul_power_excess": 56.0}.get
    ratios = mda.ratios_table(c, 60.0, cis, values)
    assert list(ratios["comparison"][:3]) == ["downlink throughput, 73:27 / 100:0", "downlink nJ/bit, 73:27 / 100:0",
                                             "uplink throughput, 70:30 / 90:10"]
    assert ratios["ratio"].tolist() == pytest.approx([1.25, 1.2, 1.25, 1.2, 1.6])
    # paper 1.32, 1.014, 1.25, 1.12 and 1.56 all lie in [1, 1.5] except the power's 1.56
    assert mda.n_outside(ratios) == 1


def test_demands_pair_directions_highest_first_synthetic():
    s = pd.DataFrame({"direction": ["downlink"] * 4 + ["uplink"] * 3, "demand": [0, 500, 1750, 1500, 0, 1400, 500.0]})
    assert mda.demands(s) == [{"downlink": 1750, "uplink": 1400}, {"downlink": 1500, "uplink": 500}]


def test_paper_energy_optima_synthetic():
    p = mda.paper_energy_optima(PAPER.get)
    assert p[("downlink", 1750.0)] == 66 and p[("uplink", 1400.0)] == 100
    assert p[("downlink", 0.0)] == 73 and p[("uplink", 0.0)] == 90 and len(p) == 8


def test_cdf_helpers_synthetic():
    dl = pd.DataFrame({"configuration": ["GRO on (default)"] * 3 + ["gro-off-b"] * 2, "config": ["default"] * 3 + ["x"] * 2,
                       "tput_eq_mbps": [1900.0, 2100.0, 2200.0, 1800.0, 2000.0],
                       "phone_cpu_s": [0.5, 0.5, 0.5, 1.0, 1.0], "ap_cpu_s": [0.25] * 5,
                       "payload_bytes": [250_000_000] * 5, "rx_seconds": [1.0, 2.0, 1.0, 1.0, 1.0]})
    cdf = mda.cdf_table(dl, {"downlink": {"a": 1600, "b": 600}}, 2.0).set_index("configuration")
    assert cdf.loc["GRO on (default)", "median_gbps"] == pytest.approx(2.1)
    assert cdf.loc["GRO on (default)", "below_2gbps"] == 1 and cdf.loc["gro-off-b", "below_2gbps"] == 1
    assert cdf.loc["GRO on (default)", "pct_of_sum"] == pytest.approx(100 * 2100 / 2200)
    assert cdf.loc["GRO on (default)", "phone_cpu_s_per_gbit"] == pytest.approx(0.25)  # 0.5 s per 2 Gbit
    cdf = cdf.reset_index()
    assert mda.gro_gain_pct(cdf) == pytest.approx(100 * (2.1 / 1.9 - 1))
    assert mda.cdf_spread_pct(cdf) == pytest.approx(100 * (2.1 / 1.9 - 1))
    facts = mda.cdf_facts(cdf, dl, mda.gro_gain_ci(dl, 0.05), 0.05)
    assert facts["cdf_default_median"] == "2.10" and facts["phone_core_pct"] == "50"  # median of 50, 25, 50 %


def test_backup_synthetic():
    e = pd.DataFrame({"part": "backup", "run_id": ["m", "z"], "transport": ["mptcp", "striped"], "primary": "a",
                      "ratio_a_pct": [np.nan, 100.0], "demand_mbps": 500.0, "tput_eq_mbps": 500.0,
                      "tput_a_eq_mbps": 499.0, "tput_b_eq_mbps": [1.0, 0.0], "radio_mw": 600.0,
                      "power_mw": [630.0, 600.0]})
    bk = mda.backup_runs(e)
    assert list(bk["on path"]) == ["a", "a"] and list(bk["other_path_mbps"]) == [1.0, 0.0]
    t = mda.backup_table(bk)
    assert mda.backup_diff_pct(t) == pytest.approx(5.0)
    assert mda.backup_leak_max(t) == "1.00"


def test_verdict_counts_and_guideline_facts_synthetic():
    c = cl.Claims("synthetic", alpha=0.05)
    c.add("a", "x", location="§1", relation="=", paper=1.0, artifact=1.0, unit="x", basis="b", provenance="measured",
          section="s")
    c.add("b", "y", location="§1", relation="=", paper=1.0, artifact=None, unit="x", basis="b",
          provenance="measured", section="s")
    assert cl.keyed(cl.verdict_counts(c.frame()), "n_") == {
        "n_reproduced": 1, "n_not_reproduced": 0, "n_inconclusive": 0, "n_not_checkable": 1, "n_testbed_bound": 0,
        "n_follows_from_the_model": 0}
    gl = pd.DataFrame({"direction": ["downlink", "downlink"], "demand": [0.0, 500.0], "excess_energy_pct": [8.4, 3.6],
                       "tput_shortfall_pct": [0.0, 1.25], "meets_demand": [True, False]})
    assert mda.guideline_facts(gl) == {"gl_max_excess": "4", "gl_bl_excess": "downlink 8%", "gl_max_shortfall": "1.2",
                                       "gl_met": 1, "gl_n": 2}


def test_results_schemas_reject_a_bad_table_synthetic():
    good = pd.DataFrame({"on path": ["a"], "demand_mbps": [500.0], "mode": ["m"], "n": [2], "tput_mbps": [500.0],
                         "other_path_mbps": [0.0], "other_path_max_mbps": [0.0], "radio_mw": [1.0], "power_mw": [1.0]})
    assert mda.validated(good, "fig8_backup") is not None
    with pytest.raises(pa.errors.SchemaError):
        mda.validated(good.assign(**{"on path": ["c"]}), "fig8_backup")
    with pytest.raises(pa.errors.SchemaError):
        sc.FLOOR_SENSITIVITY.validate(pd.DataFrame({"direction": ["downlink"], "demand": [0.0], "f = 0": [120.0]}))


def test_every_results_table_has_a_schema():
    written = {p.stem for p in (ROOT / "data/results/mptcp-dualband/tables").glob("*.csv")}
    assert written - {"key_findings"} <= set(sc.TABLES)


def test_ingest_does_not_import_the_analysis():
    tree = ast.parse((STUDY_DIR / "ingest.py").read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)} | {
        a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not {m for m in imported if m and any(x in m for x in ("analysis", "energy", "chapter", "power_models"))}


# Direction words come from intervals, never from a point estimate: each
# sentence's word flips when the data flip, and says "cannot tell" when the
# interval holds no change.

def test_change_phrase_flips_with_the_interval_synthetic():
    assert mda.change_phrase(32.0, (30.0, 34.0), "throughput") == "32% more throughput"
    assert mda.change_phrase(-32.0, (-34.0, -30.0), "throughput") == "32% less throughput"
    # A positive point estimate whose interval holds 0 is not "more".
    cannot = mda.change_phrase(1.4, (-0.5, 3.0), "energy per bit", 1)
    assert "more" not in cannot and "cannot tell" in cannot and "1.4%" in cannot


def test_comparison_phrases_follow_the_intervals_not_the_points_synthetic():
    c = mda.Comparisons(dl_t=73.0, dl_ratio=90.0, dl_against=100.0, ul_t=70.0, ul_e=90.0, ul_a=70.0, ul_b=90.0,
                        dl_tput_gain=37.0, dl_energy_cost=8.7, ul_tput_gain=24.0, ul_energy_cost=48.0)
    cis = {"dl_tput_gain": (36.0, 38.0), "dl_energy_cost": (8.5, 8.9), "ul_tput_gain": (23.0, 25.0),
           "ul_energy_cost": (47.0, 49.0)}
    phrases = mda.comparison_phrases(c, cis, 0.05)
    assert phrases["dl_energy_cost_phrase"] == "8.7% more energy per bit"
    assert phrases["dl_tput_opt_rest"] == "27"
    flipped = mda.comparison_phrases(c, {**cis, "dl_energy_cost": (-8.9, -8.5)}, 0.05)
    assert flipped["dl_energy_cost_phrase"] == "8.7% less energy per bit"  # the interval decides, not the point
    straddles = mda.comparison_phrases(c, {**cis, "dl_tput_gain": (-1.0, 70.0)}, 0.05)
    assert "more" not in straddles["dl_tput_gain_phrase"] and "cannot tell" in straddles["dl_tput_gain_phrase"]


def test_gro_gain_words_and_interval_flip_with_the_data_synthetic():
    def runs(on, off):
        return pd.DataFrame({"configuration": ["GRO on (default)"] * len(on) + ["gro-off-b"] * len(off),
                             "tput_eq_mbps": on + off})

    gain = runs([2100.0, 2110.0, 2090.0, 2105.0, 2095.0], [1900.0, 1910.0, 1890.0, 1905.0, 1895.0])
    lo, hi = mda.gro_gain_ci(gain, 0.05)
    assert 0 < lo <= 100 * (2100 / 1900 - 1) <= hi
    cdf = pd.DataFrame({"configuration": ["GRO on (default)", "gro-off-b"], "median_gbps": [2.1, 1.9],
                        "below_2gbps": [0, 5]})
    dl = pd.DataFrame({"config": ["default"], "phone_cpu_s": [1.0], "ap_cpu_s": [1.0], "rx_seconds": [10.0]})
    assert "more median throughput" in mda.cdf_facts(cdf, dl, (lo, hi), 0.05)["gro_gain"]
    loss = runs([1900.0, 1910.0, 1890.0, 1905.0, 1895.0], [2100.0, 2110.0, 2090.0, 2105.0, 2095.0])
    lo2, hi2 = mda.gro_gain_ci(loss, 0.05)
    flipped = cdf.assign(median_gbps=[1.9, 2.1])
    assert hi2 < 0 and "less median throughput" in mda.cdf_facts(flipped, dl, (lo2, hi2), 0.05)["gro_gain"]
    same = mda.cdf_facts(cdf.assign(median_gbps=[2.0, 2.0]), dl, (-0.6, 0.3), 0.05)["gro_gain"]
    assert "cannot tell" in same


def test_fig1_under_or_over_the_sum_from_the_interval_synthetic():
    values = {"expected_dl": 2000.0, "expected_ul": 2000.0, "mptcp_dl_default": 1000.0}.get
    r1 = pd.DataFrame({"total": [1950.0, 2050.0], "sum of path rates": [2000.0, 2000.0], "% of sum": [97.5, 102.5],
                       "total_ci_low": [1940.0, 2040.0], "total_ci_high": [1960.0, 2060.0]},
                      index=["downlink", "uplink"])
    facts = mda.fig1_facts(r1, values)
    assert (facts["fig1_downlink_vs_sum"], facts["fig1_uplink_vs_sum"]) == ("below", "above")
    wide = mda.fig1_facts(r1.assign(total_ci_low=[1900.0, 1900.0], total_ci_high=[2100.0, 2100.0]), values)
    assert wide["fig1_downlink_vs_sum"] == wide["fig1_uplink_vs_sum"] == "not distinguishable from"


def test_change_phrase_prints_a_true_minus_synthetic():
    assert "of −0.1%" in mda.change_phrase(-0.1, (-0.6, 0.2), "median throughput", 1)
    assert mda.ci_text((-0.63, 0.25), 0.05) == "95% CI −0.6 to 0.2%"
    assert mda.ci_text((-0.63, 0.25), 0.10) == "90% CI −0.6 to 0.2%"


def test_too_few_runs_for_an_interval_give_no_direction_synthetic():
    nan = (float("nan"), float("nan"))
    assert mda.change_phrase(37.0, nan, "throughput", 1) == \
        "a change in throughput of 37.0% that the data cannot tell from none"
    assert mda.ci_text(nan, 0.05) == "no interval: fewer than 3 runs"

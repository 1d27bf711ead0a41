"""The stack-trim chapter's steps (analysis.py functions moved out of the
notebook) and schemas, on small synthetic tables with hand-computable values."""

import json
import math

import pandas as pd
import pandera.pandas as pa
import pytest

from mobitrace.core.claims import INCONCLUSIVE, NOT_CHECKABLE, REPRODUCED
from mobitrace.core import claims as cl
from mobitrace.energy.power_models import CpuPowerModel
from mobitrace.studies.stack_trim import analysis as sta
from mobitrace.studies.stack_trim import shown
from mobitrace.studies.stack_trim import schema
from mobitrace.core.io import write_metrics

MODEL = CpuPowerModel("t", mw_per_ghz=250, mw_at_zero_ghz=50, idle_mw=150.2, nominal_ghz=2.0,
                      provenance="assumed", source="test")


class FakeValues:
    """Stands in for mobitrace.core.published.Values (synthetic published values)."""

    def __init__(self, rows):
        self.frame = pd.DataFrame(rows)

    def __call__(self, vid):
        return float(self.frame.set_index("id").loc[vid, "value"])

    def row(self, vid):
        return self.frame.set_index("id").loc[vid]


def _values():
    rows = [("onecopy_wifi_saving", 10, "<", None), ("onecopy_loopback_saving_max", 40, "~", None),
            ("onecopy_power_100", 100, "~", 0.1), ("onecopy_power_240", 300, "~", 0.24),
            ("udp_crossover", 40, "<=", None), ("sd_across_runs", 2.5, "<", None), ("stack_share", 50, ">", None),
            ("offload_wifi_saving", 40, "~", None), ("offload_loopback_saving", 60, ">", None),
            ("cpu_share_wifi_max", 60, ">", None)]
    return FakeValues([{"id": i, "value": v, "relation": r, "throughput_gbps": t} for i, v, r, t in rows])


def _compare_rows(**extra):
    base = {"n_variant": 2, "n_baseline": 2, "energy_variant_mj": 1.0, "energy_baseline_mj": 2.0,
            "power_variant_mw": 1.0, "power_baseline_mw": 2.0, "cv_variant_pct": 1.0, "cv_baseline_pct": 3.0,
            "saving": 0.5, "saving_lo": 0.4, "saving_hi": 0.6, "ratio": 0.5, "ratio_lo": 0.4, "ratio_hi": 0.6,
            "power_saving_mw": 1.0, "power_saving_lo_mw": 0.5, "power_saving_hi_mw": 1.5,
            "goodput_variant_mbps": 10.0, "goodput_baseline_mbps": 10.0, "min_delivered": 1.0, "sustained": True}
    return {**base, **extra}


def _onecopy_synthetic():
    rows = []
    for link, rate, saving in (("lo", 10.0, 0.1), ("lo", 100.0, 0.2), ("lo", 240.0, 0.3), ("veth", 10.0, 0.05),
                               ("veth", 50.0, 0.4)):
        rows.append({"link": link, "direction": "up", "rate_mbps": rate,
                     **_compare_rows(saving=saving, saving_lo=saving - 0.1, saving_hi=saving + 0.1,
                                     power_saving_mw=rate, power_saving_lo_mw=rate - 1, power_saving_hi_mw=rate + 1),
                     "basis": "both"})
    return schema.ONECOPY_SCHEMA.validate(pd.DataFrame(rows))


def _transport_synthetic():
    rows = []
    for size, ratios in ((1472, (0.8, 1.5, 2.0)), (20000, (0.5, 0.6, 0.7))):
        for rate, r in zip((10.0, 40.0, 100.0), ratios):
            rows.append({"link": "lo", "rate_mbps": rate,
                         **_compare_rows(ratio=r, ratio_lo=r - 0.05, ratio_hi=r + 0.05, saving=1 - r,
                                         saving_lo=1 - r - 0.05, saving_hi=1 - r + 0.05),
                         "udp_size": size})
    return schema.TRANSPORT_SCHEMA.validate(pd.DataFrame(rows))


def test_host_numbers_hand_computed_synthetic():
    runs = pd.DataFrame({"mean_mhz": [1000.0, 3000.0], "both_cpu_s": [0.5, 1.0], "sender_cpu_wait4_s": [0.5, 1.0],
                         "receiver_cpu_wait4_s": [0.5, 1.0], "stat_busy_s": [1.0, 2.0], "stat_interval_s": [2.0, 2.0],
                         "elapsed_s": [1.0, 1.0], "loadavg_1min": [0.5, 1.5]})
    got = sta.host_numbers(runs, pd.DataFrame({"cpu_count": [2]}), MODEL)
    assert list(got) == ["mhz_min", "mhz_max", "busy_core_mw", "cpu_time_ratio_wait4", "host_busy_median",
                         "endpoints_busy_median", "loadavg_median", "n_runs_ref"]
    assert got["busy_core_mw"] == pytest.approx(250 * 2 + 50)  # mean 2000 MHz
    assert got["cpu_time_ratio_wait4"] == pytest.approx(0.5)
    assert got["host_busy_median"] == pytest.approx(37.5)  # 25% and 50% of two cores
    assert got["endpoints_busy_median"] == pytest.approx(37.5)
    assert got["loadavg_median"] == 1.0 and got["n_runs_ref"] == 2


def test_onecopy_summary_counts_synthetic():
    t = _onecopy_synthetic()
    got = sta.onecopy_summary(t, "both")
    # savings 0.05, 0.1, 0.2, 0.3, 0.4, each +-0.1: [-0.05, 0.15] and [0, 0.2] contain zero.
    assert (got["oc_n_points"], got["oc_n_zero_in"], got["oc_n_pos"], got["oc_n_neg"]) == (5, 2, 3, 0)
    assert got["oc_median_saving"] == pytest.approx(20.0) and got["oc_cv_median"] == pytest.approx(2.0)
    assert got["oc_verdict_text"] == "One-copy saves CPU energy beyond the spread at 3 of 5 points."


def test_crossover_table_synthetic():
    c = sta.crossover_table({"host": _transport_synthetic()})
    row = c.set_index("udp_size").loc[1472]
    assert row["crossover_mbps"] == 40.0 and row["last_rate_below_mbps"] == 10.0 and row["max_ratio"] == 2.0
    assert math.isnan(c.set_index("udp_size").loc[20000, "crossover_mbps"])


def test_crossover_table_without_devices_has_the_schema_columns():
    assert list(sta.crossover_table({}).columns) == list(schema.CROSSOVER_SCHEMA.columns)


def test_power_rates_from_published_throughput_synthetic():
    assert sta.power_rates(_values()) == {"oc_p100": 100.0, "oc_p240": 240.0}


def test_key_numbers_and_claims_synthetic():
    oc, tr = _onecopy_synthetic(), _transport_synthetic()
    cross = sta.crossover_table({"host": tr})
    nums = sta.key_numbers(oc, tr, cross, "host", _values(), "both", "veth", 24, 0.05)
    assert nums["oc_lo_max"] == pytest.approx(30.0) and nums["oc_lo_max_rate"] == 240.0
    assert nums["oc_wifi_max"] == pytest.approx(5.0)  # veth at 50 Mbps is above 24 Mbps
    assert nums["oc_p100"] == 100.0 and nums["oc_p240_hi"] == 241.0
    assert nums["oc_lo_spearman"] == pytest.approx(1.0)
    assert nums["cross_lo"] == 40.0 and nums["udp_top_rate"] == 100.0
    assert nums["udp1_ratio_top"] == 2.0 and nums["udp20_ratio_top"] == 0.7
    assert nums["udp1_ratio_below_40"] == 0.8  # the paper's 40 Mbps, from the published values
    claims = sta.chapter_claims(nums, _values(), study="stack-trim", device="host", wifi_link="veth",
                                wifi_max_mbps=24, rel_tol_approx=0.25, alpha=0.05)
    v = claims.set_index("claim_id")["verdict"]
    # 5% < 10%, but its interval (-5, 15)% straddles 10%: decided on the interval
    assert v["onecopy_wifi_small"] == INCONCLUSIVE
    assert v["udp_crossover"] == REPRODUCED and v["udp20_more_efficient"] == REPRODUCED
    assert v["stack_share"] == NOT_CHECKABLE
    intervals = sta.findings_intervals(nums)
    assert intervals["onecopy_wifi_small"] == pytest.approx((-5.0, 15.0))


def test_claims_without_a_device_are_not_checkable_synthetic():
    claims = sta.chapter_claims({}, _values(), study="stack-trim", device=None, wifi_link="veth",
                                wifi_max_mbps=24, rel_tol_approx=0.25, alpha=0.05)
    assert set(claims["verdict"]) == {NOT_CHECKABLE}
    assert cl.keyed(cl.verdict_counts(claims)) == {"reproduced": 0, "not_reproduced": 0, "inconclusive": 0,
                                                   "not_checkable": len(claims), "testbed_bound": 0,
                                                   "follows_from_the_model": 0}


def test_metrics_rounds_numbers_and_keeps_text_synthetic(tmp_path):
    claims = sta.chapter_claims({}, _values(), study="stack-trim", device=None, wifi_link="veth",
                                wifi_max_mbps=24, rel_tol_approx=0.25, alpha=0.05)
    doc = sta.metrics("host", MODEL, {"b": 1 / 3, "a": "up", "c": float("nan")}, claims)
    assert doc["numbers"] == {"a": "up", "b": 0.333333, "c": None}
    write_metrics(tmp_path / "m.json", doc)
    assert json.loads((tmp_path / "m.json").read_text()) == doc


def test_results_schemas_refuse_an_interval_that_does_not_hold_the_estimate_synthetic():
    t = _onecopy_synthetic()
    t.loc[0, "saving_lo"] = 0.9
    with pytest.raises(pa.errors.SchemaError):
        schema.ONECOPY_SCHEMA.validate(t)


def test_table1_shown_keeps_the_printed_order_synthetic():
    tt = pd.DataFrame({"table": "table1", "row": ["4Mbps"] * 4, "column": ["Network Stack", "Logging", "OS Proc.",
                                                                        "WiFi Driver"],
                       "text": ["31.5%", "1.7%", "3.3%", "10.2%"]})
    table = shown.table1_shown(tt)
    assert list(table.columns) == ["CBR rate", "Logging", "OS Proc.", "WiFi Driver", "Network Stack"]
    assert list(table.iloc[0]) == ["4Mbps", "1.7%", "3.3%", "10.2%", "31.5%"]


def test_saving_words_follow_the_interval_flipped_synthetic():
    """The word comes from the saving's interval, not its point estimate."""
    assert sta.saving_phrase(2.1, 35.7) == "costs less CPU energy than"
    assert sta.saving_phrase(-35.7, -2.1) == "costs more CPU energy than"   # the same data flipped
    # A 19.3% point saving whose interval holds zero (the committed capture's case) has no direction.
    assert sta.saving_phrase(-0.4, 35.7) == "is not distinguishable in CPU energy from"
    assert sta.saving_phrase(float("nan"), float("nan")) == "is not distinguishable in CPU energy from"


@pytest.mark.parametrize("ratio_lo, word", [(1.2, "costs more CPU energy than TCP at every rate"),
                                            (0.9, "is not shown to cost more")])
def test_crossover_sentence_needs_the_interval_above_one_synthetic(ratio_lo, word):
    """UDP at 1.5x TCP's energy everywhere: "costs more" only when the
    intervals lie above 1; the same point estimates with intervals that
    straddle 1 say nothing of the kind."""
    transport = pd.DataFrame({"link": "lo", "udp_size": 1472, "rate_mbps": [1.0, 10.0, 100.0],
                              "ratio": 1.5, "ratio_lo": ratio_lo, "ratio_hi": 2.0})
    crossover = pd.DataFrame([{"device": "d", "link": "lo", "udp_size": 1472,
                               "crossover_mbps": sta.crossover_rate(transport["rate_mbps"], transport["ratio"])[0],
                               "crossover_interval_above_1_mbps": sta.crossover_rate(
                                   transport["rate_mbps"], transport["ratio"], transport["ratio_lo"])[0]}])
    runs = pd.DataFrame({"direction": "up", "sender_mode": "copy", "proto": ["tcp", "udp", "udp"],
                         "size": [16384, 1472, 20000], "sender_calls": [64, 680, 50], "sender_bytes": [1e6] * 3})
    text = sta.transport_numbers(runs, transport, crossover, "d", 70.0)["cross_text"]
    assert word in text


def test_the_small_saving_reading_is_said_only_when_the_data_show_it_flipped_synthetic():
    oc = _onecopy_synthetic()
    # every interval straddles zero (a small saving), then flipped far above zero
    small = sta.onecopy_summary(oc.assign(saving=0.01, saving_lo=-0.05, saving_hi=0.07), "both")
    big = oc.assign(saving=0.5, saving_lo=0.4, saving_hi=0.6)
    large = sta.onecopy_summary(big, "both")
    assert large["oc_n_pos"] == large["oc_n_points"] and large["oc_reading_text"] == ""
    assert small["oc_n_pos"] * 2 <= small["oc_n_points"] and small["oc_reading_text"] == sta.READING


def test_breakdown_other_share_is_never_negative_synthetic():
    """"other" = host busy (tick-sampled) minus the endpoints (precise):
    where /proc/stat reads below the endpoints it is blank, not negative;
    where it reads above, the difference (hand-computed)."""
    def runs(stat_busy_s):
        return pd.DataFrame({"condition": "c", "link": "lo", "direction": "up", "proto": "tcp", "size": 16384,
                             "rate_mbps": [10.0, 1000.0], "sender_user_s": 0.0, "receiver_user_s": 0.0,
                             "sender_sys_s": [0.02, 0.3], "receiver_sys_s": 0.0, "both_cpu_s": [0.02, 0.3],
                             "elapsed_s": 1.0, "stat_interval_s": 1.0, "stat_softirq_s": 0.0,
                             "stat_busy_s": stat_busy_s})
    b = sta.breakdown(runs([0.05, 0.15])).set_index("rate_mbps")["other_pct"]
    assert b.loc[10.0] == pytest.approx(3.0) and pd.isna(b.loc[1000.0])
    assert (sta.breakdown(runs([0.05, 0.45]))["other_pct"] >= 0).all()

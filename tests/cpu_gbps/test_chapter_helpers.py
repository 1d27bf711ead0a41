"""The cpu-gbps chapters' helpers (analysis.py, chapter_measured.py, schema.py)
on synthetic published values and synthetic runs (hand-computable)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pandera.pandas as pa
import pytest

from mobitrace.core import claims as cl
from mobitrace.studies.cpu_gbps import analysis as an
from mobitrace.studies.cpu_gbps import chapter_measured as mc
from mobitrace.studies.cpu_gbps import schema


class SyntheticValues:
    """A stand-in for core.published.Values built from a list of records."""

    def __init__(self, records):
        self.frame = pd.DataFrame(records)

    def row(self, value_id):
        return self.frame.loc[self.frame["id"] == value_id].iloc[0]

    def __call__(self, value_id):
        return float(self.row(value_id)["value"])

    value = __call__


def rec(id_, value, unit="Mbps", relation="=", location="§x", device="ROG Phone", quantity="q", tput=None):
    return {"id": id_, "device": device, "quantity": quantity, "value": float(value), "unit": unit,
            "relation": relation, "location": location, "throughput_gbps": tput}


SYNTHETIC = SyntheticValues([
    rec("p_a", 50, "%", device="Pixel 2", quantity="total CPU at throughput", tput=2.0),
    rec("p_b", 90, "%", device="Pixel 2", quantity="total CPU at throughput", tput=4.0),
    rec("p_c", 30, "%", "<", device="Pixel 2", quantity="total CPU at throughput", tput=1.0),
    rec("r_a", 10, "%", device="ROG Phone", quantity="total CPU at throughput", tput=1.0),
    rec("r_b", 50, "%", device="ROG Phone", quantity="total CPU at throughput", tput=11.0),
    rec("rog_sirq_big_tput", 1.2, "Gbps", location="§3.3.2"),
    rec("rog_gro_off_tput", 300, location="§3.3.1"),
    rec("rog_gro_on_tput", 1.5, "Gbps", location="§3.3.1"),
    rec("t2_big_discharging", 1000), rec("t2_little_discharging", 300),
    rec("t2_big_charging", 1500), rec("t2_little_charging", 600),
    rec("rog_battery", 4000, "mAh"), rec("battery_test_duration", 30, "min"),
    rec("battery_drop_low", 4, "%"), rec("battery_drop_high", 6, "%"),
    rec("battery_dl_tput", 1.6, "Gbps"), rec("battery_ul_tput", 0.8, "Gbps"),
])
LINE_POINTS = {"Pixel 2": ["p_a", "p_b"], "ROG Phone": ["r_a", "r_b"]}


def test_slope_ratio_word_flips_with_the_slopes_synthetic():
    """Swap the phones' points: the ROG Phone then needs 5 times *more* CPU per bit."""
    swapped = {"Pixel 2": LINE_POINTS["ROG Phone"], "ROG Phone": LINE_POINTS["Pixel 2"]}
    _, _, glue = an.implied_lines(SYNTHETIC, swapped, [1.0, 5.0], 50)
    assert glue["slope_ratio"] == pytest.approx(5.0) and glue["slope_ratio_word"] == "times more"


def test_implied_lines_synthetic_two_points():
    # Pixel 2: (2, 50) and (4, 90) -> slope 20, intercept 10; at 50% CPU: 2 Gbps; at 5 Gbps: 110% (> 100).
    lines, table, glue = an.implied_lines(SYNTHETIC, LINE_POINTS, [1.0, 5.0], 50)
    pixel = table.set_index("device").loc["Pixel 2"]
    assert pixel["slope_pct_per_gbps"] == pytest.approx(20.0)
    assert pixel["intercept_pct"] == pytest.approx(10.0)
    assert pixel["gbps_at_50pct_cpu"] == pytest.approx(2.0)
    assert pixel["cpu_pct_at_5gbps"] == pytest.approx(110.0)
    assert pixel["note"] == "line passes 100% CPU before 5 Gbps"
    # ROG: (1, 10) and (11, 50) -> slope 4, intercept 6; slope ratio 20 / 4 = 5.
    assert list(glue) == ["pixel_2_slope", "pixel_2_intercept", "rog_phone_slope", "rog_phone_intercept",
                          "slope_ratio", "slope_ratio_word", "answer_text"]
    assert glue["slope_ratio"] == pytest.approx(5.0) and glue["slope_ratio_word"] == "times less"
    assert lines["ROG Phone"].predict(1.0) == pytest.approx(10.0)
    # The answer's verb follows the number at the top rate (5 Gbps): Pixel 110% > 100, ROG 4 * 5 + 6 = 26%.
    assert ("the Pixel 2 cannot keep up (its line needs 110% CPU at 5 Gbps and reaches 50% at 2.0 Gbps)"
            in glue["answer_text"])
    assert "the ROG Phone keeps up (its line needs 26% CPU" in glue["answer_text"]


def test_answer_verb_flips_with_the_top_rate_synthetic():
    """The same lines at a top rate the Pixel 2 stays under 100% at: its verb flips."""
    _, _, glue = an.implied_lines(SYNTHETIC, LINE_POINTS, [1.0, 4.0], 50)
    assert "the Pixel 2 keeps up (its line needs 90% CPU at 4 Gbps" in glue["answer_text"]


def test_derived_ratios_and_labels_from_published_synthetic():
    table, d = an.derived_ratios(SYNTHETIC)
    assert d["affinity_gain"] == pytest.approx(1.2 * 1000 / 300)   # 4
    assert d["gro_penalty"] == pytest.approx(300 / 1500)           # 0.2
    assert d["little_ratio"] == pytest.approx(0.5)
    assert d["big_drop"] == pytest.approx(500)
    assert table["quantity"].iloc[0] == "SIRQ LITTLE->big gain (1.2 Gbps / 300 Mbps)"
    assert table["quantity"].iloc[1] == "GRO-off / GRO-on throughput (300 Mbps / 1.5 Gbps)"


def test_battery_drain_synthetic():
    t = an.battery_drain(SYNTHETIC).set_index("quantity")["value"]
    assert t["charge drawn, low end"] == pytest.approx(160)       # 4000 mAh * 4%
    assert t["average current, high end"] == pytest.approx(480)   # 240 mAh / 0.5 h
    assert t["data moved downlink at 1.6 Gbps"] == pytest.approx(1.6 * 60 * 30 / 8)  # 180 GB


def test_table2_layout_synthetic():
    t = an.table2(SYNTHETIC)
    assert list(t.columns) == ["state", "big Core", "LITTLE Core"]
    assert t.values.tolist() == [["Discharging", 1000.0, 300.0], ["Charging", 1500.0, 600.0]]


def test_verdict_counts_lists_every_label_and_counts_categories_apart_synthetic():
    frame = pd.DataFrame({"verdict": [cl.REPRODUCED, cl.REPRODUCED, cl.NOT_CHECKABLE, cl.REPRODUCED],
                          "category": [cl.EVIDENCE, cl.EVIDENCE, cl.EVIDENCE, cl.FOLLOWS_FROM_MODEL]})
    assert cl.verdict_counts(frame) == {cl.REPRODUCED: 2, cl.NOT_REPRODUCED: 0, cl.INCONCLUSIVE: 0,
                                        cl.NOT_CHECKABLE: 1, cl.TESTBED_BOUND: 0, cl.FOLLOWS_FROM_MODEL: 1}


def test_chapter_metrics_rounds_to_6_decimals_synthetic():
    lines, _, _ = an.implied_lines(SYNTHETIC, LINE_POINTS, [1.0], 50)
    m = an.chapter_metrics(lines, 50, [1.0], 1 / 3, {cl.REPRODUCED: 1, cl.NOT_REPRODUCED: 0, cl.NOT_CHECKABLE: 2})
    assert m["affinity_gain_x"] == 0.333333
    assert m["implied_lines"]["Pixel 2"]["cpu_pct_at_1gbps"] == pytest.approx(30.0)
    assert m["claims"] == {"reproduced": 1, "not_reproduced": 0, "not_checkable": 2}


def synthetic_runs():
    """Two runs per rate at 0.5 Gbps (low rate) and the unlimited rate (0)."""
    return pd.DataFrame({
        "device": ["d"] * 4, "direction": ["down"] * 4,
        "target_rate_bps": [500_000_000, 500_000_000, 0, 0],
        "stat_all_total_pct": [12.0, 14.0, 40.0, 44.0], "precise_total_pct": [10.0, 10.0, 40.0, 40.0],
        "host_precise_total_pct": [11.0, np.nan, 41.0, 42.0], "stat_all_softirq_pct": [1.0, 1.0, 10.0, 22.0],
    })


def test_add_gap_columns_synthetic():
    runs = mc.add_gap_columns(synthetic_runs())
    assert runs["gap_pp"].tolist() == [2.0, 4.0, 0.0, 4.0]
    assert runs["ratio"].tolist() == [1.2, 1.4, 1.0, 1.1]
    assert runs["low_rate"].tolist() == [True, True, False, False]
    assert runs["tick_error_pp"].tolist()[0] == 1.0 and math.isnan(runs["tick_error_pp"].iloc[1])
    assert runs["background_pp"].tolist()[2:] == [1.0, 2.0]


def test_procstat_glue_synthetic():
    runs = mc.add_gap_columns(synthetic_runs())
    gaps = pd.DataFrame({"slope_ratio": [0.5, 2.0]})
    g = mc.procstat_glue(runs, gaps, 0.05)
    assert g["gap_mean_all"] == pytest.approx(2.5)
    assert g["gap_median_low"] == pytest.approx(3.0)
    assert g["ratio_low_median"] == pytest.approx(1.3)
    assert g["low_rate_reading"].startswith("reads it")  # directions: tests/unit/test_directions.py
    assert g["n_host_precise"] == 3
    assert g["background_max"] == pytest.approx(2.0)
    assert (g["slope_ratio_min"], g["slope_ratio_max"]) == (0.5, 2.0)


def test_paper_gro_ratio_from_published_synthetic():
    assert mc.paper_gro_ratio(SYNTHETIC) == pytest.approx(0.2)   # 300 Mbps / 1.5 Gbps


def test_headline_keeps_only_present_claims():
    claims = pd.DataFrame({"claim_id": ["measured_gro_off_ratio", "measured_linear_stat_total_vm_a"]})
    assert mc.headline(claims, "vm-a") == ["measured_linear_stat_total_vm_a", "measured_gro_off_ratio"]


def test_results_schemas_reject_a_bad_table_synthetic():
    good = pd.DataFrame({"quantity": ["a"], "value": [1.0], "unit": ["mAh"]})
    schema.BATTERY_SCHEMA.validate(good)
    with pytest.raises(pa.errors.SchemaError):
        schema.BATTERY_SCHEMA.validate(good.assign(unit="W"))
    with pytest.raises(pa.errors.SchemaError):
        schema.TABLE2_SCHEMA.validate(pd.DataFrame({"state": ["Idle"], "big Core": [1.0], "LITTLE Core": [1.0]}))

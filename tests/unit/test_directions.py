"""Direction words come from the sign of a computed value: flipped synthetic
data flip the word in the helper and in the prose's glued phrases."""

import math

import pandas as pd
import pytest

from mobitrace.core import numbers
from mobitrace.studies.cpu_gbps.chapter_measured import procstat_direction, procstat_glue
from mobitrace.studies.mptcp_dualband.analysis import power_facts
from mobitrace.studies.priority_boost.chapter import reference_numbers


def test_direction_follows_the_sign_synthetic():
    assert numbers.direction(2.13) == "higher"
    assert numbers.direction(-2.13) == "lower"
    assert numbers.direction(0.0, zero="as fast") == "as fast"
    assert numbers.direction(-0.5, up="saves", down="costs") == "costs"
    assert numbers.direction(math.nan) == numbers.MISSING


def synthetic_procstat_runs(ratios: dict[str, float]) -> pd.DataFrame:
    """Two paced (<= 1 Gbps) runs per device at the given /proc/stat ÷ precise
    ratio, and one unlimited-rate run per device at ratio 1."""
    rows = []
    for device, ratio in ratios.items():
        for low, r in ((True, ratio), (True, ratio), (False, 1.0)):
            rows.append({"device": device, "low_rate": low, "ratio": r, "target_rate_bps": 1e9 if low else 0,
                         "gap_pp": 10 * math.log(r), "host_precise_total_pct": 10.0, "tick_error_pp": 1.0,
                         "stat_all_total_pct": 10.0 * r, "background_pp": 0.5})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("ratios, word", [
    ({"a": 1.48, "b": 14.7}, "reads it higher than the precise source on every device"),
    ({"a": 1 / 1.48, "b": 1 / 14.7}, "reads it lower than the precise source on every device"),
    ({"a": 1.48, "b": 0.62, "c": 0.38, "d": 14.7}, "reads it higher than the precise source on 2 of 4 devices "
                                                   "and lower on 2: the direction depends on the device"),
])
def test_procstat_paragraph_direction_flips_with_the_ratios_synthetic(ratios, word):
    gaps = pd.DataFrame({"slope_ratio": [1.0]})
    glue = procstat_glue(synthetic_procstat_runs(ratios), gaps)
    assert glue["low_rate_reading"] == word
    assert "misses" not in glue["low_rate_reading"]
    for device, ratio in ratios.items():
        assert f"{device} {numbers.number(ratio)} ({'higher' if ratio > 1 else 'lower'})" in glue["ratio_low_by_device"]


def test_procstat_direction_of_the_issue_ratios_is_per_device_synthetic():
    # The median over devices reads higher (2.13 in the book), yet two devices read lower.
    per_device = pd.Series({"d1": 1.48, "d2": 0.62, "d3": 0.38, "d4": 14.7})
    assert per_device.median() > 1
    assert procstat_direction(per_device)["low_rate_reading"].endswith("the direction depends on the device")


def test_power_sentence_flips_above_below_synthetic():
    values = lambda key: 56.0  # noqa: E731 - the paper's stated excess
    assert power_facts(33.8, (30.0, 37.0), values)["ul_excess_dir"] == "above"
    flipped = power_facts(-33.8, (-37.0, -30.0), values)
    assert flipped["ul_excess_dir"] == "below" and flipped["ul_excess"] == "34"


def test_saving_sentence_flips_saves_costs_synthetic():
    saves = reference_numbers("dev", {"cpu_incr_gain_top_pct": 4.0, "cpu_decr_gain_top_pct": -4.0})
    assert (saves["m_cpu_incr_top_verb"], saves["m_cpu_decr_top_verb"]) == ("saves", "costs")
    assert saves["m_cpu_incr_gain_top_abs_pct"] == saves["m_cpu_decr_gain_top_abs_pct"] == 4.0

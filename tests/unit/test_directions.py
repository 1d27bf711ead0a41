"""Direction words come from the sign of a computed value: flipped synthetic
data flip the word in the helper and in the prose's glued phrases."""

import math

import pandas as pd
import pytest

from mobitrace.core import numbers
from mobitrace.studies.cpu_gbps.chapter_measured import procstat_direction, procstat_glue
from mobitrace.studies.mptcp_dualband.analysis import power_facts
from mobitrace.studies.priority_boost.findings import reference_numbers


def test_direction_follows_the_sign_synthetic():
    assert numbers.direction(2.13) == "higher"
    assert numbers.direction(-2.13) == "lower"
    assert numbers.direction(0.0, zero="as fast") == "as fast"
    assert numbers.direction(-0.5, up="saves", down="costs") == "costs"
    assert numbers.direction(math.nan) == numbers.MISSING


# Eight paced runs per device and direction: the ratio times these factors
# (spread, so the signed-rank test has something to rank).
SPREAD = (0.97, 0.98, 0.99, 1.0, 1.0, 1.01, 1.02, 1.03)


def synthetic_procstat_runs(ratios: dict[tuple[str, str], float]) -> pd.DataFrame:
    """Eight paced (<= 1 Gbps) runs per (device, direction) at about the
    given /proc/stat ÷ precise ratio, and one unlimited-rate run per device
    at ratio 1."""
    rows = []
    for (device, direction), ratio in ratios.items():
        for low, r in [*((True, ratio * k) for k in SPREAD), (False, 1.0)]:
            rows.append({"device": device, "direction": direction, "low_rate": low, "ratio": r,
                         "target_rate_bps": 1e9 if low else 0, "gap_pp": 10 * math.log(r),
                         "host_precise_total_pct": 10.0, "tick_error_pp": 1.0, "stat_all_total_pct": 10.0 * r,
                         "background_pp": 0.5})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("ratios, word", [
    ({("a", "down"): 1.48, ("b", "up"): 14.7},
     "reads it higher than the precise source on every device and direction"),
    ({("a", "down"): 1 / 1.48, ("b", "up"): 1 / 14.7},
     "reads it lower than the precise source on every device and direction"),
    # Within one device downlink reads higher and uplink lower: counted per direction, not pooled.
    ({("a", "down"): 1.48, ("a", "up"): 0.62, ("b", "down"): 0.38, ("b", "up"): 14.7},
     "reads it higher on 2, lower on 2 of 4 device-directions (Wilcoxon, alpha 0.05): the direction depends on "
     "the device and direction"),
    # A ratio of 1 (give or take the spread) has no direction.
    ({("a", "down"): 1.0, ("b", "down"): 1.48},
     "reads it higher on 1, not distinguishably different on 1 of 2 device-directions (Wilcoxon, alpha 0.05)"),
])
def test_procstat_paragraph_direction_flips_with_the_ratios_synthetic(ratios, word):
    gaps = pd.DataFrame({"slope_ratio": [1.0]})
    glue = procstat_glue(synthetic_procstat_runs(ratios), gaps, 0.05)
    assert glue["low_rate_reading"] == word
    assert "misses" not in glue["low_rate_reading"]


def test_procstat_direction_flipped_data_flip_every_word_synthetic():
    ratios = {("a", "down"): 1.48, ("a", "up"): 0.62}
    words = procstat_direction(synthetic_procstat_runs(ratios).query("low_rate"), 0.05)["ratio_low_by_device"]
    flipped = procstat_direction(synthetic_procstat_runs({k: 1 / r for k, r in ratios.items()})
                                 .query("low_rate"), 0.05)["ratio_low_by_device"]
    assert "a downlink 1.48 (higher)" in words and "a uplink 0.620 (lower)" in words
    assert "a downlink 0.676 (lower)" in flipped and "a uplink 1.61 (higher)" in flipped


@pytest.mark.parametrize("low, high, word", [
    (0.1, 0.5, "higher"), (-0.5, -0.1, "lower"), (-0.25, 0.68, "not distinguishable"),
    (math.nan, 0.5, "not distinguishable")])
def test_interval_direction_and_its_flip_synthetic(low, high, word):
    from mobitrace.core import claims as cl
    assert cl.interval_direction(low, high) == word
    flipped = {"higher": "lower", "lower": "higher"}.get(word, word)
    assert cl.interval_direction(-high, -low) == flipped


def test_rps_sentence_never_calls_a_non_significant_ratio_higher_synthetic():
    from mobitrace.studies.cpu_gbps.chapter_measured import rps_glue
    frame = lambda r, lo, hi: pd.DataFrame({  # noqa: E731
        "direction": ["down"], "a_max_gbps": [5.0], "b_max_gbps": [5.0 * r], "ratio_b_over_a": [r],
        "ratio_lo": [lo], "ratio_hi": [hi], "welch_p": [0.23], "welch_p_holm": [0.5]})
    assert rps_glue(frame(1.24, 0.78, 1.97), ["a", "b"])["rps_word"] == "not distinguishable"
    assert rps_glue(frame(1.24, 1.10, 1.40), ["a", "b"])["rps_word"] == "higher"
    assert rps_glue(frame(1 / 1.24, 1 / 1.40, 1 / 1.10), ["a", "b"])["rps_word"] == "lower"


def test_power_sentence_flips_above_below_synthetic():
    values = lambda key: 56.0  # noqa: E731 - the paper's stated excess
    assert power_facts(33.8, (30.0, 37.0), values)["ul_excess_dir"] == "above"
    flipped = power_facts(-33.8, (-37.0, -30.0), values)
    assert flipped["ul_excess_dir"] == "below" and flipped["ul_excess"] == "34"
    assert power_facts(3.0, (-2.0, 8.0), values)["ul_excess_dir"] == "not distinguishable from"


def test_saving_sentence_flips_saves_costs_synthetic():
    saves = reference_numbers("dev", {"cpu_incr_gain_top_pct": 4.0, "cpu_decr_gain_top_pct": -4.0,
                                      "cpu_incr_top_sig": True, "cpu_decr_top_sig": True})
    assert (saves["m_cpu_incr_top_verb"], saves["m_cpu_decr_top_verb"]) == ("saves", "costs")
    assert saves["m_cpu_incr_gain_top_abs_pct"] == saves["m_cpu_decr_gain_top_abs_pct"] == 4.0
    # The same gains that Welch's test cannot tell from none get no direction.
    unsure = reference_numbers("dev", {"cpu_incr_gain_top_pct": 4.0, "cpu_decr_gain_top_pct": -4.0,
                                       "cpu_incr_top_sig": False, "cpu_decr_top_sig": False})
    assert unsure["m_cpu_incr_top_verb"] == unsure["m_cpu_decr_top_verb"] == "changes it, not significantly, by"


@pytest.mark.parametrize("diff, significant, word", [
    (-0.8, True, "faster than"), (0.8, True, "slower than"), (-0.8, False, "not distinguishable from"),
    (math.nan, True, "–")])
def test_priority_boost_faster_slower_from_the_test_synthetic(diff, significant, word):
    from mobitrace.studies.priority_boost.findings import tested_word
    assert tested_word(diff, significant, "slower than", "faster than", "not distinguishable from") == word


def test_priority_boost_net_words_follow_the_interval_synthetic():
    """DECR against the original over the network-load columns: the words
    come from the interval of the mean difference; wide SDs (straddling)
    leave no direction, and swapping the policies flips it."""
    from mobitrace.studies.priority_boost.findings import net_numbers

    def stats(decr, orig, sd):
        rows = []
        for col, (d, o) in enumerate(zip(decr, orig)):
            for pol, mean in (("decr", d), ("original", o), ("incr", o)):
                rows += [{"table": "transfer_net", "policy": pol, "column": col, "cpu_procs": 0, "cross_pct": 25,
                          "n": 10, "statistic": st, "value": v, "decimals": 1} for st, v in (("mean", mean), ("sd", sd))]
        return pd.DataFrame(rows)

    audit = pd.DataFrame({"policy": ["decr", "incr"] * 2, "df": [17.0] * 4, "diff": [-0.5, 0.0] * 2,
                          "mean_base": [87.0] * 4, "reject_holm": [False] * 4, "p": [0.5] * 4})
    tight = net_numbers(audit, stats([87.0, 86.0], [87.5, 86.5], 0.3), 0.05)
    assert (tight["net_decr_vs_orig"], tight["net_decr_better_verdict"]) == ("faster than", "holds")
    swapped = net_numbers(audit, stats([87.5, 86.5], [87.0, 86.0], 0.3), 0.05)
    assert (swapped["net_decr_vs_orig"], swapped["net_decr_better_verdict"]) == ("slower than", "does not hold")
    wide = net_numbers(audit, stats([87.0, 86.0], [87.5, 86.5], 3.0), 0.05)
    assert wide["net_decr_vs_orig"] == "not distinguishable from"
    assert wide["net_decr_better_verdict"] == "is not settled by the table"
    assert wide["net_decr_minus_orig_lo"] < 0 < wide["net_decr_minus_orig_hi"]


@pytest.mark.parametrize("a, b, word", [
    ((1.0, 1.2), (2.0, 2.4), "more"), ((2.0, 2.4), (1.0, 1.2), "less"),
    # Point slopes 1.1 and 1.3 whose intervals overlap: no direction.
    ((0.9, 1.3), (1.1, 1.5), "not distinguishably more or less")])
def test_offloads_cost_word_from_the_slope_intervals_synthetic(a, b, word):
    from mobitrace.studies.cpu_gbps.chapter_measured import slope_word
    row = lambda lo, hi: pd.Series({"slope_lo": lo, "slope_hi": hi})  # noqa: E731
    assert slope_word(row(*a), row(*b)) == word

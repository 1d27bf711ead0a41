"""Stack-trim statistics and energy pricing on hand-computable cases."""

import math

import numpy as np
import pandas as pd
import pytest

from mobitrace.studies.stack_trim import analysis as sta

from mobitrace.studies.stack_trim import shown
from mobitrace.energy.power_models import CpuPowerModel

MODEL = CpuPowerModel("t", mw_per_ghz=250, mw_at_zero_ghz=50, idle_mw=150.2, nominal_ghz=2.0,
                      provenance="assumed", source="test")


def test_bootstrap_saving_hand_checkable_synthetic():
    # a = [1, 3]: resampled means 1, 2, 3 with probabilities 1/4, 1/2, 1/4;
    # b = [4, 4] is constant. Savings 1 - m/4: 0.75, 0.5, 0.25, so the 95%
    # percentile interval is [0.25, 0.75] and the estimate 0.5.
    est, lo, hi = sta.bootstrap_ci([1, 3], [4, 4], "saving", alpha=0.05, n_resamples=20000, seed=1)
    assert est == pytest.approx(0.5)
    assert lo == pytest.approx(0.25)
    assert hi == pytest.approx(0.75)


def test_bootstrap_ratio_and_difference_synthetic():
    est, lo, hi = sta.bootstrap_ci([2, 2, 2], [4, 4, 4], "ratio", alpha=0.05)
    assert (est, lo, hi) == (0.5, 0.5, 0.5)  # constant samples: degenerate interval
    est, lo, hi = sta.bootstrap_ci([1, 3], [4, 4], "difference", alpha=0.05, n_resamples=20000, seed=1)
    assert est == pytest.approx(2.0) and lo == pytest.approx(1.0) and hi == pytest.approx(3.0)


def test_bootstrap_is_seeded_synthetic():
    rng = np.random.default_rng(0)
    a, b = rng.normal(10, 1, 10), rng.normal(12, 1, 10)
    assert sta.bootstrap_ci(a, b, "saving", 0.05, seed=7) == sta.bootstrap_ci(a, b, "saving", 0.05, seed=7)
    est, lo, hi = sta.bootstrap_ci(a, b, "saving", 0.05, seed=7)
    assert lo < est < hi


def test_bootstrap_needs_two_reps():
    with pytest.raises(ValueError, match="two repetitions"):
        sta.bootstrap_ci([1.0], [2.0, 3.0], "saving", 0.05)


def test_price_hand_computed_synthetic():
    runs = pd.DataFrame({"both_cpu_s": [0.1], "device_cpu_s": [0.04], "mean_mhz": [2000.0], "elapsed_s": [2.0]})
    out = sta.price(runs, MODEL)
    # 0.1 CPU-s at 2 GHz: 0.1 * (250 * 2 + 50) = 55 mJ; over 2 s: 27.5 mW.
    assert out["energy_both_mj"].iloc[0] == pytest.approx(55.0)
    assert out["power_both_mw"].iloc[0] == pytest.approx(27.5)
    assert out["energy_device_mj"].iloc[0] == pytest.approx(22.0)


def test_compare_saving_and_power_synthetic():
    rows = []
    for mode, cpus in (("copy", [0.10, 0.10]), ("onecopy", [0.06, 0.06])):
        for rep, c in enumerate(cpus):
            rows.append({"link": "lo", "direction": "up", "rate_mbps": 100.0, "device_mode": mode, "rep": rep,
                         "both_cpu_s": c, "device_cpu_s": c, "mean_mhz": 2000.0, "elapsed_s": 1.0,
                         "receiver_bytes": 12_000_000 if mode == "copy" else 11_000_000, "size": 16384,
                         "goodput_mbps": 96.0 if mode == "copy" else 88.0})
    runs = sta.price(pd.DataFrame(rows), MODEL)
    t = sta.compare(runs, ["link", "direction", "rate_mbps"], {"device_mode": "onecopy"}, {"device_mode": "copy"}, alpha=0.05)
    r = t.iloc[0]
    assert r["saving"] == pytest.approx(0.4) and r["saving_lo"] == pytest.approx(0.4)
    assert r["ratio"] == pytest.approx(0.6)
    # 0.04 CPU-s per second at 550 mW per busy core: 22 mW.
    assert r["power_saving_mw"] == pytest.approx(22.0)
    # (11e6 + 16384) B of the 12.5e6 B that 100 Mbps for 1 s is: 0.8813.
    assert r["min_delivered"] == pytest.approx(11_016_384 / 12_500_000) and not r["sustained"]


def test_delivered_share_counts_one_write_synthetic():
    runs = pd.DataFrame({"rate_mbps": [1.0], "elapsed_s": [1.0], "receiver_bytes": [7 * 16384], "size": [16384]})
    assert sta.delivered_share(runs)[0] == pytest.approx(8 * 16384 / 125000)


@pytest.mark.parametrize("ratio, lo, want, want_below", [
    ([0.5, 0.9, 1.2, 1.5], None, 40.0, 10.0),
    ([0.5, 1.2, 0.9, 1.5], None, 100.0, 40.0),   # must stay above 1 at every higher rate
    ([1.1, 1.2, 1.3, 1.5], None, 1.0, math.nan),  # above 1 from the lowest rate
    ([0.5, 0.6, 0.7, 0.8], None, math.nan, math.nan),
    ([0.5, 1.2, 1.3, 1.5], [0.4, 0.9, 1.1, 1.2], 40.0, 10.0),  # intervals: lower bounds above 1
])
def test_crossover_rate_synthetic(ratio, lo, want, want_below):
    got, below = sta.crossover_rate([1, 10, 40, 100], ratio, lo)
    assert (got == want) or (math.isnan(got) and math.isnan(want))
    assert (below == want_below) or (math.isnan(below) and math.isnan(want_below))


def test_crossover_sorts_rates_synthetic():
    assert sta.crossover_rate([100, 1, 40, 10], [1.5, 0.5, 1.2, 0.9])[0] == 40.0


def test_interval_long_and_extent_give_the_precomputed_interval():
    frame = pd.DataFrame({"series": ["a"], "rate_mbps": [10.0], "saving": [0.1], "lo": [-0.2], "hi": [0.3]})
    rows = shown.interval_long(frame, "saving", "lo", "hi", ["series", "rate_mbps"], scale=100)
    assert sorted(rows["value"]) == pytest.approx([-20.0, 10.0, 30.0])
    assert rows["value"].median() == pytest.approx(10.0)
    assert shown.interval_extent(rows["value"]) == pytest.approx((-20.0, 30.0))


def test_shown_tables_join_intervals_for_people():
    t = pd.DataFrame({"basis": ["both"], "link": ["lo"], "direction": ["up"], "rate_mbps": [100], "n_variant": [10],
                      "n_baseline": [9], "energy_baseline_mj": [2.0], "energy_variant_mj": [1.5], "saving": [0.25],
                      "saving_lo": [0.125], "saving_hi": [0.375], "power_saving_mw": [5.0],
                      "power_saving_lo_mw": [1.0], "power_saving_hi_mw": [9.0], "goodput_baseline_mbps": [99.9],
                      "sustained": [True]})
    row = shown.onecopy_shown(t, 0.05).iloc[0]
    assert row["saving (%) [95% CI]"] == "25.0 [12.5, 37.5]"
    assert row["link"] == "loopback" and row["direction"] == "uplink" and row["sustained"] == "yes"
    assert shown.series_label("veth", udp_size=1472) == "veth pair, UDP 1472 B"


@pytest.mark.parametrize("statistic", ["saving", "ratio", "difference"])
@pytest.mark.parametrize("sizes", [(2, 2), (5, 8), (8, 8), (13, 3)])
def test_bootstrap_ci_is_bit_identical_to_scipy_bootstrap_synthetic(statistic, sizes):
    # bootstrap_ci draws and reduces as scipy.stats.bootstrap(percentile, paired=False) does
    from scipy import stats as st
    rng = np.random.default_rng(sum(sizes))
    a, b = rng.lognormal(size=sizes[0]), rng.lognormal(size=sizes[1])
    fn = sta.STATISTICS[statistic]
    ref = st.bootstrap((a, b), fn, paired=False, vectorized=True, axis=-1, n_resamples=2000, confidence_level=0.95,
                       method="percentile", rng=np.random.default_rng(7))
    est, lo, hi = sta.bootstrap_ci(a, b, statistic, 0.05, 2000, 7)
    assert (lo, hi) == (ref.confidence_interval.low, ref.confidence_interval.high)
    assert est == fn(a, b)

"""Energy per bit, the Figure 9 guideline and the ratio search, on
hand-computable cases and the paper's own worked examples."""

import math

import numpy as np
import pandas as pd
import pytest

from mobitrace.studies.mptcp_dualband import analysis as mda
from mobitrace.studies.mptcp_dualband import ratios
from mobitrace.studies.mptcp_dualband import energy as energy_per_bit
from mobitrace.energy.power_models import CpuPowerModel, RadioPowerModel


def radio(name, tx, rx, rate):
    return RadioPowerModel(name, 0.0, tx, rx, rate, "published", "test")


RADIO = {"downlink": {"a": radio("ad", 1600, 2200, 1600), "b": radio("ac", 2800, 1100, 600)},
         "uplink": {"a": radio("ad", 1600, 2200, 1450), "b": radio("ac", 2800, 1100, 600)}}
CPU = CpuPowerModel("cpu", 300.0, 100.0, 0.0, 2.0, "assumed", "test")  # busy core 700 mW


@pytest.mark.parametrize("demand,direction,expected", [
    (None, "downlink", 100 * 1600 / 2200),          # backlogged: the rate ratio, 72.7 (the paper's 73:27)
    (None, "uplink", 100 * 1450 / 2050),            # 70.7 (the paper's 70:30)
    (1750, "downlink", 100 * 1150 / 1750),          # 65.7: fill 802.11ac (600), rest on 802.11ad (66:34)
    (1500, "downlink", 100.0),                      # 802.11ad alone satisfies it
    (500, "downlink", 0.0),                         # 802.11ac alone, cheaper to receive
    (1750, "uplink", 100 * 1450 / 1750),            # 82.9: fill 802.11ad (83:17)
    (1400, "uplink", 100.0),
    (500, "uplink", 100.0),
    (3000, "downlink", 100 * 1600 / 2200),          # above the sum: as backlogged
])
def test_guideline_ratio_matches_the_papers_examples(demand, direction, expected):
    rates = {"downlink": 1600, "uplink": 1450}
    assert ratios.guideline_ratio(demand, rates[direction], 600, direction) == pytest.approx(expected)


def test_guideline_ratio_rejects_bad_input():
    with pytest.raises(ValueError):
        ratios.guideline_ratio(100, 1600, 600, "sideways")
    with pytest.raises(ValueError):
        ratios.guideline_ratio(-5, 1600, 600, "uplink")
    with pytest.raises(ValueError):
        ratios.guideline_ratio(100, 0, 600, "uplink")


def test_radio_power_hand_computed():
    # downlink, half of each path: 2200/2 + 1100/2 = 1650 mW (receive powers)
    assert energy_per_bit.radio_power_mw(RADIO["downlink"], 800, 300, "downlink") == pytest.approx(1650)
    # uplink, both full: 1600 + 2800 = 4400 mW (transmit powers); above full rate capped
    assert energy_per_bit.radio_power_mw(RADIO["uplink"], 1450, 900, "uplink") == pytest.approx(4400)
    assert energy_per_bit.radio_power_mw(RADIO["uplink"], 0, 0, "uplink") == pytest.approx(0)


def test_cpu_power_hand_computed():
    # 0.5 CPU-s over 1 s at a 700 mW busy core = 350 mW; a capture at half scale prices double
    assert energy_per_bit.cpu_power_mw(CPU, 0.5, 1.0) == pytest.approx(350)
    assert energy_per_bit.cpu_power_mw(CPU, 0.5, 1.0, scale=0.5) == pytest.approx(700)


def _synthetic_runs():
    rows = []
    for ratio, ta, tb in ((0, 0, 600), (50, 600, 600), (73, 1600, 592), (100, 1600, 0)):
        rows.append({"device": "synthetic", "session": "s", "run_id": f"r{ratio}", "part": "sweep",
                     "transport": "striped", "direction": "downlink", "ratio_a_pct": float(ratio),
                     "demand_mbps": np.nan, "scale": 1.0, "tput_mbps": ta + tb, "tput_a_mbps": ta,
                     "tput_b_mbps": tb, "phone_cpu_s": 0.0, "rx_seconds": 1.0})
    return pd.DataFrame(rows)


def test_energy_table_synthetic_hand_computed():
    e = energy_per_bit.energy_table(_synthetic_runs(), RADIO, CPU).set_index("run_id")
    # 100:0 -> 2200 mW / 1600 Mbps = 1.375 nJ/bit; 0:100 -> 1100 / 600 = 1.8333
    assert e.loc["r100", "nj_per_bit"] == pytest.approx(1.375)
    assert e.loc["r0", "nj_per_bit"] == pytest.approx(1100 / 600)
    # 50:50 -> 600 on a (2200 * 600/1600 = 825) + 600 on b (1100) over 1200 Mbps
    assert e.loc["r50", "nj_per_bit"] == pytest.approx((825 + 1100) / 1200)


def test_optima_and_guideline_vs_search_synthetic():
    e = energy_per_bit.energy_table(_synthetic_runs(), RADIO, CPU)
    s = ratios.ratio_summary(e)
    o = ratios.optima(s).iloc[0]
    assert o["tput_opt_ratio"] == 73 and o["energy_opt_ratio"] == 100
    assert o["energy_opt_both_ratio"] == 73  # (2200 + 1100*592/600) / 2192 < 50:50's 1.604
    gl = ratios.guideline_vs_search(s, ratios.optima(s), {"downlink": {"a": 1600, "b": 600}}).iloc[0]
    assert gl["grid_ratio"] == 73
    expected = 100 * ((2200 + 1100 * 592 / 600) / 2192 / 1.375 - 1)
    assert gl["excess_energy_pct"] == pytest.approx(expected)
    assert gl["tput_shortfall_pct"] == pytest.approx(0)


def test_nearest_ratio_and_ecdf():
    assert ratios.nearest_ratio(65.7, [0, 60, 66, 70, 100]) == 66
    assert ratios.nearest_ratio(72.7, [70, 73]) == 73
    x, y = ratios.ecdf([3, 1, 2, 2])
    assert list(x) == [1, 2, 2, 3] and list(y) == [0.25, 0.5, 0.75, 1.0]
    assert math.isclose(y[-1], 1.0)


def test_radio_floor_model_hand_computed():
    m = RADIO["downlink"]
    # f = 0 is the linear model
    assert energy_per_bit.radio_power_floor_mw(m, 800, 300, "downlink", 0.0) == pytest.approx(1650)
    # f = 0.5: a: 2200 * (0.5 + 0.5 * 0.5) = 1650; b unused: 0
    assert energy_per_bit.radio_power_floor_mw(m, 800, 0, "downlink", 0.5) == pytest.approx(1650)
    # f = 1: any traffic costs the backlogged power
    assert energy_per_bit.radio_power_floor_mw(m, 1, 1, "downlink", 1.0) == pytest.approx(3300)
    with pytest.raises(ValueError):
        energy_per_bit.radio_power_floor_mw(m, 1, 1, "downlink", 1.5)


def test_floor_sensitivity_flips_the_cheaper_receiver_synthetic():
    # A 500 Mbps demand met by either path alone: linear -> 802.11ad per bit
    # (1.375 < 1.833 nJ/bit); with a 0.9 floor the 802.11ac radio is cheaper
    # (1100 * (0.9 + 0.1 * 500/600) < 2200 * (0.9 + 0.1 * 500/1600)), the paper's 0:100.
    s = pd.DataFrame({"direction": "downlink", "demand": 500.0, "ratio_a_pct": [0.0, 100.0],
                      "tput_mbps": [500.0, 500.0], "tput_a_mbps": [0.0, 500.0], "tput_b_mbps": [500.0, 0.0],
                      "cpu_nj_per_bit": [0.0, 0.0]})
    out = ratios.floor_sensitivity(s, RADIO, [0.0, 0.9]).set_index("floor_frac")
    assert out.loc[0.0, "energy_opt_ratio"] == 100 and out.loc[0.9, "energy_opt_ratio"] == 0


def test_select_runs_sets_aside_mptcp_runs_of_sessions_before_the_fix_synthetic():
    f = pd.DataFrame({"device": ["d"] * 4 + ["e"], "session": ["s1", "s1", "s2", "s2", "t1"],
                      "part": ["mptcp", "sweep", "mptcp", "backup", "mptcp"],
                      "bytes_a": [10.0, 5, 7, 10, 10], "bytes_b": [0.0, 5, 3, 0.05, 10]})
    manifests = {"d": {"s1": {"config": {}}, "s2": {"config": {"mptcp_subflow_wait_ms": 300}}},
                 "e": {"t1": {"config": {}}}}
    used, aside = mda.select_runs(f, manifests)
    assert list(zip(aside["device"], aside["session"], aside["part"])) == [("d", "s1", "mptcp")]
    # a device without a fixed session keeps all its runs; sweep runs are always kept
    assert set(zip(used["device"], used["session"], used["part"])) == {
        ("d", "s1", "sweep"), ("d", "s2", "mptcp"), ("d", "s2", "backup"), ("e", "t1", "mptcp")}
    assert list(mda.paths_used(f)) == [1, 2, 2, 1, 2]

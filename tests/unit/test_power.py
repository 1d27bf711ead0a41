"""Power models on hand-computable cases."""

import numpy as np
import pytest

from mobitrace.core.errors import InputError
from mobitrace.energy.power_models import CpuPowerModel, RadioPowerModel, cpu_models, nj_per_bit, radio_models

CPU = CpuPowerModel("hand", mw_per_ghz=100.0, mw_at_zero_ghz=50.0, idle_mw=200.0,
                    nominal_ghz=2.0, provenance="assumed", source="hand-computable test")


def test_busy_core_is_linear_in_frequency():
    assert CPU.busy_core_mw() == 250.0           # 100*2 + 50
    assert CPU.busy_core_mw(1.0) == 150.0
    assert CPU.busy_core_mw(3.0) - CPU.busy_core_mw(2.0) == 100.0


def test_power_sums_cores_and_is_linear_in_utilization():
    # two cores at 50 % and 100 %, both at 1 GHz: 0.5*150 + 1*150
    assert CPU.power_mw([0.5, 1.0], [1.0, 1.0]) == 225.0
    # per-sample rows: idle row gives 0 (baseline subtracted)
    np.testing.assert_allclose(CPU.power_mw([[0.0, 0.0], [0.2, 0.2]]), [0.0, 100.0])


def test_energy_trapezoid_matches_hand_value():
    # one core ramps 0 -> 1 over 2 s at nominal 2 GHz: mean power 125 mW * 2 s
    assert CPU.energy_mj([0.0, 1.0, 2.0], [[0.0], [0.5], [1.0]]) == pytest.approx(250.0)


def test_energy_from_cpu_seconds_equals_integral_of_utilization():
    # 0.5 busy for 4 s = 2 CPU-seconds
    by_samples = CPU.energy_mj([0, 4], [[0.5], [0.5]])
    assert CPU.energy_from_cpu_seconds_mj(2.0) == pytest.approx(by_samples) == pytest.approx(500.0)


def test_bad_utilization_and_times_are_rejected():
    with pytest.raises(ValueError, match="busy fractions"):
        CPU.power_mw([1.5])
    with pytest.raises(ValueError, match="strictly increasing"):
        CPU.energy_mj([0, 0], [[0.1], [0.1]])


def test_radio_power_scales_with_utilization_and_saturates():
    r = RadioPowerModel("hand", idle_mw=100, tx_active_mw=1100, rx_active_mw=600,
                        max_rate_mbps=1000, provenance="published", source="test")
    assert r.power_mw(500, "tx") == 600.0
    assert r.power_mw(2000, "rx") == 600.0
    assert r.dynamic_power_mw(250, "rx") == 125.0
    with pytest.raises(ValueError):
        r.power_mw(10, "up")


def test_nj_per_bit_units():
    # 1000 mW at 1000 Mbps = 1 W / 1e9 bit/s = 1 nJ/bit
    assert nj_per_bit(1000, 1000) == 1.0


def test_params_loader_names_the_bad_field():
    good = {"mw_per_ghz": 1, "mw_at_zero_ghz": 0, "idle_mw": 5, "nominal_ghz": 1.5,
            "provenance": "assumed", "source": "x"}
    assert cpu_models({"cpu": {"a": good}})["a"].nominal_ghz == 1.5
    with pytest.raises(InputError, match=r"power-models.cpu.a: field 'idle_mw': expected a finite number >= 0, found -1"):
        cpu_models({"cpu": {"a": {**good, "idle_mw": -1}}})
    with pytest.raises(InputError, match="provenance"):
        cpu_models({"cpu": {"a": {**good, "provenance": "measured"}}})
    with pytest.raises(InputError, match="max_rate_mbps"):
        radio_models({"radio": {"r": {"idle_mw": 1, "tx_active_mw": 2, "rx_active_mw": 2,
                                      "max_rate_mbps": 0, "provenance": "published", "source": "s"}}})

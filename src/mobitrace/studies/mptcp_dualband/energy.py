"""Energy per bit of the mptcp-dualband runs (modeled): the radio part from
each interface's radio model at its measured (paper-equivalent) rate, the CPU
part from the phone-side process's measured CPU time through a CPU power
model; nJ/bit = mW / Mbps (:func:`mobitrace.energy.power_models.nj_per_bit`).
The models themselves (and their coefficients in params.yaml's power-models)
are in mobitrace.energy.power_models.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from mobitrace.energy.power_models import CpuPowerModel, RadioPowerModel, cpu_models, nj_per_bit, radio_models
from mobitrace.studies.mptcp_dualband.schema import DIRECTIONS


def chapter_models(power_models: dict, radio_names: dict[str, dict[str, str]], cpu_name: str):
    """(every radio model, the phone's CPU model, {direction: {path: radio model}})
    from params.yaml's power-models section and the study's model names
    (`radio_models`: direction -> path -> name; `cpu_model`)."""
    radio_all = radio_models(power_models)
    cpu = cpu_models(power_models)[cpu_name]
    radio = {d: {p: radio_all[name] for p, name in radio_names[d].items()} for d in DIRECTIONS}
    return radio_all, cpu, radio


def radio_power_mw(models: dict[str, RadioPowerModel], tput_a_mbps, tput_b_mbps, direction: str):
    """Radio power (mW) of both interfaces of the phone: path a priced by
    models['a'], path b by models['b'], at their (paper-equivalent) rates; the
    phone receives on the downlink ('rx') and transmits on the uplink ('tx')."""
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, found {direction!r}")
    mode = "rx" if direction == "downlink" else "tx"
    return (np.asarray(models["a"].power_mw(tput_a_mbps, mode), dtype=float)
            + np.asarray(models["b"].power_mw(tput_b_mbps, mode), dtype=float))


def radio_power_floor_mw(models: dict[str, RadioPowerModel], tput_a_mbps, tput_b_mbps, direction: str,
                         floor_frac: float):
    """A sensitivity variant of :func:`radio_power_mw`: an interface that
    carries no traffic sleeps (0 mW above base, as with PSM), one that carries
    any pays a wake-up floor `floor_frac` of its backlogged power plus the
    rest in proportion to utilization:

        P = 0 if rate = 0, else P_act * (f + (1 - f) * min(1, rate / rate_max))

    f = 0 is the linear model; f = 1 is an interface that costs its full
    backlogged power whenever it is used. The floor is an assumption (the
    paper states backlogged powers only)."""
    if not 0.0 <= floor_frac <= 1.0:
        raise ValueError(f"floor_frac must lie in [0, 1], found {floor_frac}")
    mode = "rx" if direction == "downlink" else "tx"
    total = 0.0
    for path, rate in (("a", tput_a_mbps), ("b", tput_b_mbps)):
        m = models[path]
        r = np.asarray(rate, dtype=float)
        active = m.tx_active_mw if mode == "tx" else m.rx_active_mw
        util = np.minimum(1.0, r / m.max_rate_mbps)
        total = total + np.where(r > 0, active * (floor_frac + (1.0 - floor_frac) * util), 0.0)
    return total


def cpu_power_mw(model: CpuPowerModel, cpu_seconds, seconds, scale: float = 1.0):
    """CPU power (mW above idle) of a process that used `cpu_seconds` of CPU
    over `seconds` of transfer at the nominal frequency: mean busy fraction
    times the busy-core power. Divided by `scale`: a capture made at `scale`
    times the paper's rates is priced at the paper's rates assuming CPU time
    linear in throughput (the cpu-gbps study's finding)."""
    u = np.asarray(cpu_seconds, dtype=float) / np.asarray(seconds, dtype=float)
    return u * model.busy_core_mw() / scale


def energy_table(runs: pd.DataFrame, radio: dict[str, dict[str, RadioPowerModel]],
                 cpu: CpuPowerModel) -> pd.DataFrame:
    """Per run: paper-equivalent throughputs (measured / scale), modeled radio
    and CPU power and nJ/bit. `radio[direction][path]` is the model of that
    interface in that direction."""
    out = runs.copy()
    for col in ("tput_mbps", "tput_a_mbps", "tput_b_mbps"):
        out[col.replace("_mbps", "_eq_mbps")] = out[col] / out["scale"]
    p_radio = np.empty(len(out))
    for direction in DIRECTIONS:
        m = (out["direction"] == direction).to_numpy()
        if m.any():
            p_radio[m] = radio_power_mw(radio[direction], out.loc[m, "tput_a_eq_mbps"],
                                        out.loc[m, "tput_b_eq_mbps"], direction)
    out["radio_mw"] = p_radio
    out["cpu_mw"] = cpu_power_mw(cpu, out["phone_cpu_s"], out["rx_seconds"], out["scale"])
    out["power_mw"] = out["radio_mw"] + out["cpu_mw"]
    out["nj_per_bit"] = nj_per_bit(out["power_mw"], out["tput_eq_mbps"])
    out["radio_nj_per_bit"] = nj_per_bit(out["radio_mw"], out["tput_eq_mbps"])
    out["cpu_nj_per_bit"] = nj_per_bit(out["cpu_mw"], out["tput_eq_mbps"])
    return out

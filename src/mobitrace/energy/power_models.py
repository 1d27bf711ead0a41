"""Componentized power models: CPU (per core, utilization x frequency) and radio.

The stack-trim paper (Zhu et al., HotNets'16, §2 and Appendix) prices CPU
activity with a componentized model and observes that CPU power "scales
linearly with both CPU frequency and utilization"; it subtracts the idle
baseline E_bk so that the energy left is due to networking alone. The model
here is the smallest one with that property, per core c:

    P_c = u_c * (k_f * f_c + k_0)          [mW]

with u_c the core's busy fraction in [0, 1], f_c its frequency in GHz, k_f in
mW/GHz and k_0 in mW (the power of one fully busy core is k_f * f + k_0).
The device draws P_idle + sum_c P_c; every energy returned here is the part
above P_idle (the baseline is subtracted, as in the paper). Because P_c is
linear in u_c, integrating it over time turns busy fractions into CPU time:
a process that used s CPU-seconds at a fixed frequency f cost
s * (k_f * f + k_0) millijoules above baseline.

The radio model (transfer-tuning, mptcp-dualband) is linear in link
utilization between an idle and a backlogged (fully utilized) power per
direction:

    P = P_idle + (P_active - P_idle) * min(1, rate / rate_max)   [mW]

Coefficients live in params.yaml (`power-models`), each set with its
provenance (fitted | published | assumed) and its source, and are read with
:func:`cpu_models` / :func:`radio_models`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar
from pathlib import Path

import numpy as np

from mobitrace.core.errors import InputError

PROVENANCES = ("fitted", "published", "assumed")


@dataclass(frozen=True)
class CpuPowerModel:
    """P_c = u_c * (k_f * f_c + k_0) per core, above the idle baseline."""

    name: str
    mw_per_ghz: float        # k_f: power of a fully busy core per GHz
    mw_at_zero_ghz: float    # k_0: frequency-independent part of a busy core
    idle_mw: float           # P_idle (E_bk / t in the paper): subtracted
    nominal_ghz: float       # frequency assumed when a trace has none
    provenance: str
    source: str
    # The fields that price energy above idle (idle_mw is subtracted; nominal_ghz
    # prices only CPU time without a measured frequency): what a robustness
    # analysis varies (mobitrace.energy.robustness).
    PRICING: ClassVar[tuple[str, ...]] = ("mw_per_ghz", "mw_at_zero_ghz", "nominal_ghz")

    def busy_core_mw(self, ghz=None):
        """Power above idle of one fully busy core at `ghz` (nominal if None)."""
        f = self.nominal_ghz if ghz is None else np.asarray(ghz, dtype=float)
        return self.mw_per_ghz * f + self.mw_at_zero_ghz

    def power_mw(self, util, ghz=None):
        """Power above idle for busy fractions `util` (any shape; the last
        axis is cores and is summed) at frequencies `ghz` (same shape or
        scalar; nominal if None)."""
        u = np.asarray(util, dtype=float)
        if np.any(u < 0) or np.any(u > 1) or np.any(~np.isfinite(u)):
            raise ValueError(f"busy fractions must lie in [0, 1], found {u[(u < 0) | (u > 1) | ~np.isfinite(u)][:3]}")
        return np.sum(u * self.busy_core_mw(ghz), axis=-1)

    def energy_mj(self, times_s, util, ghz=None) -> float:
        """Energy above idle (mJ) of sampled per-core busy fractions: the
        trapezoidal integral of power_mw over `times_s` (util has one row per
        sample and one column per core)."""
        t = np.asarray(times_s, dtype=float)
        if t.ndim != 1 or len(t) < 2 or np.any(np.diff(t) <= 0):
            raise ValueError("times_s must be at least two strictly increasing sample times")
        p = self.power_mw(np.asarray(util, dtype=float).reshape(len(t), -1),
                          None if ghz is None else np.asarray(ghz, dtype=float).reshape(len(t), -1))
        return float(np.trapezoid(p, t))

    def energy_from_cpu_seconds_mj(self, cpu_seconds, ghz=None):
        """Energy above idle (mJ) of `cpu_seconds` of CPU time at a fixed
        frequency: the integral of u * (k_f f + k_0) dt with the integral of u
        equal to the CPU time."""
        s = np.asarray(cpu_seconds, dtype=float)
        if np.any(s < 0):
            raise ValueError("CPU time cannot be negative")
        return s * self.busy_core_mw(ghz)


@dataclass(frozen=True)
class RadioPowerModel:
    """P = P_idle + (P_active - P_idle) * min(1, rate / rate_max), per direction."""

    name: str
    idle_mw: float
    tx_active_mw: float      # backlogged (fully utilized) transmit power
    rx_active_mw: float      # backlogged receive power
    max_rate_mbps: float     # rate at which the radio is fully utilized
    provenance: str
    source: str
    # Every coefficient prices the dynamic power (active - idle, and the rate).
    PRICING: ClassVar[tuple[str, ...]] = ("idle_mw", "tx_active_mw", "rx_active_mw", "max_rate_mbps")

    def power_mw(self, rate_mbps, direction: str):
        """Total radio power at `rate_mbps` sent ('tx') or received ('rx')."""
        if direction not in ("tx", "rx"):
            raise ValueError(f"direction must be 'tx' or 'rx', found {direction!r}")
        active = self.tx_active_mw if direction == "tx" else self.rx_active_mw
        r = np.asarray(rate_mbps, dtype=float)
        if np.any(r < 0):
            raise ValueError("rate cannot be negative")
        return self.idle_mw + (active - self.idle_mw) * np.minimum(1.0, r / self.max_rate_mbps)

    def dynamic_power_mw(self, rate_mbps, direction: str):
        """Radio power above its idle power."""
        return self.power_mw(rate_mbps, direction) - self.idle_mw

    def one_radio_dynamic_mw(self, rx_mbps, tx_mbps):
        """Dynamic power of ONE radio that carries both directions (it is
        receiving or sending, never both at once): utilization
        u = min(1, (rx + tx) / rate_max), active power the byte-weighted mix
        of P_rx and P_tx, so P - P_idle = u (P_mix - P_idle), at most
        max(P_rx, P_tx) - P_idle. Two independent radios would add the two
        directions' powers instead (`dynamic_power_mw` per direction)."""
        rx, tx = np.asarray(rx_mbps, dtype=float), np.asarray(tx_mbps, dtype=float)
        if np.any(rx < 0) or np.any(tx < 0):
            raise ValueError("rate cannot be negative")
        total = rx + tx
        share_rx = np.divide(rx, total, out=np.ones_like(total), where=total > 0)
        active = share_rx * self.rx_active_mw + (1 - share_rx) * self.tx_active_mw
        return (active - self.idle_mw) * np.minimum(1.0, total / self.max_rate_mbps)


def nj_per_bit(power_mw, rate_mbps):
    """Energy per bit in nJ: P / throughput (mW / Mbps = 1e-3 J/s / 1e6 bit/s = 1 nJ/bit)."""
    p = np.asarray(power_mw, dtype=float)
    r = np.asarray(rate_mbps, dtype=float)
    if np.any(r <= 0):
        raise ValueError("throughput must be positive to price a bit")
    return p / r


_CPU_FIELDS = {"mw_per_ghz": float, "mw_at_zero_ghz": float, "idle_mw": float,
               "nominal_ghz": float, "provenance": str, "source": str}
_RADIO_FIELDS = {"idle_mw": float, "tx_active_mw": float, "rx_active_mw": float,
                 "max_rate_mbps": float, "provenance": str, "source": str}


def _build(kind, fields: dict, name: str, entry, where: str, path: str):
    if not isinstance(entry, dict):
        raise InputError(path, where, None, "a mapping of coefficients", type(entry).__name__)
    missing = [k for k in fields if k not in entry]
    if missing:
        raise InputError(path, where, missing[0], "a value", "nothing")
    extra = sorted(set(entry) - set(fields))
    if extra:
        raise InputError(path, where, extra[0], f"one of {sorted(fields)}", extra[0])
    values = {}
    for key, typ in fields.items():
        v = entry[key]
        if typ is float:
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise InputError(path, where, key, "a finite number >= 0", v)
            v = float(v)
        elif not isinstance(v, str) or not v.strip():
            raise InputError(path, where, key, "a non-empty text", v)
        values[key] = v
    if values["provenance"] not in PROVENANCES:
        raise InputError(path, where, "provenance", f"one of {PROVENANCES}", values["provenance"])
    return kind(name=name, **values)


def cpu_models(section: dict, path: str | Path = "params.yaml") -> dict[str, CpuPowerModel]:
    """CPU models from params.yaml `power-models.cpu` (name -> coefficients)."""
    cpu = (section or {}).get("cpu") or {}
    return {name: _build(CpuPowerModel, _CPU_FIELDS, name, entry, f"power-models.cpu.{name}", str(path))
            for name, entry in cpu.items()}


def radio_models(section: dict, path: str | Path = "params.yaml") -> dict[str, RadioPowerModel]:
    """Radio models from params.yaml `power-models.radio` (name -> coefficients)."""
    radio = (section or {}).get("radio") or {}
    models = {name: _build(RadioPowerModel, _RADIO_FIELDS, name, entry, f"power-models.radio.{name}", str(path))
              for name, entry in radio.items()}
    for m in models.values():
        if m.max_rate_mbps <= 0:
            raise InputError(path, f"power-models.radio.{m.name}", "max_rate_mbps", "a rate > 0", m.max_rate_mbps)
    return models

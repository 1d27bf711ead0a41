"""Pandera schemas of every table the mptcp-dualband study writes.

* RUNS_SCHEMA: the interim table data/interim/mptcp-dualband/<device>/runs.parquet
  (one row per run, RUN_COLUMNS), validated by the ingest when it writes it;
* the results tables data/results/mptcp-dualband/tables/<name>.csv, validated
  by mobitrace.studies.mptcp_dualband.analysis when it makes them (TABLES maps
  each table name to its schema).

The claims table (claims.csv) has the shared mobitrace.core.claims.CLAIMS_SCHEMA
and key_findings.csv the book's KEY_FINDINGS_COLUMNS; they are not repeated here.
"""

from __future__ import annotations

import pandera.pandas as pa

from mobitrace.core.claims import ROBUSTNESS_SCHEMA

STUDY = "mptcp-dualband"
PATHS = ("a", "b")
DIRECTIONS = ("downlink", "uplink")
TRANSPORTS = ("mptcp", "striped")
PARTS = ("mptcp", "gro", "sirq", "sweep", "backup")
PROVENANCES = ("measured", "published", "modeled")

RUN_COLUMNS = [
    "device", "session", "run_id", "part", "config", "transport", "direction", "ratio_a_pct",
    "demand_mbps", "scale", "primary", "backup", "gro_a", "gro_b", "rps_cpu", "rep", "duration_s",
    "started_utc", "loadavg1", "payload_bytes", "rx_seconds", "tput_mbps", "bytes_a", "bytes_b",
    "tput_a_mbps", "tput_b_mbps", "phone_cpu_s", "ap_cpu_s", "procstat_busy_s", "procstat_softirq_s",
    "cpu_mhz_mean",
]



def _runs_schema(per_session: bool) -> pa.DataFrameSchema:
    """The runs table: of one session (run ids unique) or of a device (a run id
    is unique within its session)."""
    return pa.DataFrameSchema(
    {
        "device": pa.Column(str), "session": pa.Column(str), "run_id": pa.Column(str, unique=per_session),
        "part": pa.Column(str, pa.Check.isin(list(PARTS))),
        "config": pa.Column(str), "transport": pa.Column(str, pa.Check.isin(TRANSPORTS)),
        "direction": pa.Column(str, pa.Check.isin(DIRECTIONS)),
        "ratio_a_pct": pa.Column(float, pa.Check.in_range(0, 100), nullable=True),
        "demand_mbps": pa.Column(float, pa.Check.gt(0), nullable=True),
        "scale": pa.Column(float, pa.Check.gt(0)), "primary": pa.Column(str, pa.Check.isin(PATHS)),
        "backup": pa.Column(bool), "gro_a": pa.Column(str), "gro_b": pa.Column(str),
        "rps_cpu": pa.Column(float, nullable=True), "rep": pa.Column(int, pa.Check.ge(0)),
        "duration_s": pa.Column(float, pa.Check.gt(0)), "started_utc": pa.Column(str),
        "loadavg1": pa.Column(float, pa.Check.ge(0)), "payload_bytes": pa.Column(int, pa.Check.gt(0)),
        "rx_seconds": pa.Column(float, pa.Check.gt(0)), "tput_mbps": pa.Column(float, pa.Check.gt(0)),
        "bytes_a": pa.Column(float, pa.Check.ge(0)), "bytes_b": pa.Column(float, pa.Check.ge(0)),
        "tput_a_mbps": pa.Column(float, pa.Check.ge(0)), "tput_b_mbps": pa.Column(float, pa.Check.ge(0)),
        "phone_cpu_s": pa.Column(float, pa.Check.ge(0)), "ap_cpu_s": pa.Column(float, pa.Check.ge(0)),
        "procstat_busy_s": pa.Column(float, pa.Check.ge(0)),
        "procstat_softirq_s": pa.Column(float, pa.Check.ge(0)),
        "cpu_mhz_mean": pa.Column(float, nullable=True),
    },
    strict=True, ordered=True, unique=None if per_session else ["session", "run_id"],
    )


RUNS_SCHEMA = _runs_schema(per_session=True)  # one session, as read_session returns it
DEVICE_RUNS_SCHEMA = _runs_schema(per_session=False)  # runs.parquet: every session of a device


def _table(columns: dict, unique: list[str] | None = None) -> pa.DataFrameSchema:
    return pa.DataFrameSchema(columns, strict=True, ordered=True, unique=unique)


def _num(nullable: bool = False, *checks) -> pa.Column:
    return pa.Column(float, list(checks), nullable=nullable)


_DIRECTION = pa.Column(str, pa.Check.isin(DIRECTIONS))
_DEMAND = pa.Column(float, pa.Check.ge(0))  # 0 = backlogged
_RATIO = pa.Column(float, pa.Check.in_range(0, 100))
_RATIO_NULLABLE = pa.Column(float, pa.Check.in_range(0, 100), nullable=True)
_COUNT = pa.Column(int, pa.Check.ge(0))

CAPTURES = _table({
    "device": pa.Column(str), "session": pa.Column(str), "runs": _COUNT, "scale": _num(False, pa.Check.gt(0)),
    "kernel": pa.Column(str, nullable=True), "CPU": pa.Column(str), "cores": pa.Column(nullable=True),
    "congestion control": pa.Column(str, nullable=True), "s/run CDF": pa.Column(nullable=True),
    "s/run sweep": pa.Column(nullable=True), "lock held (s)": pa.Column(nullable=True),
    "background load (idle gate)": pa.Column(str),
}, unique=["device", "session"])

SET_ASIDE = _table({
    "device": pa.Column(str), "session": pa.Column(str), "config": pa.Column(str), "direction": _DIRECTION,
    "runs": _COUNT, "both_paths": _COUNT, "median_mbps": _num(False, pa.Check.ge(0)),
})

FIG1 = _table({
    "device": pa.Column(str), "direction": _DIRECTION, "n": _COUNT,
    **{c: _num(True, pa.Check.ge(0)) for c in ("total", "total_sd", "path_a", "path_a_sd", "path_b", "path_b_sd")},
    "sum of path rates": _num(False, pa.Check.gt(0)), "% of sum": _num(False, pa.Check.ge(0)),
    "total_ci_low": _num(True), "total_ci_high": _num(True),
}, unique=["device", "direction"])

CDF_SUMMARY = _table({
    "configuration": pa.Column(str, unique=True), "n": _COUNT,
    **{c: _num(False, pa.Check.ge(0)) for c in ("median_gbps", "min_gbps", "max_gbps")},
    "below_2gbps": _COUNT, "pct_of_sum": _num(False, pa.Check.ge(0)),
    "phone_cpu_s_per_gbit": _num(False, pa.Check.ge(0)), "ap_cpu_s_per_gbit": _num(False, pa.Check.ge(0)),
})

CPU_SOURCES = _table({
    "part": pa.Column(str, pa.Check.isin(list(PARTS))), "direction": _DIRECTION, "runs": _COUNT,
    **{c: _num(False, pa.Check.ge(0)) for c in ("phone_cpu_s", "ap_cpu_s", "procstat_busy_s",
                                                 "procstat_softirq_s", "seconds")},
}, unique=["part", "direction"])

POWER_MODELS = _table({
    "model": pa.Column(str, unique=True), "Tx backlogged (mW)": _num(True, pa.Check.ge(0)),
    "Rx backlogged (mW)": _num(True, pa.Check.ge(0)), "full at (Mbps)": _num(True, pa.Check.gt(0)),
    "idle (mW)": _num(False, pa.Check.ge(0)), "provenance": pa.Column(str), "source": pa.Column(str),
})

FIG3_POWER = _table({
    "device": pa.Column(str), "direction": _DIRECTION,
    **{c: _num(True, pa.Check.ge(0)) for c in ("radio_mw", "cpu_mw", "power_mw", "power_sd", "nj_per_bit")},
}, unique=["device", "direction"])

RATIO_SWEEP = _table({
    "direction": _DIRECTION, "demand": _DEMAND, "ratio_a_pct": _RATIO, "n": _COUNT,
    **{c: _num(True, pa.Check.ge(0)) for c in ("tput_mbps", "tput_sd", "tput_a_mbps", "tput_b_mbps", "nj_per_bit",
                                                "nj_sd", "radio_nj_per_bit", "cpu_nj_per_bit", "phone_cpu_s")},
}, unique=["direction", "demand", "ratio_a_pct"])

_OPTIMA_COLUMNS = {
    "direction": _DIRECTION, "demand": _DEMAND,
    "tput_opt_ratio": _RATIO, "tput_opt_mbps": _num(), "tput_opt_nj": _num(),
    "energy_opt_ratio": _RATIO, "energy_opt_nj": _num(), "energy_opt_mbps": _num(),
    "energy_opt_both_ratio": _RATIO_NULLABLE, "energy_opt_both_nj": _num(True), "energy_opt_both_mbps": _num(True),
    "energy_opt_satisfying_ratio": _RATIO_NULLABLE, "energy_opt_satisfying_nj": _num(True),
    "energy_opt_satisfying_mbps": _num(True),
}
OPTIMA_POINT = _table(_OPTIMA_COLUMNS, unique=["direction", "demand"])
OPTIMA = _table({
    **_OPTIMA_COLUMNS,
    **{f"{c}_{side}": _RATIO_NULLABLE for c in ("tput_opt_ratio", "energy_opt_both_ratio", "energy_opt_satisfying_ratio")
       for side in ("low", "high")},
}, unique=["direction", "demand"])

RATIOS_VS_PAPER = _table({
    "comparison": pa.Column(str, unique=True), "pct": _num(), "paper_pct": _num(),
    "provenance": pa.Column(str, pa.Check.isin(PROVENANCES)), "ratio": _num(), "low": _num(True),
    "high": _num(True), "paper": _num(),
})

GUIDELINE_VS_SEARCH = _table({
    "direction": _DIRECTION, "demand": _DEMAND, "guideline_ratio": _RATIO, "grid_ratio": _RATIO,
    "guideline_mbps": _num(), "guideline_nj": _num(), "meets_demand": pa.Column(bool),
    "search_ratio": _RATIO_NULLABLE, "search_nj": _num(True), "search_mbps": _num(True),
    "excess_energy_pct": _num(True), "tput_shortfall_pct": _num(),
}, unique=["direction", "demand"])

FLOOR_SENSITIVITY = pa.DataFrameSchema(
    {"direction": _DIRECTION, "demand": _DEMAND,
     # one column per assumed floor f ("f = 0", "f = 0.5", ...): the energy-optimal ratio
     r"^f = .+$": pa.Column(float, pa.Check.in_range(0, 100), nullable=True, regex=True)},
    strict=True, unique=["direction", "demand"])

FIG8_BACKUP = _table({
    "on path": pa.Column(str, pa.Check.isin(PATHS)), "demand_mbps": _num(False, pa.Check.gt(0)),
    "mode": pa.Column(str), "n": _COUNT,
    **{c: _num(False, pa.Check.ge(0)) for c in ("tput_mbps", "other_path_mbps", "other_path_max_mbps",
                                                 "radio_mw", "power_mw")},
}, unique=["on path", "demand_mbps", "mode"])

DEVICE_COMPARISON = _table({
    "device": pa.Column(str), "runs": _COUNT, "dl_mptcp_mbps": _num(), "ul_mptcp_mbps": _num(),
    "dl_tput_opt_ratio": _RATIO, "dl_tput_opt_ratio_low": _RATIO_NULLABLE, "dl_tput_opt_ratio_high": _RATIO_NULLABLE,
    "ul_energy_opt_both_ratio": _RATIO,
    **{c: _num(True) for c in ("dl_tput_gain_pct", "dl_tput_gain_low", "dl_tput_gain_high", "dl_energy_cost_pct",
                               "dl_energy_cost_low", "dl_energy_cost_high")},
    **{c: _COUNT for c in ("claims_reproduced", "claims_not_reproduced", "claims_inconclusive")},
}, unique=["device"])

TABLES = {
    "device_comparison": DEVICE_COMPARISON,
    "captures": CAPTURES, "mptcp_runs_set_aside": SET_ASIDE, "fig1_mptcp_throughput": FIG1,
    "fig2_cdf_summary": CDF_SUMMARY, "cpu_sources": CPU_SOURCES, "power_models": POWER_MODELS,
    "fig3_power": FIG3_POWER, "ratio_sweep": RATIO_SWEEP, "optima": OPTIMA, "ratios_vs_paper": RATIOS_VS_PAPER,
    "guideline_vs_search": GUIDELINE_VS_SEARCH, "floor_sensitivity": FLOOR_SENSITIVITY, "fig8_backup": FIG8_BACKUP,
    "robustness": ROBUSTNESS_SCHEMA,
}

"""Pandera schemas of every table the transfer-tuning study writes.

Raw capture files (read by mobitrace.studies.transfer_tuning.ingest):
RUNS_CSV (runs.csv), SAMPLES_CSV (runs/<run_id>/samples.csv.gz) and
TRANSFERS_CSV (runs/<run_id>/transfers.csv.gz).

Interim parquet (written by ingest, data/interim/transfer-tuning/<device>/):
RUNS, SAMPLES, POWER and SESSIONS.

Results CSV (written by the chapter, data/results/transfer-tuning/tables/):
RESULTS maps each table's name to its schema (`results_schema(name)`;
tail_<device> tables share TAIL). The claims table is
mobitrace.core.claims.CLAIMS_SCHEMA; key_findings is the book's.

Schemas check columns, order and dtypes (no coercion), so validating a
frame never changes it.
"""

from __future__ import annotations

import pandera.pandas as pa

RUN_FIELDS = ["run_id", "kind", "dataset", "concurrency", "parallelism", "io_kib", "files", "rep", "status",
              "started_utc", "wall_s", "rate_mbit", "achieved_mbit", "link_peak_mbit"]
# Captures before 2026-11-23 lack the configured and achieved rates: ingest reads them as missing (NaN).
RUN_FIELDS_OPTIONAL = ("rate_mbit", "achieved_mbit", "link_peak_mbit")
SAMPLE_FIELDS = ["t_ns", "client_cpu_ns", "server_cpu_ns", "rx_bytes_app", "if_rx_bytes", "if_tx_bytes",
                 "stat_user", "stat_nice", "stat_system", "stat_idle", "stat_iowait", "stat_irq", "stat_softirq"]
TRANSFER_FIELDS = ["file", "part", "conn", "offset", "length", "t_start_ns", "t_first_byte_ns", "t_end_ns",
                   "bytes", "status"]
DATASETS = ("html", "image", "video")
KINDS = ("sweep", "tail")
ENERGY_SOURCES = ("measured", "modeled")
KNOBS = ("concurrency", "parallelism", "io_kib")

# --------------------------------------------------------------------------- #
# Raw capture files

RUNS_CSV = pa.DataFrameSchema(
    {
        "run_id": pa.Column(str, pa.Check.str_matches(r"^(sweep|tail)-[a-z]+-cc\d+-p\d+-io\d+(-n\d+)?-r\d+\Z"),
                            unique=True),
        "kind": pa.Column(str, pa.Check.isin(list(KINDS))),
        "dataset": pa.Column(str, pa.Check.isin(DATASETS)),
        "concurrency": pa.Column(int, pa.Check.in_range(1, 1024)),
        "parallelism": pa.Column(int, pa.Check.in_range(1, 1024)),
        "io_kib": pa.Column(int, pa.Check.in_range(1, 1 << 20)),
        "files": pa.Column(int, pa.Check.ge(1)),
        "rep": pa.Column(int, pa.Check.ge(1)),
        "status": pa.Column(str, pa.Check.str_length(min_value=1)),
        "started_utc": pa.Column(str, pa.Check.str_matches(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\Z")),
        "wall_s": pa.Column(float, pa.Check.ge(0)),
        "rate_mbit": pa.Column(float, pa.Check.gt(0)),  # the configured link rate
        "achieved_mbit": pa.Column(float, pa.Check.ge(0)),  # the run's goodput (0 for a failed run)
        "link_peak_mbit": pa.Column(float, pa.Check.ge(0)),  # best >= 1 s interface rate, headers included
    },
    strict=True, ordered=True,
)
SAMPLES_CSV = pa.DataFrameSchema({c: pa.Column(int, pa.Check.ge(0)) for c in SAMPLE_FIELDS},
                                 strict=True, ordered=True)
TRANSFERS_CSV = pa.DataFrameSchema(
    {
        **{c: pa.Column(int, pa.Check.ge(0)) for c in ("file", "part", "conn", "offset")},
        **{c: pa.Column(int, pa.Check.gt(0)) for c in ("length", "t_start_ns", "t_first_byte_ns", "t_end_ns")},
        "bytes": pa.Column(int, pa.Check.ge(0)),
        "status": pa.Column(str, pa.Check.eq("ok")),
    },
    checks=[pa.Check(lambda d: d["bytes"] == d["length"], error="bytes == length"),
            pa.Check(lambda d: d["t_end_ns"] >= d["t_first_byte_ns"], error="t_end_ns >= t_first_byte_ns"),
            pa.Check(lambda d: d["t_first_byte_ns"] >= d["t_start_ns"], error="t_first_byte_ns >= t_start_ns")],
    strict=True, ordered=True,
)

# --------------------------------------------------------------------------- #
# Interim parquet (ingest)

_KEY = {"device": pa.Column(str), "session": pa.Column(str), "run_id": pa.Column(str)}
_CONFIG = {
    "kind": pa.Column(str, pa.Check.isin(list(KINDS))),
    "dataset": pa.Column(str, pa.Check.isin(DATASETS)),
    "concurrency": pa.Column(int, pa.Check.ge(1)),
    "parallelism": pa.Column(int, pa.Check.ge(1)),
    "io_kib": pa.Column(int, pa.Check.ge(1)),
    "files": pa.Column(int, pa.Check.ge(1)),
    "rep": pa.Column(int, pa.Check.ge(1)),
}
_RUN_MEASURES = {
    "bytes": pa.Column(int, pa.Check.gt(0)),
    "transfer_s": pa.Column(float, pa.Check.gt(0)),
    "throughput_mbps": pa.Column(float, pa.Check.gt(0)),
    "connections": pa.Column(int, pa.Check.ge(0)),
    "client_cpu_s": pa.Column(float, pa.Check.ge(0)),
    "server_cpu_s": pa.Column(float),
    "stat_busy_pct": pa.Column(float, nullable=True),  # NaN when fewer than 2 samples fall in the transfer
    "loadavg_1min": pa.Column(float, nullable=True),  # NaN when run.json has none
}
RUNS = pa.DataFrameSchema(
    {**_KEY, **_CONFIG, **_RUN_MEASURES,
     "t_start_s": pa.Column(float), "t_end_s": pa.Column(float),
     "sample_ms": pa.Column(int, pa.Check.gt(0)),
     "rate_mbit": pa.Column(float, pa.Check.gt(0)),  # configured (manifest)
     "achieved_mbit": pa.Column(float, nullable=True),  # as the kit recorded it; NaN in older captures
     "link_peak_mbit": pa.Column(float, nullable=True),  # likewise
     # The idle gate's record of the run (manifest idle_gate): the host's load outside the
     # experiment during the run (% of one core) and whether it exceeded the gate's limit;
     # missing (NaN, <NA>) for a capture made before the gate.
     "background_pct": pa.Column(float, pa.Check.ge(0), nullable=True),
     "gate_flagged": pa.Column("boolean", nullable=True)},
    checks=[pa.Check(lambda d: d["t_end_s"] > d["t_start_s"], error="t_end_s > t_start_s")],
    strict=True, ordered=True,
)
RUN_COLUMNS = list(RUNS.columns)
SAMPLES = pa.DataFrameSchema(
    {**{c: pa.Column(int, pa.Check.ge(0)) for c in SAMPLE_FIELDS},
     "run_id": pa.Column(str), "device": pa.Column(str), "session": pa.Column(str)},
    strict=True, ordered=True,
)
POWER = pa.DataFrameSchema(
    {**_KEY, "t_s": pa.Column(float), "power_w": pa.Column(float, pa.Check.ge(0))},
    strict=True, ordered=True,
)
SESSIONS = pa.DataFrameSchema(
    {
        "device": pa.Column(str), "session": pa.Column(str), "kind": pa.Column(str),
        "content_md5": pa.Column(str, pa.Check.str_matches(r"^[0-9a-f]{32}\Z")),
        "power_source": pa.Column(str, pa.Check.isin(list(ENERGY_SOURCES))),
        "manifest_json": pa.Column(str),
    },
    strict=True, ordered=True,
)
INTERIM = {"runs": RUNS, "samples": SAMPLES, "power": POWER, "sessions": SESSIONS}

# --------------------------------------------------------------------------- #
# Results tables (analysis / chapter)

_ENERGY = {
    "energy_source": pa.Column(str, pa.Check.isin(list(ENERGY_SOURCES))),
    "base_w": pa.Column(float),
    "energy_j": pa.Column(float),
    "energy_per_100mb_j": pa.Column(float),
    "mean_power_w": pa.Column(float),
    "tail_j": pa.Column(float),
    "tail_s": pa.Column(float, pa.Check.ge(0)),
    "tail_ended": pa.Column(bool),
}
# energy_table's frame (RUNS + energy); runs_energy.csv drops t_start_s, t_end_s.
ENERGY_TABLE = pa.DataFrameSchema({**RUNS.columns, **_ENERGY}, strict=True, ordered=True)
RUNS_ENERGY = pa.DataFrameSchema(
    {k: c for k, c in {**RUNS.columns, **_ENERGY}.items() if k not in ("t_start_s", "t_end_s")},
    strict=True, ordered=True,
)
SWEEP = pa.DataFrameSchema(
    {
        "device": pa.Column(str), "dataset": pa.Column(str, pa.Check.isin(DATASETS)),
        "factor": pa.Column(str, pa.Check.isin(list(KNOBS))), "level": pa.Column(int, pa.Check.ge(1)),
        "n": pa.Column(int, pa.Check.ge(1)),
        "throughput_mbps": pa.Column(float), "throughput_sd": pa.Column(float, nullable=True),
        "energy_per_100mb_j": pa.Column(float), "energy_sd": pa.Column(float, nullable=True),
        "client_cpu_s": pa.Column(float), "x_fold": pa.Column(float), "saving_pct": pa.Column(float),
    },
    strict=True, ordered=True,
)
_RATIO_CI = {c: pa.Column(float, nullable=True) for c in (
    "x_fold", "x_fold_low", "x_fold_high", "energy_ratio", "energy_ratio_low", "energy_ratio_high",
    "saving_pct", "saving_pct_low", "saving_pct_high")}
RATIOS_CI = pa.DataFrameSchema(
    {"device": pa.Column(str), "factor": pa.Column(str, pa.Check.isin(list(KNOBS))),
     "dataset": pa.Column(str, pa.Check.isin(DATASETS)), "level": pa.Column(int), **_RATIO_CI},
    strict=True, ordered=True,
)
DATASETS_TABLE = pa.DataFrameSchema(
    {"device": pa.Column(str), "dataset": pa.Column(str, pa.Check.isin(DATASETS)), "paper files": pa.Column(int, pa.Check.ge(1)),
     "paper sizes": pa.Column(str), "served files": pa.Column(int, pa.Check.ge(1)),
     "served sizes": pa.Column(str), "served total (MB)": pa.Column(float, nullable=True)},
    strict=True, ordered=True,
)
POWER_MODEL = pa.DataFrameSchema(
    {"component": pa.Column(str), "model": pa.Column(str), "coefficients": pa.Column(str),
     "provenance": pa.Column(str), "source": pa.Column(str)},
    strict=True, ordered=True,
)
GAINS_VS_PAPER = pa.DataFrameSchema(
    {"device": pa.Column(str), "dataset": pa.Column(str, pa.Check.isin(DATASETS)), "knob": pa.Column(str),
     "paper x-fold": pa.Column(float), "artifact x-fold": pa.Column(float, nullable=True),
     "paper saving %": pa.Column(float), "artifact saving %": pa.Column(float, nullable=True),
     **{c: pa.Column(float, nullable=True) for c in (
         "x_fold_low", "x_fold_high", "saving_pct_low", "saving_pct_high", "energy_ratio", "energy_ratio_low",
         "energy_ratio_high")}},
    strict=True, ordered=True,
)
CPU_CONCURRENCY = pa.DataFrameSchema(
    {"device": pa.Column(str), "dataset": pa.Column(str, pa.Check.isin(DATASETS)), "concurrency": pa.Column(int, pa.Check.ge(1)),
     "runs": pa.Column(int, pa.Check.ge(1)), "client_pct": pa.Column(float), "nginx_pct": pa.Column(float),
     "client_ms_per_mb": pa.Column(float), "proc_stat_busy_pct": pa.Column(float, nullable=True)},
    strict=True, ordered=True,
)
GRID = pa.DataFrameSchema(
    {"device": pa.Column(str), "dataset": pa.Column(str, pa.Check.isin(DATASETS)),
     "concurrency": pa.Column(int, pa.Check.ge(1)), "parallelism": pa.Column(int, pa.Check.ge(1)),
     "n": pa.Column(int, pa.Check.ge(1)), "throughput_mbps": pa.Column(float),
     "energy_per_100mb_j": pa.Column(float), "x_fold": pa.Column(float, nullable=True),
     "saving_pct": pa.Column(float, nullable=True)},
    strict=True, ordered=True,
)
TAIL = pa.DataFrameSchema(
    {"case": pa.Column(str), "runs": pa.Column(int, pa.Check.ge(1)), "transfer_s": pa.Column(float),
     "energy_j": pa.Column(float), "tail_j": pa.Column(float), "tail_s": pa.Column(float),
     "tail_share_pct": pa.Column(float, nullable=True), "device": pa.Column(str)},
    strict=True, ordered=True,
)
# One row per device: the cross-device comparison (devices) and the run conditions (captures).
_CI = {f"{ds}_{m}{end}": pa.Column(float, nullable=True) for ds in DATASETS for m in ("x_fold", "saving_pct")
       for end in ("", "_low", "_high")}
DEVICES = pa.DataFrameSchema(
    {"device": pa.Column(str, unique=True), "reference": pa.Column(bool),
     "runs": pa.Column(int, pa.Check.ge(0)), "left_out": pa.Column(int, pa.Check.ge(0)),
     "gated": pa.Column(bool), "repetitions": pa.Column(int, pa.Check.ge(1)),
     "concurrency": pa.Column(int, pa.Check.ge(1)), **_CI},
    strict=True, ordered=True,
)
CAPTURES = pa.DataFrameSchema(
    {"device": pa.Column(str, unique=True), "sessions": pa.Column(str), "cpu": pa.Column(str),
     "kernel": pa.Column(str), "rate_mbit": pa.Column(float, pa.Check.gt(0)), "rtt_ms": pa.Column(float),
     "rmem_kib": pa.Column(float), "repetitions": pa.Column(int, pa.Check.ge(1)),
     "runs": pa.Column(int, pa.Check.ge(0)), "left_out": pa.Column(int, pa.Check.ge(0)),
     "background": pa.Column(str)},
    strict=True, ordered=True,
)
RESULTS = {"devices": DEVICES, "captures": CAPTURES, "runs_energy": RUNS_ENERGY, "sweep_concurrency": SWEEP, "sweep_parallelism": SWEEP,
           "sweep_io_kib": SWEEP, "ratios_ci": RATIOS_CI, "datasets": DATASETS_TABLE, "power_model": POWER_MODEL,
           "gains_vs_paper": GAINS_VS_PAPER, "cpu_concurrency": CPU_CONCURRENCY, "grid": GRID}


def results_schema(name: str) -> pa.DataFrameSchema:
    """The schema of results table `name` (tables/<name>.csv): tail_<device>
    tables share TAIL."""
    if name.startswith("tail_"):
        return TAIL
    return RESULTS[name]

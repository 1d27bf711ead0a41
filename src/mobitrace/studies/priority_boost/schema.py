"""Pandera schemas of every table the priority-boost study reads or writes.

Three groups:

* raw capture files (read by `ingest`): RUNS_SCHEMA (runs.csv), TRANSFER_SCHEMA
  (transfer.json), AUDIO_SCHEMA (audio.csv.gz), ORACLE_SCHEMA (oracle.csv.gz),
  CROSS_SCHEMA (cross.json);
* interim tables (written by `ingest`): RUN_TABLE_SCHEMA (runs.parquet, columns
  RUN_COLUMNS) and SESSION_TABLE_SCHEMA (sessions.parquet, SESSION_COLUMNS);
* results tables (CSV under data/results/priority-boost/tables, written by the
  chapter): one schema each, listed by name in RESULT_SCHEMAS; `result_schema`
  finds the schema of a table name (per-device names included).

This module imports nothing of the analysis, so the ingest stage depends on
it and not on analysis code.
"""

from __future__ import annotations

import re

import pandera.pandas as pa

from mobitrace.core import claims as cl

RUN_FIELDS = ["run_id", "table", "kind", "cell", "policy", "cpu_procs", "cross_pct", "rep", "seed",
              "status", "wall_s", "started_utc"]
POLICIES = ("original", "static", "incr", "decr")
TABLES = ("cpu", "net", "audio")
POLICY_LABELS = ("Original", "INCR", "DECR", "static")

# ---------------------------------------------------------------------------
# Raw capture files

RUNS_SCHEMA = pa.DataFrameSchema(
    {
        "run_id": pa.Column(str, pa.Check.str_matches(r"^[a-z]+-c\d+-x\d+-[a-z]+-r\d+\Z")),
        "table": pa.Column(str, pa.Check.isin(list(TABLES))),
        "kind": pa.Column(str, pa.Check.isin(["transfer", "audio"])),
        "cell": pa.Column(str),
        "policy": pa.Column(str, pa.Check.isin(POLICIES)),
        "cpu_procs": pa.Column(int, pa.Check.ge(0)),
        "cross_pct": pa.Column(int, pa.Check.in_range(0, 100)),
        "rep": pa.Column(int, pa.Check.ge(0)),
        "seed": pa.Column(int),
        "status": pa.Column(str, pa.Check.str_length(min_value=1)),
        "wall_s": pa.Column(float, pa.Check.ge(0)),
        "started_utc": pa.Column(str, pa.Check.str_matches(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\Z")),
    },
    strict=True, ordered=True, coerce=False,
)

TRANSFER_SCHEMA = pa.DataFrameSchema(
    {
        "bytes_plain": pa.Column(int, pa.Check.gt(0)),
        "bytes_sent": pa.Column(int, pa.Check.gt(0)),
        "bytes_acked": pa.Column(int),
        "duration_s": pa.Column(float, pa.Check.gt(0)),
        "openssl_rc": pa.Column(int, pa.Check.eq(0)),
        "cpu_user_s": pa.Column(float, pa.Check.ge(0)),
        "cpu_sys_s": pa.Column(float, pa.Check.ge(0)),
    },
    checks=pa.Check(lambda d: d["bytes_acked"] == d["bytes_sent"], error="bytes_acked == bytes_sent"),
    strict=False,
)

AUDIO_SCHEMA = pa.DataFrameSchema(
    {
        "seq": pa.Column(int, pa.Check.ge(0)),
        "t_ns": pa.Column(int, pa.Check.gt(0)),
        "errno": pa.Column(int, pa.Check.ge(0)),
    },
    strict=True, ordered=True,
)

ORACLE_SCHEMA = pa.DataFrameSchema(
    {
        "t_s": pa.Column(float, pa.Check.ge(0)),
        "event": pa.Column(str, pa.Check.isin(["link_up", "link_down", "nice", "stop"])),
        "pid": pa.Column(int),
        "value": pa.Column(int, pa.Check.in_range(-20, 19)),
    },
    strict=True, ordered=True,
)

# The cross-traffic sender's summary: counts, elapsed time and rates (bit/s).
CROSS_SCHEMA = pa.DataFrameSchema(
    {**{c: pa.Column(int, pa.Check.ge(0)) for c in ("packets_sent", "send_errors")},
     "elapsed_s": pa.Column(float, pa.Check.ge(0)), "target_bps": pa.Column(float, pa.Check.gt(0)),
     "offered_bps": pa.Column(float, pa.Check.ge(0))},
    strict=False,
)

# ---------------------------------------------------------------------------
# Interim tables (data/interim/priority-boost/<device>/)

RUN_COLUMNS = ["device", "session", "run_id", "table", "kind", "cell", "policy", "cpu_procs", "cross_pct",
               "rep", "seed", "status", "metric", "metric_unit", "transfer_s", "jitter_sd_us",
               "jitter_mean_us", "packets", "send_errors", "send_refused", "link_up_fraction", "link_toggles",
               "renices", "min_nice", "cross_offered_bps", "throttled_ms", "cpu_s"]

_nonneg = pa.Check.ge(0)

RUN_TABLE_SCHEMA = pa.DataFrameSchema(
    {
        "device": pa.Column(str, pa.Check.str_length(min_value=1)),
        "session": pa.Column(str, pa.Check.str_length(min_value=1)),
        "run_id": pa.Column(str, unique=False),
        "table": pa.Column(str, pa.Check.isin(list(TABLES))),
        "kind": pa.Column(str, pa.Check.isin(["transfer", "audio"])),
        "cell": pa.Column(str),
        "policy": pa.Column(str, pa.Check.isin(POLICIES)),
        "cpu_procs": pa.Column("int64", _nonneg),
        "cross_pct": pa.Column("int64", pa.Check.in_range(0, 100)),
        "rep": pa.Column("int64", _nonneg),
        "seed": pa.Column("int64"),
        "status": pa.Column(str, pa.Check.isin(["ok", "timeout"])),
        # the run's metric: transfer time (s) or audio jitter SD (us); missing on a timeout
        "metric": pa.Column("float64", _nonneg, nullable=True),
        "metric_unit": pa.Column(nullable=True),
        "transfer_s": pa.Column("float64", pa.Check.gt(0), nullable=True),
        "jitter_sd_us": pa.Column("float64", _nonneg, nullable=True),
        "jitter_mean_us": pa.Column("float64", _nonneg, nullable=True),
        "packets": pa.Column("Int64", _nonneg, nullable=True),
        "send_errors": pa.Column("Int64", _nonneg, nullable=True),
        "send_refused": pa.Column("Int64", _nonneg, nullable=True),
        "link_up_fraction": pa.Column("float64", pa.Check.in_range(0, 1), nullable=True),
        "link_toggles": pa.Column("int64"),
        "renices": pa.Column("int64", _nonneg),
        "min_nice": pa.Column("int64", pa.Check.in_range(-20, 19)),
        "cross_offered_bps": pa.Column("float64", _nonneg, nullable=True),
        "throttled_ms": pa.Column("float64", nullable=True),
        "cpu_s": pa.Column("float64", _nonneg, nullable=True),
    },
    checks=pa.Check(lambda d: d["metric_unit"].isna() | d["metric_unit"].isin(["s", "us"]),
                    error="metric_unit is s, us or missing"),
    strict=True, ordered=True, unique=["session", "run_id"],
)

SESSION_COLUMNS = ["device", "session", "capture_sha256", "files", "bytes", "runs_ok", "runs_timeout",
                   "runs_failed_attempts", "smoke", "kernel", "cpu_model", "cpu_count", "file_bytes",
                   "configuration", "background_load"]

SESSION_TABLE_SCHEMA = pa.DataFrameSchema(
    {
        "device": pa.Column(str, pa.Check.str_length(min_value=1)),
        "session": pa.Column(str, pa.Check.str_length(min_value=1), unique=True),
        "capture_sha256": pa.Column(str, pa.Check.str_matches(r"^[0-9a-f]{64}\Z")),
        "files": pa.Column("int64", _nonneg),
        "bytes": pa.Column("int64", _nonneg),
        "runs_ok": pa.Column("int64", _nonneg),
        "runs_timeout": pa.Column("int64", _nonneg),
        "runs_failed_attempts": pa.Column("int64", _nonneg),
        "smoke": pa.Column(bool),
        "kernel": pa.Column(str),
        "cpu_model": pa.Column(str),
        "cpu_count": pa.Column("int64", _nonneg),
        "file_bytes": pa.Column("int64", _nonneg),
        "configuration": pa.Column(str),  # the manifest's configuration as sorted JSON
        "background_load": pa.Column(str),  # capture_reader.background_text of the idle gate's record
    },
    strict=True, ordered=True,
)

# ---------------------------------------------------------------------------
# Results tables (data/results/priority-boost/tables/<name>.csv)

_p = pa.Check.in_range(0, 1)
_CONDITION = {"cpu_procs": pa.Column("int64", _nonneg), "cross_pct": pa.Column("int64", pa.Check.in_range(0, 100))}


def _cols(*names: str, nullable: bool = False, checks=None) -> dict:
    return {n: pa.Column(checks=checks, nullable=nullable) for n in names}


# A paper or measured table as printed: a policy column, then one text column per condition.
GRID_SCHEMA = pa.DataFrameSchema(
    {
        "policy": pa.Column(str, pa.Check.isin(list(POLICY_LABELS))),
        r"^\d+ proc, \d+%$": pa.Column(regex=True, nullable=True),
    },
    strict=True, ordered=True,
)

PUBLISHED_MEANS_SCHEMA = pa.DataFrameSchema(
    {
        "policy": pa.Column(str, pa.Check.isin(POLICIES)),
        "column": pa.Column("int64", _nonneg),
        **_CONDITION,
        "n": pa.Column("int64", pa.Check.gt(1)),
        "mean_decimals": pa.Column("int64", _nonneg),
        "sd_decimals": pa.Column("int64", _nonneg),
        "mean": pa.Column("float64", _nonneg),
        "sd": pa.Column("float64", _nonneg),
        "ci_lo": pa.Column("float64"),
        "ci_hi": pa.Column("float64"),
        "policy_name": pa.Column(str, pa.Check.isin(list(POLICY_LABELS))),
        "condition": pa.Column(str),
        "load": pa.Column(str),
    },
    checks=pa.Check(lambda d: (d["ci_lo"] <= d["mean"]) & (d["mean"] <= d["ci_hi"]), error="ci_lo <= mean <= ci_hi"),
    strict=True, ordered=True,
)

_AUDIT_COLUMNS = {
    "table": pa.Column(str),
    "policy": pa.Column(str, pa.Check.isin(POLICIES)),
    "column": pa.Column("int64", _nonneg),
    **_CONDITION,
    "n": pa.Column("int64", pa.Check.gt(1)),
    **_cols("mean", "sd", "mean_base", "sd_base", checks=_nonneg),
    **_cols("diff", "t", "df"),
    **_cols("p", "p_lo_table", "p_hi_table", "p_lo_printed", "p_hi_printed", checks=_p),
    **_cols("g", "g_lo", "g_hi"),
    **_cols("p_published_text", "p_published", "p_published_relation", "in_range_table", "in_range_printed",
            nullable=True),
    "p_holm": pa.Column(checks=_p),
    "reject_holm": pa.Column(bool),
    "reject_unadjusted": pa.Column(bool),
}

AUDIT_SCHEMA = pa.DataFrameSchema(_AUDIT_COLUMNS, strict=True, ordered=True)
# The audit of a table with published p-values has Holm over those too.
AUDIT_WITH_P_SCHEMA = pa.DataFrameSchema(
    {**_AUDIT_COLUMNS, "p_published_holm": pa.Column(checks=_p, nullable=True),
     "reject_published_holm": pa.Column(bool)},
    strict=True, ordered=True,
)

AUDIO_CHANGE_SCHEMA = pa.DataFrameSchema(
    {"incr": pa.Column("float64"), "decr": pa.Column("float64"), **_CONDITION},
    strict=True, ordered=True,
)

SESSION_VIEW_SCHEMA = pa.DataFrameSchema(
    _cols("device", "session", "capture sha256", "files", "MB", "runs ok", "timeouts", "failed attempts",
          "kernel", "CPU", "cores", "file (bytes)", "slow CPU", "reps", "background load (idle gate)"),
    strict=True, ordered=True,
)

WELCH_SCHEMA = pa.DataFrameSchema(
    {
        "table": pa.Column(str, pa.Check.isin(list(TABLES))),
        **_CONDITION,
        "policy": pa.Column(str, pa.Check.isin(POLICIES)),
        "n": pa.Column("int64", _nonneg),
        "n_base": pa.Column("int64", _nonneg),
        **_cols("mean", "mean_base", "sd", "sd_base", "diff", "rel_diff", "t", "df", nullable=True),
        "p": pa.Column(checks=_p, nullable=True),
        **_cols("g", "g_lo", "g_hi", nullable=True),
        "p_holm": pa.Column(checks=_p, nullable=True),
        "reject_holm": pa.Column(bool),
        "reject_unadjusted": pa.Column(bool),
    },
    strict=True, ordered=True,
)

PAIRED_SCHEMA = pa.DataFrameSchema(
    {
        "table": pa.Column(str, pa.Check.isin(list(TABLES))),
        **_CONDITION,
        "policy": pa.Column(str, pa.Check.isin(POLICIES)),
        "pairs": pa.Column("int64", _nonneg),
        "median_ratio": pa.Column(nullable=True),
        "median_ratio_lo": pa.Column(float, nullable=True),
        "median_ratio_hi": pa.Column(float, nullable=True),
        "pairs_lower": pa.Column("int64", _nonneg),
        **_cols("p_wilcoxon", "p_holm", checks=_p, nullable=True),
        "reject_holm": pa.Column(bool),
    },
    strict=True, ordered=True,
)

CONDITIONS_SCHEMA = pa.DataFrameSchema(
    {
        "table": pa.Column(str, pa.Check.isin(list(TABLES))),
        **_CONDITION,
        "policy": pa.Column(str, pa.Check.isin(list(POLICY_LABELS))),
        "runs": pa.Column("int64", pa.Check.gt(0)),
        "timeouts": pa.Column("int64", _nonneg),
        "link_up": pa.Column(checks=pa.Check.in_range(0, 1), nullable=True),
        "renices": pa.Column(checks=_nonneg, nullable=True),
        "min_nice": pa.Column(checks=pa.Check.in_range(-20, 19), nullable=True),
        **_cols("cross_mbps", "throttled_s", "audio_send_errors", "audio_refused", nullable=True),
    },
    strict=True, ordered=True,
)

# The chapter's headline claims (mobitrace.book.chapter.key_findings_frame).
KEY_FINDINGS_SCHEMA = pa.DataFrameSchema(
    {
        "claim_id": pa.Column(str, unique=True),
        "claim": pa.Column(str),
        "paper_relation": pa.Column(nullable=True),
        "paper_value": pa.Column(nullable=True),
        "unit": pa.Column(str),
        **_cols("artifact_value", "artifact_low", "artifact_high", nullable=True),
        "verdict": pa.Column(str, pa.Check.isin(cl.VERDICTS)),
        "category": pa.Column(str, pa.Check.isin(cl.CATEGORIES)),
    },
    strict=True, ordered=True,
)

# Table name (a regular expression: per-device tables carry the device) -> schema.
RESULT_SCHEMAS = {
    r"published_(transfer_cpu|transfer_cpu_p|transfer_net|audio_jitter)": GRID_SCHEMA,
    r"published_means_ci": PUBLISHED_MEANS_SCHEMA,
    r"audit_transfer_cpu": AUDIT_WITH_P_SCHEMA,
    r"audit_transfer_net": AUDIT_SCHEMA,
    r"audit_audio_change_us": AUDIO_CHANGE_SCHEMA,
    r"measured_.+_sessions": SESSION_VIEW_SCHEMA,
    r"measured_.+_(cpu|net|audio)": GRID_SCHEMA,
    r"measured_.+_welch": WELCH_SCHEMA,
    r"measured_.+_paired": PAIRED_SCHEMA,
    r"measured_.+_conditions": CONDITIONS_SCHEMA,
    r"key_findings": KEY_FINDINGS_SCHEMA,
}


def result_schema(name: str) -> pa.DataFrameSchema:
    """The schema of results table `name` (KeyError if the study writes no
    such table). Specific names win over the per-device patterns."""
    for pattern, schema in RESULT_SCHEMAS.items():
        if re.fullmatch(pattern, name):
            return schema
    raise KeyError(f"priority-boost writes no table named {name!r}")

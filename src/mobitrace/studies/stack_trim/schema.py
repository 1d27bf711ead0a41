"""Pandera schemas of every table the stack-trim study writes.

Interim (written by :mod:`mobitrace.studies.stack_trim.ingest`, one folder per
device under data/interim/stack-trim/<device>/):

* RUNS_CSV_SCHEMA: the kit's runs.csv as read (raw input, one line per run);
* RUNS_SCHEMA: runs.parquet, one row per run (columns RUN_COLUMNS);
* SAMPLES_SCHEMA: samples.parquet, per run, /proc/stat interval and CPU;
* SESSIONS_SCHEMA: sessions.parquet, one row per capture session.

Results (written by the chapter from :mod:`mobitrace.studies.stack_trim.analysis`,
data/results/stack-trim/tables/):

* CONDITIONS_SCHEMA: conditions_<device>.csv;
* POWER_MODEL_SCHEMA: power_model.csv;
* ONECOPY_SCHEMA: onecopy_<device>.csv (compare() per CPU-time basis);
* TRANSPORT_SCHEMA: transport_<device>.csv (compare() per UDP datagram size);
* CROSSOVER_SCHEMA: crossover.csv;
* BREAKDOWN_SCHEMA: breakdown_<device>.csv.

The claims table and the key findings are validated by
:mod:`mobitrace.core.claims` and :mod:`mobitrace.book.chapter`.
"""

from __future__ import annotations

import pandera.pandas as pa

LINKS = ["lo", "veth"]
DIRECTIONS = ["up", "down"]
PROTOS = ["tcp", "udp"]
MODES = ["copy", "onecopy", "mem"]
EXPERIMENTS = ["onecopy", "transport"]
STAT_STATES = ["user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"]

RUN_FIELDS = ["run_id", "experiment", "link", "direction", "proto", "size", "sender_mode", "receiver_mode",
              "mtu", "rate_mbps", "rep", "duration_s", "status", "started_utc"]

# The fields that make a run's condition (and its MTU), as the kit writes them.
CONDITION_COLUMNS = {
        "experiment": pa.Column(str, pa.Check.isin(EXPERIMENTS)),
        "link": pa.Column(str, pa.Check.isin(LINKS)),
        "direction": pa.Column(str, pa.Check.isin(DIRECTIONS)),
        "proto": pa.Column(str, pa.Check.isin(PROTOS)),
        "size": pa.Column(int, pa.Check.gt(0)),
        "sender_mode": pa.Column(str, pa.Check.isin(MODES)),
        "receiver_mode": pa.Column(str, pa.Check.isin(MODES)),
        "mtu": pa.Column(int, pa.Check.in_range(68, 65536)),
}

RUNS_CSV_SCHEMA = pa.DataFrameSchema(
    {
        "run_id": pa.Column(str, pa.Check.str_matches(r"^(lo|veth)-(up|down)-(tcp|udp)\d+-[a-z]+-[a-z]+-r[\d.]+-\d+\Z"),
                            unique=True),
        **CONDITION_COLUMNS,
        "rate_mbps": pa.Column(float, pa.Check.ge(0)),
        "rep": pa.Column(int, pa.Check.ge(0)),
        "duration_s": pa.Column(float, pa.Check.gt(0)),
        "status": pa.Column(str, pa.Check.str_length(min_value=1)),
        "started_utc": pa.Column(str, pa.Check.str_matches(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\Z")),
    },
    strict=True, ordered=True,
)

RUN_COLUMNS = ["device", "session", "run_id", "condition", "experiment", "link", "direction", "proto", "size",
               "sender_mode", "receiver_mode", "device_side", "device_mode", "mtu", "rate_mbps", "rep",
               "duration_s", "status", "loadavg_1min", "gate_flagged",
               "sender_bytes", "receiver_bytes", "sender_calls", "receiver_calls", "elapsed_s",
               "offered_mbps", "goodput_mbps", "delivered_fraction",
               "sender_user_s", "sender_sys_s", "receiver_user_s", "receiver_sys_s",
               "sender_cpu_s", "receiver_cpu_s", "sender_cpu_wait4_s", "receiver_cpu_wait4_s",
               "device_cpu_s", "peer_cpu_s", "both_cpu_s",
               "stat_interval_s", *[f"stat_{s}_s" for s in STAT_STATES], "stat_busy_s", "mean_mhz"]
SAMPLE_COLUMNS = ["device", "session", "run_id", "interval", "t_s", "dt_s", "cpu", "busy", "mhz"]
SESSION_COLUMNS = ["device", "session", "runs", "kernel", "cpu_model", "cpu_count", "cpufreq", "reps",
                   "duration_s", "lock_seconds", "shared_host_note", "reps_done", "stopped_by", "target_pp",
                   "widest_halfwidth_pp", "n_at_target", "n_halfwidths", "background_load", "md5"]

_NONNEG = pa.Check.ge(0)
_SECONDS = {c: pa.Column(float, _NONNEG) for c in (
    "sender_user_s", "sender_sys_s", "receiver_user_s", "receiver_sys_s", "sender_cpu_s", "receiver_cpu_s",
    "sender_cpu_wait4_s", "receiver_cpu_wait4_s", "device_cpu_s", "peer_cpu_s", "both_cpu_s",
    *[f"stat_{s}_s" for s in STAT_STATES], "stat_busy_s")}

_RUNS = pa.DataFrameSchema(
    {
        "device": pa.Column(str),
        "session": pa.Column(str),
        "run_id": pa.Column(str, unique=True),
        "condition": pa.Column(str),
        **CONDITION_COLUMNS,
        "device_side": pa.Column(str, pa.Check.isin(["sender", "receiver"])),
        "device_mode": pa.Column(str, pa.Check.isin(MODES)),
        "rate_mbps": pa.Column(float, _NONNEG),
        "rep": pa.Column(int, _NONNEG),
        "duration_s": pa.Column(float, pa.Check.gt(0)),
        "status": pa.Column(str, pa.Check.eq("ok")),
        "loadavg_1min": pa.Column(float, _NONNEG),
        "gate_flagged": pa.Column(bool),  # the idle gate flagged the run (False: not flagged, or no gate)
        "sender_bytes": pa.Column(int, _NONNEG),
        "receiver_bytes": pa.Column(int, _NONNEG),
        "sender_calls": pa.Column(int, _NONNEG),
        "receiver_calls": pa.Column(int, _NONNEG),
        "elapsed_s": pa.Column(float, pa.Check.gt(0)),
        "offered_mbps": pa.Column(float, _NONNEG),
        "goodput_mbps": pa.Column(float, _NONNEG),
        "delivered_fraction": pa.Column(float, pa.Check.in_range(0, 1), nullable=True),
        **_SECONDS,
        "stat_interval_s": pa.Column(float, pa.Check.gt(0)),
        "mean_mhz": pa.Column(float, pa.Check.in_range(0, 1e5, include_min=False)),
    },
)
RUNS_SCHEMA = pa.DataFrameSchema({c: _RUNS.columns[c] for c in RUN_COLUMNS}, strict=True, ordered=True)

SAMPLES_SCHEMA = pa.DataFrameSchema(
    {
        "device": pa.Column(str),
        "session": pa.Column(str),
        "run_id": pa.Column(str),
        "interval": pa.Column(int, _NONNEG),
        "t_s": pa.Column(float, pa.Check.gt(0)),
        "dt_s": pa.Column(float, pa.Check.gt(0)),
        "cpu": pa.Column(int, _NONNEG),
        "busy": pa.Column(float, pa.Check.in_range(0, 1)),
        "mhz": pa.Column(float, pa.Check.in_range(0, 1e5, include_min=False)),
    },
    strict=True, ordered=True, unique=["run_id", "interval", "cpu"],
)

SESSIONS_SCHEMA = pa.DataFrameSchema(
    {
        "device": pa.Column(str),
        "session": pa.Column(str, unique=True),
        "runs": pa.Column(int, _NONNEG),
        "kernel": pa.Column(str),
        "cpu_model": pa.Column(str),
        "cpu_count": pa.Column(int, pa.Check.gt(0)),
        "cpufreq": pa.Column(str),
        "reps": pa.Column(int, _NONNEG),
        "duration_s": pa.Column(float, _NONNEG),
        "lock_seconds": pa.Column(float, _NONNEG),
        "shared_host_note": pa.Column(str),
        # The sequential-repetition rule (kit --until-ci-pp): "fixed" when none.
        "reps_done": pa.Column(int, _NONNEG),
        "stopped_by": pa.Column(str, pa.Check.isin(["fixed", "target", "cap"])),
        "target_pp": pa.Column(float, _NONNEG, nullable=True),
        "widest_halfwidth_pp": pa.Column(float, _NONNEG, nullable=True),
        "n_at_target": pa.Column(int, _NONNEG),
        "n_halfwidths": pa.Column(int, _NONNEG),
        "background_load": pa.Column(str),  # capture_reader.background_text of the idle gate's record
        "md5": pa.Column(str, pa.Check.str_matches(r"^[0-9a-f]{32}\Z")),
    },
    strict=True, ordered=True,
)

# ---------------------------------------------------------------------------
# Results tables of the chapter.

CONDITIONS_SCHEMA = pa.DataFrameSchema(
    {
        "condition": pa.Column(str),
        **{c: CONDITION_COLUMNS[c] for c in ("experiment", "link", "direction", "proto", "size", "mtu",
                                             "sender_mode", "receiver_mode")},
        "rates": pa.Column(int, pa.Check.gt(0)),
        "runs": pa.Column(int, pa.Check.gt(0)),
        "reps_min": pa.Column(int, pa.Check.gt(0)),
    },
    strict=True, ordered=True,
)

POWER_MODEL_SCHEMA = pa.DataFrameSchema(
    {
        "model": pa.Column(str),
        "k_f (mW/GHz)": pa.Column(float, _NONNEG),
        "k_0 (mW)": pa.Column(float, _NONNEG),
        "idle (mW, subtracted)": pa.Column(float, _NONNEG),
        "nominal GHz": pa.Column(float, pa.Check.gt(0)),
        "provenance": pa.Column(str, pa.Check.isin(["measured", "published", "modeled", "assumed", "fitted"])),
        "source": pa.Column(str),
    },
    strict=True, ordered=True,
)

# The columns compare() adds after the grouping columns.
_COMPARE = {
    "n_variant": pa.Column(int, pa.Check.ge(2)),
    "n_baseline": pa.Column(int, pa.Check.ge(2)),
    "energy_variant_mj": pa.Column(float, _NONNEG),
    "energy_baseline_mj": pa.Column(float, _NONNEG),
    "power_variant_mw": pa.Column(float, _NONNEG),
    "power_baseline_mw": pa.Column(float, _NONNEG),
    "cv_variant_pct": pa.Column(float, _NONNEG),
    "cv_baseline_pct": pa.Column(float, _NONNEG),
    "saving": pa.Column(float, pa.Check.le(1)),
    "saving_lo": pa.Column(float, pa.Check.le(1)),
    "saving_hi": pa.Column(float, pa.Check.le(1)),
    "ratio": pa.Column(float, _NONNEG),
    "ratio_lo": pa.Column(float, _NONNEG),
    "ratio_hi": pa.Column(float, _NONNEG),
    "power_saving_mw": pa.Column(float),
    "power_saving_lo_mw": pa.Column(float),
    "power_saving_hi_mw": pa.Column(float),
    "goodput_variant_mbps": pa.Column(float, _NONNEG),
    "goodput_baseline_mbps": pa.Column(float, _NONNEG),
    "min_delivered": pa.Column(float, _NONNEG),
    "sustained": pa.Column(bool),
}
_INTERVALS_ORDERED = [pa.Check(lambda f: (f["saving_lo"] <= f["saving"] + 1e-12) & (f["saving"] <= f["saving_hi"] + 1e-12),
                               name="saving_lo <= saving <= saving_hi"),
                      pa.Check(lambda f: (f["ratio_lo"] <= f["ratio"] + 1e-12) & (f["ratio"] <= f["ratio_hi"] + 1e-12),
                               name="ratio_lo <= ratio <= ratio_hi")]

ONECOPY_SCHEMA = pa.DataFrameSchema(
    {
        "link": pa.Column(str, pa.Check.isin(LINKS)),
        "direction": pa.Column(str, pa.Check.isin(DIRECTIONS)),
        "rate_mbps": pa.Column(float, _NONNEG),
        **_COMPARE,
        "basis": pa.Column(str, pa.Check.isin(["both", "device"])),
    },
    checks=_INTERVALS_ORDERED, strict=True, ordered=True, unique=["basis", "link", "direction", "rate_mbps"],
)

TRANSPORT_SCHEMA = pa.DataFrameSchema(
    {
        "link": pa.Column(str, pa.Check.isin(LINKS)),
        "rate_mbps": pa.Column(float, _NONNEG),
        **_COMPARE,
        "udp_size": pa.Column(int, pa.Check.gt(0)),
    },
    checks=_INTERVALS_ORDERED, strict=True, ordered=True, unique=["udp_size", "link", "rate_mbps"],
)

CROSSOVER_SCHEMA = pa.DataFrameSchema(
    {
        "device": pa.Column(str),
        "link": pa.Column(str, pa.Check.isin(LINKS)),
        "udp_size": pa.Column(int, pa.Check.gt(0)),
        "crossover_mbps": pa.Column(float, _NONNEG, nullable=True),
        "last_rate_below_mbps": pa.Column(float, _NONNEG, nullable=True),
        "crossover_interval_above_1_mbps": pa.Column(float, _NONNEG, nullable=True),
        "max_ratio": pa.Column(float, _NONNEG),
        "ratio_at_max_rate": pa.Column(float, _NONNEG),
    },
    strict=True, ordered=True, unique=["device", "link", "udp_size"],
)

BREAKDOWN_SCHEMA = pa.DataFrameSchema(
    {
        "condition": pa.Column(str),
        "link": pa.Column(str, pa.Check.isin(LINKS)),
        "direction": pa.Column(str, pa.Check.isin(DIRECTIONS)),
        "proto": pa.Column(str, pa.Check.isin(PROTOS)),
        "size": pa.Column(int, pa.Check.gt(0)),
        "rate_mbps": pa.Column(float, _NONNEG),
        "app_user_pct": pa.Column(float, _NONNEG),
        "endpoint_kernel_pct": pa.Column(float, _NONNEG),
        "endpoints_pct": pa.Column(float, _NONNEG),
        "host_softirq_pct": pa.Column(float, _NONNEG),
        "host_busy_pct": pa.Column(float, _NONNEG),
        "other_pct": pa.Column(float, _NONNEG, nullable=True),  # NaN: /proc/stat read below the endpoints
    },
    strict=True, ordered=True, unique=["condition", "rate_mbps"],
)

"""pandera schemas of every table the cpu-gbps study reads or writes.

Raw captures (parsed by mobitrace.studies.cpu_gbps.ingest; failures become
one-line InputErrors there): iperf3 intervals and summary, /proc/stat and
per-process samples, cpuacct samples, session and run manifests.

Tables written: data/interim/cpu-gbps/<device>/{sessions,runs}.parquet
(ingest), data/results/cpu-gbps-devices/<device>/{fits,extrapolations,
rate_summary}.csv (device_analysis), and the results tables of the two
chapters (data/results/cpu-gbps*/tables/*.csv, analysis and
measured_analysis). Validation never changes a frame (no coercion).
"""

from __future__ import annotations

import pandera.pandas as pa

PROC_STAT_FIELDS = ["user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal",
                    "guest", "guest_nice"]
DIRECTIONS = ("down", "up")
CPUACCT_SOURCES = ("cpuacct_percpu_ns", "cgroup2_usage_ns")


# ---------------------------------------------------------------------------
# raw captures

IPERF_INTERVAL_SCHEMA = pa.DataFrameSchema(
    {
        "start": pa.Column(float, pa.Check.ge(0)),
        "end": pa.Column(float),
        "seconds": pa.Column(float, pa.Check.gt(0)),
        "bytes": pa.Column("int64", pa.Check.ge(0)),
        "bits_per_second": pa.Column(float, pa.Check.ge(0)),
        "line": pa.Column(int),
    },
    checks=[pa.Check(lambda df: df["end"] > df["start"], name="end > start")],
    strict=True,
)

IPERF_SUMMARY_SCHEMA = pa.DataFrameSchema(
    {
        "protocol": pa.Column(str, pa.Check.isin(["TCP"])),
        "reverse": pa.Column(bool),
        "duration_s": pa.Column(float, pa.Check.gt(0)),
        "target_bps": pa.Column("int64", pa.Check.ge(0)),
        "received_bps": pa.Column(float, pa.Check.ge(0)),
        "sent_bps": pa.Column(float, pa.Check.ge(0)),
        "received_seconds": pa.Column(float, pa.Check.gt(0)),
        "retransmits": pa.Column("int64", pa.Check.ge(0)),
        "host_total_pct": pa.Column(float, pa.Check.in_range(0, 10000)),
        "remote_total_pct": pa.Column(float, pa.Check.in_range(0, 10000)),
        "version": pa.Column(str),
    },
    strict=True,
)

PROC_STAT_SCHEMA = pa.DataFrameSchema(
    {
        "t_ns": pa.Column("int64", pa.Check.ge(0)),
        "cpu": pa.Column(str, pa.Check.str_matches(r"^cpu\d*\Z")),
        **{f: pa.Column("int64", pa.Check.ge(0)) for f in PROC_STAT_FIELDS},
        "line": pa.Column(int),
    },
    strict=True,
)

PROC_PID_SCHEMA = pa.DataFrameSchema(
    {
        "t_ns": pa.Column("int64", pa.Check.ge(0)),
        "role": pa.Column(str, pa.Check.str_matches(r"^(client|server|ksoftirqd/\d+)\Z")),
        "pid": pa.Column("int64", pa.Check.gt(0)),
        "schedstat_run_ns": pa.Column("int64", pa.Check.ge(0)),
        "utime_ticks": pa.Column("int64", pa.Check.ge(0)),
        "stime_ticks": pa.Column("int64", pa.Check.ge(0)),
        "line": pa.Column(int),
    },
    strict=True,
)

CPUACCT_SCHEMA = pa.DataFrameSchema(
    {
        "t_ns": pa.Column("int64", pa.Check.ge(0)),
        "source": pa.Column(str, pa.Check.isin(CPUACCT_SOURCES)),
        "cpu": pa.Column("int64", pa.Check.ge(0)),
        "usage_ns": pa.Column("int64", pa.Check.ge(0)),
        "line": pa.Column(int),
    },
    strict=True,
)

SESSION_SCHEMA = pa.DataFrameSchema(
    {
        "study": pa.Column(str, pa.Check.eq("cpu-gbps")),
        "device": pa.Column(str, pa.Check.str_matches(r"^[A-Za-z0-9._-]+\Z")),
        "session": pa.Column(str, pa.Check.str_length(min_value=1)),
        "kind": pa.Column(str, pa.Check.isin(["default", "smoke"])),
        "config": pa.Column(str, pa.Check.str_matches(r"^(default|offloads-off|slow-cpumax|rps-cpu\d+)\Z")),
        "repetitions": pa.Column("int64", pa.Check.ge(1)),
        "duration_s": pa.Column("int64", pa.Check.ge(1)),
        "sample_period_ms": pa.Column("int64", pa.Check.in_range(1, 1000)),
        "n_runs": pa.Column("int64", pa.Check.ge(1)),
        "hostname": pa.Column(str),
        "kernel": pa.Column(str),
        "cpu_model": pa.Column(str),
        "n_cpus": pa.Column("int64", pa.Check.ge(1)),
        "hypervisor": pa.Column(bool),
        "user_hz": pa.Column("int64", pa.Check.gt(0)),
        "config_hz": pa.Column(str),
        "irq_time_accounting": pa.Column(str),
        "gro_device": pa.Column(str),
        "gso_device": pa.Column(str),
        "tso_device": pa.Column(str),
        "rps_device": pa.Column(str),
        "cpu_quota": pa.Column(float, nullable=True),
        "device_cpus": pa.Column(str),
        "iperf3_version": pa.Column(str),
        "started_utc": pa.Column(str),
        "background_load": pa.Column(str),
    },
    strict=True,
)

RUN_SCHEMA = pa.DataFrameSchema(
    {
        "run_id": pa.Column(str),
        "direction": pa.Column(str, pa.Check.isin(DIRECTIONS)),
        "target_rate_bps": pa.Column("int64", pa.Check.ge(0)),
        "repetition": pa.Column("int64", pa.Check.ge(1)),
        "duration_s": pa.Column("int64", pa.Check.ge(1)),
        "t_start_ns": pa.Column("int64", pa.Check.ge(0)),
        "t_end_ns": pa.Column("int64", pa.Check.ge(0)),
        "client_cpu_s": pa.Column(float, pa.Check.ge(0)),
        "server_cpu_s": pa.Column(float, pa.Check.ge(0)),
        "client_exit": pa.Column("int64", pa.Check.eq(0)),
    },
    checks=[pa.Check(lambda df: df["t_end_ns"] > df["t_start_ns"], name="t_end > t_start")],
    strict=True,
)


# --------------------------------------------------------------------------- #
# interim tables (ingest)

_DEVICE = pa.Column(str, pa.Check.str_matches(r"^[A-Za-z0-9._-]+\Z"))
_FLOAT = pa.Column(float, nullable=True)
_PCT = pa.Column(float, pa.Check.ge(0), nullable=True)

SESSIONS_TABLE_SCHEMA = SESSION_SCHEMA.remove_columns(["cpu_quota"]).add_columns({
    # cpu_quota: a fraction of one CPU, or None for every session of a device
    # without a quota (then the column holds None, not NaN).
    "cpu_quota": pa.Column(checks=pa.Check(lambda s: s.map(lambda v: v is None or isinstance(v, float)),
                                           element_wise=False, name="a number or None"), nullable=True),
    "n_runs": pa.Column("int64", pa.Check.ge(1)),
    "capture_md5": pa.Column(str, pa.Check.str_matches(r"^[0-9a-f]{32}\Z")),
    "n_files": pa.Column("int64", pa.Check.ge(1)),
    "bytes": pa.Column("int64", pa.Check.ge(0)),
    "path": pa.Column(str),
})

RUNS_TABLE_SCHEMA = pa.DataFrameSchema(
    {
        "device": _DEVICE,
        "session": pa.Column(str),
        "config": pa.Column(str),
        "run_id": pa.Column(str),
        "direction": pa.Column(str, pa.Check.isin(DIRECTIONS)),
        "target_rate_bps": pa.Column("int64", pa.Check.ge(0)),
        "target_rate_mbps": pa.Column(float, pa.Check.ge(0)),
        "repetition": pa.Column("int64", pa.Check.ge(1)),
        "duration_s": pa.Column("int64", pa.Check.ge(1)),
        "client_lifetime_s": pa.Column(float, pa.Check.gt(0)),
        "throughput_gbps": pa.Column(float, pa.Check.ge(0)),
        "sender_gbps": pa.Column(float, pa.Check.ge(0)),
        "retransmits": pa.Column("int64", pa.Check.ge(0)),
        "n_intervals": pa.Column("int64", pa.Check.ge(0)),
        "interval_gbps_cv": _FLOAT,
        "stat_all_total_pct": _PCT,
        "stat_all_softirq_pct": _PCT,
        "stat_window_s": pa.Column(float, pa.Check.gt(0)),
        "stat_ticks": pa.Column("int64", pa.Check.ge(0)),
        "stat_samples": pa.Column("int64", pa.Check.ge(0)),
        "stat_cpu\\d+_(total|softirq)_pct": pa.Column(float, pa.Check.ge(0), nullable=True, regex=True),
        "client_cpu_s": pa.Column(float, pa.Check.ge(0)),
        "server_cpu_s": pa.Column(float, pa.Check.ge(0)),
        "ksoftirqd_cpu_s": pa.Column(float, pa.Check.ge(0)),
        "precise_total_pct": _PCT,
        "precise_device_pct": _PCT,
        "precise_peer_pct": _PCT,
        "precise_ksoftirqd_pct": _PCT,
        "host_precise_total_pct": _PCT,
        "iperf3_total_pct": _PCT,
    },
    strict=True,
)


# --------------------------------------------------------------------------- #
# per-device results (device_analysis)

_KEYS = {"device": _DEVICE, "config": pa.Column(str), "direction": pa.Column(str, pa.Check.isin(DIRECTIONS))}
SOURCE_IDS = ("stat_total", "stat_softirq", "precise_total", "iperf3_total")

FITS_SCHEMA = pa.DataFrameSchema(
    {
        **_KEYS,
        "source": pa.Column(str, pa.Check.isin(SOURCE_IDS)),
        "source_label": pa.Column(str),
        "n": pa.Column("int64", pa.Check.ge(2)),
        **{c: _FLOAT for c in ("intercept", "intercept_lo", "intercept_hi", "slope", "slope_lo", "slope_hi")},
        "slope_p": pa.Column(float, pa.Check.in_range(0, 1), nullable=True),
        "r2": pa.Column(float, pa.Check.in_range(0, 1), nullable=True),
        "resid_sd": pa.Column(float, pa.Check.ge(0), nullable=True),
        "x_min": pa.Column(float), "x_max": pa.Column(float),
        "threshold_pct": pa.Column(checks=pa.Check.in_range(0, 100)),
        "gbps_at_threshold": _FLOAT, "gbps_at_threshold_lo": _FLOAT, "gbps_at_threshold_hi": _FLOAT,
        "gbps_at_threshold_bounded": pa.Column(bool),
        "gbps_at_threshold_pred_lo": _FLOAT, "gbps_at_threshold_pred_hi": _FLOAT,
        "gbps_at_threshold_pred_bounded": pa.Column(bool),
        "fieller_g": _FLOAT,
        "saturation_gbps": pa.Column(float, pa.Check.ge(0)),
        "gbps_at_threshold_beyond_range": pa.Column(bool),
    },
    strict=True, ordered=True,
)

EXTRAPOLATIONS_SCHEMA = pa.DataFrameSchema(
    {
        **_KEYS,
        "source": pa.Column(str, pa.Check.isin(SOURCE_IDS)),
        "target_gbps": pa.Column(float, pa.Check.gt(0)),
        **{c: _FLOAT for c in ("cpu_pct", "mean_ci_lo", "mean_ci_hi", "pred_lo", "pred_hi")},
        "extrapolated": pa.Column(bool),
    },
    strict=True, ordered=True,
)

RATE_SUMMARY_SCHEMA = pa.DataFrameSchema(
    {
        **_KEYS,
        "target_rate": pa.Column(str, pa.Check.str_matches(r"^(max|[0-9.e+]+M)\Z")),
        "target_rate_bps": pa.Column("int64", pa.Check.ge(0)),
        "n": pa.Column("int64", pa.Check.ge(1)),
        "throughput_gbps": pa.Column(float, pa.Check.ge(0)),
        "throughput_lo": _FLOAT, "throughput_hi": _FLOAT,
        "(stat|precise|iperf3)_.*_pct": pa.Column(float, nullable=True, regex=True),
        "retransmits": pa.Column(float, pa.Check.ge(0)),
    },
    strict=True,
)


# --------------------------------------------------------------------------- #
# the cpu-gbps chapter's tables (analysis; data/results/cpu-gbps/tables)

IMPLIED_LINES_SCHEMA = pa.DataFrameSchema(
    {
        "device": pa.Column(str, unique=True),
        "defined_by": pa.Column(str, pa.Check.str_matches(r"^\w+, \w+\Z")),
        "slope_pct_per_gbps": pa.Column(float),
        "intercept_pct": pa.Column(float),
        r"gbps_at_[0-9.]+pct_cpu": pa.Column(float, regex=True),
        r"cpu_pct_at_[0-9.]+gbps": pa.Column(float, regex=True),
        "note": pa.Column(str),
    },
    strict=True,
)

TABLE2_SCHEMA = pa.DataFrameSchema(
    {"state": pa.Column(str, pa.Check.isin(["Discharging", "Charging"])),
     "big Core": pa.Column(float, pa.Check.gt(0)), "LITTLE Core": pa.Column(float, pa.Check.gt(0))},
    strict=True, ordered=True,
)

_QUANTITY_TABLE = {"quantity": pa.Column(str, unique=True), "value": pa.Column(float), "unit": pa.Column(str)}
DERIVED_SCHEMA = pa.DataFrameSchema(_QUANTITY_TABLE, strict=True, ordered=True)
BATTERY_SCHEMA = pa.DataFrameSchema(
    {**_QUANTITY_TABLE, "value": pa.Column(float, pa.Check.ge(0)),
     "unit": pa.Column(str, pa.Check.isin(["mAh", "mA", "GB"]))},
    strict=True, ordered=True,
)

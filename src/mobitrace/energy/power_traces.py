"""Power traces users bring: parsers for three native formats, streamed.

Formats (the session manifest's `power_trace` mapping declares which, with
its units; units are never guessed):

``power-meter``
    CSV ``time,power`` -- an averaging meter such as the Yokogawa WT210 the
    transfer-tuning paper used (§3; up to 10 readings per second). Each
    reading is the power at (or averaged up to) its timestamp.
    Units: ``time`` in s|ms|us|ns, ``power`` in W|mW|uW.
``monitor``
    CSV ``time,current,voltage`` -- a high-rate monitor such as a Monsoon.
    P = I * V. Units: time, ``current`` A|mA|uA, ``voltage`` V|mV|uV;
    ``current_sign`` (default discharge-positive) as below.
``android-battery``
    CSV ``time,voltage_now,current_now`` exactly as the adb kit
    (scripts/capture/android/adb_capture.py) writes runs/<id>/battery.csv.gz
    from /sys/class/power_supply/<supply>/ (time ns of CLOCK_BOOTTIME, uV, uA).
    The sign of current_now differs between kernels, so ``current_sign``
    must be declared as ``discharge-negative`` or ``discharge-positive``
    (the kit observes it); ``unknown`` is refused.

Treatment of bad samples (the same for every format):

* the header must name exactly the format's columns -> else InputError;
* a time that is missing, not a number, equal to the previous one
  (duplicate timestamp) or smaller (clock going backwards) -> InputError;
* a value that is not a number or is infinite -> InputError;
* a missing value (empty field or ``NaN``; the adb sampler writes an empty
  field when a sysfs read fails) -> the sample is dropped and counted
  (``Trace.dropped``); the gap check below then applies to what is left;
* a gap between kept samples longer than ``max_gap_s`` -> InputError (a
  clock gap, or too many dropped samples). Without a declared ``max_gap_s``
  the limit is 3 x the median step of the first chunk;
* negative power, non-positive voltage, or a discharge current below zero
  after the sign convention (the device was charging) -> InputError.

Every InputError names the file, the line, the field, what was expected
and what was found. A trace may hold up to ``Limits.power_rows`` samples
(capture_reader; larger than the ``table_rows`` of other tables because a
trace is only ever streamed). Reading is chunked (pandas ``read_csv(chunksize=...)``,
gzip transparently), so memory is bounded by the chunk size for
:func:`iter_chunks` (what the streaming energy functions consume) and by 16
bytes per kept sample for :func:`read_trace`.
"""

from __future__ import annotations

import io
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from mobitrace.core import capture_reader
from mobitrace.core.errors import InputError

TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
POWER_UNITS = {"W": 1.0, "mW": 1e-3, "uW": 1e-6}
CURRENT_UNITS = {"A": 1.0, "mA": 1e-3, "uA": 1e-6}
VOLTAGE_UNITS = {"V": 1.0, "mV": 1e-3, "uV": 1e-6}
SIGNS = ("discharge-positive", "discharge-negative")

# format -> (csv columns, {unit key: allowed units}, needs a current sign)
FORMATS = {
    "power-meter": (["time", "power"], {"time": TIME_UNITS, "power": POWER_UNITS}, False),
    "monitor": (["time", "current", "voltage"],
                {"time": TIME_UNITS, "current": CURRENT_UNITS, "voltage": VOLTAGE_UNITS}, True),
    "android-battery": (["time", "voltage_now", "current_now"],
                        {"time": TIME_UNITS, "voltage": VOLTAGE_UNITS, "current": CURRENT_UNITS}, True),
}
CHUNK_ROWS = 1_000_000


@dataclass(frozen=True)
class TraceSpec:
    """A power trace's declared format and units (from a manifest)."""

    format: str
    units: dict
    current_sign: str | None = None
    max_gap_s: float | None = None

    @property
    def columns(self) -> list[str]:
        return FORMATS[self.format][0]


def spec_from_manifest(entry, where: str = "power_trace", path: str | Path = "manifest.yaml") -> TraceSpec:
    """Check a manifest's `power_trace` mapping: format, a declared unit for
    every quantity, the current sign where one is needed, max_gap_s."""
    if not isinstance(entry, dict):
        raise InputError(path, where, None, "a mapping with format and units", type(entry).__name__)
    fmt = entry.get("format")
    if fmt not in FORMATS:
        raise InputError(path, where, "format", f"one of {sorted(FORMATS)}", fmt if fmt is not None else "nothing")
    _, allowed, needs_sign = FORMATS[fmt]
    units = entry.get("units")
    if not isinstance(units, dict):
        raise InputError(path, where, "units", f"a mapping declaring units of {sorted(allowed)}",
                         units if units is not None else "nothing")
    for key, choices in allowed.items():
        u = units.get(key)
        if u not in choices:
            raise InputError(path, where, f"units.{key}", f"a declared unit, one of {list(choices)}",
                             u if u is not None else "nothing (units are never guessed)")
    sign = entry.get("current_sign")
    if needs_sign:
        if sign is None and fmt == "monitor":
            sign = "discharge-positive"
        if sign not in SIGNS:
            raise InputError(path, where, "current_sign", f"one of {list(SIGNS)}",
                             sign if sign is not None else "nothing")
    gap = entry.get("max_gap_s")
    if gap is not None and (isinstance(gap, bool) or not isinstance(gap, (int, float))
                            or not math.isfinite(gap) or gap <= 0):
        raise InputError(path, where, "max_gap_s", "a number of seconds > 0", gap)
    return TraceSpec(fmt, {k: units[k] for k in allowed}, sign if needs_sign else None,
                     None if gap is None else float(gap))


@dataclass
class Trace:
    """A parsed trace: time in s and power in W (kept samples), and how many
    samples with a missing value were dropped."""

    path: str
    t_s: np.ndarray
    power_w: np.ndarray
    dropped: int = 0
    rows: int = 0
    meta: dict = field(default_factory=dict)


class _State:
    def __init__(self):
        self.last_t = None
        self.max_gap = None
        self.dropped = 0
        self.rows = 0


def _numeric(path, frame: pd.DataFrame, col: str, first_line: int) -> np.ndarray:
    """Column as float64; InputError at the first cell that is not a number."""
    s = frame[col]
    if not pd.api.types.is_numeric_dtype(s):
        s = s.astype(object)
        num = pd.to_numeric(s, errors="coerce")
        bad = num.isna() & s.notna() & (s.astype(str).str.strip().str.lower() != "nan")
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise InputError(path, f"line {first_line + i}", col, "a number", s.iloc[i])
        s = num
    v = s.to_numpy(dtype=float)
    inf = np.isinf(v)
    if inf.any():
        i = int(np.flatnonzero(inf)[0])
        raise InputError(path, f"line {first_line + i}", col, "a finite number", frame[col].iloc[i])
    return v


def _check_header(path, spec: TraceSpec) -> None:
    if not os.path.lexists(path):
        raise InputError(path, None, None, f"a {spec.format} power trace", "no such file")
    with capture_reader.open_text_stream(path) as fh:
        header = capture_reader.decode(fh.readline(64 * 1024), path).rstrip("\r\n")
    found = [h.strip() for h in header.split(",")]
    if found != spec.columns:
        raise InputError(path, "line 1", "header", ",".join(spec.columns), header)


def _next_chunk(reader, path: Path, width: int, limits) -> pd.DataFrame | None:
    """The reader's next chunk (None at the end); a row wider than the header is refused."""
    def lines():
        return io.TextIOWrapper(capture_reader.open_text_stream(path, limits), encoding="utf-8", newline="")
    with capture_reader.header_wide_rows(path, width, lines):
        return next(reader, None)


def iter_chunks(path: str | Path, spec: TraceSpec, chunk_rows: int = CHUNK_ROWS,
                state: _State | None = None,
                limits: capture_reader.Limits = capture_reader.LIMITS) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Validated (t_s, power_w) arrays, one pair per chunk of the file (see
    the module doc for what is checked and what is dropped)."""
    path = Path(path)
    _check_header(path, spec)
    st = state if state is not None else _State()
    time_scale = TIME_UNITS[spec.units["time"]]
    stream = capture_reader.open_text_stream(path, limits)
    line0 = 2
    try:
        reader = iter(pd.read_csv(stream, chunksize=chunk_rows, skip_blank_lines=False, engine="c",
                                  compression=None, header=0, index_col=False, on_bad_lines="error",
                                  encoding="utf-8"))
        while (frame := _next_chunk(reader, path, len(spec.columns), limits)) is not None:
            if list(frame.columns) != spec.columns:  # pragma: no cover (header checked above)
                raise InputError(path, "line 1", "header", ",".join(spec.columns), ",".join(frame.columns))
            n = len(frame)
            if n == 0:  # a header without samples: "no samples" below
                continue
            st.rows += n
            capture_reader.check_rows(path, st.rows, limits, power=True)  # streamed: Limits.power_rows
            t_raw = _numeric(path, frame, "time", line0)
            missing_t = np.isnan(t_raw)
            if missing_t.any():
                i = int(np.flatnonzero(missing_t)[0])
                raise InputError(path, f"line {line0 + i}", "time", "a timestamp", "an empty field")
            t = t_raw * time_scale
            if spec.format == "power-meter":
                p = _numeric(path, frame, "power", line0) * POWER_UNITS[spec.units["power"]]
                neg = p < 0
                if neg.any():
                    i = int(np.flatnonzero(neg)[0])
                    raise InputError(path, f"line {line0 + i}", "power", "a power >= 0", frame["power"].iloc[i])
            else:
                ccol, vcol = ("current", "voltage") if spec.format == "monitor" else ("current_now", "voltage_now")
                cur = _numeric(path, frame, ccol, line0) * CURRENT_UNITS[spec.units["current"]]
                volt = _numeric(path, frame, vcol, line0) * VOLTAGE_UNITS[spec.units["voltage"]]
                if spec.current_sign == "discharge-negative":
                    cur = -cur
                bad_v = volt <= 0
                if bad_v.any():
                    i = int(np.flatnonzero(bad_v)[0])
                    raise InputError(path, f"line {line0 + i}", vcol, "a voltage > 0", frame[vcol].iloc[i])
                bad_c = cur < 0
                if bad_c.any():
                    i = int(np.flatnonzero(bad_c)[0])
                    raise InputError(path, f"line {line0 + i}", ccol,
                                     f"a discharge current ({spec.current_sign}); the device was charging",
                                     frame[ccol].iloc[i])
                p = cur * volt
            # Steps between consecutive timestamps (across chunks too).
            prev = st.last_t
            steps = np.diff(t, prepend=t[0] if prev is None else prev)
            if prev is None:
                steps[0] = np.inf  # no previous sample
            dup = steps == 0
            back = steps < 0
            if dup.any() or back.any():
                i = int(np.flatnonzero(dup | back)[0])
                what = "a duplicate timestamp" if dup[i] else "a time earlier than the line before"
                raise InputError(path, f"line {line0 + i}", "time", "strictly increasing time",
                                 f"{what}: {frame['time'].iloc[i]}")
            keep = ~np.isnan(p)
            st.dropped += int((~keep).sum())
            tk, pk = t[keep], p[keep]
            if st.max_gap is None:
                if spec.max_gap_s is not None:
                    st.max_gap = spec.max_gap_s
                elif len(tk) >= 2:
                    st.max_gap = 3 * float(np.median(np.diff(tk)))
            if st.max_gap is not None and len(tk):
                kept_prev = getattr(st, "last_kept_t", None)
                gaps = np.diff(tk, prepend=tk[0] if kept_prev is None else kept_prev)
                big = gaps > st.max_gap * (1 + 1e-9)
                if big.any():
                    j = int(np.flatnonzero(big)[0])
                    i = int(np.flatnonzero(keep)[j])
                    raise InputError(path, f"line {line0 + i}", "time",
                                     f"a gap of at most {st.max_gap:g} s from the previous kept sample",
                                     f"a gap of {gaps[j]:g} s")
            if len(tk):
                st.last_kept_t = float(tk[-1])
            st.last_t = float(t[-1])
            line0 += n
            yield tk, pk
    except pd.errors.ParserError as exc:
        import re
        m = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(exc))
        if m:
            raise InputError(path, f"line {m.group(2)}", None, f"{m.group(1)} fields ({','.join(spec.columns)})",
                             f"{m.group(3)} fields") from None
        raise InputError(path, None, None, f"a CSV of {len(spec.columns)} columns", str(exc).strip()) from None
    except pd.errors.EmptyDataError:
        raise InputError(path, "line 1", "header", ",".join(spec.columns), "an empty file") from None
    finally:
        stream.close()
    if st.rows == 0:
        raise InputError(path, "line 2", None, "at least two samples", "no samples")


def read_trace(path: str | Path, spec: TraceSpec, chunk_rows: int = CHUNK_ROWS) -> Trace:
    """The whole trace in memory: 16 bytes per kept sample, in arrays sized
    from the file's size (grown by half when the estimate is short), so the
    peak is about the final arrays plus one chunk."""
    st = _State()
    path = Path(path)
    cap = 0
    t_all = p_all = np.empty(0)
    n = 0
    for t, p in iter_chunks(path, spec, chunk_rows, st):
        if n + len(t) > cap:
            if cap == 0 and not str(path).endswith(".gz") and len(t):
                # rows ~ file size / bytes per row of the first chunk, +5%
                est = int(path.stat().st_size / max(1.0, _first_chunk_bytes(path, st.rows)) * 1.05)
                cap = max(est, len(t))
            else:
                cap = max(int(cap * 1.5), n + len(t), 1024)
            t_all = np.resize(t_all, cap) if n else np.empty(cap)
            p_all = np.resize(p_all, cap) if n else np.empty(cap)
        t_all[n:n + len(t)] = t
        p_all[n:n + len(p)] = p
        n += len(t)
    if n < 2:
        raise InputError(path, None, None, "at least two samples with values", f"{n}")
    # Views (no copy): the buffers are at most ~5% longer than the trace.
    return Trace(str(path), t_all[:n], p_all[:n], dropped=st.dropped, rows=st.rows)


def _first_chunk_bytes(path: Path, rows: int) -> float:
    """Bytes per data row, measured on the first `rows` lines of an
    uncompressed file (header excluded)."""
    size = 0
    with capture_reader.open_binary(path) as fh:
        fh.readline()
        for _ in range(min(rows, 100_000)):
            line = fh.readline()
            if not line:
                break
            size += len(line)
    return size / max(1, min(rows, 100_000))


class MinMaxThinner:
    """At most `max_points` samples of a trace fed in chunks, for drawing:
    a trace of at most `max_points` samples is kept whole; a longer one
    keeps its first and last sample and is cut into bins of w consecutive
    samples (w the smallest power of two that gives at most
    (max_points - 2) / 2 bins), each bin keeping its lowest and its highest
    sample (first of equals), in time order, so spikes survive. The
    result depends only on the trace, not on how it was chunked. Memory:
    max_points samples plus one chunk."""

    def __init__(self, max_points: int = 4000):
        if max_points < 4:
            raise ValueError("max_points must be at least 4")
        self.max_points = max_points
        self.w = 1
        self.n = 0
        # per bin (bins are sample-index ranges [b w, (b + 1) w)): id, lowest and highest sample
        self.ids = np.empty(0, dtype=np.int64)
        self.lo_t = self.lo_p = self.hi_t = self.hi_p = np.empty(0)
        self.ends = None  # the first and the last sample, (t, p) each

    def _cap(self, w: int) -> int:
        return self.max_points if w == 1 else (self.max_points - 2) // 2

    def _merge(self) -> None:
        """Double the bin width: bins 2j and 2j+1 become bin j."""
        self.w *= 2
        if not len(self.ids):
            return
        new = self.ids // 2
        starts = np.flatnonzero(np.r_[True, new[1:] != new[:-1]])
        ends = np.r_[starts[1:], len(new)]
        second = np.where(ends - starts == 2, starts + 1, starts)
        take_lo = np.where(self.lo_p[second] < self.lo_p[starts], second, starts)   # ties: the earlier
        take_hi = np.where(self.hi_p[second] > self.hi_p[starts], second, starts)
        self.ids = new[starts]
        self.lo_t, self.lo_p = self.lo_t[take_lo], self.lo_p[take_lo]
        self.hi_t, self.hi_p = self.hi_t[take_hi], self.hi_p[take_hi]

    def feed(self, t, p) -> None:
        t = np.asarray(t, dtype=float)
        p = np.asarray(p, dtype=float)
        if len(t) == 0:
            return
        total = self.n + len(t)
        self.ends = ((t[0], p[0]) if self.ends is None else self.ends[0], (t[-1], p[-1]))
        while -(-total // self.w) > self._cap(self.w):
            self._merge()
        b = (self.n + np.arange(len(t))) // self.w
        starts = np.flatnonzero(np.r_[True, b[1:] != b[:-1]])
        lo = np.array([s + int(np.argmin(p[s:e])) for s, e in zip(starts, np.r_[starts[1:], len(t)])])
        hi = np.array([s + int(np.argmax(p[s:e])) for s, e in zip(starts, np.r_[starts[1:], len(t)])])
        ids, lo_t, lo_p, hi_t, hi_p = b[starts], t[lo], p[lo], t[hi], p[hi]
        if len(self.ids) and self.ids[-1] == ids[0]:  # the chunk continues the last bin
            if lo_p[0] < self.lo_p[-1]:
                self.lo_t[-1], self.lo_p[-1] = lo_t[0], lo_p[0]
            if hi_p[0] > self.hi_p[-1]:
                self.hi_t[-1], self.hi_p[-1] = hi_t[0], hi_p[0]
            ids, lo_t, lo_p, hi_t, hi_p = ids[1:], lo_t[1:], lo_p[1:], hi_t[1:], hi_p[1:]
        self.ids = np.r_[self.ids, ids]
        self.lo_t, self.lo_p = np.r_[self.lo_t, lo_t], np.r_[self.lo_p, lo_p]
        self.hi_t, self.hi_p = np.r_[self.hi_t, hi_t], np.r_[self.hi_p, hi_p]
        self.n = total

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        """(t, p) of the kept samples, in time order."""
        ends = self.ends or ((np.nan, np.nan),) * 2
        t = np.r_[self.lo_t, self.hi_t, [ends[0][0], ends[1][0]]]
        p = np.r_[self.lo_p, self.hi_p, [ends[0][1], ends[1][1]]]
        keep = ~np.isnan(t)
        t, p = t[keep], p[keep]
        t, i = np.unique(t, return_index=True)  # sorted; a bin's lowest and highest may be one sample
        return t, p[i]

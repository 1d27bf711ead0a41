"""Energy of a power trace: base power, dynamic energy, energy per 100 MB,
tail energy (Guner & Kosar, transfer-tuning, §3 eqs. 1-2 and §4 Figure 8).

A trace is samples (t_i, P_i), t strictly increasing, read as the piecewise
linear function through them; every integral is the trapezoidal rule on that
function, with the value at a window edge interpolated linearly between the
two samples around it:

* window integral  I(a, b) = int_a^b P(t) dt                         [J = W s]
* base power       P_base = I(a, b) / (b - a) over an idle window    [W]
* dynamic energy   E_d = int_{t_start}^{t_end} (P(t) - P_base) dt
                       = I(t_start, t_end) - P_base (t_end - t_start)   (paper eq. 2)
* per 100 MB       E_d * 1e8 / bytes  (100 MB = 10^8 bytes, decimal)
* tail energy      from the last byte t_end until P first falls to
                   P_base + tolerance (at t*, interpolated):
                   E_tail = int_{t_end}^{t*} (P(t) - P_base) dt, duration t* - t_end
                   (the "wasted energy ... after the completion of a data
                   transfer", §4, after Balasubramanian et al. IMC'09).

:class:`StreamingWindows` computes window integrals over a trace read in
chunks (power_traces.iter_chunks), so a 1 GB trace needs one chunk of memory.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

BYTES_PER_100MB = 1e8


def _check_trace(t, p):
    t = np.asarray(t, dtype=float)
    p = np.asarray(p, dtype=float)
    if t.ndim != 1 or t.shape != p.shape or len(t) < 2:
        raise ValueError("a trace needs at least two samples, times and powers of the same length")
    if np.any(np.diff(t) <= 0):
        raise ValueError("trace times must be strictly increasing")
    if np.any(~np.isfinite(p)) or np.any(~np.isfinite(t)):
        raise ValueError("trace values must be finite")
    return t, p


def _clip_integral(t, p, a, b) -> float:
    """int_a^b of the piecewise linear trace, over [a, b] clipped to the
    trace's span (no coverage check)."""
    lo, hi = max(a, t[0]), min(b, t[-1])
    if hi <= lo:
        return 0.0
    inside = (t > lo) & (t < hi)
    tt = np.concatenate(([lo], t[inside], [hi]))
    pp = np.concatenate(([np.interp(lo, t, p)], p[inside], [np.interp(hi, t, p)]))
    return float(np.trapezoid(pp, tt))


def window_integral(t, p, a: float, b: float) -> float:
    """int_a^b P(t) dt (J for W and s), trapezoidal with interpolated edges.
    The trace must cover [a, b]."""
    t, p = _check_trace(t, p)
    if not b > a:
        raise ValueError(f"window end {b} must be after its start {a}")
    if a < t[0] or b > t[-1]:
        raise ValueError(f"trace [{t[0]:g}, {t[-1]:g}] s does not cover the window [{a:g}, {b:g}] s")
    return _clip_integral(t, p, a, b)


def base_power(t, p, a: float, b: float) -> float:
    """Time-weighted mean power over the idle window [a, b] (W)."""
    return window_integral(t, p, a, b) / (b - a)


def dynamic_energy(t, p, base_w: float, start: float, end: float) -> float:
    """E_d = int_start^end (P - P_base) dt (J), the paper's eq. 2."""
    return window_integral(t, p, start, end) - base_w * (end - start)


def energy_per_100mb(energy_j, nbytes):
    """Energy per 100 MB (10^8 bytes) of data transferred: E * 1e8 / bytes."""
    b = np.asarray(nbytes, dtype=float)
    if np.any(b <= 0):
        raise ValueError("bytes transferred must be positive")
    return np.asarray(energy_j, dtype=float) * BYTES_PER_100MB / b


@dataclass(frozen=True)
class Tail:
    energy_j: float     # int_{end}^{t*} (P - P_base) dt
    duration_s: float   # t* - end
    ended: bool         # False: power stayed above base + tolerance to the trace's end (t* = last sample)


def tail_energy(t, p, base_w: float, end: float, tolerance_w: float = 0.0) -> Tail:
    """Tail after the last byte at `end`: until P first falls to
    base_w + tolerance_w (crossing time interpolated linearly)."""
    t, p = _check_trace(t, p)
    if not t[0] <= end <= t[-1]:
        raise ValueError(f"transfer end {end:g} s lies outside the trace [{t[0]:g}, {t[-1]:g}] s")
    if tolerance_w < 0:
        raise ValueError("tolerance cannot be negative")
    level = base_w + tolerance_w
    p_end = float(np.interp(end, t, p))
    if p_end <= level:
        return Tail(0.0, 0.0, True)
    after = np.flatnonzero(t > end)
    stop, ended = t[-1], False
    prev_t, prev_p = end, p_end
    for i in after:
        if p[i] <= level:
            # linear crossing between (prev_t, prev_p) and (t[i], p[i])
            stop = prev_t + (prev_p - level) * (t[i] - prev_t) / (prev_p - p[i])
            ended = True
            break
        prev_t, prev_p = t[i], p[i]
    e = _clip_integral(t, p, end, stop) - base_w * (stop - end)
    return Tail(float(e), float(stop - end), ended)


class StreamingWindows:
    """Window integrals over a trace fed in chunks (in time order):
    ``feed(t, p)`` per chunk, then ``integral(i)`` for window i. The last
    sample of a chunk is carried into the next, so no interval is lost or
    counted twice. Memory: one chunk."""

    def __init__(self, windows):
        self.windows = [(float(a), float(b)) for a, b in windows]
        for a, b in self.windows:
            if not b > a:
                raise ValueError(f"window end {b} must be after its start {a}")
        self.sums = [0.0] * len(self.windows)
        self.first = None
        self.last = None  # (t, p)

    def feed(self, t, p) -> None:
        t = np.asarray(t, dtype=float)
        p = np.asarray(p, dtype=float)
        if len(t) == 0:
            return
        if self.last is not None:
            t = np.concatenate(([self.last[0]], t))
            p = np.concatenate(([self.last[1]], p))
        elif self.first is None:
            self.first = float(t[0])
        if len(t) >= 2:
            t, p = _check_trace(t, p)
            for k, (a, b) in enumerate(self.windows):
                self.sums[k] += _clip_integral(t, p, a, b)
        self.last = (float(t[-1]), float(p[-1]))

    def integral(self, k: int) -> float:
        a, b = self.windows[k]
        if self.first is None or a < self.first or b > self.last[0]:
            raise ValueError(f"the trace does not cover the window [{a:g}, {b:g}] s")
        return self.sums[k]


class StreamingRunEnergy:
    """base_power over [first sample, start], dynamic_energy over [start,
    end] and tail_energy after `end` of one trace fed in chunks (in time
    order): ``feed(t, p)`` per chunk, then ``result()``. The same formulas,
    sums of the same per-interval terms: fed the whole trace as one chunk it
    gives exactly the whole-trace functions' numbers. The last sample of a
    chunk is carried into the next (no interval lost or counted twice); the
    tail's first crossing is found vectorized. Memory: one chunk."""

    def __init__(self, start: float, end: float, tolerance_w: float = 0.0):
        if not end > start:
            raise ValueError(f"window end {end} must be after its start {start}")
        if tolerance_w < 0:
            raise ValueError("tolerance cannot be negative")
        self.start, self.end, self.tolerance_w = float(start), float(end), tolerance_w
        self.first = None
        self.last = None          # (t, p) carried into the next chunk
        self.n = 0
        self.base_sum = 0.0       # int over [first, start]
        self.window_sum = 0.0     # int over [start, end]
        self.base = None          # W, once the trace covers `start`
        self.tail_state = None    # None: end not reached; "scan"; "done"
        self.tail_sum = 0.0       # int over [end, stop]
        self.tail_prev = None     # (t, p) before the next sample after `end`
        self.stop = None
        self.ended = False

    def feed(self, t, p) -> None:
        t = np.asarray(t, dtype=float)
        p = np.asarray(p, dtype=float)
        if len(t) == 0:
            return
        self.n += len(t)
        if self.first is None:
            self.first = float(t[0])
        if self.last is not None:
            t = np.concatenate(([self.last[0]], t))
            p = np.concatenate(([self.last[1]], p))
        self.last = (float(t[-1]), float(p[-1]))
        if len(t) < 2:
            return
        t, p = _check_trace(t, p)
        if self.start > self.first:
            self.base_sum += _clip_integral(t, p, self.first, self.start)
        self.window_sum += _clip_integral(t, p, self.start, self.end)
        if self.base is None and t[-1] >= self.start and self.start > self.first:
            self.base = self.base_sum / (self.start - self.first)
        if self.base is None or self.tail_state == "done" or t[-1] < self.end:
            return
        level = self.base + self.tolerance_w
        if self.tail_state is None:  # this chunk holds `end`
            p_end = float(np.interp(self.end, t, p))
            if p_end <= level:
                self.tail_state, self.stop, self.ended = "done", self.end, True
                return
            self.tail_state, self.tail_prev = "scan", (self.end, p_end)
        after = np.flatnonzero(t > self.end)
        if len(after) and self.tail_prev[0] > self.end:  # the carried sample was scanned before
            after = after[t[after] > self.tail_prev[0]]
        below = after[p[after] <= level]
        if len(below):
            i = below[0]
            prev_t, prev_p = (t[i - 1], p[i - 1]) if i - 1 >= 0 and t[i - 1] > self.end else self.tail_prev
            # linear crossing between (prev_t, prev_p) and (t[i], p[i])
            self.stop = prev_t + (prev_p - level) * (t[i] - prev_t) / (prev_p - p[i])
            self.tail_state, self.ended = "done", True
            self.tail_sum += _clip_integral(t, p, self.end, self.stop)
            return
        self.tail_sum += _clip_integral(t, p, self.end, t[-1])
        if len(after):
            self.tail_prev = (t[after[-1]], p[after[-1]])

    def result(self) -> tuple[float, float, Tail]:
        """(base power W, E_d J, Tail), as base_power, dynamic_energy and
        tail_energy of the whole trace; ValueError where they would raise."""
        if self.n < 2:
            raise ValueError("a trace needs at least two samples, times and powers of the same length")
        first, last = self.first, self.last[0]
        if not self.start > first:
            raise ValueError(f"window end {self.start} must be after its start {first}")
        if self.start > last or self.end > last:
            raise ValueError(f"trace [{first:g}, {last:g}] s does not cover the window "
                             f"[{first if self.start > last else self.start:g}, "
                             f"{self.start if self.start > last else self.end:g}] s")
        e_d = self.window_sum - self.base * (self.end - self.start)
        if self.tail_state == "done" and self.stop == self.end:
            return self.base, e_d, Tail(0.0, 0.0, True)
        stop = self.stop if self.tail_state == "done" else last
        e = self.tail_sum - self.base * (stop - self.end)
        return self.base, e_d, Tail(float(e), float(stop - self.end), self.ended)

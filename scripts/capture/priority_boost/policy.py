"""Priority-boosting policies of Liang & Keshav (§2, §4), as pure functions.

A policy maps what the controller knows about a communicating process since
the link last came up (number of I/O events, bytes moved) to the nice value
the process should have. The controller (oracle.py) applies it with
setpriority(2); the kernel is unmodified, so this is a user-space emulation of
the paper's in-kernel boosting:

- ``original``: never renice (the unmodified scheduler);
- ``static``:  nice MAX_BOOST (-20) from the first I/O event after link-up;
- ``incr``:    priority incrementing, per event: nice -1 at the first I/O
  event after link-up, one step higher per further event, clamped at -20;
- ``decr``:    priority decrementing, per data: nice -20 at the first I/O
  event after link-up, one step lower per ``decr_step_bytes`` moved, clamped
  at -1 (the paper's minimum boost).

All policies reset to the process's base nice (0) when the link goes down
(the paper's "reset" option).
"""

from __future__ import annotations

BASE_NICE = 0
MAX_BOOST = -20  # highest priority the paper allows (§2, §4)
MIN_BOOST = -1   # lowest boosted level (§4)
DECR_STEP_BYTES = 60 * 1024  # "decremented by 1 every 60Kbytes" (§4)
POLICIES = ("original", "static", "incr", "decr")


def target_nice(policy: str, link_up: bool, events_since_up: int, bytes_since_up: int,
                decr_step_bytes: int = DECR_STEP_BYTES) -> int | None:
    """Nice value a managed process should have, or None for "leave alone".

    ``events_since_up``: I/O events (write system calls) since the link last
    came up; ``bytes_since_up``: bytes the process wrote since then.
    """
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
    if policy == "original":
        return None
    if not link_up or events_since_up <= 0:
        return BASE_NICE
    if policy == "static":
        return MAX_BOOST
    if policy == "incr":
        return max(MAX_BOOST, -events_since_up)
    steps = max(0, bytes_since_up) // decr_step_bytes
    return min(MIN_BOOST, MAX_BOOST + steps)


def onoff_schedule(seed: int, mean_s: float, horizon_s: float) -> list[tuple[float, bool]]:
    """Link on/off schedule: alternating exponentially distributed periods
    (mean ``mean_s``), starting with the link up at t=0, until ``horizon_s``.

    Returns [(t, up), ...] toggle times in seconds; the first entry is (0.0, True).
    Uses numpy's PCG64 generator with ``seed``, so a seed gives one schedule.
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    out, t, up = [(0.0, True)], 0.0, True
    while t < horizon_s:
        t += float(rng.exponential(mean_s))
        up = not up
        out.append((round(t, 6), up))
    return out

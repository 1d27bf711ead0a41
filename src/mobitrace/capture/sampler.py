"""A thread that calls a sampling function every `period` s: once at start,
on a fixed grid (no drift), and once more at stop() so the last interval is
closed."""

from __future__ import annotations

import threading
import time


class Periodic(threading.Thread):
    def __init__(self, period: float, sample):
        super().__init__(daemon=True)
        self.period, self.sample = period, sample
        self.halt = threading.Event()

    def run(self) -> None:
        nxt = time.monotonic()
        while not self.halt.is_set():
            self.sample()
            nxt += self.period
            self.halt.wait(max(0.0, nxt - time.monotonic()))

    def stop(self) -> None:
        self.halt.set()
        self.join()
        self.sample()


def proc_stat_cpu() -> list[str]:
    """The `cpu*` lines of /proc/stat."""
    out = []
    with open("/proc/stat") as fh:
        for line in fh:
            if not line.startswith("cpu"):
                break
            out.append(line.rstrip())
    return out


def cpuinfo_mhz_text() -> list[str]:
    """`cpu MHz` of every CPU from /proc/cpuinfo, as written there."""
    with open("/proc/cpuinfo") as fh:
        return [line.split(":", 1)[1].strip() for line in fh if line.startswith("cpu MHz")]


def cpuinfo_mhz() -> list[float]:
    """`cpu MHz` of every CPU from /proc/cpuinfo (where sysfs has no cpufreq)."""
    return [float(m) for m in cpuinfo_mhz_text()]


def loadavg_1min() -> float:
    import os
    return os.getloadavg()[0]

"""A thread that calls a sampling function every `period` s: once at start,
on a fixed grid (no drift), and once more at stop() so the last interval is
closed."""

from __future__ import annotations

import os
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


_OPEN: dict[str, int] = {}  # path -> descriptor kept open by read_kernel_file


def read_kernel_file(path: str) -> str | None:
    """The current text of a /proc or /sys file, or None when it cannot be
    read (a process that has exited). The descriptor stays open and is read
    with pread at offset 0, which makes the kernel write the file afresh:
    at 10 samples a second, opening the files cost more than reading them."""
    fd = _OPEN.get(path)
    try:
        if fd is None:
            fd = _OPEN[path] = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        parts, offset = [], 0
        while chunk := os.pread(fd, 65536, offset):
            parts.append(chunk)
            offset += len(chunk)
        return b"".join(parts).decode()
    except OSError:
        if _OPEN.pop(path, None) is not None:
            os.close(fd)
        return None


def proc_stat_cpu() -> list[str]:
    """The `cpu*` lines of /proc/stat."""
    out = []
    for line in (read_kernel_file("/proc/stat") or "").splitlines():
        if not line.startswith("cpu"):
            break
        out.append(line.rstrip())
    return out


def cpuinfo_mhz_text() -> list[str]:
    """`cpu MHz` of every CPU from /proc/cpuinfo, as written there."""
    return [line.split(":", 1)[1].strip() for line in (read_kernel_file("/proc/cpuinfo") or "").splitlines()
            if line.startswith("cpu MHz")]


def cpuinfo_mhz() -> list[float]:
    """`cpu MHz` of every CPU from /proc/cpuinfo (where sysfs has no cpufreq)."""
    return [float(m) for m in cpuinfo_mhz_text()]


def loadavg_1min() -> float:
    return os.getloadavg()[0]

"""A CPU-bandwidth-limited cgroup (cgroup v2 cpu.max, or v1
cpu.cfs_quota_us where the cpu controller is on v1): the kits' slow device."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from mobitrace.capture.command import read

V2, V1 = Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/cpu")


def available() -> bool:
    return "cpu" in (read(V2 / "cgroup.controllers") or "").split() or (V1 / "cpu.cfs_quota_us").exists()


class CpuLimit:
    def __init__(self, name: str, fraction: float, period_us: int = 100_000, core: int | None = None,
                 min_quota_us: int = 1000):
        self.fraction, self.period_us, self.core = fraction, period_us, core
        self.quota_us = max(min_quota_us, int(round(fraction * period_us)))
        if "cpu" in (read(V2 / "cgroup.controllers") or "").split():
            self.v2, self.path = True, V2 / name
            self.mechanism = "cgroup v2 cpu.max"
        elif (V1 / "cpu.cfs_quota_us").exists():
            self.v2, self.path = False, V1 / name
            self.mechanism = "cgroup v1 cpu.cfs_quota_us/cpu.cfs_period_us (cpu controller on v1)"
        else:
            raise RuntimeError("no cgroup cpu controller (v2 cpu.max or v1 cpu.cfs_quota_us) found")

    def create(self) -> "CpuLimit":
        if self.v2 and "cpu" not in (read(V2 / "cgroup.subtree_control") or "").split():
            (V2 / "cgroup.subtree_control").write_text("+cpu")
        self.path.mkdir(exist_ok=True)
        self.limit(True)
        return self

    def limit(self, on: bool) -> None:
        """Apply the quota (on) or lift it (off)."""
        if self.v2:
            (self.path / "cpu.max").write_text(f"{self.quota_us if on else 'max'} {self.period_us}\n")
        else:
            (self.path / "cpu.cfs_period_us").write_text(f"{self.period_us}\n")
            (self.path / "cpu.cfs_quota_us").write_text(f"{self.quota_us if on else -1}\n")

    def stat(self) -> dict:
        text = read(self.path / "cpu.stat") or ""
        return {k: int(v) for k, v in (line.split() for line in text.splitlines() if line.strip())}

    def limits(self) -> dict:
        if self.v2:
            return {"path": str(self.path), "cpu.max": read(self.path / "cpu.max")}
        return {"path": str(self.path), "cpu.cfs_quota_us": read(self.path / "cpu.cfs_quota_us"),
                "cpu.cfs_period_us": read(self.path / "cpu.cfs_period_us")}

    def enter(self):
        """A preexec function: the child joins the cgroup (pinned to `core`)."""
        path, core = self.path, self.core

        def join():
            (path / "cgroup.procs").write_text(f"{os.getpid()}\n")
            if core is not None:
                os.sched_setaffinity(0, {core})
        return join

    def remove(self) -> None:
        """Kill what is left in the cgroup, then remove it."""
        for _ in range(50):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                for pid in (read(self.path / "cgroup.procs") or "").split():
                    try:
                        os.kill(int(pid), signal.SIGKILL)
                    except OSError:
                        pass
                time.sleep(0.1)

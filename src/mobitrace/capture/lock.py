"""The machine-wide measurement lock: an exclusive flock on the file given
by a kit's --lock, so that measured runs of different kits never overlap.
Without a path every call is a no-op (the kit runs unlocked)."""

from __future__ import annotations

import fcntl
import os
import time


class MeasurementLock:
    def __init__(self, path: str | os.PathLike | None, log=None):
        self.path = os.fspath(path) if path else None
        self.log = log
        self.fd: int | None = None
        self.since = 0.0
        self.held_s = 0.0      # total time held, over every hold
        self.waited_s = 0.0    # total time spent waiting for it

    @property
    def held(self) -> bool:
        return self.fd is not None

    def acquire(self) -> float:
        """Take the lock (blocking) unless held; returns the seconds waited."""
        if self.path is None or self.fd is not None:
            return 0.0
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        t0 = time.monotonic()
        if self.log:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                self.log(f"waiting for the measurement lock {self.path}")
                fcntl.flock(fd, fcntl.LOCK_EX)
        else:
            fcntl.flock(fd, fcntl.LOCK_EX)
        self.fd, self.since = fd, time.monotonic()
        waited = self.since - t0
        self.waited_s += waited
        return waited

    def release(self) -> None:
        if self.fd is None:
            return
        self.held_s += time.monotonic() - self.since
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)
        self.fd = None

    def release_if_held(self, longer_than_s: float, pause_s: float = 0.0) -> bool:
        """Let other kits have the machine once this hold is older than
        `longer_than_s` (then sleep `pause_s` so a waiter gets its turn)."""
        if self.fd is None or time.monotonic() - self.since < longer_than_s:
            return False
        self.release()
        time.sleep(pause_s)
        return True

    def __enter__(self):
        self.acquire()
        return self

    def __exit__(self, *exc):
        self.release()

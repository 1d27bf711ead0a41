"""Wall time of each pipeline command, for the reproducibility page.

Kept in .mobitrace/timings.json (untracked: times differ run to run, so they
are never a pipeline output), keyed by the command line as dvc.yaml writes it.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from datetime import datetime, timezone
from pathlib import Path

TIMINGS = Path(".mobitrace") / "timings.json"


def load(root: Path) -> dict:
    path = root / TIMINGS
    try:
        return json.loads(path.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return {}


def record(root: Path, command: str, seconds: float) -> None:
    """Store the wall time of `command` (the last run wins). Stages may run
    side by side (mobitrace.repro): the read-modify-write holds a lock, so
    none loses another's entry."""
    path = root / TIMINGS
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        timings = load(root)
        timings[command] = {"wall_s": round(seconds, 3),
                            "finished_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(timings, indent=2, sort_keys=True) + "\n")
        tmp.replace(path)


class Stopwatch:
    def __enter__(self):
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.start
        return False

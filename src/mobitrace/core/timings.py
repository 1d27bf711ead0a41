"""Wall time of each pipeline command, for the reproducibility page.

Kept in .mobitrace/timings.json (untracked: times differ run to run, so they
are never a pipeline output), keyed by the command line as dvc.yaml writes it.
"""

from __future__ import annotations

import json
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
    """Store the wall time of `command` (the last run wins)."""
    timings = load(root)
    timings[command] = {"wall_s": round(seconds, 3),
                        "finished_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
    path = root / TIMINGS
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(timings, indent=2, sort_keys=True) + "\n")
    tmp.replace(path)


class Stopwatch:
    def __enter__(self):
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.start
        return False

"""Print the fuzz counts, the slowest example and the peak memory at the end
of a run that fuzzed (and write them to $MOBITRACE_FUZZ_REPORT as JSON).

Under pytest-xdist each worker fuzzes some of the tests: it hands its
counts to the controller (workeroutput), which adds them up and prints them
(tests/conftest.py calls `merge` and `report`)."""

from __future__ import annotations

import json
import os
import sys


def _fuzz():
    fuzz = sys.modules.get("tests.hostile.test_fuzz")
    return fuzz if fuzz is not None and fuzz.STATS["examples"] else None


def pytest_sessionfinish(session):
    fuzz = _fuzz()
    if fuzz is not None and hasattr(session.config, "workeroutput"):  # an xdist worker
        session.config.workeroutput["fuzz"] = {"profile": fuzz.PROFILE, "stats": fuzz.STATS}


def merge(into: dict | None, part: dict) -> dict:
    """Two workers' fuzz figures as one: counts add up, the maxima stay."""
    if into is None:
        return {"profile": part["profile"], "stats": json.loads(json.dumps(part["stats"]))}
    a, b = into["stats"], part["stats"]
    for key in ("examples", "outcomes"):
        for k, n in b[key].items():
            a[key][k] = a[key].get(k, 0) + n
    for key in ("slowest", "slowest_wall", "peak_bytes"):
        if b[key][0] > a[key][0]:
            a[key] = b[key]
    return into


def in_process() -> dict | None:
    fuzz = _fuzz()
    return None if fuzz is None else {"profile": fuzz.PROFILE, "stats": fuzz.STATS}


def report(tr, figures: dict) -> None:
    profile, stats = figures["profile"], figures["stats"]
    total = sum(stats["examples"].values())
    tr.section(f"hostile-input fuzzing (profile {profile})")
    for key, n in sorted(stats["examples"].items()):
        tr.write_line(f"{n:7d}  {key}")
    tr.write_line(f"{total:7d}  examples in all")
    for outcome, n in sorted(stats["outcomes"].items()):
        tr.write_line(f"{n:7d}  {outcome}")
    tr.write_line(f"slowest example: {stats['slowest'][0]} s CPU ({stats['slowest'][1]})")
    tr.write_line(f"slowest example: {stats['slowest_wall'][0]} s wall ({stats['slowest_wall'][1]})")
    tr.write_line(f"peak memory of an example: {stats['peak_bytes'][0] / 2**20:.1f} MB "
                  f"({stats['peak_bytes'][1]})")
    if os.environ.get("MOBITRACE_FUZZ_REPORT"):
        with open(os.environ["MOBITRACE_FUZZ_REPORT"], "w") as fh:
            json.dump({"profile": profile, "total": total, **stats}, fh, indent=1, default=str)

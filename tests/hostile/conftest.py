"""Print the fuzz counts, the slowest example and the peak memory at the end
of a run that fuzzed (and write them to $MOBITRACE_FUZZ_REPORT as JSON)."""

from __future__ import annotations

import json
import os
import sys


def pytest_terminal_summary(terminalreporter):
    fuzz = sys.modules.get("tests.hostile.test_fuzz")
    if fuzz is None or not fuzz.STATS["examples"]:
        return
    stats = fuzz.STATS
    total = sum(stats["examples"].values())
    tr = terminalreporter
    tr.section(f"hostile-input fuzzing (profile {fuzz.PROFILE})")
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
            json.dump({"profile": fuzz.PROFILE, "total": total, **stats}, fh, indent=1, default=str)

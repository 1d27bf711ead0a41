#!/usr/bin/env python3
"""Memory benchmark of the power-trace parser (not a test: it takes minutes).

Writes a synthetic power-meter trace of about --size-mb MB to a temporary
file (`time,power` in s and W, 1 kHz, a 1 W base with a 2 W square wave),
then, each in a fresh child process, (a) streams it through
power_traces.iter_chunks into energy.StreamingWindows (the base window and
a transfer window) and (b) loads it whole with read_trace, and reports the
peak RSS of each child (getrusage ru_maxrss) and its wall time. The file is
removed at the end. Synthetic data, for memory only.

    python scripts/bench_power_trace_memory.py [--size-mb 1024] [--dir /tmp]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

CHILD = r"""
import sys, time, resource
from mobitrace.energy import integrals as energy
from mobitrace.energy import power_traces as pt
path, mode = sys.argv[1], sys.argv[2]
spec = pt.spec_from_manifest({"format": "power-meter", "units": {"time": "s", "power": "W"}, "max_gap_s": 0.01})
t0 = time.monotonic()
if mode == "stream":
    sw = energy.StreamingWindows([(0.0, 10.0), (10.0, float(sys.argv[3]))])
    rows = 0
    for t, p in pt.iter_chunks(path, spec):
        sw.feed(t, p)
        rows += len(t)
    base = sw.integral(0) / 10.0
    e_d = sw.integral(1) - base * (float(sys.argv[3]) - 10.0)
    out = f"rows={rows} base_w={base:.4f} E_d_j={e_d:.1f}"
else:
    tr = pt.read_trace(path, spec)
    out = f"rows={len(tr.t_s)} base_w={energy.base_power(tr.t_s, tr.power_w, 0.0, 10.0):.4f}"
print(out, f"wall_s={time.monotonic() - t0:.1f}",
      f"peak_rss_mb={resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f}")
"""


def write_trace(path: Path, size_mb: float) -> int:
    """Write the synthetic trace (about size_mb MB) to path; return its sample count."""
    with open(path, "w") as fh:
        fh.write("time,power\n")
        block, i0 = 200_000, 0
        while fh.tell() < size_mb * 1e6:
            i = np.arange(i0, i0 + block)
            t = i / 1000.0
            p = 1.0 + 2.0 * ((i // 5000) % 2)
            fh.write("\n".join(f"{a:.3f},{b:.3f}" for a, b in zip(t.tolist(), p.tolist())) + "\n")
            i0 += block
    return i0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=float, default=1024)
    ap.add_argument("--dir", default=tempfile.gettempdir())
    args = ap.parse_args()
    fd, name = tempfile.mkstemp(prefix="mttt-bench-", suffix=".csv", dir=args.dir)
    os.close(fd)
    path = Path(name)
    try:
        i0 = write_trace(path, args.size_mb)
        t_end = (i0 - 1) / 1000.0
        size = path.stat().st_size
        print(f"synthetic trace: {path} {size / 1e6:.0f} MB, {i0} samples at 1 kHz")
        for mode in ("stream", "whole"):
            r = subprocess.run([sys.executable, "-c", CHILD, str(path), mode, f"{t_end - 1:.3f}"],
                               capture_output=True, text=True)
            print(f"{mode}: {(r.stdout or r.stderr).strip()}")
    finally:
        path.unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A progress line with ETA on stderr, one line per finished run (log
friendly: no carriage returns), e.g.

    [stack-trim] [#####...............]  12/48  25%  0:42 elapsed  ETA 2:06  lo-up-tcp r1 ok
"""

from __future__ import annotations

import sys
import time


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class Progress:
    def __init__(self, total: int, label: str, *, done: int = 0, stream=None, width: int = 20):
        self.total, self.label, self.width = max(0, int(total)), label, width
        self.done = self.start_done = done   # runs already done (a resumed session) do not set the pace
        self.stream = stream or sys.stderr
        self.t0 = time.monotonic()

    def eta_s(self) -> float | None:
        ran = self.done - self.start_done
        if ran <= 0:
            return None
        return (time.monotonic() - self.t0) / ran * max(0, self.total - self.done)

    def line(self, note: str = "") -> str:
        frac = self.done / self.total if self.total else 1.0
        bar = "#" * int(round(frac * self.width))
        eta = self.eta_s()
        text = (f"[{self.label}] [{bar:.<{self.width}}] {self.done:>{len(str(self.total))}}/{self.total} "
                f"{100 * frac:3.0f}%  {_clock(time.monotonic() - self.t0)} elapsed  "
                f"ETA {'?' if eta is None else _clock(eta)}")
        return f"{text}  {note}".rstrip()

    def step(self, note: str = "", n: int = 1) -> None:
        """Count `n` finished runs and print the line."""
        self.done += n
        print(self.line(note), file=self.stream, flush=True)

    def add(self, n: int) -> None:
        """The plan grew (e.g. a retried run)."""
        self.total += n

"""Straight lines through stated points: the CPU-vs-throughput model that a
paper's stated extrapolations imply.

A paper that says "CPU would hit 84% at 4 Gbps" and "50% CPU at 2.3 Gbps" has
committed to one line, y = a + b x, through both points:

    b = (y2 - y1) / (x2 - x1),    a = y1 - b x1.

Every other statement about the same line can then be checked against it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Line:
    """y = intercept + slope * x."""

    slope: float
    intercept: float

    @classmethod
    def through(cls, p1: tuple[float, float], p2: tuple[float, float]) -> "Line":
        """The line through two points (x1, y1) and (x2, y2); x1 != x2."""
        (x1, y1), (x2, y2) = p1, p2
        if x1 == x2:
            raise ValueError(f"two points with the same x = {x1} do not define a line")
        slope = (y2 - y1) / (x2 - x1)
        return cls(slope=slope, intercept=y1 - slope * x1)

    def predict(self, x):
        """y at x (scalar or numpy array)."""
        return self.intercept + self.slope * x

    def inverse(self, y):
        """x at which the line reaches y (inverse prediction)."""
        if self.slope == 0:
            raise ValueError("a flat line has no inverse")
        return (y - self.intercept) / self.slope

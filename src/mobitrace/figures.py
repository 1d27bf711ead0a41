"""Deterministic figure output: the same data give byte-identical SVG files."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# A fixed salt makes SVG element ids stable across runs; no date or creator.
matplotlib.rcParams["svg.hashsalt"] = "mobitrace"
matplotlib.rcParams["svg.fonttype"] = "path"
SVG_METADATA = {"Date": None, "Creator": None}


def save_svg(fig: "plt.Figure", path: str | Path) -> Path:
    """Save `fig` as deterministic SVG at `path` (parents created)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="svg", metadata=SVG_METADATA, bbox_inches="tight")
    return path

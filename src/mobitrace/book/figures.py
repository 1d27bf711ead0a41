"""The book's figures: one theme for every chapter, and deterministic SVG
(the same data give byte-identical files).

Importing this module applies the theme (seaborn, colour-blind-safe palette,
one font and size everywhere). Chapters draw with seaborn for statistical
figures and save with `save_svg`; anything random (bootstrap intervals) takes
`mobitrace.stats.resampling.SEED`.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import seaborn as sns  # noqa: E402

# Okabe-Ito via seaborn's "colorblind": distinguishable with every common
# colour-vision deficiency.
PALETTE = sns.color_palette("colorblind")
FIGSIZE = (7.0, 4.2)
SVG_METADATA = {"Date": None, "Creator": None}


def apply_theme() -> None:
    """Set the book's figure theme (called on import)."""
    sns.set_theme(context="notebook", style="whitegrid", palette=PALETTE, font="DejaVu Sans",
                  rc={
                      "figure.figsize": FIGSIZE,
                      "axes.titlesize": 12, "axes.labelsize": 11,
                      "xtick.labelsize": 10, "ytick.labelsize": 10, "legend.fontsize": 10,
                      "legend.frameon": False, "axes.spines.top": False, "axes.spines.right": False,
                      # A fixed salt makes SVG element ids stable across runs.
                      "svg.hashsalt": "mobitrace", "svg.fonttype": "path",
                  })


apply_theme()


def legend_outside(ax, title: str | None = None, below: bool = False) -> None:
    """Move the axes' legend outside the data (right of it, or below it), so
    no legend covers data."""
    if below:
        sns.move_legend(ax, "upper center", bbox_to_anchor=(0.5, -0.18), ncol=3, title=title, frameon=False)
    else:
        sns.move_legend(ax, "upper left", bbox_to_anchor=(1.02, 1.0), title=title, frameon=False)


@contextmanager
def layout_only_draws(fig: "plt.Figure"):
    """Within the block, ``fig.canvas.draw()`` lays the figure out without
    rasterizing it (Figure.draw_without_rendering). seaborn's heatmap draws
    the whole figure only to measure tick labels for overlap: the sizes are
    the same, the Agg rendering of every artist drawn so far is skipped."""
    fig.canvas.draw = fig.draw_without_rendering
    try:
        yield fig
    finally:
        del fig.canvas.draw


def save_svg(fig: "plt.Figure", path: str | Path) -> Path:
    """Save `fig` as deterministic SVG at `path` (parents created)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="svg", metadata=SVG_METADATA, bbox_inches="tight")
    return path

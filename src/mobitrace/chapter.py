"""What every chapter notebook does with its results, in one place: glue
numbers for the prose, save tables as CSV, show tables and SVG figures, and
write provenance boxes (the `{provenance}` directive of mobitrace.sphinxext).

A notebook makes one `ChapterOutputs(results_dir, stage)` and uses its
methods; every file it writes is deterministic (CSV with 6 significant
digits and \\n line ends, SVG through mobitrace.figures.save_svg).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .book import table_html
from .figures import save_svg

PROVENANCE_KINDS = ("measured", "published", "modeled")


def provenance_block(text: str, stage: str) -> str:
    """The MyST source of a provenance box; its kinds are the ones `text` names."""
    kinds = [k for k in PROVENANCE_KINDS if k in text.lower()]
    if not kinds:
        raise ValueError(f"provenance text names no kind of {PROVENANCE_KINDS}: {text!r}")
    return f"```{{provenance}} {', '.join(kinds)}\n:stage: {stage}\n\n{text}\n```"


class ChapterOutputs:
    """Tables go to <results_dir>/tables, figures to <results_dir>/figures;
    provenance boxes name `stage` (the dvc.yaml stage that runs the notebook)."""

    def __init__(self, results_dir: str | Path, stage: str):
        self.results_dir = Path(results_dir)
        self.tables_dir = self.results_dir / "tables"
        self.figures_dir = self.results_dir / "figures"
        self.tables_dir.mkdir(parents=True, exist_ok=True)
        self.figures_dir.mkdir(parents=True, exist_ok=True)
        self.stage = stage

    @staticmethod
    def put(name: str, value) -> None:
        """Glue a number for the prose (plain Python types format cleanly)."""
        from myst_nb import glue
        glue(name, value.item() if hasattr(value, "item") else value, display=False)

    def save_table(self, frame: pd.DataFrame, name: str) -> pd.DataFrame:
        """Write `frame` to tables/<name>.csv and return it."""
        frame.to_csv(self.tables_dir / f"{name}.csv", index=False, float_format="%.6g", lineterminator="\n")
        return frame

    @staticmethod
    def show(frame: pd.DataFrame, caption: str, digits: int = 4) -> None:
        """Display `frame` as deterministic plain HTML (mobitrace.book.table_html)."""
        from IPython.display import display
        display(table_html(frame, caption=caption, digits=digits))

    def provenance(self, text: str, stage: str | None = None) -> None:
        """Display a provenance box for `text` (it must name its kind)."""
        from IPython.display import Markdown, display
        display(Markdown(provenance_block(text, stage or self.stage)))

    def figure(self, fig, name: str) -> None:
        """Save `fig` as figures/<name>.svg, close it and display the file
        (returns nothing, so a cell that ends with it shows only the figure)."""
        import matplotlib.pyplot as plt
        from IPython.display import SVG, display
        path = save_svg(fig, self.figures_dir / f"{name}.svg")
        plt.close(fig)
        display(SVG(filename=str(path)))

"""The book: build it deterministically, and render tables for the chapters
as plain HTML that is the same bytes on every run (no random ids, no memory
addresses)."""

from __future__ import annotations

import html
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
from IPython.display import HTML

from . import timings


def build(book_dir: str | Path = "book") -> Path:
    """Write the reproducibility page, run `jupyter-book build` from a clean
    build folder (warnings are errors), then add the build machine's facts.

    The HTML is the same bytes for the same inputs: Sphinx's .buildinfo (it
    hashes absolute paths) is dropped, and what differs from run to run (wall
    times, the build machine) goes to _static/build-info.json, which
    .dvcignore keeps out of the output's hash and the page loads at view time.
    """
    from . import reproducibility

    book_dir = Path(book_dir)
    root = book_dir.resolve().parent
    with timings.Stopwatch() as watch:
        reproducibility.write_page(root, book_dir / "reproducibility.md")
        build_dir = book_dir / "_build"
        shutil.rmtree(build_dir, ignore_errors=True)
        jb = Path(sys.executable).with_name("jupyter-book")
        subprocess.run([str(jb), "build", str(book_dir), "--path-output", str(book_dir),
                        "--warningiserror", "--quiet"], check=True)
        html_dir = build_dir / "html"
        (html_dir / ".buildinfo").unlink(missing_ok=True)
    reproducibility.write_build_info(root, html_dir / "_static" / "build-info.json",
                                     book_seconds=watch.seconds)
    return html_dir


def table_html(frame: pd.DataFrame, caption: str | None = None, index: bool = False,
               digits: int = 4, html_columns: tuple[str, ...] = ()) -> HTML:
    """A DataFrame as an HTML table: floats to `digits` significant digits,
    missing values as an en dash, the index only when it carries labels.
    Every cell is escaped except those of `html_columns`, which the caller
    built as HTML (links) from escaped parts."""
    shown = frame.copy()
    for col in shown.columns:
        if col not in html_columns and not pd.api.types.is_numeric_dtype(shown[col]):
            shown[col] = shown[col].map(lambda x: html.escape(str(x), quote=False) if isinstance(x, str) else x)
    shown.columns = [html.escape(str(c), quote=False) for c in shown.columns]
    if index:
        shown.index = [html.escape(str(i), quote=False) for i in shown.index]
    body = shown.to_html(index=index, na_rep="–", float_format=lambda x: f"{x:.{digits}g}",
                         border=0, classes="dataframe mobitrace-table", escape=False)
    if caption:
        body = body.replace(">\n", f">\n  <caption>{html.escape(caption, quote=False)}</caption>\n", 1)
    return HTML(body)


def link(text: str, href: str) -> str:
    """An escaped HTML link, for a cell of one of table_html's html_columns."""
    return f'<a href="{html.escape(href)}">{html.escape(text, quote=False)}</a>'

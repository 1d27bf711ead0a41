"""The book: build it deterministically, and render tables for the chapters
as plain HTML that is the same bytes on every run (no random ids, no memory
addresses)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
from IPython.display import HTML


def build(book_dir: str | Path = "book") -> Path:
    """`jupyter-book build` from a clean build folder (warnings are errors),
    then drop Sphinx's .buildinfo: it hashes absolute paths, so the same book
    built in another checkout would differ by that file alone."""
    book_dir = Path(book_dir)
    build_dir = book_dir / "_build"
    shutil.rmtree(build_dir, ignore_errors=True)
    jb = Path(sys.executable).with_name("jupyter-book")
    subprocess.run([str(jb), "build", str(book_dir), "--path-output", str(book_dir),
                    "--warningiserror", "--quiet"], check=True)
    html = build_dir / "html"
    (html / ".buildinfo").unlink(missing_ok=True)
    return html


def table_html(frame: pd.DataFrame, caption: str | None = None, index: bool = False,
               digits: int = 4) -> HTML:
    """A DataFrame as an HTML table: floats to `digits` significant digits,
    missing values as an en dash, the index only when it carries labels."""
    body = frame.to_html(index=index, na_rep="–", float_format=lambda x: f"{x:.{digits}g}",
                         border=0, classes="dataframe mobitrace-table", escape=True)
    if caption:
        body = body.replace(">\n", f">\n  <caption>{_escape(caption)}</caption>\n", 1)
    return HTML(body)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")

"""Rendering helpers for the chapters: tables as plain HTML that is the same
bytes on every run (no random ids, no memory addresses)."""

from __future__ import annotations

import pandas as pd
from IPython.display import HTML


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

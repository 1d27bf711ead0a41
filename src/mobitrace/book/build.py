"""The book: build it deterministically, and render tables for the chapters
as plain HTML that is the same bytes on every run (no random ids, no memory
addresses)."""

from __future__ import annotations

import gc
import html
import re
import shutil
from pathlib import Path

from mobitrace.core import timings
from mobitrace.core import numbers
from mobitrace.core.escape import safe_href

# numpy, pandas and IPython are imported by the table helpers that use them:
# the build-book stage imports this module for `build` alone.


def build(book_dir: str | Path = "book") -> Path:
    """Write the reproducibility page, run `jupyter-book build` from a clean
    build folder (warnings are errors), then add the build machine's facts.

    The HTML is the same bytes for the same inputs: Sphinx's .buildinfo (it
    hashes absolute paths) is dropped, and what differs from run to run (wall
    times, the build machine) goes to _static/build-info.json, which
    .dvcignore keeps out of the output's hash and the page loads at view time.
    """
    from mobitrace.book import reproducibility

    book_dir = Path(book_dir)
    root = book_dir.resolve().parent
    with timings.Stopwatch() as watch:
        reproducibility.write_page(root, book_dir / "reproducibility.md")
        build_dir = book_dir / "_build"
        shutil.rmtree(build_dir, ignore_errors=True)
        # In this process: in a warm run (mobitrace.warm) Sphinx is loaded already.
        # Not --quiet: Sphinx's status lines (reading, writing, each page) are the stage's progress.
        from jupyter_book.cli.main import main as jupyter_book
        # Sphinx keeps every page's doctree alive; each full collection of the
        # cyclic GC rescans them all (about a sixth of the build's CPU). The
        # build is short and its process ends after it: no collector, and what
        # it left is frozen, not scanned once more (0.4 s) when GC is back on.
        collecting = gc.isenabled()
        gc.disable()
        try:
            jupyter_book.main(["build", str(book_dir), "--path-output", str(book_dir), "--warningiserror"],
                              prog_name="jupyter-book", standalone_mode=False)
        finally:
            gc.freeze()
            if collecting:
                gc.enable()
        html_dir = build_dir / "html"
        (html_dir / ".buildinfo").unlink(missing_ok=True)
        redirect_with_icon(html_dir / "index.html", book_dir / "_config.yml")
        copy_results(root / "data" / "results", html_dir / "results")
    reproducibility.write_build_info(root, html_dir / "_static" / "build-info.json",
                                     book_seconds=watch.seconds)
    return html_dir


P_VALUE_COLUMN = re.compile(r"^(p|p[-_ ]?values?|p_.*|.*_p|p \(.*)$", re.IGNORECASE)
LONG_TABLE_ROWS = 25
# A column of numbers as text ("3.12 [2.41, 3.92]", "< 0.0001", "0.01 to 0.2") aligns and stays on one line.
_NUMERIC_TEXT = re.compile(r"(?=.*\d)[\d\s.,−\-+<>≤≥~\[\]%×–]+")
SPREAD = 100  # a column whose magnitudes differ more than this shows significant figures per cell
ONE_ROW_COLUMNS = 4  # a one-row table wider than this is shown as field | value rows


def format_column(values: pd.Series, name: str, sig: int = 3) -> list[str]:
    """A column's cells as text for people (mobitrace.core.numbers): p-values
    as 0.0125 or < 0.0001, integers with thousands separators, other numbers
    with one number of decimals for the whole column; text unchanged."""
    import numpy as np
    import pandas as pd

    if pd.api.types.is_bool_dtype(values) or not pd.api.types.is_numeric_dtype(values):
        return [_cell(x, sig) for x in values]
    if P_VALUE_COLUMN.match(str(name)):
        return [numbers.p_value(x) for x in values]
    if not pd.api.types.is_integer_dtype(values):
        values = values.astype("float64")  # nullable floats: pd.NA becomes NaN
    finite = values[np.isfinite(values.astype(float))]
    if pd.api.types.is_integer_dtype(values) or (len(finite) and (finite == finite.round()).all()
                                                 and finite.abs().max() >= 1):
        return [numbers.number(None if _is_missing(x) else int(x)) for x in values]
    spread = finite[finite != 0].abs()
    if len(spread) and spread.max() >= SPREAD * spread.min():
        # magnitudes apart (374 Mbps beside a 0.229 ratio): each to `sig` figures, not 373.88 beside 0.23
        return [numbers.number(x, sig=sig) for x in values]
    places = numbers.column_decimals(values, sig)
    return [numbers.number(x, sig=sig, decimals=places) for x in values]


def _cell(x, sig: int) -> str:
    """One cell of a column of mixed types (a transposed table, a manifest's
    fields): each number to `sig` significant figures, flags as yes / no,
    lists joined, missing values as an en dash; text unchanged."""
    import numpy as np

    if isinstance(x, (bool, np.bool_)):
        return "yes" if x else "no"
    if isinstance(x, (list, tuple, np.ndarray)):
        return ", ".join(_cell(v, sig) for v in x) or numbers.MISSING
    if _is_missing(x):
        return numbers.MISSING
    if isinstance(x, (int, float, np.integer, np.floating)):
        return numbers.number(x, sig=sig)
    return str(x)


# Column names the analysis uses (snake_case) read as words, units in brackets.
_UNIT_WORDS = {"pct": "%", "gbps": "Gbps", "mbps": "Mbps", "kbps": "kbps", "mw": "mW", "w": "W", "mj": "mJ",
               "j": "J", "nj": "nJ", "s": "s", "ms": "ms", "us": "µs", "ghz": "GHz", "mhz": "MHz", "b": "B",
               "kb": "kB", "mb": "MB"}
_WORDS = {"cpu": "CPU", "rx": "Rx", "tx": "Tx", "udp": "UDP", "tcp": "TCP", "mptcp": "MPTCP", "gro": "GRO",
          "gso": "GSO", "tso": "TSO", "rps": "RPS", "sd": "SD", "ci": "CI", "holm": "(Holm)", "gbps": "Gbps",
          "mbps": "Mbps"}
_SNAKE = re.compile(r"^[a-z][a-z0-9.]*(?:_[a-z0-9.]+)+$")
_NUMBER_UNIT = re.compile(r"^([0-9.]+)(pct|gbps|mbps|mw|ghz|s|ms)$")


def reader_label(name) -> str:
    """A column's header for people: ``slope_pct_per_gbps`` -> ``slope (% per
    Gbps)``, ``cpu_pct_at_4gbps`` -> ``CPU at 4 Gbps (%)``, ``gbps_at_50pct_cpu``
    -> ``Gbps at 50% CPU``; a header that is not snake_case is unchanged."""
    name = str(name)
    if not _SNAKE.match(name):
        return name
    words, unit = [], None
    tokens = name.split("_")
    for i, token in enumerate(tokens):
        quantity = _NUMBER_UNIT.match(token)
        if quantity:
            value, u = quantity.groups()
            words.append(f"{value}{_UNIT_WORDS[u]}" if u == "pct" else f"{value} {_UNIT_WORDS[u]}")
        elif token in _UNIT_WORDS and i > 0 and unit is None and (i == len(tokens) - 1 or tokens[i + 1] in ("per", "at")):
            # A unit after the quantity it measures: "cpu_pct_at_4gbps", "slope_pct_per_gbps".
            rest = tokens[i + 1:]
            if rest and rest[0] == "per" and len(rest) == 2 and rest[1] in _UNIT_WORDS:
                unit = f"{_UNIT_WORDS[token]} per {_UNIT_WORDS[rest[1]]}"
                break
            unit = _UNIT_WORDS[token]
        else:
            words.append(_WORDS.get(token, token))
    text = " ".join(words)
    return f"{text} ({unit})" if unit else text


def _is_missing(x) -> bool:
    import pandas as pd

    try:
        return bool(pd.isna(x))
    except (TypeError, ValueError):
        return False


def with_interval(frame: pd.DataFrame, column: str, low: str, high: str, sig: int = 3,
                  label: str | None = None) -> pd.DataFrame:
    """`frame` with `column` shown as ``3.12 [2.41, 3.92]`` from the `low` and
    `high` columns (which are dropped), under `label` if given."""
    shown = frame.drop(columns=[low, high])
    shown[column] = [numbers.interval(e, lo, hi, sig=sig)
                     for e, lo, hi in zip(frame[column], frame[low], frame[high])]
    return shown.rename(columns={column: label}) if label else shown


def redirect_with_icon(index: Path, config: Path) -> None:
    """Jupyter Book's root index.html is a bare redirect to the first page;
    a browser then asks the server for /favicon.ico, a 404 in its console.
    Give it the book's icon (_config.yml html.favicon), as every page has."""
    from mobitrace.core.io import safe_yaml
    icon = ((safe_yaml(config.read_text(encoding="utf-8")) or {}).get("html") or {}).get("favicon")
    text = index.read_text(encoding="utf-8") if index.is_file() else ""
    if icon and 'http-equiv="Refresh"' in text and 'rel="icon"' not in text:
        index.write_text(f'<link rel="icon" href="{html.escape(icon)}">\n' + text.lstrip("\n"), encoding="utf-8")


RESULT_FILES = ("*.csv", "*.svg")


def copy_results(results: Path, target: Path) -> None:
    """Copy the tables (CSV) and figures (SVG) under data/results into the
    site, so chapters show figures and link full tables as ../results/..."""
    for pattern in RESULT_FILES:
        for path in sorted(results.rglob(pattern)):
            dst = target / path.relative_to(results)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dst)


def table_html(frame: pd.DataFrame, caption: str | None = None, index: bool = False,
               digits: int = 3, html_columns: tuple[str, ...] = (), csv_href: str | None = None,
               folded: bool = False) -> HTML:
    """A DataFrame as an HTML table for people: each numeric column formatted
    by format_column (`digits` significant figures for its typical value),
    missing values as an en dash, the index only when it carries labels.
    Every cell is escaped except those of `html_columns`, which the caller
    built as HTML (links) from escaped parts. The table scrolls sideways
    inside its box; over LONG_TABLE_ROWS rows (or when `folded`) it is
    collapsed, with the full CSV (`csv_href`) one click away."""
    import pandas as pd
    from IPython.display import HTML

    sig = min(digits, 4)
    esc = lambda x: html.escape(str(x), quote=False)  # noqa: E731
    columns = []  # (header, cells, is_numeric)
    if index:
        columns.append((esc(frame.index.name or ""), [esc(i) for i in frame.index], False))
    for position, col in enumerate(frame.columns):
        cells = frame.iloc[:, position]
        if col in html_columns:
            text = [str(x) for x in cells]
        else:
            text = format_column(cells, col, sig)
        is_num = ((pd.api.types.is_numeric_dtype(cells) and not pd.api.types.is_bool_dtype(cells))
                  or (col not in html_columns and _numbers_as_text(text)))
        if col not in html_columns:
            text = [esc(t) for t in text]
        columns.append((esc(reader_label(col)), text, is_num))
    num_class = {True: ' class="num"', False: ""}
    if len(frame) == 1 and len(columns) > ONE_ROW_COLUMNS:
        # One row of many fields reads down a phone's screen, not across it.
        lines = ['<table class="dataframe mobitrace-table mobitrace-fields">']
        if caption:
            lines.append(f"  <caption>{esc(caption)}</caption>")
        lines.append("  <tbody>")
        lines += [f'    <tr><th scope="row">{head}</th><td{num_class[num]}>{text[0]}</td></tr>'
                  for head, text, num in columns]
        lines.append("  </tbody>\n</table>")
        return _boxed("\n".join(lines), caption, len(frame), csv_href, folded)
    lines = ['<table class="dataframe mobitrace-table">']
    if caption:
        lines.append(f"  <caption>{esc(caption)}</caption>")
    lines.append("  <thead><tr>" + "".join(
        f'<th scope="col"{num_class[num]}>{head}</th>' for head, _, num in columns) + "</tr></thead>")
    lines.append("  <tbody>")
    for r in range(len(frame)):
        cells = []
        for c, (_, text, num) in enumerate(columns):
            tag = "th" if index and c == 0 else "td"
            scope = ' scope="row"' if tag == "th" else ""
            cells.append(f"<{tag}{scope}{num_class[num]}>{text[r]}</{tag}>")
        lines.append("    <tr>" + "".join(cells) + "</tr>")
    lines.append("  </tbody>\n</table>")
    return _boxed("\n".join(lines), caption, len(frame), csv_href, folded)


def _numbers_as_text(cells: list[str]) -> bool:
    texts = [t.replace(" to ", " ") for t in cells if t != numbers.MISSING]
    return bool(texts) and all(_NUMERIC_TEXT.fullmatch(t) for t in texts)


def _boxed(body: str, caption: str | None, rows: int, csv_href: str | None, folded: bool = False) -> HTML:
    """The table in its own sideways-scrolling box, collapsed when long,
    with its CSV link."""
    from IPython.display import HTML

    label = html.escape(caption or "table", quote=True)
    body = f'<div class="mobitrace-table-scroll" role="region" tabindex="0" aria-label="{label}">\n{body}\n</div>'
    download = (f'<p class="mobitrace-csv"><a href="{html.escape(safe_href(csv_href))}" download>'
                f"Download the full table (CSV)</a></p>") if csv_href else ""
    if folded or rows > LONG_TABLE_ROWS:
        summary = f"{html.escape(caption or 'Table', quote=False)}: {rows:,} rows (show)"
        body = f'<details class="mobitrace-long-table">\n<summary>{summary}</summary>\n{body}\n</details>'
    return HTML(body + ("\n" + download if download else ""))


def link(text: str, href: str) -> str:
    """An escaped HTML link, for a cell of one of table_html's html_columns
    (a target that is not a relative path or http(s) URL becomes "#")."""
    return f'<a href="{html.escape(safe_href(href))}">{html.escape(text, quote=False)}</a>'

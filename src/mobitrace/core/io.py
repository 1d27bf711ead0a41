"""Where the project is (repo_root), and writing outputs: a folder appears
whole or not at all."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import yaml

from mobitrace.core.errors import InputError

ROOT_FILES = ("dvc.yaml", "params.yaml")


def repo_root(start: Path | None = None) -> Path:
    """The folder holding dvc.yaml and params.yaml, searched upwards. (Here,
    not in mobitrace.notebooks: the CLI's ingest commands need it
    without importing papermill.)"""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if all((folder / f).exists() for f in ROOT_FILES):
            return folder
    raise InputError(here, None, None, f"a mobitrace project ({' and '.join(ROOT_FILES)} here or above)", "none")


def safe_yaml(text: str):
    """yaml.safe_load(text), with libyaml's parser when PyYAML is built with
    it: the same data, ~10x faster (dvc.lock, dvc.yaml, read on every run)."""
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def write_metrics(path: str | Path, doc: dict) -> None:
    """Write a metrics.json as `dvc metrics show` reads it and git diffs
    it: sorted keys, 2-space indent, final newline."""
    Path(path).write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")


@contextmanager
def replacing_dir(out_dir: str | Path) -> Iterator[Path]:
    """Yield a temporary sibling of `out_dir` to write into; when the block
    ends normally it replaces `out_dir` as a whole (a rename), and on any
    error nothing is left behind (not even a partial `out_dir`)."""
    out_dir = Path(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
        yield tmp
        shutil.rmtree(out_dir, ignore_errors=True)
        tmp.rename(out_dir)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def problems(check: Callable[[Path], object], folder: Path) -> list[InputError]:
    """`check(folder)`'s InputError as a list (empty when it passes): a
    `validate_session` for studies whose session reader stops at the first
    problem. Its per-file pandera checks run once per table, as in ingest
    (table_checks.checked_once: the same first error)."""
    from mobitrace.core.table_checks import checked_once

    try:
        with checked_once():
            check(folder)
    except InputError as exc:
        return [exc]
    return []


# A spreadsheet runs a cell that starts with one of these as a formula
# (OWASP, CSV injection): a text cell gets a leading ' so it stays text.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _runs_as_formula(value) -> bool:
    """Whether a spreadsheet would take this text cell for a formula: it
    starts with one of FORMULA_START and is more than a lone sign or a
    number (a relation "=" or a value "-1.5" stays as it is)."""
    if not isinstance(value, str) or not value.startswith(FORMULA_START):
        return False
    if value in ("=", "+", "-"):
        return False
    try:
        float(value)
    except ValueError:
        return True
    return value[0] in "\t\r"


def csv_text(frame) -> str:
    """`frame` as the CSV every published table uses: deterministic floats,
    '\\n' line ends, and text cells that a spreadsheet would take for a
    formula neutralised (numeric columns keep their numbers)."""
    import pandas as pd

    safe = frame.copy()
    for column in safe.columns:
        values = safe[column]
        if pd.api.types.is_object_dtype(values) or pd.api.types.is_string_dtype(values):
            safe[column] = values.map(lambda v: "'" + v if _runs_as_formula(v) else v)
    return safe.to_csv(index=False, float_format="%.6g", lineterminator="\n")


def write_csv(frame, path: str | Path) -> None:
    Path(path).write_text(csv_text(frame), encoding="utf-8")

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
    raise FileNotFoundError(f"no {' and '.join(ROOT_FILES)} in {here} or above")


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
    (capture_reader.checked_once: the same first error)."""
    from mobitrace.core.capture_reader import checked_once

    try:
        with checked_once():
            check(folder)
    except InputError as exc:
        return [exc]
    return []

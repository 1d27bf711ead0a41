"""Where a result comes from, read from dvc.lock: the source files (raw
captures and published numbers) behind a stage, with the hashes DVC pinned,
and the command that rebuilds it."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from mobitrace.core.io import safe_yaml


# Inputs that are data, not code: what a figure or table is computed from.
SOURCE_ROOTS = ("data/raw/", "data/published/")


@dataclass(frozen=True)
class Source:
    path: str
    md5: str
    size: int | None
    nfiles: int | None


def load_lock(path: str | Path = "dvc.lock") -> dict:
    """The `stages` mapping of a dvc.lock file (schema 2.0). Read-only: the
    parse is cached per file version, since every provenance box of the book
    asks for it (parsing it per box was 60 of the book build's 73 s)."""
    path = Path(path).resolve()
    st = path.stat()
    return _parsed_lock(str(path), st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=4)
def _parsed_lock(path: str, mtime_ns: int, size: int) -> dict:
    """dvc.lock's stages; the file's version (mtime, size) is part of the key."""
    lock = safe_yaml(Path(path).read_text(encoding="utf-8")) or {}
    return lock.get("stages", {})


def _is_source(path: str) -> bool:
    return any(path == root.rstrip("/") or path.startswith(root) for root in SOURCE_ROOTS)


def sources(stages: dict, stage: str) -> list[Source]:
    """The data sources behind `stage`: its dependencies under data/raw or
    data/published, and those of every stage upstream that produced one of its
    dependencies; sorted by path."""
    if stage not in stages:
        raise KeyError(f"dvc.lock has no stage {stage!r} (run `dvc repro` first)")
    producer = {out["path"]: name for name, entry in stages.items() for out in entry.get("outs", [])}
    found: dict[str, Source] = {}
    seen: set[str] = set()
    todo = [stage]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for dep in stages[name].get("deps", []):
            path = dep["path"]
            if _is_source(path):
                found[path] = Source(path, dep.get("md5", ""), dep.get("size"), dep.get("nfiles"))
            for out_path, upstream in producer.items():
                if path == out_path or path.startswith(out_path.rstrip("/") + "/") or out_path.startswith(path.rstrip("/") + "/"):
                    todo.append(upstream)
    return [found[p] for p in sorted(found)]


def lock_sources(path: str | Path, stage: str) -> list[Source]:
    """sources() of `stage` in the dvc.lock at `path`, computed once per
    file version and stage (the book asks once per provenance box, and
    several boxes share a stage)."""
    path = Path(path).resolve()
    st = path.stat()
    return list(_lock_sources(str(path), st.st_mtime_ns, st.st_size, stage))


@functools.lru_cache(maxsize=256)
def _lock_sources(path: str, mtime_ns: int, size: int, stage: str) -> tuple[Source, ...]:
    return tuple(sources(_parsed_lock(path, mtime_ns, size), stage))


def rebuild_command(stage: str) -> str:
    """The command that rebuilds a stage and everything it needs."""
    return f"dvc repro {stage}"

"""A session writer: a session is written into `<session>.partial/` and
renamed to `<session>/` when the kit finishes it (a rename is atomic: a
crash leaves only `.partial`, never a half-written session). A resumable
kit reopens `.partial` (or a finished session, which it renames back) and
carries on; others start afresh. Every manifest gets `schema: 2`."""

from __future__ import annotations

import csv
import gzip
import io
import os
import shutil
from pathlib import Path

import yaml

from mobitrace.capture.host import SCHEMA


class SessionExists(FileExistsError):
    pass


def atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def gzip_bytes(data: bytes, level: int = 9) -> bytes:
    """gzip with mtime 0 (the same bytes for the same content)."""
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, compresslevel=level) as fh:
        fh.write(data)
    return buf.getvalue()


class SessionWriter:
    def __init__(self, device_dir: str | Path, session: str, *, resume: bool = False,
                 keep_partial: bool = True):
        """`device_dir`/`session`; `resume`: a kit that continues a session;
        `keep_partial`: on an exception (or signal) leave `.partial` for a
        resume (False: remove it)."""
        self.final = Path(device_dir) / session
        self.partial = self.final.with_name(session + ".partial")
        self.resume, self.keep_partial = resume, keep_partial
        self.finished = False

    @property
    def dir(self) -> Path:
        return self.final if self.finished else self.partial

    def open(self) -> "SessionWriter":
        if self.final.exists():
            if not self.resume:
                raise SessionExists(f"{self.final} exists; raw captures are immutable")
            self.final.rename(self.partial)  # reopened: not a finished session until finish()
        elif self.partial.exists() and not self.resume:
            shutil.rmtree(self.partial)  # left by a crash of a kit that does not resume
        self.partial.mkdir(parents=True, exist_ok=True)
        return self

    def path(self, *parts: str) -> Path:
        return self.partial.joinpath(*parts)

    def mkdir(self, *parts: str, fresh: bool = False) -> Path:
        """A folder inside the session (emptied first with fresh=True)."""
        d = self.path(*parts)
        if fresh and d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True, exist_ok=True)
        return d

    def write(self, rel: str, data: str | bytes, *, gz: bool = False) -> Path:
        """Write a file atomically (`rel` + '.gz', gzipped, with gz=True)."""
        data = data.encode() if isinstance(data, str) else data
        path = self.path(rel + (".gz" if gz else ""))
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, gzip_bytes(data) if gz else data)
        return path

    def read_manifest(self, name: str = "manifest.yaml") -> dict:
        path = self.path(name)
        return (yaml.safe_load(path.read_text()) or {}) if path.exists() else {}

    def write_manifest(self, doc: dict, name: str = "manifest.yaml", width: int = 120) -> Path:
        """The manifest with `schema: 2` (after `study`, else first)."""
        out, placed = {}, False
        for k, v in doc.items():
            if k == "schema":
                continue
            out[k] = v
            if k == "study":
                out["schema"], placed = SCHEMA, True
        if not placed:
            out = {"schema": SCHEMA, **out}
        return self.write(name, yaml.safe_dump(out, sort_keys=False, width=width))

    def read_rows(self, name: str) -> list[dict]:
        path = self.path(name)
        if not path.exists():
            return []
        with path.open(newline="") as fh:
            return list(csv.DictReader(fh))

    def write_rows(self, name: str, fields: list[str], rows: list[dict]) -> Path:
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
        return self.write(name, buf.getvalue())

    def append_row(self, name: str, fields: list[str], row: dict) -> None:
        path = self.path(name)
        new = not path.exists()
        with path.open("a", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=fields, lineterminator="\n")
            if new:
                w.writeheader()
            w.writerow(row)

    def finish(self) -> Path:
        """Rename `.partial` to the session's name: the session is done."""
        os.replace(self.partial, self.final)
        self.finished = True
        return self.final

    def discard(self) -> None:
        shutil.rmtree(self.partial, ignore_errors=True)

    def __enter__(self) -> "SessionWriter":
        return self.open()

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None and not self.finished and not self.keep_partial:
            self.discard()

"""The hash DVC pins for a device's raw capture folder, written by ingest
beside its parquet (data/interim/raw-hashes/<study>/<device>.json).

The book prints every raw folder's hash (its reproducibility page, the
provenance boxes) from dvc.lock, so it must rebuild when one changes. It
depends on these small files, not on data/raw itself: DVC would otherwise
hash all of data/raw's files again before and after each book build.

The value is DVC's own for a folder: the md5 of the JSON list of its files'
md5s and relative paths, with ".dir" appended (dvc_data's Tree.as_bytes),
with the folder's size and file count, as dvc.lock writes them.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from mobitrace.core import capture_reader


def folder_hash(folder: str | Path) -> dict:
    """{"md5", "size", "nfiles"} of the regular files under `folder`, as DVC
    computes them for a directory dependency, read with the capture reader
    (regular files only, within its limits)."""
    files = capture_reader.check_capture(folder)
    entries = [{"md5": capture_reader.md5_raw(p), "relpath": p.relative_to(folder).as_posix()} for p in files]
    entries.sort(key=lambda e: e["relpath"])
    listing = json.dumps(entries, sort_keys=True).encode("utf-8")
    return {"md5": hashlib.md5(listing).hexdigest() + ".dir", "size": sum(p.stat().st_size for p in files),
            "nfiles": len(entries)}


def write(folder: str | Path, out: str | Path) -> Path:
    """Write `folder`'s hash to `out` (whole or not at all)."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"path": Path(folder).as_posix(), **folder_hash(folder)}, indent=2) + "\n"
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    return out

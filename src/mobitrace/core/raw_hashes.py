"""The hash DVC pins for a device's raw capture folder, written by ingest
beside its parquet (data/interim/raw-hashes/<study>/<device>.json).

The book prints every raw folder's hash (its reproducibility page, the
provenance boxes) from dvc.lock, so it must rebuild when one changes. It
depends on these small files, not on data/raw itself: DVC would otherwise
hash all of data/raw's files again before and after each book build.

The value is DVC's own for a folder, made by DVC's own code (dvc_data's
Tree of the files' md5s), with the folder's size and file count, as
dvc.lock writes them; only the files are read here, through the capture
reader.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from mobitrace.core import capture_reader


def folder_hash(folder: str | Path) -> dict:
    """{"md5", "size", "nfiles"} of the regular files under `folder`, as DVC
    computes them for a directory dependency, read with the capture reader
    (regular files only, within its limits)."""
    from dvc_data.hashfile.hash_info import HashInfo
    from dvc_data.hashfile.tree import Tree

    files = capture_reader.check_capture(folder)
    tree = Tree()
    for p in files:
        tree.add(p.relative_to(folder).parts, None, HashInfo("md5", capture_reader.md5_raw(p)))
    tree.digest()
    return {"md5": tree.hash_info.value, "size": sum(p.stat().st_size for p in files), "nfiles": len(files)}


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

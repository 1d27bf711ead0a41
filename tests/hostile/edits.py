"""One hostile edit applied to a valid capture (tests/hostile/cases.yaml and
the fuzzing in test_fuzz.py). Text edits work on the decompressed content of
.gz files and compress it again, so that the edit reaches the parser."""

from __future__ import annotations

import gzip
import json
import os
import random
import shutil
from pathlib import Path

import yaml

ALIAS_BOMB = "".join(
    ["lol0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"]
    + [f"lol{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 9)])


def text_of(path: Path) -> str:
    raw = path.read_bytes()
    return (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("utf-8")


def write_text(path: Path, text: str | bytes) -> None:
    """Write `text`, gzip-compressed when the original was (or the name says so)."""
    data = text.encode() if isinstance(text, str) else text
    was_gz = path.name.endswith(".gz") or (path.exists() and path.read_bytes()[:2] == b"\x1f\x8b")
    path.write_bytes(gzip.compress(data, mtime=0) if was_gz and data else data)


def _dotted(doc, key: str):
    *parents, last = key.split(".")
    for p in parents:
        doc = doc[int(p)] if isinstance(doc, list) else doc[p]
    return doc, (int(last) if isinstance(doc, list) else last)


def _value(value):
    """Values YAML can't say in the case file: {inf: 1} -> inf, {nan: 1} -> nan,
    {int: 'digits'} -> a big int, {nest: n} -> n nested lists."""
    if isinstance(value, dict) and len(value) == 1:
        (k, v), = value.items()
        if k == "inf":
            return float("inf") * v
        if k == "nan":
            return float("nan")
        if k == "int":
            return int(v)
        if k == "repeat":                     # [text, n]: text n times (a huge free-text field)
            return v[0] * v[1]
        if k == "nest":
            out = []
            for _ in range(v):
                out = [out]
            return out
    return value


def apply(case: dict, session: Path, outside: Path) -> None:
    """Apply the case's one edit to the valid capture at `session`.
    `outside` is a folder next to the capture (targets of links)."""
    path = session / case["file"]
    edit = case["edit"]
    kind, arg = next(iter(edit.items())) if isinstance(edit, dict) else (edit, None)
    if kind == "write":                       # replace the (decompressed) content
        write_text(path, arg)
    elif kind == "write_bytes":               # replace the stored bytes (latin-1 escapes)
        path.write_bytes(arg.encode("latin-1"))
    elif kind == "append":
        write_text(path, text_of(path) + arg)
    elif kind == "prepend_bytes":
        raw = text_of(path).encode()
        write_text(path, arg.encode("latin-1") + raw)
    elif kind == "replace":                   # [old, new] first occurrence
        old, new = arg
        text = text_of(path)
        assert old in text, f"{case['id']}: {old!r} not in {path}"
        write_text(path, text.replace(old, new, 1))
    elif kind == "replace_bytes":             # [old, new] in the decompressed bytes (latin-1)
        old, new = (s.encode("latin-1") for s in arg)
        raw = text_of(path).encode()
        assert old in raw, f"{case['id']}: {old!r} not in {path}"
        write_text(path, raw.replace(old, new, 1))
    elif kind == "json_deep":                 # a key with arg nested lists before the first one
        text = text_of(path)
        write_text(path, text.replace("{", '{"deep": ' + "[" * arg + "]" * arg + ", ", 1))
    elif kind == "yaml_set":                  # {dotted.key: value}
        doc = yaml.safe_load(text_of(path))
        for key, value in arg.items():
            parent, last = _dotted(doc, key)
            parent[last] = _value(value)
        write_text(path, yaml.safe_dump(doc, sort_keys=False))
    elif kind == "json_set":                  # {key: value} at the top level
        doc = json.loads(text_of(path))
        doc.update({k: _value(v) for k, v in arg.items()})
        write_text(path, json.dumps(doc))
    elif kind == "symlink":                   # the file becomes a link to arg ({outside} allowed)
        target = arg.format(outside=outside)
        path.unlink()
        os.symlink(target, path)
    elif kind == "fifo":
        path.unlink()
        os.mkfifo(path)
    elif kind == "hardlink":                  # a second name for the file, outside the capture
        outside.mkdir(exist_ok=True)
        os.link(path, outside / "second-name")
    elif kind == "folder":                    # the file becomes a folder
        path.unlink()
        path.mkdir()
    elif kind == "gzip_bomb":                 # arg MiB of zeros, gzip-compressed
        path.write_bytes(gzip.compress(b"0" * (arg << 20), compresslevel=9, mtime=0))
    elif kind == "truncate_gzip":             # keep the first arg bytes of the .gz
        path.write_bytes(path.read_bytes()[:arg])
    elif kind == "copy_to":                   # a duplicate under another name
        shutil.copyfile(path, session / arg)
    elif kind == "rename":
        path.rename(session / arg)
    elif kind == "delete":
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    elif kind == "long_line":                 # a line of arg bytes appended (gzip kept)
        digits = "".join(random.Random(0).choices("0123456789", k=arg))  # not a gzip bomb: a long line
        write_text(path, text_of(path) + digits + "\n")
    elif kind == "new_file":                  # a file the capture format does not name (folders made)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(arg)
    elif kind == "new_symlink":               # an extra link named `file` to arg
        target = arg.format(outside=outside)
        os.symlink(target, path)
    else:
        raise AssertionError(f"{case['id']}: unknown edit {kind}")

"""A capture is data, never code: the files it may hold are an allow-list.

A session folder holds only the files its study's format names
(`Study.capture_files`: paths relative to the session, `*` standing for one
run id, `name` and `name.gz` alike) and the folders on their way. Anything
else (a `dvc.yaml` whose command `dvc repro` would run, a `.dvc` import, a
`.dvcignore` or `.gitattributes` that changes what DVC or git see, a nested
`.git`) is refused in one line that names it, before anything is copied.

`check_raw_tree` is the second line of defence, run before any pipeline
command: data/raw holds the registered studies' device folders, their
session folders (each within its allow-list), and only the `<session>.dvc`
and `.gitignore` files that add-device writes for a session kept in DVC,
read with a strict schema.
"""

from __future__ import annotations

import functools
import os
import re
import stat
from pathlib import Path

from mobitrace.core import capture_reader
from mobitrace.core import safe_yaml
from mobitrace.core.errors import InputError, Plain

STAGING_PREFIX = ".staging-"  # add-device's own folders in data/raw (devices.STAGING_PREFIX)
# What `dvc add` writes for a session folder (DVC 3): one output, its folder's hash.
_DVC_OUT_KEYS = {"md5", "size", "nfiles", "hash", "path"}
_DIR_MD5 = re.compile(r"[0-9a-f]{32}\.dir")


# One run id as a path component: capture_reader.is_name, as a regular expression.
_ONE_NAME = r"(?!(?i:dvc\.(?:yaml|yml|lock))(?:/|\Z))(?![^/]*\.(?i:dvc|partial)(?:/|\Z))[A-Za-z0-9][A-Za-z0-9._-]{0,63}"


def _component(part: str, last: bool) -> str:
    if part == "*":
        return _ONE_NAME
    if last:  # `name` and `name.gz` are the same file to every reader
        return re.escape(part.removesuffix(".gz")) + r"(?:\.gz)?"
    return re.escape(part)


@functools.cache
def _layout(capture_files: tuple[str, ...]) -> tuple[re.Pattern, re.Pattern]:
    """(files, folders) a session may hold, as two expressions over the
    '/'-joined path relative to the session."""
    files, folders = [], set()
    for pattern in capture_files:
        parts = pattern.split("/")
        files.append("/".join(_component(p, i == len(parts) - 1) for i, p in enumerate(parts)))
        for n in range(1, len(parts)):
            folders.add("/".join(_component(p, False) for p in parts[:n]))
    return (re.compile("(?:" + "|".join(files) + r")\Z"),
            re.compile("(?:" + "|".join(sorted(folders) or ["(?!)"]) + r")\Z"))


def expected(study) -> str:
    shown = ", ".join(p.replace("*", "<run>") for p in study.capture_files)
    return f"only the files a {study.slug} capture holds ({shown}; each may be .gz)"


def check_session(session: str | Path, study) -> None:
    """Refuse (InputError) the first file or folder of `session` that the
    study's capture format does not name. The tree is checked by
    capture_reader.tree first (regular files and folders only, bounded)."""
    session = Path(session)
    dirs, files = capture_reader.tree(session)
    file_rule, folder_rule = _layout(tuple(study.capture_files))
    cut = len(str(session)) + 1
    entries = [(str(p)[cut:], p, True) for p in dirs] + [(str(p)[cut:], p, False) for p in files]
    # Sorted by path, folders before the files in them: the first bad entry is named.
    for rel, path, is_dir in sorted(entries, key=lambda e: e[0].split("/")):
        if not (folder_rule if is_dir else file_rule).match(rel):
            if is_dir and file_rule.match(rel):
                raise InputError(path, None, None, "a regular file", "a folder")
            raise InputError(path, None, None, expected(study),
                             Plain(f"{'a folder' if is_dir else 'a file'} it does not name"))


def looks_like(session: Path, declared, studies) -> str | None:
    """The other study of `studies` (the registry's) whose capture format
    `session`'s files fit, if one does (a manifest naming the wrong study)."""
    for study in studies:
        if study.slug != declared.slug and study.capture_files != ("manifest.yaml",):
            try:
                check_session(session, study)
                return study.slug
            except InputError:
                continue
    return None


def _read_dvc_file(path: Path) -> dict:
    """A `<session>.dvc` as add-device writes it: one output (the session
    folder beside it, by its .dir hash), nothing else: no command, no
    dependency, no import, no other key."""
    doc, _ = safe_yaml.load_yaml(path)
    want = "a .dvc file as add-device writes it (only outs: one session folder and its .dir hash)"
    if not isinstance(doc, dict) or set(doc) != {"outs"}:
        found = sorted(set(doc) - {"outs"}) if isinstance(doc, dict) else type(doc).__name__
        raise InputError(path, None, None, want, Plain(f"keys {found}") if isinstance(doc, dict) else found)
    outs = doc["outs"]
    if not isinstance(outs, list) or len(outs) != 1 or not isinstance(outs[0], dict):
        raise InputError(path, None, "outs", want, outs)
    out = outs[0]
    if not set(out) <= _DVC_OUT_KEYS or not {"md5", "path"} <= set(out):
        raise InputError(path, None, "outs", want, Plain(f"keys {sorted(out)}"))
    if out["path"] != path.name[:-4]:
        raise InputError(path, None, "outs.path", f"'{path.name[:-4]}' (the session beside it)", out["path"])
    if not isinstance(out["md5"], str) or not _DIR_MD5.fullmatch(out["md5"]):
        raise InputError(path, None, "outs.md5", "a folder's hash (32 hex digits + '.dir')", out["md5"])
    if out.get("hash", "md5") != "md5":
        raise InputError(path, None, "outs.hash", "'md5'", out["hash"])
    return out


def check_device_folder(device_dir: Path, study, sessions: bool = True) -> list[Path]:
    """The session folders of a device folder, after refusing any other
    entry: only sessions, and for a session kept in DVC its `<session>.dvc`
    and a `.gitignore` line `/<session>`. With `sessions`, each session's
    files are checked against the allow-list too."""
    found, dvc_kept = [], set()
    with os.scandir(device_dir) as it:
        entries = sorted(it, key=lambda e: e.name)
    for entry in entries:
        path = Path(entry.path)
        st = entry.stat(follow_symlinks=False)
        if stat.S_ISDIR(st.st_mode) and capture_reader.is_name(entry.name):
            found.append(path)
        elif stat.S_ISREG(st.st_mode) and entry.name.endswith(".dvc") and capture_reader.is_name(entry.name[:-4]):
            _read_dvc_file(path)
            dvc_kept.add(entry.name[:-4])
        elif not (stat.S_ISREG(st.st_mode) and entry.name == ".gitignore"):
            raise InputError(path, None, None, "only session folders (and add-device's .dvc and .gitignore "
                                               "for a session kept in DVC)", Plain(f"'{entry.name}'"))
    gitignore = device_dir / ".gitignore"
    if os.path.lexists(gitignore):
        for i, line in capture_reader.iter_lines(gitignore):
            if line.strip() and line.strip().removeprefix("/") not in dvc_kept:
                raise InputError(gitignore, f"line {i}", None, "only '/<session>' for a session kept in DVC",
                                 line.rstrip("\n"))
    if sessions:
        for session in found:
            check_session(session, study)
    return found


def check_raw_tree(root: str | Path, known: dict) -> None:
    """Refuse to build on a data/raw that holds anything a capture may not:
    every study folder is a study of `known` (the registry's, by slug), every
    device folder passes check_device_folder. add-device's live staging
    folders are skipped (their sessions were checked before they were copied there)."""
    raw = Path(root) / "data" / "raw"
    if not raw.is_dir():
        return
    with os.scandir(raw) as it:
        entries = sorted(it, key=lambda e: e.name)
    for entry in entries:
        path = Path(entry.path)
        is_dir = entry.is_dir(follow_symlinks=False)
        if is_dir and entry.name.startswith(STAGING_PREFIX):
            continue
        if not is_dir or entry.name not in known:
            raise InputError(path, None, None, f"only the studies' folders ({', '.join(sorted(known))})",
                             Plain(f"'{entry.name}'"))
        with os.scandir(path) as it:
            devices = sorted(it, key=lambda e: e.name)
        for device in devices:
            if not device.is_dir(follow_symlinks=False) or not capture_reader.is_name(device.name):
                raise InputError(device.path, None, None, f"only device folders ({capture_reader.NAME_RULE})",
                                 Plain(f"'{device.name}'"))
            check_device_folder(Path(device.path), known[entry.name])

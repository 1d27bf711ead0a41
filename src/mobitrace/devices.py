"""Bring your own device: validate a capture folder, register it as a device.

A capture is a session folder (`manifest.yaml` + the files the tools wrote)
as the capture kits write it: data/raw/<study>/<device>/<session>/. The
manifest's `study` field says which study's schemas apply.

`validate(path)` checks a session folder, or a device folder of sessions,
and returns every problem found (one InputError per bad file or run; a bad
manifest stops that session). `add_device(path, device)` validates, copies
the sessions into data/raw/<study>/<device>/ and appends the device to the
study's `devices` list in params.yaml, so that `dvc repro` runs that
device's stages plus the chapter that summarizes across devices. Nothing is
written when any problem is found, and the source folder is only read.

Big sessions are kept in DVC, not git: a session over params.yaml
`raw-storage.dvc_threshold_mb` (or every session with `storage="dvc"`) is
`dvc add`ed where it lands (<session>.dvc and a .gitignore entry beside it,
staged for git), its bytes go to the DVC cache and are pushed to the default
remote (.dvc/config) before params.yaml lists the device.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from mobitrace.core import capture_layout, capture_reader
from mobitrace.core import safe_yaml
from mobitrace import raw_storage
from mobitrace.core import host_info
from mobitrace.core.errors import InputError, Plain
from mobitrace.studies import registry
from mobitrace.studies.registry import Study


def _study(slug: str) -> Study:
    return registry.by_slug()[slug]


# One rule for device and session names (and run ids), checked before any
# path is built from them: capture_reader.NAME.
NAME = DEVICE_NAME = capture_reader.NAME
NAME_RULE = capture_reader.NAME_RULE


def check_name(value, path, field: str) -> str:
    """`value` when it is a string obeying NAME, else InputError."""
    return capture_reader.check_name(value, path, None, field)




def _nothing_but_maybe(doc: dict, key: str):
    """'nothing', naming a key of `doc` that looks like a misspelt `key`."""
    import difflib

    near = difflib.get_close_matches(key, [k for k in doc if isinstance(k, str)], n=1, cutoff=0.6)
    return Plain(f"nothing (is the key '{near[0]}' a misspelt '{key}'?)") if near else "nothing"


def manifest_study(path: Path) -> Study:
    """The study a session's manifest.yaml declares (device and session
    names checked against NAME)."""
    doc = safe_yaml.read_manifest(path)
    study = doc.get("study")
    known = registry.by_slug()
    if not isinstance(study, str) or study not in known:
        raise InputError(path, None, "study", f"one of {sorted(known)}",
                         study if study is not None else _nothing_but_maybe(doc, "study"))
    for key in ("device", "session"):
        if key not in doc:
            raise InputError(path, None, key, f"a {key} name", _nothing_but_maybe(doc, key))
        check_name(doc[key], path, key)
    return known[study]


def sessions_in(path: str | Path) -> list[Path]:
    """Session folders of `path`: the folder itself when it has a manifest,
    else its sub-folders that have one (a device folder). The whole tree is
    checked first (capture_reader.walk: no links, special files or excess)."""
    path = Path(path)
    capture_reader.check_capture(path)
    session = path.parent if path.name == "runs" else path.parent.parent if path.parent.name == "runs" else None
    if session is not None and os.path.lexists(session / "manifest.yaml"):
        raise InputError(path, None, None, "a session folder (manifest.yaml, runs/), or a device folder of them",
                         Plain(f"a part of the session {session}: pass that folder instead"))
    if os.path.lexists(path / "manifest.yaml"):
        return [path]
    found = capture_layout.check_device_folder(path, None, sessions=False)
    if not found:
        raise InputError(path, None, None, "a session folder with manifest.yaml, or a device folder of them",
                         "no manifest.yaml")
    for p in found:
        if not os.path.lexists(p / "manifest.yaml"):
            raise InputError(p / "manifest.yaml", None, None, "a session folder with manifest.yaml",
                             "no such file")
    return found


def _plain_yaml_string(value: str):
    """`value` for a ruamel dump that every YAML reader reads back as this
    string ('on', 'null', '007' are quoted)."""
    from ruamel.yaml.scalarstring import SingleQuotedScalarString

    try:
        same = yaml.safe_load(value) == value
    except yaml.YAMLError:
        same = False
    return value if same else SingleQuotedScalarString(value)


def _round_trip_yaml():
    from ruamel.yaml import YAML

    ry = YAML()
    ry.preserve_quotes = True
    ry.width = 4096
    return ry


def _copy_tree(src: Path, dest: Path, sync: bool) -> None:
    """Copy a checked session folder through the capture reader (regular
    files only; folders kept, empty ones too); when `sync`, on disk on return
    (one syncfs for the copy, not an fsync per file and folder: ~4 ms each)."""
    dirs, files = capture_reader.tree(src)
    dest.mkdir(parents=True)
    for d in dirs:
        (dest / d.relative_to(src)).mkdir(parents=True, exist_ok=True)
    for f in files:
        out = dest / f.relative_to(src)
        with open(out, "xb") as fh:
            capture_reader.copy_raw(f, fh)  # in chunks: a 2 GB capture stays out of memory
        if sync:  # add-device (validate's private copy is not a checkpoint)
            _checkpoint("file copied")
    if sync:
        _syncfs(dest)


def _stage(session: Path, device: str, staging: Path, sync: bool = False) -> Path:
    """Copy a session to staging/<device>/<session>, with the manifest's
    device set to `device` when it differs (the copy records the old name
    as registered_from_device), through a ruamel round trip."""
    check_name(device, session / "manifest.yaml", "device")
    check_name(session.name, session, "session folder")
    dest = staging / device / session.name
    _copy_tree(session, dest, sync)
    manifest = dest / "manifest.yaml"
    doc = safe_yaml.read_manifest(manifest)
    if doc.get("device") != device:
        ry = _round_trip_yaml()
        rt = ry.load(capture_reader.read_text(manifest))
        keys = list(rt.keys())
        old = rt["device"]
        rt["device"] = _plain_yaml_string(device)
        rt.insert(keys.index("device") + 1, "registered_from_device",
                  _plain_yaml_string(old) if isinstance(old, str) else old)
        _write_atomic(manifest, ry, rt, sync)
    return dest


def _write_atomic(path: Path, ry, doc, sync: bool) -> None:
    """Replace `path` by `doc` at once. The new content is written to an
    unnamed file (O_TMPFILE) that gets a name only to be renamed over
    `path`: a process killed while writing leaves nothing behind."""
    import io

    buf = io.StringIO()
    ry.dump(doc, buf)
    data = buf.getvalue().encode("utf-8")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(path.parent, os.O_TMPFILE | os.O_WRONLY, 0o644)
    except (AttributeError, OSError):  # no O_TMPFILE here: a named temporary file
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        named = True
    else:
        named = False
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if sync:
            os.fsync(fd)
        if not named:
            _link_open_file(fd, tmp)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    if sync:
        _fsync_dir(path.parent)


def _link_open_file(fd: int, path: Path) -> None:
    """Give the unnamed file open at `fd` the name `path`: linkat(2) with
    AT_SYMLINK_FOLLOW on /proc/self/fd/<fd> (os.link calls link(2), which
    would link the /proc entry itself)."""
    import ctypes
    import ctypes.util

    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    at_fdcwd, at_symlink_follow = -100, 0x400
    if libc.linkat(at_fdcwd, f"/proc/self/fd/{fd}".encode(), at_fdcwd, os.fsencode(path), at_symlink_follow) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), str(path))


def _remove_stale_temporaries(folder: Path, name: str) -> None:
    """.<name>.<pid>.tmp files of processes that are gone."""
    for stale in folder.glob(f".{name}.*.tmp"):
        pid = stale.name[len(name) + 2:-4]
        if pid.isdigit() and not _alive(int(pid)):
            stale.unlink(missing_ok=True)


def _syncfs(path: Path) -> None:
    """Every file and folder written so far on the file system of `path` on
    disk: syncfs(2) (Linux), else sync(2)."""
    import ctypes
    import ctypes.util

    syncfs = getattr(ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True), "syncfs", None)
    if syncfs is None:
        os.sync()
        return
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        if syncfs(fd) != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err), str(path))
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _checkpoint(name: str) -> None:
    """Fault injection for the atomicity test: MOBITRACE_KILL_AT=N kills this
    process (SIGKILL) at the N-th checkpoint of add-device."""
    at = os.environ.get("MOBITRACE_KILL_AT")
    if at is None:
        return
    _checkpoint.count = getattr(_checkpoint, "count", 0) + 1
    if _checkpoint.count == int(at):
        os.kill(os.getpid(), signal.SIGKILL)


def validate(path: str | Path, device: str | None = None,
             stage: Callable[[Path, str], Path] | None = None) -> tuple[Study | None, list[InputError]]:
    """Every problem of the capture sessions under `path` (see module doc).

    The sessions are checked as they would be ingested, laid out as
    <device>/<session>: in place when they already are, else in a copy in a
    private temporary folder, always removed, or in the copy that
    `stage(session, device)` returns (add-device's staging copy, which it
    then moves into place). Returns the study (None when the sessions
    disagree or none could be read) and the problems."""
    try:
        sessions = sessions_in(path)
        if device is not None:
            check_name(device, path, "device")
    except InputError as exc:
        return None, [exc]
    problems: list[InputError] = []
    studies = set()
    tmp = None
    in_raw_tree = False
    try:
        for session in sessions:
            try:
                study = manifest_study(session / "manifest.yaml")
            except InputError as exc:
                problems.append(exc)
                continue
            studies.add(study.slug)
            try:  # before any copy: a file the format does not name is never copied
                capture_layout.check_session(session, study)
            except InputError as exc:
                other = capture_layout.looks_like(session, study, registry.studies())
                problems.append(exc if other is None else InputError(
                    session / "manifest.yaml", None, "study", f"'{other}' (the files are a {other} capture's)",
                    study.slug))
                continue
            name = device or safe_yaml.read_manifest(session / "manifest.yaml")["device"]
            # In a data/raw/<study>/<device>/ tree the folder names the device
            # (as ingest requires); elsewhere the manifest (or --device) does.
            in_raw_tree = session.parent.parent.name == study.slug and device is None
            if in_raw_tree or session.parent.name == name:
                laid_out = session
            elif stage is not None:
                laid_out = stage(session, name)
            else:
                if tmp is None:
                    tmp = _private_dir_name("mobitrace-validate-")
                    tmp.mkdir(mode=0o700)
                laid_out = _stage(session, name, tmp)
            found = study.module("ingest").validate_session(laid_out)
            if laid_out != session:  # name the user's file, not the temporary copy
                found = [_relocate(e, laid_out, session) for e in found]
            problems.extend(found)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    if len(studies) > 1:
        problems.append(InputError(path, None, "study", "sessions of one study", sorted(studies)))
    elif not problems and len(sessions) > 1:
        study = _study(next(iter(studies)))
        superseded = _superseded(study) if in_raw_tree and _in_project_raw(sessions[0]) else {}
        problems.extend(_check_device(study, [s for s in sessions if f"{s.parent.name}/{s.name}" not in superseded]))
    study = _study(studies.pop()) if len(studies) == 1 else None
    return study, problems


def _private_dir_name(prefix: str) -> Path:
    """A new folder's path in the temporary directory, named before it is
    made (mkdir: exclusive, mode 0700): a Ctrl-C right after mkdtemp made
    its folder, before its name was assigned, left the folder behind."""
    return Path(tempfile.gettempdir()) / f"{prefix}{secrets.token_hex(8)}"


def _relocate(exc: InputError, staged: Path, source: Path) -> InputError:
    p = exc.path
    if p.startswith(str(staged)):
        p = str(source) + p[len(str(staged)):]
    return InputError(p, exc.where, exc.field, exc.expected, exc.found)


# --------------------------------------------------------------------------- #
# Registration


def _load_params(params_path: Path):
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    ry = _round_trip_yaml()
    ry.indent(mapping=2, sequence=4, offset=2)  # the layout params.yaml is written in
    try:
        return ry, ry.load(params_path.read_text())
    except MarkedYAMLError as exc:  # a duplicate key, a syntax error: one line naming the file
        mark = exc.problem_mark or exc.context_mark
        raise InputError(params_path, f"line {mark.line + 1}" if mark else None, None, "valid YAML",
                         Plain(" ".join((exc.problem or str(exc)).split()))) from None
    except YAMLError as exc:
        raise InputError(params_path, None, None, "valid YAML", Plain(" ".join(str(exc).split()))) from None


def _add_to_params(params_path: Path, section: str, device: str, sync: bool = False) -> bool:
    """Append `device` to params.yaml `<section>.devices`, keeping comments and
    layout (ruamel round trip; temporary file, fsync, rename). False when it
    is already listed."""
    ry, doc = _load_params(params_path)
    if section not in doc or "devices" not in doc[section]:
        raise InputError(params_path, None, f"{section}.devices", "a list of devices", "nothing")
    devices = doc[section]["devices"]
    if device in devices:
        return False
    devices.append(_plain_yaml_string(device))
    _checkpoint("params.yaml about to be written")
    _write_atomic(params_path, ry, doc, sync)
    return True


def _listed(params_path: Path, section: str, device: str) -> bool:
    """Whether params.yaml lists `device` in `<section>.devices` (False when unreadable)."""
    try:
        return device in (yaml.safe_load(params_path.read_text())[section]["devices"] or [])
    except (OSError, KeyError, TypeError, yaml.YAMLError):
        return False


@dataclass
class Registration:
    study: Study
    device: str
    sessions: list[Path]       # destinations under data/raw
    copied: bool
    listed: bool
    cleaned: list[str] = field(default_factory=list)  # stale staging folders removed
    in_dvc: list[Path] = field(default_factory=list)   # sessions kept in DVC (the rest: git)
    remote: str | None = None                           # the DVC remote they were pushed to
    staged: bool = True                                 # params.yaml, the sessions (or their .dvc) staged for git
    dry_run: bool = False                               # nothing was written (add-device --dry-run)

    def stages(self) -> list[str]:
        return self.study.device_stages(self.device) + self.study.summary_stages()


STAGING_PREFIX = ".staging-"


class _Staging:
    """add-device's data/raw/.staging-<pid>-* folder, made at the first
    session copied into it (fsync, checkpoints); `copies` maps each session
    to its copy, so a session checked there is not copied again."""

    def __init__(self, raw_root: Path):
        self.raw_root, self.folder, self.copies = raw_root, None, {}

    def stage(self, session: Path, device: str) -> Path:
        if self.folder is None:
            self.raw_root.mkdir(parents=True, exist_ok=True)
            self.folder = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{os.getpid()}-", dir=self.raw_root))
            _checkpoint("staging created")
        self.copies[session] = _stage(session, device, self.folder, sync=True)
        _checkpoint("session staged")
        return self.copies[session]

    def remove(self) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


def clean_stale_staging(raw: Path) -> list[str]:
    """Remove data/raw/.staging-<pid>-* folders whose add-device process is
    gone (it was killed), rolling back a device it had moved into place but
    not yet listed in params.yaml. Returns what was done, one line each."""
    done = []
    if not raw.is_dir():
        return done
    for stale in sorted(raw.glob(STAGING_PREFIX + "*")):
        pid = stale.name[len(STAGING_PREFIX):].split("-")[0]
        if pid.isdigit() and _alive(int(pid)):
            continue
        journal = stale / "journal.json"
        if journal.is_file():
            try:
                intent = json.loads(journal.read_text())
                moved = raw.parent.parent / intent["moved"] if intent.get("moved") else None
                listed = _listed(raw.parent.parent / "params.yaml", intent["section"], intent["device"])
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                moved, listed = None, True
            if moved is not None and not moved.resolve().is_relative_to(raw.resolve()):
                moved = None  # only ever a device folder under data/raw
            if moved is not None and moved.is_dir() and not moved.is_symlink() and not listed:
                shutil.rmtree(moved)
                done.append(f"rolled back {moved.relative_to(raw.parent.parent)} (an interrupted add-device had "
                            "not listed it in params.yaml)")
        shutil.rmtree(stale, ignore_errors=True)
        done.append(f"removed {stale.relative_to(raw.parent.parent)} (left by an interrupted add-device)")
    return done


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return pid != os.getpid()


def _host_of(session: Path) -> tuple[dict, dict]:
    """(schema-2 host metadata, where each key sits in the file) of a session."""
    doc = safe_yaml.read_manifest(session / "manifest.yaml")
    if not isinstance(doc.get("host"), dict):
        return {}, {}
    return host_info.host_metadata(doc, session / "manifest.yaml"), host_info.host_sources(doc)


HOST_KEYS = ("hostname_hash", "machine", "cpu_model", "cpu_count")


def _check_device(study: Study, sessions: list[Path]) -> list[InputError]:
    """The study's checks across the sessions of one device (the ingest
    module's `validate_device`, where a study has one: stack-trim's run ids
    are unique across sessions)."""
    check = getattr(study.module("ingest"), "validate_device", None)
    return check(sessions) if check is not None else []


def _superseded(study: Study, root: Path | None = None) -> dict:
    """params.yaml `<section>.superseded` of the project at `root` (default:
    the one holding the working directory; none outside a project)."""
    from mobitrace.core.io import repo_root

    try:
        _, params = _load_params((root or repo_root()) / "params.yaml")
    except (OSError, InputError):
        return {}
    section = params.get(study.params_section, {}) if isinstance(params, dict) else {}
    found = section.get("superseded") if isinstance(section, dict) else None
    return found if isinstance(found, dict) else {}


def _in_project_raw(session: Path) -> bool:
    """Whether `session` is under data/raw of the project holding the working directory."""
    from mobitrace.core.io import repo_root

    try:
        return session.resolve().is_relative_to(repo_root() / "data" / "raw")
    except (OSError, InputError):
        return False


def _kept_sessions(study: Study, device_dir: Path, root: Path) -> list[Path]:
    """A registered device's sessions that ingest reads (params.yaml `superseded` left out)."""
    superseded = _superseded(study, root)
    return [p for p in sorted(device_dir.iterdir()) if p.is_dir() and f"{device_dir.name}/{p.name}" not in superseded]


def _check_clash(study: Study, name: str, sessions: list[Path], root: Path, append: bool) -> Path | None:
    """The registered device `name` clashes with (ignoring case), or None;
    refused unless `append` and the host metadata matches."""
    raw = root / "data" / "raw" / study.slug
    _, params = _load_params(root / "params.yaml")
    listed = [str(d) for d in (params.get(study.params_section, {}) or {}).get("devices", []) or []]
    present = [p.name for p in raw.iterdir() if not p.name.startswith(".")] if raw.is_dir() else []
    clash = next((d for d in [*listed, *present] if d.casefold() == name.casefold()), None)
    where = sessions[0] / "manifest.yaml"
    if clash is None:
        return None
    if not append:
        raise InputError(where, None, "device", f"a device name not yet registered ('{clash}' is; pass --append "
                                                "to add sessions to it)", name)
    if clash != name:
        raise InputError(where, None, "device", f"exactly '{clash}' (the registered name) with --append", name)
    existing = sorted(p for p in (raw / clash).iterdir() if p.is_dir()) if (raw / clash).is_dir() else []
    if existing:
        (old, _), (new, src) = _host_of(existing[0]), _host_of(sessions[0])
        for have, session in ((old, existing[0]), (new, sessions[0])):
            if not any(have.get(key) is not None for key in HOST_KEYS):
                raise InputError(session / "manifest.yaml", None, "host", "host metadata (hostname_hash, machine, "
                                 "cpu_model, cpu_count) to match with --append", "none")
        found = _check_device(study, [*_kept_sessions(study, raw / clash, root), *sessions])
        if found:
            raise found[0]
        for key in HOST_KEYS:
            if old.get(key) is not None and new.get(key) is not None and old[key] != new[key]:
                raise InputError(where, None, ".".join(src[key] or ("host", key)), f"{old[key]!r} (as in {existing[0].name} of "
                                                            f"'{clash}') with --append", new[key])
    return raw / clash


def add_device(path: str | Path, device: str | None = None, root: str | Path = ".",
               append: bool = False, notify: Callable[[str], None] | None = None,
               storage: str = "auto", dry_run: bool = False) -> Registration:
    """Validate the capture at `path` and register it as `device` (default:
    the manifest's device). Raises InputError (the first problem; call
    `validate` for all of them) and changes nothing when it is invalid.

    Atomic: sessions are copied (fsync) to data/raw/.staging-<pid>-*, then
    renamed into data/raw/<study>/<device>/, then params.yaml is replaced by
    a temporary file. A stale staging folder left by a killed run is removed
    (and its half-done device rolled back) by the next run, which says so
    through `notify`.

    `storage`: "auto" keeps a session over the params.yaml threshold in DVC
    (see module doc), "dvc" every session, "git" none. DVC-kept sessions are
    added and pushed after the rename, before params.yaml is written, so a
    failed push rolls the device back like any other failure."""
    root = Path(root)
    raw_root = root / "data" / "raw"
    if device is not None:
        check_name(device, path, "device")
    with _registry_lock(root):  # concurrent adds land one after the other, or are refused in one line
        _remove_stale_temporaries(root, "params.yaml")
        cleaned = clean_stale_staging(raw_root)
        for line in cleaned if notify else ():
            notify(line)  # said even when this run then fails
        staging = _Staging(raw_root)  # a renamed session is checked in its staging copy: copied once, not twice
        try:
            return _register(path, device, root, append, storage, cleaned, staging, dry_run)
        finally:
            staging.remove()


@contextlib.contextmanager
def _registry_lock(root: Path):
    """An exclusive lock on the project's registry (params.yaml and
    data/raw), held for one add-device: flock(2) on the project folder
    itself, so that taking it writes nothing."""
    import fcntl

    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _register(path, device: str | None, root: Path, append: bool, storage: str, cleaned: list[str],
              staging: _Staging, dry_run: bool = False) -> Registration:
    """add_device's work once stale staging is cleaned (see there); with
    `dry_run`, every check and decision and nothing written."""
    raw_root = root / "data" / "raw"
    study, problems = validate(path, device, None if dry_run else staging.stage)
    if problems:
        raise problems[0]
    sessions = sessions_in(path)
    name = check_name(device or safe_yaml.read_manifest(sessions[0] / "manifest.yaml")["device"],
                      sessions[0] / "manifest.yaml", "device")
    device_dir = raw_root / study.slug / name
    dests = [device_dir / s.name for s in sessions]
    source_inside = all(s.resolve().parent == device_dir.resolve() for s in sessions)
    copied = False
    if source_inside and storage == "dvc":
        raise InputError(sessions[0], None, None, "a capture outside data/raw to keep in DVC "
                                                  "(for one already there: dvc add it yourself)", "one in place")
    in_dvc = [False] * len(sessions) if source_inside else raw_storage.kept_in_dvc(sessions, storage, root)
    kept = [d for d, k in zip(dests, in_dvc) if k]
    if kept:
        raw_storage.dvc_repo(root, sessions[0]).close()  # refused before anything is written
    remote, to_stage = None, []
    if not source_inside:
        _check_clash(study, name, sessions, root, append)
        clash = [d for d in dests if os.path.lexists(d)]
        if clash:
            raise InputError(clash[0], None, None, "a session not yet registered", "an existing folder")
    if dry_run:
        return Registration(study, name, dests, False, not _listed(root / "params.yaml", study.params_section, name),
                            cleaned, kept, None, False, dry_run=True)
    if not source_inside:
        for s in sessions:
            if staging.copies.get(s) is None or staging.copies[s].parent.name != name:
                staging.stage(s, name)
        folder = staging.folder  # every session is staged by now
        _fsync_dir(folder / name)
        moved = device_dir if not device_dir.exists() else None
        (folder / "journal.json").write_text(json.dumps(
            {"device": name, "section": study.params_section,
             "moved": moved.relative_to(root).as_posix() if moved else None}))
        _fsync_dir(folder)
        _checkpoint("journal written")
        device_dir.parent.mkdir(parents=True, exist_ok=True)
        gitignore = device_dir / ".gitignore"  # restored when an --append is rolled back
        ignored = gitignore.read_bytes() if moved is None and gitignore.is_file() else None
        was_listed = _listed(root / "params.yaml", study.params_section, name)  # --append
        placed: list[Path] = []
        try:
            if moved is not None:
                os.rename(folder / name, device_dir)  # the whole device appears at once
                placed.append(device_dir)
            else:
                for s in sessions:  # --append: one rename per session
                    os.rename(folder / name / s.name, device_dir / s.name)
                    placed.append(device_dir / s.name)
            _fsync_dir(device_dir.parent)
            _checkpoint("device in place")
            if kept:
                remote, to_stage = raw_storage.keep_in_dvc(root, kept, _checkpoint)
            listed = _add_to_params(root / "params.yaml", study.params_section, name, sync=True)
        except BaseException:  # an error, Ctrl-C or SIGTERM before params.yaml lists it: roll back
            if was_listed or not _listed(root / "params.yaml", study.params_section, name):
                for p in placed:
                    shutil.rmtree(p, ignore_errors=True)
                if moved is None and kept:  # --append: the .dvc files and .gitignore lines it wrote
                    for d in kept:
                        d.with_name(d.name + ".dvc").unlink(missing_ok=True)
                    if ignored is not None:
                        gitignore.write_bytes(ignored)
                    else:
                        gitignore.unlink(missing_ok=True)
            raise
        copied = True
        _checkpoint("params.yaml written")
    else:
        listed = _add_to_params(root / "params.yaml", study.params_section, name, sync=True)
    # Everything the registration changed, staged at once: the commit is one command.
    staged = raw_storage.git_stage(root, [root / "params.yaml", *[d for d in dests if d not in kept], *to_stage])
    return Registration(study, name, dests, copied, listed, cleaned, kept, remote, staged)


# --------------------------------------------------------------------------- #
# Taking back a registration that is not committed yet


def _committed(root: Path, folder: Path) -> bool:
    """Whether git's HEAD holds any file under `folder` (or its .dvc files)."""
    done = subprocess.run(["git", "ls-tree", "-r", "--name-only", "HEAD", "--", str(folder.relative_to(root))],
                          cwd=root, capture_output=True, text=True)
    return done.returncode == 0 and bool(done.stdout.strip())


def _registered(root: Path, slug: str, device: str) -> tuple[Study, Path]:
    study = registry.by_slug().get(slug)
    if study is None:
        raise InputError(root / "params.yaml", None, "study", f"one of {sorted(registry.by_slug())}", slug)
    check_name(device, root / "params.yaml", "device")
    folder = root / "data" / "raw" / slug / device
    if not _listed(root / "params.yaml", study.params_section, device) and not folder.is_dir():
        raise InputError(root / "params.yaml", None, f"{study.params_section}.devices", "a registered device", device)
    if _committed(root, folder):
        raise InputError(folder, None, None, "a device not yet committed (committed captures are immutable: "
                                             "supersede a session in params.yaml instead)", Plain("one in git's HEAD"))
    return study, folder


def _set_device_list(root: Path, study: Study, old: str, new: str | None) -> None:
    """Rename (or, with `new` None, remove) `old` in the study's device list,
    and in its `reference_device` (a removed reference device is refused:
    the chapters' comparisons name it)."""
    ry, doc = _load_params(root / "params.yaml")
    section = doc[study.params_section]
    if section.get("reference_device") == old:
        if new is None:
            raise InputError(root / "params.yaml", None, f"{study.params_section}.reference_device",
                             f"another device than '{old}' before it is removed (the chapter's reference)", old)
        section["reference_device"] = _plain_yaml_string(new)
    devices = section["devices"]
    if old in devices:
        i = devices.index(old)
        if new is None:
            del devices[i]
        else:
            devices[i] = _plain_yaml_string(new)
    _write_atomic(root / "params.yaml", ry, doc, sync=True)


def remove_device(slug: str, device: str, root: str | Path = ".") -> Path:
    """Undo an add-device that is not committed: the device leaves params.yaml
    and its folder (git's index too) is removed. A committed device is refused."""
    root = Path(root)
    with _registry_lock(root):
        study, folder = _registered(root, slug, device)
        _set_device_list(root, study, device, None)
        subprocess.run(["git", "rm", "-r", "-q", "--cached", "--ignore-unmatch", "--", str(folder.relative_to(root))],
                       cwd=root, capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)
        raw_storage.git_stage(root, [root / "params.yaml"])
    return folder


def rename_device(slug: str, device: str, new: str, root: str | Path = ".") -> Path:
    """Give a device that is not committed another name: its folder, its
    sessions' manifests (which record the old name as
    registered_from_device) and its entry in params.yaml, in place."""
    root = Path(root)
    with _registry_lock(root):
        study, folder = _registered(root, slug, device)
        check_name(new, root / "params.yaml", "device")
        if any(folder.glob("*.dvc")):
            raise InputError(folder, None, None, "sessions kept in git (a session kept in DVC is renamed by "
                                                 "remove-device, then add-device --device NEW)", Plain("a .dvc file"))
        target = folder.with_name(new)
        if os.path.lexists(target) or _listed(root / "params.yaml", study.params_section, new):
            raise InputError(target, None, "device", "a device name not yet registered", new)
        subprocess.run(["git", "rm", "-r", "-q", "--cached", "--ignore-unmatch", "--", str(folder.relative_to(root))],
                       cwd=root, capture_output=True)
        os.rename(folder, target)
        ry = _round_trip_yaml()
        for session in sorted(p for p in target.iterdir() if p.is_dir()):
            manifest = session / "manifest.yaml"
            doc = ry.load(capture_reader.read_text(manifest))
            doc.setdefault("registered_from_device", doc["device"])
            doc["device"] = _plain_yaml_string(new)
            _write_atomic(manifest, ry, doc, sync=True)
        _set_device_list(root, study, device, new)
        raw_storage.git_stage(root, [root / "params.yaml", target])
    return target

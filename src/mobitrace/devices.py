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
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

from .errors import InputError


def _cpu_gbps_session(folder: Path) -> list[InputError]:
    from . import captures

    manifest = folder / "manifest.yaml"
    try:
        rec = captures.parse_session_manifest(manifest)
    except InputError as exc:
        return [exc]
    problems = []
    for key, want in (("device", folder.parent.name), ("session", folder.name)):
        if rec[key] != want:
            problems.append(InputError(manifest, None, key, f"'{want}' (the folder's name)", rec[key]))
    runs_dir = folder / "runs"
    present = {p.name for p in runs_dir.iterdir() if p.is_dir()} if runs_dir.is_dir() else set()
    for run_id in rec["runs"]:
        if run_id not in present:
            problems.append(InputError(manifest, None, "runs", f"a folder runs/{run_id}", "no such folder"))
            continue
        try:
            captures.run_row(runs_dir / run_id, rec["n_cpus"])
        except InputError as exc:
            problems.append(exc)
    for extra in sorted(present - set(rec["runs"])):
        problems.append(InputError(manifest, None, "runs", f"every folder under runs/ listed (runs/{extra})",
                                   "a run folder the manifest does not list"))
    return problems


def _priority_boost_session(folder: Path) -> list[InputError]:
    from . import priority_boost

    try:
        priority_boost.read_session(folder)
    except InputError as exc:
        return [exc]
    return []


def _stack_trim_session(folder: Path) -> list[InputError]:
    """Every problem of a stack-trim session: the manifest and runs.csv stop
    the session; then each run folder is checked on its own."""
    from . import stack_trim

    try:
        man = stack_trim.read_manifest(folder / "manifest.yaml")
        runs = stack_trim.read_runs_csv(folder / "runs.csv")
    except InputError as exc:
        return [exc]
    problems = []
    for key, want in (("device", folder.parent.name), ("session", folder.name)):
        if man[key] != want:
            problems.append(InputError(folder / "manifest.yaml", None, key, f"'{want}' (the folder's name)", man[key]))
    runs_dir = folder / "runs"
    present = {p.name for p in runs_dir.iterdir() if p.is_dir()} if runs_dir.is_dir() else set()
    for i, row in enumerate(runs.to_dict("records")):
        if row["run_id"] not in present:
            problems.append(InputError(folder / "runs.csv", f"line {i + 2}", "run_id",
                                       f"a folder runs/{row['run_id']}", "no such folder"))
            continue
        if row["status"] != "ok":
            continue
        try:
            stack_trim.run_tables(runs_dir / row["run_id"], row, man["host"]["cpu_count"], man["host"]["user_hz"])
        except InputError as exc:
            problems.append(exc)
    for extra in sorted(present - set(runs["run_id"])):
        problems.append(InputError(folder / "runs.csv", None, "run_id", f"a line for every run folder (runs/{extra})",
                                   "a folder runs.csv does not list"))
    return problems


def _transfer_tuning_session(folder: Path) -> list[InputError]:
    from . import transfer_tuning

    try:
        transfer_tuning.read_session(folder)
    except InputError as exc:
        return [exc]
    return []


def _mptcp_dualband_session(folder: Path) -> list[InputError]:
    from . import mptcp_dualband

    return mptcp_dualband.validate_session(folder)


@dataclass(frozen=True)
class Study:
    """How one study's captures are checked and where its devices are listed."""

    slug: str
    params_section: str                    # params.yaml section with a `devices` list
    validate_session: Callable[[Path], list[InputError]]  # on <device>/<session>
    device_stages: tuple[str, ...]         # dvc.yaml stages per device ({device})
    summary_stages: tuple[str, ...]        # stages that read every device
    chapter: str                           # book page with the per-device sections


STUDIES: dict[str, Study] = {
    "cpu-gbps": Study("cpu-gbps", "cpu-gbps-measured", _cpu_gbps_session,
                      ("ingest_capture_cpu_gbps@{device}", "analyze_cpu_gbps_device@{device}"),
                      ("analyze_cpu_gbps_measured",), "chapters/cpu-gbps-measured"),
    "priority-boost": Study("priority-boost", "priority-boost", _priority_boost_session,
                            ("ingest_priority_boost@{device}",), ("analyze_priority_boost",),
                            "chapters/priority-boost"),
    "stack-trim": Study("stack-trim", "stack-trim", _stack_trim_session,
                        ("ingest_stack_trim@{device}",), ("analyze_stack_trim",), "chapters/stack-trim"),
    "transfer-tuning": Study("transfer-tuning", "transfer-tuning", _transfer_tuning_session,
                             ("ingest_transfer_tuning@{device}",), ("analyze_transfer_tuning",),
                             "chapters/transfer-tuning"),
    "mptcp-dualband": Study("mptcp-dualband", "mptcp-dualband", _mptcp_dualband_session,
                            ("ingest_mptcp_dualband@{device}",), ("analyze_mptcp_dualband",),
                            "chapters/mptcp-dualband"),
}

DEVICE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def _read_manifest(path: Path) -> dict:
    if not path.is_file():
        raise InputError(path, None, None, "a capture manifest.yaml", "no such file")
    try:
        doc = yaml.safe_load(path.read_bytes())
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InputError(path, f"line {mark.line + 1}" if mark else None, None, "valid YAML",
                         getattr(exc, "problem", None) or str(exc).splitlines()[0]) from None
    except UnicodeDecodeError:
        raise InputError(path, None, None, "UTF-8 YAML text", "undecodable bytes") from None
    if doc is None:
        raise InputError(path, None, None, "a YAML mapping", "an empty file")
    if not isinstance(doc, dict):
        raise InputError(path, None, None, "a YAML mapping", type(doc).__name__)
    return doc


def manifest_study(path: Path) -> Study:
    """The study a session's manifest.yaml declares."""
    doc = _read_manifest(path)
    study = doc.get("study")
    if study not in STUDIES:
        raise InputError(path, None, "study", f"one of {sorted(STUDIES)}", study if study is not None else "nothing")
    for key in ("device", "session"):
        if not isinstance(doc.get(key), str) or not doc[key]:
            raise InputError(path, None, key, f"a {key} name", doc.get(key, "nothing"))
    return STUDIES[study]


def sessions_in(path: str | Path) -> list[Path]:
    """Session folders of `path`: the folder itself when it has a manifest,
    else its sub-folders that have one (a device folder)."""
    path = Path(path)
    if not path.is_dir():
        raise InputError(path, None, None, "a capture folder", "no such folder")
    if (path / "manifest.yaml").exists():
        return [path]
    found = sorted(p for p in path.iterdir() if p.is_dir() and (p / "manifest.yaml").exists())
    if not found:
        raise InputError(path, None, None, "a session folder with manifest.yaml, or a device folder of them",
                         "no manifest.yaml")
    return found


def _stage(session: Path, device: str, staging: Path) -> Path:
    """Copy a session to staging/<device>/<session>, with the manifest's
    device set to `device` when it differs (the copy records the old name)."""
    dest = staging / device / session.name
    shutil.copytree(session, dest, symlinks=False)
    manifest = dest / "manifest.yaml"
    doc = _read_manifest(manifest)
    if doc.get("device") != device:
        text = manifest.read_text()
        new, n = re.subn(r"(?m)^device:.*$", f"device: {device}\nregistered_from_device: {doc.get('device')}",
                         text, count=1)
        if n != 1:
            raise InputError(manifest, None, "device", "a top-level 'device:' line", "none")
        manifest.write_text(new)
    return dest


def validate(path: str | Path, device: str | None = None) -> tuple[Study | None, list[InputError]]:
    """Every problem of the capture sessions under `path` (see module doc).

    The sessions are checked as they would be ingested, laid out as
    <device>/<session>: in place when they already are, else in a temporary
    copy. Returns the study (None when the sessions disagree or none could
    be read) and the problems."""
    try:
        sessions = sessions_in(path)
    except InputError as exc:
        return None, [exc]
    problems: list[InputError] = []
    studies = set()
    with tempfile.TemporaryDirectory(prefix="mobitrace-validate-") as tmp:
        for session in sessions:
            try:
                study = manifest_study(session / "manifest.yaml")
            except InputError as exc:
                problems.append(exc)
                continue
            studies.add(study.slug)
            name = device or _read_manifest(session / "manifest.yaml")["device"]
            # In a data/raw/<study>/<device>/ tree the folder names the device
            # (as ingest requires); elsewhere the manifest (or --device) does.
            in_raw_tree = session.parent.parent.name == study.slug and device is None
            laid_out = session if in_raw_tree or session.parent.name == name else _stage(session, name, Path(tmp))
            found = study.validate_session(laid_out)
            if laid_out != session:  # name the user's file, not the temporary copy
                found = [_relocate(e, laid_out, session) for e in found]
            problems.extend(found)
    if len(studies) > 1:
        problems.append(InputError(path, None, "study", "sessions of one study", sorted(studies)))
    study = STUDIES[studies.pop()] if len(studies) == 1 else None
    return study, problems


def _relocate(exc: InputError, staged: Path, source: Path) -> InputError:
    p = exc.path
    if p.startswith(str(staged)):
        p = str(source) + p[len(str(staged)):]
    return InputError(p, exc.where, exc.field, exc.expected, exc.found)


# --------------------------------------------------------------------------- #
# Registration


def _add_to_params(params_path: Path, section: str, device: str) -> bool:
    """Append `device` to params.yaml `<section>.devices`, keeping comments and
    layout (ruamel round trip). False when it is already listed."""
    from ruamel.yaml import YAML

    ry = YAML()
    ry.preserve_quotes = True
    ry.width = 4096
    ry.indent(mapping=2, sequence=4, offset=2)  # the layout params.yaml is written in
    doc = ry.load(params_path.read_text())
    if section not in doc or "devices" not in doc[section]:
        raise InputError(params_path, None, f"{section}.devices", "a list of devices", "nothing")
    devices = doc[section]["devices"]
    if device in devices:
        return False
    devices.append(device)
    tmp = params_path.with_name(f".{params_path.name}.tmp")
    with tmp.open("w") as fh:
        ry.dump(doc, fh)
    os.replace(tmp, params_path)
    return True


@dataclass
class Registration:
    study: Study
    device: str
    sessions: list[Path]       # destinations under data/raw
    copied: bool
    listed: bool

    def stages(self) -> list[str]:
        return [s.format(device=self.device) for s in self.study.device_stages] + list(self.study.summary_stages)


def add_device(path: str | Path, device: str | None = None, root: str | Path = ".") -> Registration:
    """Validate the capture at `path` and register it as `device` (default:
    the manifest's device). Raises InputError (the first problem; call
    `validate` for all of them) and changes nothing when it is invalid."""
    root = Path(root)
    if device is not None and not DEVICE_NAME.match(device):
        raise InputError(path, None, "device", "a device name of letters, digits, '.', '_' or '-'", device)
    study, problems = validate(path, device)
    if problems:
        raise problems[0]
    sessions = sessions_in(path)
    name = device or _read_manifest(sessions[0] / "manifest.yaml")["device"]
    if not DEVICE_NAME.match(name):
        raise InputError(sessions[0] / "manifest.yaml", None, "device",
                         "a device name of letters, digits, '.', '_' or '-'", name)
    device_dir = root / "data" / "raw" / study.slug / name
    dests = [device_dir / s.name for s in sessions]
    source_inside = all(s.resolve().parent == device_dir.resolve() for s in sessions)
    copied = False
    if not source_inside:
        clash = [d for d in dests if d.exists()]
        if clash:
            raise InputError(clash[0], None, None, "a session not yet registered", "an existing folder")
        device_dir.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".add-{name}.", dir=device_dir.parent))
        try:
            for s in sessions:
                _stage(s, name, staging)
            device_dir.mkdir(exist_ok=True)
            for s in sessions:
                os.replace(staging / name / s.name, device_dir / s.name)
            copied = True
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    listed = _add_to_params(root / "params.yaml", study.params_section, name)
    return Registration(study, name, dests, copied, listed)

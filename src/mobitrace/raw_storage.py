"""Where add-device keeps a session: in git, or in DVC (`dvc add` where it
lands, pushed to the default remote) when it is over params.yaml
`raw-storage.dvc_threshold_mb` or `storage="dvc"` says so; and the `git add`
of what a registration changed."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import yaml

from mobitrace.core import capture_reader
from mobitrace.core.errors import InputError

STORAGE = ("auto", "dvc", "git")


DVC_THRESHOLD_MB = 5  # when params.yaml has no raw-storage section (a project from before it)


def dvc_threshold_bytes(params_path: Path) -> int:
    """params.yaml `raw-storage.dvc_threshold_mb` in bytes (MB = 10^6 bytes)."""
    try:
        section = yaml.safe_load(params_path.read_text()).get("raw-storage")
    except (OSError, AttributeError, yaml.YAMLError):
        section = None
    mb = DVC_THRESHOLD_MB if section is None else section.get("dvc_threshold_mb") if isinstance(section, dict) else None
    if isinstance(mb, bool) or not isinstance(mb, (int, float)) or mb < 0:
        raise InputError(params_path, None, "raw-storage.dvc_threshold_mb", "a size in MB (>= 0)", mb)
    return int(mb * 1_000_000)


def session_bytes(session: Path) -> int:
    return sum(f.stat().st_size for f in capture_reader.tree(session)[1])


def kept_in_dvc(sessions: list[Path], storage: str, root: Path) -> list[bool]:
    """For each session, whether it goes to DVC (`storage`: auto by size, dvc, git)."""
    if storage not in STORAGE:
        raise ValueError(f"storage must be one of {STORAGE}")
    if storage != "auto":
        return [storage == "dvc"] * len(sessions)
    limit = dvc_threshold_bytes(root / "params.yaml")
    return [session_bytes(s) > limit for s in sessions]


def dvc_repo(root: Path, where: Path):
    """The DVC project at `root`, refused (InputError) when there is none or
    it has no default remote to push to."""
    from dvc.exceptions import NotDvcRepoError
    from dvc.repo import Repo

    try:
        # autostage off: the .dvc files are staged only once the device is registered
        repo = Repo(str(root), config={"core": {"autostage": False}})
    except NotDvcRepoError:
        raise InputError(where, None, None, "a DVC project (.dvc/) to keep a big session in (or pass --git)",
                         "no .dvc folder") from None
    if not repo.config["core"].get("remote"):
        repo.close()
        raise InputError(root / ".dvc" / "config", None, "core.remote",
                         "a default DVC remote to push big sessions to (dvc remote add -d NAME URL)", "none")
    return repo


def keep_in_dvc(root: Path, dests: list[Path], checkpoint: Callable[[str], None]) -> tuple[str, list[Path]]:
    """`dvc add` each session folder in `dests` and push it to the default
    remote, calling `checkpoint` after each step (add-device's fault
    injection). Returns (the remote's name, the files git should stage)."""
    from dvc.exceptions import DvcException

    import logging

    repo = dvc_repo(root, dests[0])
    dvc_log = logging.getLogger("dvc")
    level, dvc_log.level = dvc_log.level, logging.WARNING  # no "git add ..." advice: add-device stages itself
    try:
        remote = repo.config["core"]["remote"]
        expected = f"a session DVC can add and push to remote '{remote}'"
        try:
            repo.add([str(d) for d in dests])
            checkpoint("kept in DVC")
        except (DvcException, OSError) as exc:
            raise InputError(dests[0], None, None, expected, " ".join(str(exc).split())) from None
        try:
            repo.push([str(d) + ".dvc" for d in dests])
        except Exception as exc:  # noqa: BLE001  the remote unreachable or not writable, or its library's own
            # error (botocore's ConfigNotFound for a missing AWS_CONFIG_FILE...): the push failed, not mobitrace
            raise InputError(dests[0], None, None, expected, " ".join(str(exc).split())) from None
        checkpoint("pushed")
    finally:
        dvc_log.setLevel(level)
        repo.close()
    staged = {d.with_name(d.name + ".dvc") for d in dests} | {d.parent / ".gitignore" for d in dests}
    return remote, sorted(staged)


def git_stage(root: Path, files: list[Path]) -> bool:
    """`git add` what a registration changed (False when `root` is no git
    work tree or git refused)."""
    if not files:
        return True
    done = subprocess.run(["git", "add", "--", *(str(f.relative_to(root)) for f in files)], cwd=root,
                          capture_output=True)
    return done.returncode == 0

"""Fetch the captures kept in DVC that this clone lacks, before `dvc repro`.

    python scripts/pull_captures.py   # `make` runs it first

A session add-device kept in DVC is a `<session>.dvc` file under data/raw
(in git) whose folder comes from the DVC remote. For each such file whose
folder is missing this runs `dvc pull` and prints what it fetched; when one
cannot be fetched it prints ONE line naming the capture and the remote and
exits 1, so no stage runs on a partial data/raw. Creates the default remote's
folder when it is a local path that does not exist yet (a fresh clone's
../mobitrace-dvc-store, .dvc/config).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

from mobitrace.core import capture_layout
from mobitrace.core.errors import InputError
from mobitrace.studies import registry


def missing_captures(root: Path) -> list[tuple[Path, Path]]:
    """(.dvc file, the folder it tracks) for each DVC-kept capture under data/raw whose folder is absent."""
    found = []
    for dvc_file in sorted((root / "data" / "raw").rglob("*.dvc")):
        try:
            outs = yaml.safe_load(dvc_file.read_text())["outs"]
        except (OSError, KeyError, TypeError, yaml.YAMLError):
            outs = []
        for out in outs:
            target = dvc_file.parent / out["path"]
            if not target.exists():
                found.append((dvc_file, target))
    return found


def find_root(start: Path) -> Path | None:
    """The DVC project holding `start`, as dvc.repo.Repo.find_root finds it
    (the nearest folder with a .dvc folder, up to the mount point), without
    importing dvc.repo (half of this script's CPU time when nothing is missing)."""
    for folder in (start, *start.parents):
        if (folder / ".dvc").is_dir():
            return folder
        if os.path.ismount(folder):
            break
    return None


def default_remote(root: Path) -> tuple[str | None, str | None]:
    """(name, url) of the default DVC remote (url absolute for a local path), (None, None) if none:
    DVC's own reading of the project's config files (the repository's and its config.local)."""
    from dvc.config import Config

    config = Config(dvc_dir=str(root / ".dvc"))
    name = config["core"].get("remote")
    url = config["remote"].get(name, {}).get("url") if name else None
    return name, (str(url) if url else None)


def why(dvc_stderr: str) -> str:
    """DVC's reason for a failed pull, in a few words: the remote lacks the
    capture, or its first ERROR line (refused credentials, no connection...)."""
    if "do not exist neither locally nor on remote" in dvc_stderr:
        return "the remote does not have it"
    errors = [ln.removeprefix("ERROR:").strip() for ln in dvc_stderr.splitlines() if ln.startswith("ERROR:")]
    return errors[0] if errors else "dvc pull failed"


def main() -> int:
    root = find_root(Path.cwd().resolve())  # the DVC project holding the working directory
    if root is None:
        print("error: you are not inside of a DVC repository", file=sys.stderr)
        return 1
    missing = missing_captures(root)
    # Before `dvc pull` reads any file under data/raw: a capture is data, never
    # a stage. With nothing to pull, `mobitrace repro` checks it next, once.
    try:
        if missing:
            capture_layout.check_raw_tree(root, registry.by_slug())
    except InputError as exc:
        print(f"error: {exc}; nothing was built: a capture holds only its study's files "
              "(remove it, or add the capture again with `python -m mobitrace add-device`)", file=sys.stderr)
        return 1
    name, url = default_remote(root)
    if url and "://" not in url and not os.path.exists(url):
        os.makedirs(url, exist_ok=True)
        print(f"created the DVC remote '{name}' folder {url}")
    for dvc_file, target in missing:
        rel = target.relative_to(root)
        where = f"DVC remote '{name}' ({url})" if name else "no DVC remote (none configured in .dvc/config)"
        done = subprocess.run([sys.executable, "-m", "dvc", "pull", str(dvc_file.relative_to(root))],
                              cwd=root, capture_output=True, text=True)
        if done.returncode != 0 or not target.exists():
            print(f"error: capture {rel} could not be fetched from {where}: {why(done.stderr)}; nothing was built; "
                  "push it from the clone that has it (dvc push), or check the remote's address and credentials "
                  "(book/byod.md: Big captures)", file=sys.stderr)
            return 1
        print(f"fetched capture {rel} from {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

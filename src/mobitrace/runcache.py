"""DVC's shared run cache, fetched with the outputs it names.

    python -m mobitrace.runcache   # `make pull` runs it (after `make push` somewhere)

`dvc push --run-cache` (`make push`) sends every stage run of a clone (its
command, the hashes of its inputs and parameters, its outputs) and those
outputs to the default remote. `dvc pull --run-cache` fetches the runs but,
in DVC 3, not their outputs, so a stage whose inputs match a pushed run
still runs when its outputs are not in the local cache. This fetches both:
the runs, then every output they name, into the local cache only (the
working tree is not touched). `make` (dvc repro, mobitrace.repro) then
restores each such stage from the cache instead of running it.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path


def pull(root: str | Path = ".") -> tuple[int, int]:
    """Fetch the default remote's run cache and its outputs into the local
    cache; returns (stage runs known locally, output files fetched)."""
    from dvc.repo import Repo

    with Repo(str(root)) as repo:
        repo.stage_cache.pull(None)
        runs = Path(repo.stage_cache.cache_dir)
        entries = [(value.parent.name, value.name) for value in sorted(runs.glob("*/*/*"))]
        dvc_log = logging.getLogger("dvc")
        level = dvc_log.level
        dvc_log.setLevel(logging.ERROR)  # not a warning per uncached metrics file a run names
        try:
            used = repo.stage_cache.get_used_objs(entries, remote=None, force=True)
            fetched = sum(len(repo.cloud.pull(objs).transferred) for objs in used.values())
        finally:
            dvc_log.setLevel(level)
    return len(entries), fetched


def main() -> int:
    runs, fetched = pull()
    print(f"run cache: {runs} stage runs known, {fetched} output files fetched from the remote")
    return 0


if __name__ == "__main__":
    sys.exit(main())

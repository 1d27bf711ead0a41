"""Small valid captures of the studies, cut from the committed ones each
study's study.yaml names (data/raw, or a test fixture), laid out as
<root>/<study>/<device>/<session> so that `validate` checks them in place.

Each base keeps a few runs only (its runs.csv cut to match), so a hostile
case or a fuzz example costs milliseconds, not the whole capture."""

from __future__ import annotations

import shutil
from pathlib import Path

from mobitrace.studies import registry

from tests import ROOT

# Each study's base is named in its study.yaml (test_capture, test_capture_runs):
# a study without a capture kit has none yet, and no hostile cases.
STUDIES = tuple(s.slug for s in registry.studies() if s.test_capture)
SOURCES = {s.slug: ROOT / s.test_capture for s in registry.studies() if s.test_capture}
# runs kept per study (from runs.csv); None: the session is copied whole.
KEEP = {s.slug: list(s.test_capture_runs) or None for s in registry.studies() if s.test_capture}


def make_base(study: str, root: Path) -> Path:
    """A valid `study` capture at root/<study>/<device>/<session>; returns the session."""
    src = SOURCES[study]
    dest = root / study / src.parent.name / src.name
    keep = KEEP[study]
    if keep is None:
        shutil.copytree(src, dest)
        return dest
    (dest / "runs").mkdir(parents=True)
    manifest = (src / "manifest.yaml").read_text()
    if "\nruns:\n" in manifest:  # the manifest lists the runs too (its last key)
        manifest = manifest[: manifest.index("\nruns:\n")] + "\nruns:\n" + "".join(f"- {r}\n" for r in keep)
    (dest / "manifest.yaml").write_text(manifest)
    lines = (src / "runs.csv").read_text().splitlines()
    kept = [ln for ln in lines[1:] if ln.split(",")[0] in keep]
    assert len(kept) == len(keep), (study, keep)
    (dest / "runs.csv").write_text("\n".join([lines[0]] + kept) + "\n")
    for run in keep:
        shutil.copytree(src / "runs" / run, dest / "runs" / run)
    return dest

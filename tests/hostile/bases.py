"""Small valid captures of the five studies, cut from the committed ones
(data/raw) and the cpu-gbps smoke fixture, laid out as
<root>/<study>/<device>/<session> so that `validate` checks them in place.

Each base keeps a few runs only (its runs.csv cut to match), so a hostile
case or a fuzz example costs milliseconds, not the whole capture."""

from __future__ import annotations

import shutil
from pathlib import Path

from mobitrace.studies import registry

from tests import ROOT
RAW = ROOT / "data" / "raw"
STUDIES = tuple(s.slug for s in registry.studies())
CPU_BASE = ROOT / "tests" / "fixtures" / "captures" / "cpu-gbps" / "smoke-test" / "20261122T025322Z"
SOURCES = {
    "cpu-gbps": CPU_BASE,
    "priority-boost": RAW / "priority-boost" / "vm-2core" / "s20261122",
    "stack-trim": RAW / "stack-trim" / "vm-2core" / "s20261122",
    "transfer-tuning": RAW / "transfer-tuning" / "vm-veth-40mbit-50ms" / "s20261122",
    "mptcp-dualband": RAW / "mptcp-dualband" / "vm-veth-2path" / "s20261122",
}
# runs kept per study (from runs.csv); None: the session is copied whole.
KEEP = {
    "cpu-gbps": None,
    "priority-boost": ["cpu-c0-x0-original-r00", "cpu-c0-x0-incr-r00", "cpu-c0-x0-decr-r00",
                       "audio-c0-x0-original-r00"],
    "stack-trim": ["lo-down-tcp16384-mem-copy-r1-00", "lo-down-tcp16384-mem-onecopy-r240-03"],
    "transfer-tuning": ["sweep-video-cc1-p1-io16-r2", "sweep-image-cc1-p1-io8-r2"],
    "mptcp-dualband": None,
}


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
    if study == "transfer-tuning":  # the manifest lists the runs too (its last key)
        manifest = manifest[: manifest.index("\nruns:\n")] + "\nruns:\n" + "".join(f"- {r}\n" for r in keep)
    (dest / "manifest.yaml").write_text(manifest)
    lines = (src / "runs.csv").read_text().splitlines()
    kept = [ln for ln in lines[1:] if ln.split(",")[0] in keep]
    assert len(kept) == len(keep), (study, keep)
    (dest / "runs.csv").write_text("\n".join([lines[0]] + kept) + "\n")
    for run in keep:
        shutil.copytree(src / "runs" / run, dest / "runs" / run)
    return dest

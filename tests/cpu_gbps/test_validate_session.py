"""`mobitrace validate` of a cpu-gbps session lists every run's problem: the
runs are first read with one pandera check per table (ingest's path), and
only when one fails is each run read again alone."""

import gzip
import shutil
from pathlib import Path

from mobitrace.studies.cpu_gbps import ingest
from tests import ROOT

SMOKE = ROOT / "tests" / "fixtures" / "captures" / "cpu-gbps" / "smoke-test"


def _copy(tmp_path) -> Path:
    shutil.copytree(SMOKE, tmp_path / "smoke-test")
    return next((tmp_path / "smoke-test").iterdir())


def _break_proc_stat(run: Path) -> None:
    path = run / "proc_stat.txt.gz"
    lines = gzip.decompress(path.read_bytes()).decode().splitlines(keepends=True)
    fields = lines[1].split(" ")
    fields[3] = "x"  # a count that is not a number
    lines[1] = " ".join(fields)
    path.write_bytes(gzip.compress("".join(lines).encode()))


def test_the_committed_smoke_session_has_no_problem(tmp_path):
    assert ingest.validate_session(_copy(tmp_path)) == []


def test_two_broken_runs_are_two_problems_each_naming_its_file_synthetic(tmp_path):
    session = _copy(tmp_path)
    for run in ("up-100M-r1", "down-max-r1"):
        _break_proc_stat(session / "runs" / run)
    problems = [str(p) for p in ingest.validate_session(session)]
    assert len(problems) == 2, problems
    listed = sorted(ingest.parse_session_manifest(session / "manifest.yaml")["runs"])
    named = sorted(run for run in listed if any(f"runs/{run}/proc_stat.txt.gz" in p for p in problems))
    assert named == ["down-max-r1", "up-100M-r1"], problems

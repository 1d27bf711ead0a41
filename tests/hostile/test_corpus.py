"""The hostile-capture corpus (tests/hostile/cases.yaml): tampered copies of
committed captures of every study with a capture kit, each with the exact one-line error
`validate` must give (or `error: null` for inputs that must be accepted, such
as a BOM), and proof that nothing was followed, written or left behind.

Together with the malformed corpus (tests/fixtures/byod/corpus.yaml, run by
tests/unit/test_byod_corpus.py) this is the hostile corpus. A case marked
`xfail: "<why>"` is strict: it fails loudly once the code gives its message."""

from __future__ import annotations

import hashlib
import os
import signal
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from mobitrace import devices
from mobitrace.core.errors import InputError

from mobitrace.studies import registry

from .bases import STUDIES, make_base
from .edits import apply
from tests import ROOT

HERE = Path(__file__).resolve().parent
CASES = yaml.safe_load((HERE / "cases.yaml").read_text())["cases"]
MALFORMED = yaml.safe_load((ROOT / "tests" / "fixtures" / "byod" / "corpus.yaml").read_text())["cases"]
# Edits that could make a careless reader follow, hang or write: add-device
# (which copies) is run on these too, not only validate.
# {studies} in an error: the study names validate accepts (the registry's).
KNOWN = str(sorted(registry.by_slug()))
WRITES_AT_RISK = ("symlink", "fifo", "hardlink", "gzip_bomb", "new_symlink", "folder", "new_file")


def digest(folder: Path) -> str:
    """A digest of a tree that never follows links nor opens special files."""
    h = hashlib.sha256()
    if not os.path.lexists(folder):
        return "absent"
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            p = Path(dirpath) / name
            st = os.lstat(p)
            h.update(f"{p.relative_to(folder)}\0{stat.S_IFMT(st.st_mode)}\0".encode())
            if stat.S_ISLNK(st.st_mode):
                h.update(os.readlink(p).encode())
            elif stat.S_ISREG(st.st_mode):
                h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


def temp_leftovers() -> set[str]:
    """mobitrace's temporary folders in the temporary directory (a private one
    per test: see private_tmp; /tmp is shared with other processes)."""
    return {p for p in os.listdir(tempfile.gettempdir()) if p.startswith("mobitrace-")}


@pytest.fixture(autouse=True)
def private_tmp(tmp_path_factory, monkeypatch):
    """tempfile's directory, private to this test, so that a leftover is ours."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path_factory.mktemp("tmpdir")))


@contextmanager
def watchdog(seconds: int):
    """Fail (instead of hanging the suite) when a reader blocks, e.g. on a FIFO."""
    def bark(signum, frame):
        raise AssertionError(f"no answer within {seconds} s (a blocking read?)")
    old = signal.signal(signal.SIGALRM, bark)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _param(case: dict):
    marks = [pytest.mark.xfail(strict=True, reason=case["xfail"])] if case.get("xfail") else []
    return pytest.param(case, id=case["id"], marks=marks)


def test_corpus_size_and_coverage():
    ids = [c["id"] for c in CASES] + [c["id"] for c in MALFORMED]
    assert len(ids) == len(set(ids)), "case ids are unique"
    hostile = [c for c in CASES if c["error"] is not None] + MALFORMED
    assert len(hostile) >= 100
    assert {c["study"] for c in CASES} == set(STUDIES)
    # A study with a capture kit has a base to cut hostile inputs from.
    assert {s.slug for s in registry.studies() if s.capture_kit} <= set(STUDIES)
    for study in STUDIES:
        assert sum(c["study"] == study and c["error"] is not None for c in CASES) >= 12, study
    for c in CASES:
        assert c["error"] is None or c["error"].startswith("{case}"), c["id"]  # names the file
        assert c["error"] is None or ": expected " in c["error"] and ", found " in c["error"], c["id"]
        assert c["error"] is None or "\n" not in c["error"], c["id"]
        assert c.get("why"), c["id"]


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_hostile_capture(case, tmp_path, scratch_project):
    session = make_base(case["study"], tmp_path / "captures")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "canary").write_text("not part of any capture\n")
    apply(case, session, outside)
    expected = None if case["error"] is None else case["error"].format(case=session, studies=KNOWN)
    before, outside_before = digest(session.parent.parent), digest(outside)
    params_before = (scratch_project / "params.yaml").read_bytes()
    temps = temp_leftovers()

    with watchdog(60):
        _, problems = devices.validate(session)
    if expected is None:
        assert problems == [], [str(p) for p in problems]
    else:
        assert problems, "validate found nothing"
        assert str(problems[0]) == expected
        assert all(isinstance(p, InputError) and "\n" not in str(p) for p in problems)
        kind = next(iter(case["edit"])) if isinstance(case["edit"], dict) else case["edit"]
        if kind in WRITES_AT_RISK:
            with watchdog(60), pytest.raises(InputError) as exc:
                devices.add_device(session, root=scratch_project)
            assert str(exc.value) == expected
            assert list((scratch_project / "data" / "raw").iterdir()) == []
            assert (scratch_project / "params.yaml").read_bytes() == params_before

    assert digest(session.parent.parent) == before, "validate changed the capture"
    assert digest(outside) == outside_before, "something outside the capture changed"
    assert temp_leftovers() <= temps, "validate left a temporary folder behind"

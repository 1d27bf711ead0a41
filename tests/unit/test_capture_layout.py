"""A capture is data: the per-study allow-list of files (capture_layout), the
pipeline's check of data/raw, the strict reading of add-device's .dvc files,
and CSV cells a spreadsheet would run (synthetic trees, and the committed
data/raw as the tree that must pass)."""

from __future__ import annotations

import io
import shutil

import pandas as pd
import pytest

from mobitrace.core import capture_layout, capture_reader
from mobitrace.core.errors import InputError, printable
from mobitrace.core.io import csv_text
from mobitrace.studies import registry
from tests import ROOT

STUDY = registry.by_slug()["stack-trim"]
DVC_FILE = "outs:\n- md5: 0123456789abcdef0123456789abcdef.dir\n  size: 12\n  nfiles: 3\n  hash: md5\n  path: s2\n"


def synthetic_session(folder: Path) -> Path:
    (folder / "runs" / "lo-up-r1").mkdir(parents=True)
    for rel in ("manifest.yaml", "runs.csv", "runs/lo-up-r1/run.json", "runs/lo-up-r1/proc_stat.txt.gz"):
        (folder / rel).write_text("x\n")
    return folder


def test_the_committed_captures_pass_the_raw_tree_check():
    capture_layout.check_raw_tree(ROOT, registry.by_slug())


def test_a_synthetic_session_with_only_named_files_passes(tmp_path):
    capture_layout.check_session(synthetic_session(tmp_path / "s1"), STUDY)


@pytest.mark.parametrize("rel", ["dvc.yaml", "runs/lo-up-r1/dvc.lock", "runs/lo-up-r1/x.dvc", ".dvcignore",
                                 ".gitattributes", "runs/lo-up-r1/.gitignore", ".git/config", ".dvc/config",
                                 "runs/dvc.yaml/run.json", "runs/lo-up-r1/run.json.bak", "notes.txt",
                                 "runs/lo-up-r1/sub/run.json", "runs/a\n/run.json"])
def test_a_synthetic_session_with_an_unnamed_file_is_refused_naming_it(tmp_path, rel):
    session = synthetic_session(tmp_path / "s1")
    (session / rel).parent.mkdir(parents=True, exist_ok=True)
    (session / rel).write_text("stages: {}\n")
    with pytest.raises(InputError) as exc:
        capture_layout.check_session(session, STUDY)
    first = rel.split("/")
    named = next(str(session / "/".join(first[:n])) for n in range(1, len(first) + 1)
                 if not (session / "/".join(first[:n])).is_dir() or n == len(first) or
                 "/".join(first[:n]) not in ("runs", "runs/lo-up-r1"))
    assert str(exc.value).startswith(printable(named) + ": expected only the files a stack-trim capture holds")
    assert "\n" not in str(exc.value)


def test_names_match_over_the_whole_string():
    assert capture_reader.is_name("vm-2core")
    for bad in ("vm-2core\n", "vm\n2core", "dvc.yaml", "DVC.LOCK", "s1.dvc", "x.partial", ".git", "", "a/b"):
        assert not capture_reader.is_name(bad), repr(bad)


def test_an_error_line_shows_control_characters_escaped():
    line = str(InputError("cap/\x1b[2K\rfake ok\u202e", None, "f\n", "x", "y\n"))
    assert "\x1b" not in line and "\r" not in line and "\n" not in line and "\u202e" not in line
    assert "\\x1b[2K\\rfake ok\\u202e" in line


def synthetic_raw(root: Path) -> Path:
    device = root / "data" / "raw" / "stack-trim" / "dev"
    synthetic_session(device / "s1")
    return device


def test_a_synthetic_raw_tree_with_add_devices_dvc_files_passes(tmp_path):
    device = synthetic_raw(tmp_path)
    (device / "s2.dvc").write_text(DVC_FILE)
    (device / ".gitignore").write_text("/s2\n")
    capture_layout.check_raw_tree(tmp_path, registry.by_slug())


@pytest.mark.parametrize("name, content, found", [
    ("s2.dvc", DVC_FILE.replace("outs:", "cmd: touch PWNED\nouts:"), "keys ['cmd']"),
    ("s2.dvc", "frozen: false\ndeps:\n- path: /etc/passwd\n" + DVC_FILE, "keys ['deps', 'frozen']"),
    ("s2.dvc", DVC_FILE.replace("path: s2", "path: ../../../../etc"), "'../../../../etc'"),
    ("s2.dvc", DVC_FILE + "- md5: 0123456789abcdef0123456789abcdef.dir\n  path: s2\n", "outs"),
    ("s2.dvc", DVC_FILE.replace("0123456789abcdef0123456789abcdef.dir", "x"), "'x'"),
    ("s2.dvc", DVC_FILE.replace("hash: md5", "hash: md5\n  remote: evil"), "keys"),
    ("dvc.yaml", "stages: {}\n", "'dvc.yaml'"),
    (".dvcignore", "*\n", "'.dvcignore'"),
    (".gitattributes", "* filter=x\n", "'.gitattributes'"),
    (".gitignore", "*\n", "'*'"),
])
def test_a_synthetic_raw_tree_with_a_planted_file_is_refused(tmp_path, name, content, found):
    device = synthetic_raw(tmp_path)
    (device / name).write_text(content)
    with pytest.raises(InputError) as exc:
        capture_layout.check_raw_tree(tmp_path, registry.by_slug())
    assert str(exc.value).startswith(str(device / name) + ": ") and found in str(exc.value), str(exc.value)


@pytest.mark.parametrize("where", ["data/raw/evil.yaml", "data/raw/not-a-study/dev/s1/manifest.yaml",
                                   "data/raw/stack-trim/dvc.yaml", "data/raw/stack-trim/dev/s1/dvc.yaml"])
def test_a_synthetic_raw_tree_refuses_files_at_every_level(tmp_path, where):
    synthetic_raw(tmp_path)
    (tmp_path / where).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / where).write_text("stages: {}\n")
    with pytest.raises(InputError):
        capture_layout.check_raw_tree(tmp_path, registry.by_slug())


def test_a_run_folder_passed_as_the_capture_says_go_up(tmp_path):
    from mobitrace import devices
    session = synthetic_session(tmp_path / "dev" / "s1")
    for part in (session / "runs", session / "runs" / "lo-up-r1"):
        _, problems = devices.validate(part)
        assert len(problems) == 1 and f"a part of the session {session}: pass that folder instead" in str(problems[0])


def test_csv_cells_a_spreadsheet_would_run_are_neutralised_and_numbers_kept():
    frame = pd.DataFrame({"kernel": ["=HYPERLINK(\"http://x\")", "+cmd|x", "-cmd", "@SUM(A1)", "\tx", "\rx", "6.1.0"],
                          "value": [-1.5, 2.0, -3.0, 0.0, 1.0, 2.0, 3.0]})
    lines = csv_text(frame).splitlines()
    assert lines[1] == "\"'=HYPERLINK(\"\"http://x\"\")\",-1.5"
    assert [ln.split(",")[0] for ln in lines[2:5]] == ["'+cmd|x", "'-cmd", "'@SUM(A1)"]
    assert lines[-1] == "6.1.0,3"
    kept = pd.DataFrame({"relation": ["=", "<=", "-"], "as_text": ["-1.5", "+2", "7"]})
    assert csv_text(kept).splitlines()[1:] == ["=,-1.5", "<=,+2", "-,7"]
    assert lines[5].startswith("'\tx,") and lines[6].startswith("'\rx") or "'\rx" in csv_text(frame)
    plain = frame[~frame["kernel"].str.contains("\r")]
    assert pd.read_csv(io.StringIO(csv_text(plain)))["value"].tolist() == plain["value"].tolist()


def test_a_synthetic_device_folder_copy_keeps_only_sessions(tmp_path):
    device = synthetic_raw(tmp_path)
    shutil.copytree(device / "s1", device / "s3")
    assert capture_layout.check_device_folder(device, STUDY) == [device / "s1", device / "s3"]

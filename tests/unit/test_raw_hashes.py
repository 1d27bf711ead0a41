"""The raw folder hash ingest writes for the book (mobitrace.core.raw_hashes)
is the one DVC pins: checked against DVC's own serialization, DVC's empty
folder hash, and the committed dvc.lock."""

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import yaml
from dvc_data.hashfile.hash_info import HashInfo
from dvc_data.hashfile.tree import Tree

from mobitrace.core import raw_hashes

from tests import ROOT


def _folder_synthetic(tmp_path: Path) -> Path:
    folder = tmp_path / "device"
    for rel, data in {"s1/a.csv": b"x,y\n1,2\n", "s1/b/c.json": b"{}", "a.b": b"", "s1.txt": b"\xff" * 3,
                      "\u00e9t\u00e9/z": b"z"}.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)
    return folder


def test_the_hash_is_dvcs_tree_hash_of_the_files_synthetic(tmp_path):
    folder = _folder_synthetic(tmp_path)
    tree = Tree()
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    for path in files:
        tree.add(path.relative_to(folder).parts, None, HashInfo("md5", hashlib.md5(path.read_bytes()).hexdigest()))
    tree.digest()
    assert raw_hashes.folder_hash(folder) == {"md5": tree.hash_info.value, "nfiles": 5,
                                              "size": 8 + 2 + 0 + 3 + 1}


def test_an_empty_folder_has_dvcs_empty_folder_hash(tmp_path):
    # md5(b"[]"): the value DVC gives every empty directory.
    assert raw_hashes.folder_hash(tmp_path) == {"md5": "d751713988987e9331980363e24189ce.dir", "size": 0,
                                                "nfiles": 0}


def test_a_changed_byte_or_a_renamed_file_changes_the_hash_synthetic(tmp_path):
    folder = _folder_synthetic(tmp_path)
    before = raw_hashes.folder_hash(folder)["md5"]
    (folder / "s1/a.csv").write_bytes(b"x,y\n1,3\n")
    changed = raw_hashes.folder_hash(folder)["md5"]
    (folder / "s1/a.csv").rename(folder / "s1/A.csv")
    renamed = raw_hashes.folder_hash(folder)["md5"]
    assert len({before, changed, renamed}) == 3


def test_every_committed_raw_folder_hashes_to_what_dvc_lock_pins():
    lock = yaml.safe_load((ROOT / "dvc.lock").read_text())["stages"]
    raw = [dep for entry in lock.values() for dep in entry.get("deps", []) if dep["path"].startswith("data/raw/")]
    assert raw
    for dep in raw:
        assert raw_hashes.folder_hash(ROOT / dep["path"]) == {k: dep[k] for k in ("md5", "size", "nfiles")}, dep["path"]


def test_write_gives_the_folder_and_its_hash_and_leaves_no_temporary_file(tmp_path):
    folder = _folder_synthetic(tmp_path)
    out = raw_hashes.write(folder, tmp_path / "hashes" / "device.json")
    assert json.loads(out.read_text()) == {"path": folder.as_posix(), **raw_hashes.folder_hash(folder)}
    assert [p.name for p in out.parent.iterdir()] == ["device.json"]


def test_ingest_of_a_bad_capture_writes_no_hash_file(tmp_path):
    bad = tmp_path / "bad-device"
    bad.mkdir()
    (bad / "junk.txt").write_text("not a capture\n")
    hashes = tmp_path / "hashes.json"
    done = subprocess.run([sys.executable, "-m", "mobitrace", "ingest", "cpu-gbps", str(bad), str(tmp_path / "out"),
                           "--raw-hashes", str(hashes)], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode != 0 and done.stderr.startswith("error: "), done.stderr
    assert not hashes.exists() and not (tmp_path / "out").exists()

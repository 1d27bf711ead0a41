"""Bring your own device, end to end: in a copy of the built repository, the
commands of book/byod.md register a capture under a new device name (and a
priority-boost capture too); the rebuild (`python -m mobitrace repro`, what
`make` runs) then runs only the new devices' stages, the chapters that
summarize devices, the ledger, the landing page and the book, and each
affected chapter gets a section for the new device. The copy also holds
test_payload_escaping's device (one rebuild for both: the `byod` fixture of
tests/e2e/conftest.py)."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from .conftest import digest_tree, env, run
from .test_payload_escaping import DEVICE as PAYLOAD_DEVICE

# One worker runs this module and test_payload_escaping: they share the session fixture `byod`.
pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("byod")]

from tests import ROOT
PAGE = ROOT / "book" / "byod.md"


def page_blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", PAGE.read_text(), flags=re.S)


def page_commands() -> list[str]:
    """The `python -m mobitrace ...` lines of the page's sh blocks."""
    return [ln.strip() for block in page_blocks("sh") for ln in block.splitlines()
            if ln.strip().startswith("python -m mobitrace ")]


def register_devices(work: Path) -> dict:
    """The page's commands, then a priority-boost device kept in DVC, in the
    copy `work` (the `byod` fixture rebuilds it); the commands' outputs."""
    outputs = {}
    for cmd in page_commands():
        args = shlex.split(cmd)
        done = subprocess.run([sys.executable, *args[1:]], cwd=work, env=env(), capture_output=True, text=True)
        assert done.returncode == 0, f"{cmd}: {done.stderr}"
        outputs[cmd] = done.stdout
    # A big capture in miniature: vm-2core's session (0.78 MB) under a 0.5 MB
    # raw-storage.dvc_threshold_mb goes to DVC by size, pushed to the default
    # remote (../mobitrace-dvc-store beside this copy); my-copy (0.44 MB, added
    # above under the 5 MB default) stays in git. No stage reads the threshold.
    params = work / "params.yaml"
    params.write_text(params.read_text().replace("dvc_threshold_mb: 5\n", "dvc_threshold_mb: 0.5\n"))
    pb = subprocess.run([sys.executable, "-m", "mobitrace", "add-device", "data/raw/priority-boost/vm-2core",
                         "--device", "synthetic-large"], cwd=work, env=env(), capture_output=True, text=True)
    assert pb.returncode == 0, pb.stderr
    (work.parent / "synthetic-large.out").write_text(pb.stdout)
    return outputs


@pytest.fixture(scope="module")
def registered(byod):
    return byod


def test_page_commands_print_what_the_page_shows(registered):
    _, outputs, _ = registered
    assert [c.split()[3] for c in page_commands()] == ["validate", "add-device"]
    shown = [b.strip() for b in page_blocks("text")]
    for out in outputs.values():
        assert out.strip() in shown, out


def test_only_the_new_devices_stages_and_summaries_run(registered):
    _, _, log = registered
    ran = set(re.findall(r"Running stage '([^']+)'", log))
    required = {"ingest_analyze_cpu_gbps@my-copy", "analyze_cpu_gbps_measured",
                "ingest_priority_boost@synthetic-large", "analyze_priority_boost", "book",
                f"ingest_analyze_cpu_gbps@{PAYLOAD_DEVICE}"}
    assert required <= ran, sorted(required - ran)
    assert ran - required <= {"ledger", "overview"}, sorted(ran - required)  # the summaries of all chapters


def test_each_affected_chapter_has_a_section_for_the_new_device(registered):
    work, _, _ = registered
    html = work / "book" / "_build" / "html" / "chapters"
    cpu = (html / "cpu-gbps-measured.html").read_text()
    assert 'href="cpu-gbps-measured-devices/my-copy.html"' in cpu  # the comparison links its page
    page = (html / "cpu-gbps-measured-devices" / "my-copy.html").read_text()
    assert 'id="fig-figure1_my-copy"' in page  # its Figure 1, with alt text naming it
    assert 'alt="my-copy: ' in page
    assert (work / "data" / "results" / "cpu-gbps-devices" / "my-copy" / "figure1.svg").is_file()
    pb = (html / "priority-boost.html").read_text()
    assert 'id="fig-measured_synthetic-large"' in pb
    # its tables as the paper's, on the chapter's methods page
    assert "measured (synthetic-large, capture " in (html / "priority-boost-methods.html").read_text()


def test_pipeline_is_clean_after_adding(registered):
    work, _, _ = registered
    assert "Data and pipelines are up to date" in run(["dvc", "status"], work)


BIG = "data/raw/priority-boost/synthetic-large/s20261122"


def test_a_session_over_the_threshold_went_to_dvc_and_a_small_one_to_git(registered):
    work, _, _ = registered
    said = (work.parent / "synthetic-large.out").read_text()
    assert f"{BIG}.dvc" in said and "pushed to the DVC remote 'store'" in said, said
    assert (work / f"{BIG}.dvc").is_file()
    assert list((work / "data" / "raw").rglob("*.dvc")) == [work / f"{BIG}.dvc"]  # my-copy: git
    assert any(p.is_file() for p in (work.parent / "mobitrace-dvc-store").rglob("*"))


def _cache_objects(cache: Path, dvc_file: Path) -> set[str]:
    """The cache entries (<2 hex>/<rest>) of a DVC-added folder: its .dir listing and its files."""
    md5 = yaml.safe_load(dvc_file.read_text())["outs"][0]["md5"]
    files = cache / "files" / "md5"
    listing = json.loads((files / md5[:2] / md5[2:]).read_text())
    return {f"{h[:2]}/{h[2:]}" for h in [md5, *(e["md5"] for e in listing)]}


def test_a_fresh_clone_pulls_the_big_capture_and_rebuilds_byte_identical(registered):
    """add (by size) -> push -> git clone -> `make`'s pull + `dvc repro`. The
    clone gets the built outputs and DVC cache of every other stage (a cold
    build is 20 min), but neither the capture nor its ingest output: the
    capture must come from the remote and its ingest output be rebuilt."""
    work, _, _ = registered
    base = work.parent
    run(["git", "add", "-A"], work)
    run(["git", "commit", "-q", "-m", "synthetic-large registered"], work)
    fresh = base / "fresh"
    run(["git", "clone", "-q", str(work), str(fresh)], base)
    assert not (fresh / BIG).exists() and (fresh / f"{BIG}.dvc").is_file()
    for rel in ("data/interim", "data/results", "book/chapters", "book/_build/html"):
        shutil.copytree(work / rel, fresh / rel, dirs_exist_ok=True)
    shutil.rmtree(fresh / "data" / "interim" / "priority-boost" / "synthetic-large")
    cache = work / ".dvc" / "cache"
    skip = _cache_objects(cache, work / f"{BIG}.dvc")
    shutil.copytree(cache / "files", fresh / ".dvc" / "cache" / "files",
                    ignore=lambda d, names: [n for n in names if f"{Path(d).name}/{n}" in skip])
    pull = [sys.executable, "scripts/pull_captures.py"]

    # a remote without the capture: one line naming it and the remote, nothing built
    run(["dvc", "remote", "modify", "--local", "store", "url", str(base / "empty-store")], fresh)
    failed = subprocess.run(pull, cwd=fresh, env=env(), capture_output=True, text=True)
    assert failed.returncode == 1
    assert failed.stderr.count("\n") == 1 and BIG in failed.stderr and "empty-store" in failed.stderr, failed.stderr
    assert not (fresh / BIG).exists() and not (fresh / "data" / "interim" / "priority-boost" / "synthetic-large").exists()
    (fresh / ".dvc" / "config.local").unlink()

    fetched = run(pull, fresh)
    assert f"fetched capture {BIG} from DVC remote 'store'" in fetched
    log = run(["dvc", "repro"], fresh)
    # its ingest runs, or DVC's run cache restores its output (its objects are in the copied cache)
    redone = re.findall(r"Running stage '([^']+)'|Stage '([^']+)' is cached - skipping run", log)
    assert {a or b for a, b in redone} == {"ingest_priority_boost@synthetic-large"}, log
    rels = ["data/raw", "data/interim", "data/results"]
    assert digest_tree(fresh, rels) == digest_tree(work, rels)
    assert "Data and pipelines are up to date" in run(["dvc", "status"], fresh)
    assert run(pull, fresh) == ""  # nothing missing: nothing fetched, nothing said

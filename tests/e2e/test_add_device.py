"""Bring your own device, end to end: in a copy of the built repository, the
commands of book/byod.md register a capture under a new device name (and a
priority-boost capture too); `dvc repro` then runs only the new devices'
stages, the chapters that summarize devices, the ledger, the landing page
and the book, and
each affected chapter gets a section for the new device."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import env, run

# One worker runs the module: its module fixture (a copy rebuilt with `dvc repro`) is made once.
pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("test_add_device")]

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "book" / "byod.md"


def page_blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", PAGE.read_text(), flags=re.S)


def page_commands() -> list[str]:
    """The `python -m mobitrace ...` lines of the page's sh blocks."""
    return [ln.strip() for block in page_blocks("sh") for ln in block.splitlines()
            if ln.strip().startswith("python -m mobitrace ")]


@pytest.fixture(scope="module")
def registered(built_tree, tmp_path_factory):
    work = built_tree.copy(tmp_path_factory.mktemp("byod") / "repo")
    outputs = {}
    for cmd in page_commands():
        args = shlex.split(cmd)
        done = subprocess.run([sys.executable, *args[1:]], cwd=work, env=env(), capture_output=True, text=True)
        assert done.returncode == 0, f"{cmd}: {done.stderr}"
        outputs[cmd] = done.stdout
    pb = subprocess.run([sys.executable, "-m", "mobitrace", "add-device", "data/raw/priority-boost/vm-2core",
                         "--device", "pb-copy"], cwd=work, env=env(), capture_output=True, text=True)
    assert pb.returncode == 0, pb.stderr
    log = run(["dvc", "repro"], work)
    return work, outputs, log


def test_page_commands_print_what_the_page_shows(registered):
    _, outputs, _ = registered
    assert [c.split()[3] for c in page_commands()] == ["validate", "add-device"]
    shown = [b.strip() for b in page_blocks("text")]
    for out in outputs.values():
        assert out.strip() in shown, out


def test_only_the_new_devices_stages_and_summaries_run(registered):
    _, _, log = registered
    ran = set(re.findall(r"Running stage '([^']+)'", log))
    required = {"ingest_cpu_gbps@my-copy", "analyze_cpu_gbps_device@my-copy", "analyze_cpu_gbps_measured",
                "analyze_cpu_gbps_measured_methods", "ingest_priority_boost@pb-copy", "analyze_priority_boost",
                "analyze_priority_boost_methods", "book"}
    assert required <= ran, sorted(required - ran)
    assert ran - required <= {"ledger", "overview"}, sorted(ran - required)  # the summaries of all chapters


def test_each_affected_chapter_has_a_section_for_the_new_device(registered):
    work, _, _ = registered
    html = work / "book" / "_build" / "html" / "chapters"
    cpu = (html / "cpu-gbps-measured.html").read_text()
    assert 'id="fig-figure1_my-copy"' in cpu  # its Figure 1, with alt text naming it
    assert 'alt="my-copy: ' in cpu
    assert (work / "data" / "results" / "cpu-gbps-devices" / "my-copy" / "figure1.svg").is_file()
    assert (work / "data" / "results" / "cpu-gbps-measured" / "figures" / "figure1_my-copy.svg").is_file()
    pb = (html / "priority-boost.html").read_text()
    assert 'id="fig-measured_pb-copy"' in pb
    # its tables as the paper's, on the chapter's methods page
    assert "measured (pb-copy, capture " in (html / "priority-boost-methods.html").read_text()


def test_pipeline_is_clean_after_adding(registered):
    work, _, _ = registered
    assert "Data and pipelines are up to date" in run(["dvc", "status"], work)


def test_a_large_capture_can_live_in_a_dvc_remote_instead_of_git(registered, tmp_path):
    """The page's `dvc add` / push / pull path, with a temporary local remote."""
    work, _, _ = registered
    cap = "data/raw/cpu-gbps/my-copy"
    run(["dvc", "add", cap], work)
    run(["dvc", "remote", "add", "-d", "store", str(tmp_path / "remote")], work)
    run(["dvc", "push", f"{cap}.dvc"], work)
    shutil.rmtree(work / cap)
    run(["dvc", "pull", f"{cap}.dvc"], work)
    assert "valid cpu-gbps capture" in run([sys.executable, "-m", "mobitrace", "validate", cap], work)
    # same content, same hash: nothing to re-run
    assert "Data and pipelines are up to date" in run(["dvc", "status"], work)

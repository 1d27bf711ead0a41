"""A sixth study in four places: in a copy of the built
repository, `new-study` scaffolds a toy study (synthetic: a placeholder
published value, no capture), `python -m mobitrace repro` (what `make` runs)
runs its stages, its chapter is in the book. The copy stays in pytest's
temporary folder, which pytest prunes itself (it keeps the last run's):
deleting its thousands of files waits on the disk, holding up a worker."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.e2e.conftest import REPRO, env

# One worker runs the module: its module fixture (a rebuilt copy) is made once.
pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("test_new_study")]
NAME = "toy-study"


@pytest.fixture(scope="module")
def scaffolded(built_tree, tmp_path_factory):
    work = built_tree.copy(tmp_path_factory.mktemp("new-study") / "repo")
    # The copy's own package (with the new study folder), not the installed one.
    copy_env = {**env(), "PYTHONPATH": str(work / "src")}
    done = subprocess.run([sys.executable, "-m", "mobitrace", "new-study", NAME], cwd=work, env=copy_env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    repro = subprocess.run(REPRO, cwd=work, env=copy_env, capture_output=True, text=True)
    assert repro.returncode == 0, repro.stdout + repro.stderr
    return work, done.stdout, repro.stdout + repro.stderr


def test_synthetic_toy_study_touches_at_most_four_places(scaffolded):
    work, out, _ = scaffolded
    written = {line.split(" ", 1)[1] for line in out.splitlines() if line.startswith("wrote ")}
    assert f"data/interim/{NAME}/.gitignore" in written  # DVC's bookkeeping: the chapter's input folder
    written.discard(f"data/interim/{NAME}/.gitignore")
    places = {("study folder" if w.startswith("src/mobitrace/studies/toy_study/") else w) for w in written}
    # The folder, the notebook, the published numbers, params.yaml; dvc.yaml,
    # the table of contents and byod.md's per-study tables are generated from the registry.
    assert places == {"study folder", f"notebooks/{NAME}.py", f"data/published/{NAME}.yaml", "params.yaml",
                      "dvc.yaml", "book/_toc.yml", "book/_byod_stages.md", "book/_byod_files.md"}
    # Besides those: DVC's bookkeeping (.gitignore entries, dvc.lock) and the
    # new chapter's verdicts.json (its DVC metrics).
    changed = subprocess.run(["git", "status", "--porcelain"], cwd=work, capture_output=True, text=True).stdout
    assert not [ln for ln in changed.splitlines() if not re.search(
        r"(toy_study/|toy-study|params\.yaml|dvc\.yaml|dvc\.lock|_toc\.yml|_byod_\w+\.md|\.gitignore)", ln)], changed


def test_synthetic_toy_study_runs_its_stages(scaffolded):
    _, _, log = scaffolded
    ran = set(re.findall(r"Running stage '([^']+)'", log))
    assert {"ingest_published", "analyze_toy_study", "ledger", "overview", "book"} <= ran
    assert not [s for s in ran if s.startswith(("ingest_cpu", "ingest_priority", "analyze_cpu", "analyze_priority",
                                                  "analyze_stack", "analyze_transfer", "analyze_mptcp"))], ran


def test_synthetic_toy_study_has_its_chapter_in_the_book(scaffolded):
    work, _, _ = scaffolded
    page = work / "book" / "_build" / "html" / "chapters" / f"{NAME}.html"
    text = page.read_text()
    assert "Toy study" in text and 'id="fig-published_values"' in text
    landing = (work / "book" / "_build" / "html" / "chapters" / "overview.html").read_text()
    assert f'href="{NAME}.html"' in landing


# The tests that list studies take the list from the registry, so they hold
# for the toy study too (the copy's own package and tests).
LISTING_TESTS = ["tests/unit/test_registry.py", "tests/unit/test_params.py", "tests/unit/test_notebooks_thin.py",
                 "tests/unit/test_layers.py", "tests/hostile/test_byod_page.py",
                 "tests/hostile/test_corpus.py::test_corpus_size_and_coverage",
                 "tests/unit/test_byod_corpus.py::test_broken_capture_gets_its_exact_error[session-wrong-study]",
                 "tests/unit/test_byod_corpus.py::test_broken_capture_gets_its_exact_error[session-missing-study]",
                 "tests/hostile/test_corpus.py::test_hostile_capture[cpu-gbps-manifest-study-list]"]


def test_synthetic_toy_study_passes_the_tests_that_list_studies(scaffolded):
    work, _, _ = scaffolded
    # -v: one line per test, so this run also shows test_params collected the toy study.
    done = subprocess.run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "-p", "no:randomly",
                           "-p", "no:xdist", *LISTING_TESTS], cwd=work,
                          env={**env(), "PYTHONPATH": str(work / "src")}, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    params_tests = [ln for ln in done.stdout.splitlines() if ln.startswith("tests/unit/test_params.py::")]
    assert [ln for ln in params_tests if "toy-study" in ln and " PASSED" in ln], params_tests

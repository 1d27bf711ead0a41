"""Thin notebooks (book/code.md, "How the code is organized"): a notebook
holds narration, parameters, calls and display; no definitions; it imports
from its study only the chapter's module (studies/<package>/chapter.py, or
chapter_<rest>.py for a chapter named <slug>-<rest>); every code cell says
how the book shows it."""

from __future__ import annotations

import ast
from pathlib import Path

import jupytext
import pytest

from mobitrace.studies import registry

from tests import ROOT
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.py"))
MAX_LINES = 250
MAX_CODE_LINES = 60
SHOWN_AS = {"parameters", "hide-input", "remove-input", "remove-cell"}


def _chapter_modules() -> dict[str, str]:
    """Each chapter notebook's name -> the one study module it may import."""
    return {c.name: f"mobitrace.studies.{s.package}.{s.chapter_module(c.name)}"
            for s in registry.studies() for c in s.chapters}


def _code_cells(path: Path):
    return [c for c in jupytext.read(path).cells if c.cell_type == "code"]


def _study_imports(tree: ast.AST) -> set[str]:
    """Every mobitrace.studies module a piece of code imports, as written."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            # "from mobitrace.studies.x import chapter" imports the module chapter
            found |= {f"{node.module}.{a.name}" for a in node.names if node.module.count(".") == 2}
    return {m for m in found if m.startswith("mobitrace.studies")}


def study_imports_outside_convention(name: str, source: str) -> set[str]:
    """The study modules `source` (notebook `name`'s code) imports other than
    its chapter module."""
    allowed = _chapter_modules().get(name)
    # The registry is the list of studies, not a study: the pages that list
    # every study (the ledger, the landing page) read their cards from it.
    imported = {m for m in _study_imports(ast.parse(source))
                if m != "mobitrace.studies.registry" and not m.startswith("mobitrace.studies.registry.")}
    if allowed is None:
        return imported
    parents = {allowed.rsplit(".", 1)[0]}  # "from mobitrace.studies.<package> import chapter"
    return imported - {allowed} - parents


def definitions(source: str) -> list[str]:
    return [n.name for n in ast.walk(ast.parse(source))
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]


def test_every_chapter_has_its_notebook_and_module():
    for study in registry.studies():
        for chapter in study.chapters:
            assert (ROOT / "notebooks" / f"{chapter.name}.py").exists()
            assert (study.folder() / f"{study.chapter_module(chapter.name)}.py").exists(), chapter.name


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_defines_nothing(path):
    source = "\n".join(c.source for c in _code_cells(path))
    assert not definitions(source), f"{path.name} defines {definitions(source)}: move them to its chapter module"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_imports_only_its_chapter_module_from_the_study(path):
    source = "\n".join(c.source for c in _code_cells(path))
    assert not study_imports_outside_convention(path.stem, source), (
        f"{path.name} imports {study_imports_outside_convention(path.stem, source)}; "
        f"display code lives in {_chapter_modules().get(path.stem, 'no study module')}")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_code_cell_says_how_it_shows(path):
    untagged = [c.source.splitlines()[0] if c.source else "" for c in _code_cells(path)
                if len(SHOWN_AS & set(c.metadata.get("tags", []))) != 1]
    assert not untagged, f"{path.name}: code cells without exactly one of {sorted(SHOWN_AS)}: {untagged}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_code_is_calls(path):
    n = sum(len(c.source.splitlines()) for c in _code_cells(path))
    assert n <= MAX_CODE_LINES, f"{path.name} has {n} lines of code (at most {MAX_CODE_LINES})"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_under_the_line_limit(path):
    n = len(path.read_text().splitlines())
    assert n < MAX_LINES, f"{path.name} has {n} lines (limit {MAX_LINES})"


# The checks themselves can fail.
def test_checks_catch_a_fat_notebook():
    assert definitions("def f():\n    pass\nclass C:\n    pass\n") == ["f", "C"]
    assert study_imports_outside_convention(
        "priority-boost", "from mobitrace.studies.priority_boost import analysis as pba\n") == {
        "mobitrace.studies.priority_boost.analysis"}
    assert study_imports_outside_convention(
        "priority-boost", "from mobitrace.studies.priority_boost.figures import p_ranges\n") == {
        "mobitrace.studies.priority_boost.figures"}
    assert not study_imports_outside_convention(
        "cpu-gbps-measured", "from mobitrace.studies.cpu_gbps.chapter_measured import Chapter\n")
    assert study_imports_outside_convention(
        "cpu-gbps-measured", "from mobitrace.studies.cpu_gbps.chapter import Chapter\n") == {
        "mobitrace.studies.cpu_gbps.chapter"}
    assert study_imports_outside_convention("overview", "import mobitrace.studies.stack_trim.chapter\n")
    assert not study_imports_outside_convention(
        "priority-boost-methods", "from mobitrace.studies.priority_boost.chapter_methods import Chapter\n")
    assert study_imports_outside_convention(
        "priority-boost-methods", "from mobitrace.studies.priority_boost.chapter import Chapter\n")

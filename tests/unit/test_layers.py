"""The package's layers point one way: analysis (core/, stats/, energy/)
never imports presentation (book/), book/ imports no study, and no two
packages import each other."""

import ast
from pathlib import Path

import pytest

from tests import ROOT

PACKAGE = ROOT / "src" / "mobitrace"


def _imports() -> dict[str, set[str]]:
    """{part of the package (a subpackage or a top-level module): the parts it imports}."""
    def part(module: str) -> str | None:
        names = module.split(".")
        return names[1] if names[0] == "mobitrace" and len(names) > 1 else None

    found: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        if "templates" in path.relative_to(PACKAGE).parts:
            continue
        me = path.relative_to(PACKAGE).parts[0].removesuffix(".py")
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                modules = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                modules = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            else:
                continue
            found.setdefault(me, set()).update(p for p in map(part, modules) if p and p != me)
    return found


def test_no_two_parts_of_the_package_import_each_other():
    imports = _imports()
    cycles = sorted({tuple(sorted((a, b))) for a, targets in imports.items() for b in targets
                     if a in imports.get(b, set())})
    assert not cycles


@pytest.mark.parametrize("analysis", ["core", "stats", "energy"])
def test_analysis_never_imports_presentation(analysis):
    assert not _imports().get(analysis, set()) & {"book", "studies", "notebooks", "pipeline", "cli"}


def test_the_book_imports_no_study():
    assert "studies" not in _imports().get("book", set())


def _study_modules(*names: str) -> list[Path]:
    return sorted(p for name in names for p in (PACKAGE / "studies").glob(f"*/{name}"))


@pytest.mark.parametrize("path", _study_modules("analysis.py", "measured_analysis.py", "ingest.py", "schema.py"),
                         ids=lambda p: str(p.relative_to(PACKAGE)))
def test_a_studys_analysis_never_imports_presentation(path):
    """A study's numbers are computed without the book: its figures and
    tables for people live in its chapter and figures modules."""
    imported = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            imported.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
    assert not {m for m in imported if m.startswith("mobitrace.book") or m.split(".")[-1] in ("chapter", "figures")}
    assert not {m for m in imported if m.startswith(("matplotlib", "seaborn"))}

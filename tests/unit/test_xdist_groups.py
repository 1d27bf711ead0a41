"""Every end-to-end module with a module-scoped fixture (a rebuilt copy, a
chapter run: minutes) is one xdist group, so that one worker makes the
fixture once: without the mark each worker that gets one of its tests makes
it again (tests/conftest.py groups by the module's `xdist_group`)."""

import ast

import pytest

from tests import ROOT


def _module_scoped(tree: ast.Module) -> bool:
    return any(isinstance(kw.value, ast.Constant) and kw.arg == "scope" and kw.value.value == "module"
               for node in ast.walk(tree) if isinstance(node, ast.Call) for kw in node.keywords)


def _grouped(tree: ast.Module) -> bool:
    return any(isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "pytestmark" for t in node.targets)
               and "xdist_group" in ast.unparse(node.value) for node in tree.body)


@pytest.mark.parametrize("module", sorted(p.name for p in (ROOT / "tests" / "e2e").glob("test_*.py")))
def test_an_end_to_end_module_with_a_module_fixture_is_one_xdist_group(module):
    tree = ast.parse((ROOT / "tests" / "e2e" / module).read_text())
    assert not _module_scoped(tree) or _grouped(tree), f"{module}: add pytest.mark.xdist_group to its pytestmark"


def test_every_unit_the_scheduler_starts_first_is_an_end_to_end_group_or_module():
    """tests/e2e/conftest.py's LONGEST_FIRST names xdist groups or test
    modules that exist (a renamed one would silently lose its place)."""
    import re

    from tests.e2e.conftest import LONGEST_FIRST, e2e_rank

    modules = sorted((ROOT / "tests" / "e2e").glob("test_*.py"))
    units = {f"tests/e2e/{p.name}" for p in modules}
    units |= {g for p in modules for g in re.findall(r"xdist_group\(\"([^\"]+)\"\)", p.read_text())}
    assert set(LONGEST_FIRST) <= units, set(LONGEST_FIRST) - units
    assert e2e_rank("tests/e2e/test_lighthouse.py::test_x") < e2e_rank("tests/e2e/test_pipeline.py::test_x")
    assert e2e_rank("byod") == 0 and e2e_rank("test_stack_trim_devices_synthetic") == len(LONGEST_FIRST)

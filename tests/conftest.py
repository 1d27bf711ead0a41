import functools
from pathlib import Path

import pytest

from tests import ROOT

FIXTURES = ROOT / "tests" / "fixtures"


@pytest.fixture(scope="session")
def repo() -> Path:
    """The repository (tests.ROOT), for tests that take it as a fixture."""
    return ROOT


@pytest.fixture
def fixtures():
    return FIXTURES


def _new_project(project: Path) -> Path:
    """A throw-away project for add-device at `project`: a copy of
    params.yaml and an empty data/raw."""
    import shutil
    (project / "data" / "raw").mkdir(parents=True)
    shutil.copy(ROOT / "params.yaml", project / "params.yaml")
    return project


@pytest.fixture
def scratch_project(tmp_path):
    """A throw-away project for add-device (_new_project) in tmp_path."""
    return _new_project(tmp_path / "project")


@pytest.fixture(scope="session")
def dvc_template(tmp_path_factory):
    """A _new_project as a committed git + DVC project whose default
    DVC remote `store` is the folder `remote` beside the project (DVC keeps a
    local remote's relative path relative to .dvc/, so a copy beside its own
    `remote` uses that one). Set up once per worker: `dvc init` and `dvc
    remote add` are a second of CPU each time."""
    import subprocess
    import sys

    project = _new_project(tmp_path_factory.mktemp("dvc-template") / "project")

    def run(*args):
        subprocess.run(args, cwd=project, check=True, capture_output=True)
    run("git", "init", "-q")
    run(sys.executable, "-m", "dvc", "init", "-q")
    run(sys.executable, "-m", "dvc", "remote", "add", "-d", "store", "../remote")
    run("git", "add", "-A")
    run("git", "-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-qm", "project")
    return project


@pytest.fixture
def dvc_project(scratch_project, dvc_template):
    """scratch_project as a git + DVC project (committed) whose default DVC
    remote `store` is the local folder tmp_path/remote: a copy of dvc_template."""
    import shutil
    shutil.copytree(dvc_template, scratch_project, symlinks=True, dirs_exist_ok=True)  # tmp_path/project
    return scratch_project


def pytest_collection_modifyitems(config, items):
    """End-to-end tests last: their shared build (tests/e2e/conftest.py) runs
    in the background while the other tests run. The tests that mostly wait
    (marker `waits`) first: beside the build, whose CPU work fills their
    waits; at the end, with nothing beside them, the cores idled (about 15 %
    of the last minute)."""
    items.sort(key=lambda item: (item.get_closest_marker("e2e") is not None,
                                 item.get_closest_marker("waits") is None))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """(xdist controller) `--dist loadgroup` that groups: xdist 3.8 marks a
    test's group by appending it to the node id, which pytest 9.2 no longer
    lets a plugin change (pytest-dev/pytest-xdist#1386), so every test was
    its own unit and each worker built the e2e modules' fixtures again. Here
    the group comes from the test module's `pytestmark`. Once the shared
    build is there a worker gets the longest end-to-end unit left, else the
    first other unit, else the longest end-to-end unit (it waits): the long
    end-to-end units start as soon as they can, the short ones and the unit
    tests fill the wait and the end. A module whose module-scoped set-up costs seconds is
    its own group, so that one worker makes it once, not every worker."""
    if config.getvalue("dist") != "loadgroup":
        return None
    import ast

    from xdist.scheduler import LoadGroupScheduling

    from tests.e2e.conftest import Built, e2e_rank

    @functools.cache
    def module(path: str) -> ast.Module:
        """A test module's syntax tree (the controller does not collect, and
        importing a test module here would miss the sys.path its collection
        sets up)."""
        return ast.parse((Path(config.rootpath) / path).read_text()) if path.endswith(".py") else ast.Module([], [])

    @functools.cache
    def module_group(path: str) -> str | None:
        """The xdist_group(s) of a module's `pytestmark`."""
        names = set()
        for node in module(path).body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "pytestmark" for t in node.targets):
                for call in ast.walk(node.value):
                    if isinstance(call, ast.Call) and getattr(call.func, "attr", None) == "xdist_group":
                        arg = call.args[0] if call.args else next(k.value for k in call.keywords if k.arg == "name")
                        names.add(str(ast.literal_eval(arg)))
        return "_".join(sorted(names)) or None

    built = Built(config._tmp_path_factory.getbasetemp())  # the workers' shared folder

    class ModuleGroups(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return module_group(nodeid.split("::", 1)[0]) or super()._split_scope(nodeid)

        @functools.cached_property
        def _e2e(self) -> list[str]:
            """The end-to-end units (last in collection order), the longest first."""
            units = [scope for scope, unit in self.workqueue.items() if any(i.startswith("tests/e2e/") for i in unit)]
            return sorted(units, key=e2e_rank)

        def _assign_work_unit(self, node) -> None:
            first = next(iter(self.workqueue), None)
            if built.log_file.exists() or first in self._e2e:  # built, or only end-to-end units left
                ready = next((s for s in self._e2e if s in self.workqueue), None)
                if ready:
                    self.workqueue.move_to_end(ready, last=False)
            super()._assign_work_unit(node)

    config.option.loadscopereorder = False  # collection order: end-to-end units last
    return ModuleGroups(config, log)


def pytest_collection_finish(session):
    from tests.e2e.conftest import start_background_builds
    start_background_builds(session, ROOT)


_ran_a_test = False


def pytest_runtest_logstart(nodeid, location):
    global _ran_a_test
    _ran_a_test = True


def pytest_sessionfinish(session, exitstatus):
    from tests.e2e.conftest import stop_background_builds
    # Interrupted, or no test ran here (e.g. xdist refused the collection): nobody needs the build.
    stop_background_builds(interrupted=exitstatus == pytest.ExitCode.INTERRUPTED or not _ran_a_test)


_fuzz_from_workers: dict | None = None


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """(xdist controller) A worker's fuzz figures (tests/hostile/conftest.py)."""
    global _fuzz_from_workers
    part = getattr(node, "workeroutput", {}).get("fuzz")
    if part:
        from tests.hostile.conftest import merge
        _fuzz_from_workers = merge(_fuzz_from_workers, part)


def pytest_terminal_summary(terminalreporter):
    from tests.hostile.conftest import in_process, report
    figures = in_process() or _fuzz_from_workers
    if figures:
        report(terminalreporter, figures)

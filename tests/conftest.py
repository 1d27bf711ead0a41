from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ROOT = REPO
FIXTURES = ROOT / "tests" / "fixtures"


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture
def root():
    return ROOT


@pytest.fixture
def fixtures():
    return FIXTURES


@pytest.fixture
def scratch_project(tmp_path):
    """A throw-away project for add-device: a copy of params.yaml and an
    empty data/raw."""
    import shutil
    project = tmp_path / "project"
    (project / "data" / "raw").mkdir(parents=True)
    shutil.copy(ROOT / "params.yaml", project / "params.yaml")
    return project

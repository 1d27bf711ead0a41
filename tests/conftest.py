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

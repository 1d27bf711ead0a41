import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
KIT = REPO / "scripts" / "capture" / "priority_boost"
sys.path.insert(0, str(KIT))


@pytest.fixture(scope="session")
def pb_repo() -> Path:
    return REPO

import sys
from pathlib import Path

import pytest

from tests import ROOT as REPO
KIT = REPO / "scripts" / "capture" / "priority_boost"
sys.path.insert(0, str(KIT))


@pytest.fixture(scope="session")
def pb_repo() -> Path:
    return REPO

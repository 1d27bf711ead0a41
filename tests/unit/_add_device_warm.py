"""Imported by the forkserver of tests/unit/_forked_cli.py before
it forks any add-device run: mobitrace's CLI, and one validate of the smoke
capture, which does pandera's and the reader's lazy set-up once instead of
in every forked run (validate writes nothing)."""

from pathlib import Path

from mobitrace import cli, devices  # noqa: F401  (what every run imports)
from mobitrace.core import io  # noqa: F401  (add-device's repo_root)
from tests import ROOT

SMOKE = ROOT / "tests" / "fixtures" / "captures" / "cpu-gbps" / "smoke-test"
devices.validate(SMOKE)

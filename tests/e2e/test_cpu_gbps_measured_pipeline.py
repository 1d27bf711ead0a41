"""End to end: a clean clone of the repository rebuilds the measured cpu-gbps
chapter from the committed raw captures (no capture tool needed), a second
`dvc repro` does nothing, and the results are the bytes the committed
dvc.lock pins (the build it records was another run). The clone and its
cold build (which sees only the venv and git on its PATH) are the ones every
end-to-end test shares (tests/e2e/conftest.py)."""

import json

import pandas as pd
import pytest
import yaml

from .conftest import committed_digests, digest_tree

pytestmark = pytest.mark.e2e

RESULTS = ["data/results/cpu-gbps-measured", "data/results/cpu-gbps-devices", "data/interim/cpu-gbps"]


def test_clean_clone_rebuilds_measured_chapter(built_tree):
    clone = built_tree.clone
    # No capture tool is needed: the build's PATH is the venv and git only.
    assert built_tree.env["PATH"].split(":")[1:] == [str(clone.parent / "bin")]
    assert [p.name for p in (clone.parent / "bin").iterdir()] == ["git"]
    params = yaml.safe_load((clone / "params.yaml").read_text())["cpu-gbps-measured"]
    claims = pd.read_csv(clone / "data/results/cpu-gbps-measured/claims.csv")
    assert len(claims) >= 2 * len(params["devices"]) + 4
    metrics = json.loads((clone / "data/results/cpu-gbps-measured/metrics.json").read_text())
    for device in params["devices"]:
        m = metrics["devices"][device]["down.stat_total"]
        assert m["gbps_at_50pct"] is not None
    assert (clone / "book/_build/html/chapters/cpu-gbps-measured.html").exists()
    # Nothing changed: nothing runs.
    out = built_tree.second_repro()
    assert "Running stage" not in out, out
    # Another run's bytes: those the committed dvc.lock pins.
    assert digest_tree(clone, RESULTS, gitignores=False) == committed_digests(clone, RESULTS)

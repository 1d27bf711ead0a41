"""A second mptcp-dualband device reaches every figure, table and claim
that the first does, and gets a page of its own.

The second device is synthetic: a copy of the committed device's ingested
runs under the name synthetic-copy, in a temporary project; it never leaves
the test's folder. The chapter runs in-process, its methods called in the
order the notebook calls them (read from the notebook, so that the test
follows it), with fewer bootstrap draws (the reach is tested here, not the
intervals).
"""

from __future__ import annotations

import functools
import inspect
import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from tests import ROOT

REAL = "vm-veth-2path"
SYNTHETIC = "synthetic-copy"
STAGE = re.compile(r"^:stage: (.*)$", re.M)


def notebook_calls() -> list[str]:
    """The chapter methods the notebook calls, in order."""
    return re.findall(r"^ch\.(\w+)\(\)$", (ROOT / "notebooks/mptcp-dualband.py").read_text(), re.M)


# One worker makes the module fixture once (tests/unit/test_xdist_groups.py).
pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("test_mptcp_devices_synthetic")]


@pytest.fixture(scope="module")
def synthetic_run(built, tmp_path_factory):
    import matplotlib
    matplotlib.use("Agg")
    from mobitrace.core import params as core_params
    from mobitrace.studies.mptcp_dualband import chapter as mdc

    clone, _ = built  # the shared cold build's ingested capture (tests/e2e/conftest.py)
    interim = clone / "data/interim/mptcp-dualband" / REAL
    assert (interim / "runs.parquet").is_file(), interim
    work = tmp_path_factory.mktemp("mptcp-devices")
    for name in (REAL, SYNTHETIC):
        dest = work / "interim" / name
        dest.mkdir(parents=True)
        runs = pd.read_parquet(interim / "runs.parquet").assign(device=name)
        runs.to_parquet(dest / "runs.parquet", index=False)
        shutil.copyfile(interim / "manifests.json", dest / "manifests.json")
    names = [p for p in inspect.signature(mdc.Chapter.__init__).parameters if p != "self"]
    kwargs = core_params.arguments("mptcp-dualband", names)
    kwargs.update({k: str(clone / v) for k, v in kwargs.items() if isinstance(v, str) and v.startswith("data/")})
    kwargs.update(devices=[REAL, SYNTHETIC], reference_device=REAL, interim_dir=str(work / "interim"),
                  results_dir=str(work / "results"), published_dir=kwargs["published_dir"])
    mp = pytest.MonkeyPatch()
    mp.chdir(work)  # the device pages' folder (registry) is relative to the project
    mp.setattr(mdc.ratio_sweep, "boot", functools.partial(mdc.ratio_sweep.boot, n_boot=200))
    mp.setattr(mdc.rs, "mean_ci_errorbar", lambda *a, **k: None)  # no bands: the figures' reach is tested
    try:
        ch = mdc.Chapter(**kwargs)
        for call in notebook_calls():
            getattr(ch, call)()
    finally:
        mp.undo()
    return ch, work


def _names(folder: Path, pattern: str) -> set[str]:
    return {p.name for p in folder.glob(pattern)}


def test_synthetic_second_device_reaches_every_figure_and_table(synthetic_run):
    ch, work = synthetic_run
    figures, tables = work / "results/figures", work / "results/tables"
    mine = {d: (_names(figures / d, "*.svg"), _names(tables / d, "*.csv")) for d in (REAL, SYNTHETIC)}
    assert mine[REAL] == mine[SYNTHETIC]
    # Every figure and table the chapter shows for the reference device, each device has.
    main_figures = {n for n in _names(figures, "*.svg") if not n.startswith("robustness")}  # all devices' claims
    assert main_figures and main_figures <= mine[SYNTHETIC][0]
    cross = {"device_comparison", "key_findings", "robustness"}
    main_tables = {n for n in _names(tables, "*.csv") if n[:-4] not in cross}
    assert main_tables and main_tables <= mine[SYNTHETIC][1]


def test_synthetic_second_device_reaches_every_claim(synthetic_run):
    ch, work = synthetic_run
    claims = pd.read_csv(work / "results/claims.csv")
    ids = set(claims["claim_id"])
    real = {c[: -len("_vm_veth_2path")] for c in ids if c.endswith("_vm_veth_2path")}
    synthetic = {c[: -len("_synthetic_copy")] for c in ids if c.endswith("_synthetic_copy")}
    assert real and real == synthetic
    shared = ids - {f"{c}_vm_veth_2path" for c in real} - {f"{c}_synthetic_copy" for c in synthetic}
    assert shared == {"tput_opt_ratio_arith_dl", *(f"{d}_{m}_guideline" for d, m in
                                                   (("dl", 1750), ("dl", 1500), ("dl", 500), ("ul", 1750),
                                                    ("ul", 1400), ("ul", 500)))}
    # The same data give the same verdicts: each claim is decided on its own device's data.
    by = claims.set_index("claim_id")["verdict"]
    assert all(by[f"{c}_vm_veth_2path"] == by[f"{c}_synthetic_copy"] for c in real)
    metrics = json.loads((work / "results/metrics.json").read_text())
    assert set(metrics["devices"]) == {REAL, SYNTHETIC} and metrics["reference_device"] == REAL


def test_synthetic_every_device_has_a_page_citing_only_its_capture(synthetic_run):
    ch, work = synthetic_run
    comparison = pd.read_csv(work / "results/tables/device_comparison.csv")
    assert list(comparison["device"]) == [REAL, SYNTHETIC]
    for device, other in ((REAL, SYNTHETIC), (SYNTHETIC, REAL)):
        page = (work / "book/chapters/mptcp-dualband-devices" / f"{device}.md").read_text()
        for name in _names(work / "results/figures" / device, "*.svg"):
            if not name.endswith("-narrow.svg"):
                assert f"figures/{device}/{name}" in page, name
        claims = page[page.index("## Claims"):]  # its claims, one row each
        n = int(pd.read_csv(work / "results/claims.csv")["claim_id"].str.endswith("_" + device.replace("-", "_")).sum())
        assert n >= 10 and f"checked on {device}" in claims and claims.count("<tr") >= n
        stages = {s for line in STAGE.findall(page) for s in line.split()}
        assert f"ingest_mptcp_dualband@{device}" in stages
        assert not any(other in s for s in stages), stages

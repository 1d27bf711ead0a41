"""The transfer-tuning chapter on the shared cold build (tests/e2e/conftest.py):
every device reaches every figure, table and claim that the reference
device does, on a generated page of its own linked from the main page's
comparison; and each gain or saving is testbed-bound exactly where the
40 Mbit/s link cannot reach the paper's band (data/published/claim-categories.yaml)."""

from __future__ import annotations

import re

import pandas as pd
import pytest
import yaml

pytestmark = pytest.mark.e2e

STUDY = "transfer-tuning"


def _params(clone):
    return yaml.safe_load((clone / "params.yaml").read_text())[STUDY]


def _key(device: str) -> str:
    return device.replace("-", "_")


def _own(names, device: str) -> set[str]:
    """The names of `device`'s files among `names`, with the device cut out
    (fig2_<device>.svg -> fig2_{}.svg)."""
    pattern = re.compile(rf"^(.*_){re.escape(device)}((?:-narrow)?\.(?:svg|csv))$")
    return {f"{m.group(1)}{{}}{m.group(2)}" for m in map(pattern.match, names) if m}


def test_every_device_reaches_every_figure_table_and_claim_of_the_reference(built):
    clone, _ = built
    params = _params(clone)
    ref, devices = params["reference_device"], params["devices"]
    others = [d for d in devices if d != ref]
    assert others, "params.yaml lists one transfer-tuning device: nothing to compare"
    res = clone / "data" / "results" / STUDY
    figures = [p.name for p in (res / "figures").glob("*.svg")]
    tables = [p.name for p in (res / "tables").glob("*.csv")]
    ref_figures, ref_tables = _own(figures, ref), _own(tables, ref)
    assert len(ref_figures) >= 2 * 5, sorted(ref_figures)  # Figures 2, 7, 8, 9, ratios (and phone layouts)
    for device in others:
        assert _own(figures, device) == ref_figures, device
        assert _own(tables, device) == ref_tables, device
    # Every shared table with a device column has every device's rows.
    for name in tables:
        frame = pd.read_csv(res / "tables" / name)
        if "device" in frame and not any(name.endswith(f"_{d}.csv") for d in devices):
            assert set(devices) <= set(frame["device"]), name
    # The claims: the same ones on every device, under ids that name it.
    ids = pd.read_csv(res / "claims.csv")["claim_id"]
    claimed = {d: {c[:-len(_key(d)) - 1] for c in ids if c.endswith("_" + _key(d))} for d in devices}
    assert len(claimed[ref]) >= 10
    for device in others:
        assert claimed[device] == claimed[ref], device
    # A page per device, each as full as the reference's, its boxes naming only its own capture.
    pages = clone / "book" / "chapters" / f"{STUDY}-devices"
    text = {d: (pages / f"{d}.md").read_text(encoding="utf-8") for d in devices}
    for device in others:
        for mark in ("<figure", "<table", "{provenance}"):
            assert text[device].count(mark) == text[ref].count(mark), (device, mark)
    for device, page in text.items():
        for stages in re.findall(r"^:stage: (.*)$", page, re.M):
            assert set(stages.split()) <= {f"ingest_transfer_tuning@{device}", "ingest_published"}, stages
    main = (clone / "book" / "_build" / "html" / "chapters" / f"{STUDY}.html").read_text(encoding="utf-8")
    for device in devices:
        assert f'href="{STUDY}-devices/{device}.html"' in main, device
        assert (clone / "book" / "_build" / "html" / "chapters" / f"{STUDY}-devices" / f"{device}.html").is_file()


def test_a_gain_or_saving_is_testbed_bound_exactly_where_the_link_cannot_reach_the_papers_band(built):
    """No transfer beats the link: a knob raises a dataset's throughput at
    most by the link rate over its rate at level 1 (x), and under the stated
    model a saving is then at most 100 (1 - 1/x). A claim is testbed-bound
    when that ceiling lies below the paper's band, evidence otherwise."""
    clone, _ = built
    params = _params(clone)
    res = clone / "data" / "results" / STUDY
    claims = pd.read_csv(res / "claims.csv").set_index("claim_id")
    rates = pd.read_csv(res / "tables" / "captures.csv").set_index("device")["rate_mbit"]
    base = {f: pd.read_csv(res / "tables" / f"sweep_{f}.csv").query("level == 1")
            .set_index(["device", "dataset"])["throughput_mbps"] for f in ("concurrency", "parallelism")}
    grid = pd.read_csv(res / "tables" / "grid.csv").query("concurrency == 1 and parallelism == 1")
    checked = 0
    for device in params["devices"]:
        rate = rates[device]
        x = {ds: rate / base["concurrency"][(device, ds)] for ds in ("html", "image", "video")}
        x_grid = float((rate / grid.loc[grid["device"] == device, "throughput_mbps"]).max())
        ceilings = {**{f"cc_{ds}_xfold": c for ds, c in x.items()},
                    **{f"cc_{ds}_saving": 100 * (1 - 1 / c) for ds, c in x.items()},
                    "p_video_xfold": rate / base["parallelism"][(device, "video")],
                    "combined_xfold": x_grid, "combined_saving": 100 * (1 - 1 / x_grid)}
        for claim, ceiling in ceilings.items():
            row = claims.loc[f"{claim}_{_key(device)}"]
            reachable = ceiling >= row["paper_value"] * (1 - params["rel_tol_approx"])
            assert (row["category"] == "testbed-bound") == (not reachable), (claim, device, ceiling, row["category"])
            checked += 1
    assert checked == 9 * len(params["devices"])

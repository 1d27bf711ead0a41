"""The cpu-gbps-measured chapter at 5 and at 100 devices: its page is no
longer (within 20%; shorter where a long table folds), and every device gets a page of its own whose provenance
boxes name only that device's stage.

What is measured: the executed chapter notebook as the book renders it
(mobitrace.notebooks.for_readers: removed cells dropped), its visible
outputs and prose with folded blocks (<details>) left out, and the device
pages the chapter writes; not the HTML of a full 100-device book build (a
cold build of that takes minutes). At 5 devices (the committed ones) it is
the shared cold build's own page; at 100, the chapter run here. The 95 extra devices are synthetic:
copies of the committed devices' interim runs under the names
synthetic-NNN, their throughput scaled by a small factor so that their
lines differ, fitted by the device stage's own functions. They never leave
the test's temporary folder.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

# One worker makes the module fixture once (tests/unit/test_xdist_groups.py).
pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("test_many_devices_synthetic")]

TARGET = 100
DETAILS = re.compile(r"<details.*?</details>", re.S)
STAGE = re.compile(r"^:stage: (.*)$", re.M)


def synthetic_project(clone: Path, work: Path, n: int) -> dict:
    """A folder with the chapter's inputs for the committed devices and
    n - 5 synthetic ones; returns the notebook's parameters."""
    from mobitrace.studies.cpu_gbps.device_analysis import _csv, fit_table, rate_summary

    params = yaml.safe_load((clone / "params.yaml").read_text())["cpu-gbps-measured"]
    real = list(params["devices"])
    interim, devices_dir = work / "data/interim/cpu-gbps", work / "data/results/cpu-gbps-devices"
    for device in real:
        shutil.copytree(clone / "data/interim/cpu-gbps" / device, interim / device)
        shutil.copytree(clone / "data/results/cpu-gbps-devices" / device, devices_dir / device)
    names = [f"synthetic-{i:03d}" for i in range(n - len(real))]
    for i, name in enumerate(names):
        source = real[i % len(real)]
        runs = pd.read_parquet(clone / "data/interim/cpu-gbps" / source / "runs.parquet").assign(device=name)
        runs["throughput_gbps"] *= 1 + 0.002 * (i + 1)
        sessions = pd.read_parquet(clone / "data/interim/cpu-gbps" / source / "sessions.parquet").assign(device=name)
        (interim / name).mkdir(parents=True)
        runs.to_parquet(interim / name / "runs.parquet", index=False)
        sessions.to_parquet(interim / name / "sessions.parquet", index=False)
        fits, extra = fit_table(runs, float(params["alpha"]), [float(t) for t in params["target_rates_gbps"]],
                                float(params["cpu_threshold_pct"]))
        (devices_dir / name).mkdir(parents=True)
        _csv(fits, devices_dir / name / "fits.csv")
        _csv(extra, devices_dir / name / "extrapolations.csv")
        _csv(rate_summary(runs, float(params["alpha"])), devices_dir / name / "rate_summary.csv")
    return {**{k: v for k, v in params.items() if k != "devices"}, "study": "cpu-gbps-measured",
            "devices": real + names, "interim_dir": str(interim), "devices_dir": str(devices_dir),
            "results_dir": str(work / "data/results/cpu-gbps-measured"),
            "published_lines": str(clone / "data/results/cpu-gbps/tables/implied_lines.csv"),
            "published_dir": str(clone / "data/interim/published/cpu-gbps")}


def run_chapter(clone: Path, work: Path, n: int):
    import jupytext
    import nbformat
    import papermill

    from mobitrace.notebooks import for_readers, strip_volatile

    parameters = synthetic_project(clone, work, n)
    # The chapter reads its knobs from the params.yaml of the project it runs in.
    project = yaml.safe_load((clone / "params.yaml").read_text())
    project["cpu-gbps-measured"] = {k: v for k, v in parameters.items() if k != "study"}
    (work / "params.yaml").write_text(yaml.safe_dump(project, sort_keys=False))
    (work / "dvc.yaml").write_text("stages: {}\n")
    source, executed = work / "chapter.ipynb", work / "executed.ipynb"
    nbformat.write(jupytext.read(clone / "notebooks/cpu-gbps-measured.py"), source)
    papermill.execute_notebook(str(source), str(executed), cwd=str(work), kernel_name="python3",
                               parameters={"study": "cpu-gbps-measured"}, progress_bar=False, log_output=False)
    nb = strip_volatile(for_readers(nbformat.read(executed, as_version=4)))
    pages = sorted((work / "book/chapters/cpu-gbps-measured-devices").glob("*.md"))
    return nb, pages, parameters["devices"]


def shown(nb) -> str:
    """What a reader scrolls through: prose and visible outputs, folded blocks left out."""
    parts = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            parts.append(cell.source)
        elif "remove-cell" not in cell.metadata.get("tags", []):
            for output in cell.get("outputs", []):
                data = output.get("data", {})
                parts.append(data.get("text/html", "") + data.get("text/markdown", ""))
    return DETAILS.sub("<details/>", "\n".join(parts))


def built_chapter(clone: Path):
    """The chapter at the committed devices as the shared cold build made it:
    its notebook stage wrote what run_chapter returns (the executed notebook
    for_readers, volatile keys stripped), so that run is not redone."""
    import nbformat

    devices = list(yaml.safe_load((clone / "params.yaml").read_text())["cpu-gbps-measured"]["devices"])
    chapters = clone / "book/chapters"
    nb = nbformat.read(chapters / "cpu-gbps-measured.ipynb", as_version=4)
    return nb, sorted((chapters / "cpu-gbps-measured-devices").glob("*.md")), devices


@pytest.fixture(scope="module")
def chapters(built, tmp_path_factory):
    clone, _ = built
    small = built_chapter(clone)
    assert len(small[2]) == 5, small[2]  # the committed devices
    return {5: small, TARGET: run_chapter(clone, tmp_path_factory.mktemp(f"devices{TARGET}"), TARGET)}


def test_synthetic_chapter_page_is_no_longer_at_100_devices_than_at_5(chapters):
    (small, _, _), (large, _, _) = chapters[5], chapters[TARGET]
    a, b = shown(small), shown(large)
    # Never longer than 1.2 times. It may be shorter: past a screenful of rows the
    # comparison table folds behind one line (a reader scrolls past its summary).
    assert 0.6 <= len(b) / len(a) <= 1.2, (len(a), len(b))
    assert b.count("<details/>") >= a.count("<details/>")
    assert b.count("<figure") == a.count("<figure")
    # One provenance box per figure and table on both: the same number.
    assert len(STAGE.findall(b)) == len(STAGE.findall(a))


def test_synthetic_every_device_has_a_page_linked_from_the_comparison(chapters):
    nb, pages, devices = chapters[TARGET]
    assert [p.stem for p in pages] == sorted(devices)
    page_html = "\n".join(o.get("data", {}).get("text/html", "") for c in nb.cells for o in c.get("outputs", []))
    for device in devices:
        assert f'href="cpu-gbps-measured-devices/{device}.html"' in page_html, device


def test_synthetic_device_pages_cite_only_their_own_capture(chapters):
    sizes = {}
    for n in (5, TARGET):
        _, pages, _ = chapters[n]
        for page in pages:
            text = page.read_text()
            stages = {s for line in STAGE.findall(text) for s in line.split()}
            assert stages == {f"ingest_analyze_cpu_gbps@{page.stem}", "ingest_published"}, page
            assert "orphan: true" in text and f'figure1_{page.stem}"' in text
        sizes[n] = max(len(p.read_text()) for p in pages)
    # A device's page does not grow with the number of devices.
    assert sizes[TARGET] <= 1.2 * sizes[5], sizes

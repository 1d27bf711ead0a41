"""Every device of the stack-trim chapter reaches what the first does: its
figures, tables and claims. The second device is a synthetic copy of the
committed device's ingested tables under another name (named synthetic: no
raw trace is made), so both must come out with the same claims."""

import inspect
import shutil

import pandas as pd
import pytest

from mobitrace.core import claims as cl
from mobitrace.core.params import arguments
from mobitrace.studies.stack_trim.chapter import Chapter

REF = "vm-2core"
SYNTHETIC = "synthetic-copy"


# One worker makes the module fixture once (tests/unit/test_xdist_groups.py).
pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("test_stack_trim_devices_synthetic")]


@pytest.fixture(scope="module")
def chapter(built, tmp_path_factory):
    clone, _ = built  # the shared cold build's ingested capture (tests/e2e/conftest.py)
    source = clone / "data" / "interim" / "stack-trim" / REF
    assert (source / "runs.parquet").is_file(), source
    tmp = tmp_path_factory.mktemp("stack-trim")
    for device in (REF, SYNTHETIC):
        shutil.copytree(source, tmp / "interim" / device)
    for name in ("runs.parquet", "sessions.parquet"):
        frame = pd.read_parquet(tmp / "interim" / SYNTHETIC / name)
        frame.assign(device=SYNTHETIC).to_parquet(tmp / "interim" / SYNTHETIC / name, index=False)
    names = [p for p in inspect.signature(Chapter.__init__).parameters if p != "self"]
    args = arguments("stack-trim", names, {"superseded"})
    args.update({k: str(clone / v) for k, v in args.items() if isinstance(v, str) and v.startswith("data/")})
    args.update(devices=[REF, SYNTHETIC], interim_dir=str(tmp / "interim"), results_dir=str(tmp / "results"),
                n_resamples=200, robustness={**args["robustness"], "lhs_size": 2})
    ch = Chapter(**args)
    for step in ("captures", "power_model", "onecopy_section", "onecopy_summary", "transport_section", "breakdown",
                 "key_numbers", "claims_section"):
        getattr(ch, step)()
    return ch


def test_each_device_gets_the_first_devices_tables_and_figures_synthetic(chapter):
    tables, figures = chapter.results / "tables", chapter.results / "figures"
    for kind in ("conditions", "onecopy", "transport", "breakdown"):
        assert (tables / f"{kind}_{SYNTHETIC}.csv").is_file(), kind
    for kind in ("onecopy", "transport"):
        assert (figures / f"{kind}_{SYNTHETIC}.svg").is_file(), kind
    assert set(pd.read_csv(tables / "crossover.csv")["device"]) == {REF, SYNTHETIC}


def test_each_device_gets_the_first_devices_claims_synthetic(chapter):
    claims = pd.read_csv(chapter.results / "claims.csv").set_index("claim_id")
    ref_ids = [c for c in claims.index if not c.startswith(f"{SYNTHETIC}_")]
    assert ref_ids and all(f"{SYNTHETIC}_{c}" in claims.index for c in ref_ids)
    # The same data under another name: the same values, verdicts and categories.
    for c in ref_ids:
        ref, other = claims.loc[c], claims.loc[f"{SYNTHETIC}_{c}"]
        assert (other["verdict"], other["category"]) == (ref["verdict"], ref["category"]), c
        assert str(other["artifact_value"]) == str(ref["artifact_value"]), c
        assert other["claim"].endswith(f"({SYNTHETIC})")
    assert claims.loc[f"{SYNTHETIC}_sd_low", "category"] == cl.TESTBED_BOUND

"""scripts/bench.py's parsing of a rebuild's output (the growth section counts the stages that ran)."""
import importlib.util
from pathlib import Path

from tests import ROOT


def _bench():
    spec = importlib.util.spec_from_file_location("bench", ROOT / "scripts" / "bench.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_stages_ran_reads_the_runner_and_dvc_synthetic():
    log = ("Stage 'ingest_published' didn't change, skipping (stage 1 of 9)\n"
           "Running stage 'ingest_analyze_cpu_gbps@synthetic-005' (stage 2 of 9):\n> python -m mobitrace ingest ...\n"
           "ingest_analyze_cpu_gbps@synthetic-005 | Running stage 'not a stage line'\n"
           "Running stage 'book':\n> python -m mobitrace build-book book\n")
    assert _bench().stages_ran(log) == ["ingest_analyze_cpu_gbps@synthetic-005", "book"]

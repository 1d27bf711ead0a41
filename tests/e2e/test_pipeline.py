"""The whole pipeline, in a temporary copy of the repository as a fresh clone
would have it: ingest -> analyze -> book, then the no-op and determinism
checks. Slow (a cold pipeline run, shared with the other end-to-end tests:
tests/e2e/conftest.py); marked e2e."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

from mobitrace.studies import registry
from tests.e2e.conftest import committed_digests, digest_tree, run


pytestmark = pytest.mark.e2e


def test_cold_repro_runs_every_stage(built):
    clone, log = built
    assert "Running stage 'ingest_published'" in log  # every study's published numbers, one stage
    for study in registry.studies():
        assert (clone / "data" / "interim" / "published" / study.slug / "values.parquet").is_file(), study.slug
        for chapter in study.chapters:
            assert f"Running stage '{chapter.stage}'" in log
    assert "Running stage 'ledger'" in log
    assert "Running stage 'overview'" in log
    assert "Running stage 'book'" in log


def test_book_holds_each_chapter_with_its_figure_and_tables(built):
    clone, _ = built
    html_dir = clone / "book" / "_build" / "html"
    assert (html_dir / "index.html").is_file()
    assert '<link rel="icon" href="_static/favicon.svg">' in (html_dir / "index.html").read_text()  # no /favicon.ico 404
    page = (html_dir / "chapters" / "cpu-gbps.html").read_text(encoding="utf-8")
    assert "Can mobile hardware keep up with gigabit wireless?" in page
    assert "<caption>Table 1: Phone Specifications</caption>" in page
    assert "<caption>Table 2: Throughput (Mbps) with GRO off</caption>" in page
    # Table 2's cells as people read them (1183.56 and 620.95 Mbps, rounded);
    # the downloadable CSV keeps the paper's digits.
    table2 = page[page.index("<caption>Table 2"):]
    table2 = table2[:table2.index("</table>")]
    assert ">1,184<" in table2 and ">621<" in table2, table2
    csv = re.search(r'href="([^"]*table2_gro_off_mbps\.csv)"', page)
    assert csv, "Table 2 has no CSV download"
    text = (html_dir / "chapters" / csv.group(1)).resolve().read_text()
    assert "1183.56" in text and "620.95" in text
    images = re.findall(r'<img [^>]*src="([^"]+\.svg)"', page)
    assert images, "the chapter shows no SVG figure"
    for src in images:
        assert (html_dir / "chapters" / src).resolve().is_file(), src
    # The claims table and a glued prose number made it into the page.
    assert "not reproduced" in page
    assert re.search(r'<span class="pasted-text">Of the \d+ claims, \d+ are reproduced', page)


def test_dvc_status_is_clean_after_repro(built_tree):
    out = built_tree.run(["dvc", "status"])
    assert "Data and pipelines are up to date" in out, out


def test_committed_lock_matches_a_fresh_run(built_tree):
    """dvc.lock in git pins the same hashes a fresh run produces."""
    # against HEAD: DVC's autostage puts the new lock in the index.
    diff = built_tree.run(["git", "diff", "HEAD", "-U8", "--", "dvc.lock"])
    assert diff.strip() == "", diff[:4000]  # with context: the stage and path whose hash moved


def test_each_ingest_wrote_the_hash_dvc_pinned_for_its_raw_folder(built):
    """The book depends on these files instead of data/raw (mobitrace.core.raw_hashes):
    each must hold what dvc.lock pins for its ingest's raw folder."""
    clone, _ = built
    lock = yaml.safe_load((clone / "dvc.lock").read_text())["stages"]
    ingests = {name: entry for name, entry in lock.items() if name.startswith("ingest_") and "published" not in name}
    assert ingests
    for name, entry in ingests.items():
        raw = next(d for d in entry["deps"] if d["path"].startswith("data/raw/"))
        written = next(o["path"] for o in entry["outs"] if o["path"].startswith("data/interim/raw-hashes/"))
        assert json.loads((clone / written).read_text()) == {k: raw[k] for k in ("path", "md5", "size", "nfiles")}, name


def test_second_repro_runs_no_stage(built_tree):
    log = built_tree.second_repro()
    assert "Running stage" not in log, log


def test_the_build_writes_the_committed_bytes_of_every_table_metric_figure(built):
    """Determinism, file by file: this cold build and the build whose
    dvc.lock is committed (another run, another day, maybe another machine)
    wrote the same bytes to every file under data/results, and no file that
    dvc.lock does not pin."""
    clone, _ = built
    made = digest_tree(clone, ["data/results"], gitignores=False)
    assert any(k.endswith(".svg") for k in made) and any(k.endswith(".csv") for k in made)
    assert made == committed_digests(clone, ["data/results"])


def test_the_warm_builds_forks_give_the_bytes_of_processes_of_their_own(built_tree, tmp_path):
    """The cold build ran every stage command and notebook kernel as a fork
    of the runner's warm server (mobitrace.warm); plain `dvc repro` starts
    each afresh. A device's ingest and fit and a notebook stage, rerun plain
    in a copy, write the same bytes: dvc.lock, which plain DVC rewrites in
    its own way, does not move by a byte from the runner's."""
    forked = (built_tree.root / "warm.log").read_text()
    for what in ("fork: mobitrace ['ingest', 'cpu-gbps'",
                 "fork: mobitrace ['run-notebook', 'cpu-gbps']", "fork: ipykernel_launcher",
                 "fork: mobitrace ['build-book', 'book']"):
        assert what in forked, forked
    assert "refused" not in forked, forked
    work = built_tree.copy(tmp_path / "repo")
    env = {k: v for k, v in built_tree.env_for(work).items() if k != "MOBITRACE_WARM_LOG"}
    lock = (work / "dvc.lock").read_text()
    stages = ["ingest_analyze_cpu_gbps@vm-veth-default", "analyze_cpu_gbps"]
    log = run(["dvc", "repro", "-f", "-s", *stages], work, env)
    assert log.count("Running stage") == len(stages), log
    assert (work / "dvc.lock").read_text() == lock


def test_the_claims_audit_covers_every_claim_of_the_ledger_once(built):
    """data/published/claims-audit.csv records, for each claim, the paper's
    comparison and ours: a claim added without an audit row fails here."""
    clone, _ = built
    ledger = pd.read_csv(clone / "data/results/claims.csv")["claim_id"]
    audit = pd.read_csv(clone / "data/published/claims-audit.csv", keep_default_na=False)
    assert audit["claim_id"].is_unique
    assert sorted(audit["claim_id"]) == sorted(ledger)
    for column in ("paper_comparison", "ours_after", "audit"):
        assert (audit[column].str.strip() != "").all(), column

"""CITATION.cff is valid CFF (cffconvert) and names the package's version."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import yaml


def test_cffconvert_validates_the_citation(repo):
    cffconvert = Path(sys.executable).with_name("cffconvert")
    done = subprocess.run([str(cffconvert), "--validate", "--infile", "CITATION.cff"],
                          cwd=repo, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_citation_version_is_the_package_version(repo):
    cff = yaml.safe_load((repo / "CITATION.cff").read_text())
    assert cff["version"] == tomllib.loads((repo / "pyproject.toml").read_text())["project"]["version"]


def test_citation_references_the_five_papers_as_the_published_numbers_cite_them(repo):
    import datetime

    from mobitrace import crate
    from mobitrace.studies.registry import studies

    cff = yaml.safe_load((repo / "CITATION.cff").read_text())
    papers = crate.study_papers(repo, cff["references"])  # one reference per study's paper, or it raises
    assert len({r["title"] for r in papers.values()}) == len(studies()) == len(cff["references"])
    for slug, ref in papers.items():
        cited = yaml.safe_load((repo / "data" / "published" / f"{slug}.yaml").read_text())["citation"]
        assert (ref["doi"] in cited) if ref.get("doi") else ("doi" not in cited.lower()), slug
    assert cff["repository-code"].startswith("https://") and cff["url"].startswith("https://")
    assert datetime.date.fromisoformat(str(cff["date-released"])) <= datetime.date.today()

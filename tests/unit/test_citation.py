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

"""book/byod.md says what the code does: its limits table
is capture_reader.LIMITS, and its "Which files change" table is what
add-device writes plus the git-tracked outputs (dvc.yaml, not git-ignored)
of the stages a new device runs, so that `git status` after `make` matches
the page."""

from __future__ import annotations

import dataclasses
import re
import subprocess
from pathlib import Path

import yaml

from mobitrace.studies import registry
from mobitrace.core import capture_reader
from mobitrace.core.numbers import data_size

from tests import ROOT
# The page as the book shows it: its per-study tables are included files
# (written by `python -m mobitrace sync` from the registry).
PAGE = re.sub(r"```\{include\} (\S+)\n```", lambda m: (ROOT / "book" / m[1]).read_text(),
              (ROOT / "book" / "byod.md").read_text())


def _table_after(marker: str) -> list[list[str]]:
    """The rows (cells, stripped) of the first Markdown table after the line
    that holds `marker`, without its header."""
    rest = PAGE[PAGE.rindex("\n", 0, PAGE.index(marker)) + 1:]
    rows = []
    started = False
    for line in rest.splitlines()[1:]:
        if line.startswith("|"):
            started = True
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not set("".join(cells)) <= set("-: "):
                rows.append(cells)
        elif started:
            break
    return rows[1:]  # without the header


def _human(name: str, value) -> str:
    if name.endswith("_bytes") or name == "gzip_ratio_after":
        return data_size(value)  # the book's one unit system (SI)
    if isinstance(value, float):
        return f"{value:.0e}".replace("e+", "e")
    return f"{value:,}"


def test_limits_table_is_the_readers_limits():
    rows = _table_after("checked against capture_reader.LIMITS")
    page = {r[0].strip("`"): r[1] for r in rows}
    code = {f.name: _human(f.name, getattr(capture_reader.LIMITS, f.name))
            for f in dataclasses.fields(capture_reader.Limits)}
    assert page == code


def _git_tracked_outputs(stage: dict) -> set[str]:
    """Outputs of a dvc.yaml stage that git tracks: cache: false and not ignored."""
    body = stage.get("do", stage)
    found = set()
    for key in ("outs", "metrics", "plots"):
        for entry in body.get(key, []) or []:
            if isinstance(entry, dict):
                (path, opts), = entry.items()
                if opts and opts.get("cache") is False:
                    found.add(path)
    ignored = set()
    if found:
        out = subprocess.run(["git", "check-ignore", *sorted(found)], cwd=ROOT, capture_output=True, text=True)
        ignored = set(out.stdout.split())
    return {p for p in found - ignored if "${" not in p}


def test_files_changed_table_matches_dvc_yaml():
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    rows = {r[0]: r for r in _table_after("checked against dvc.yaml and the study registry")}
    assert set(rows) == set(registry.by_slug())
    for slug, study in registry.by_slug().items():
        names = [s.split("@")[0] for s in study.device_stages()] + study.summary_stages() + ["ledger", "book"]
        expected = {"params.yaml", "dvc.lock"}
        for name in names:
            expected |= _git_tracked_outputs(stages[name])
        new = set(re.findall(r"`([^`]+)`", rows[slug][1]))
        modified = set(re.findall(r"`([^`]+)`", rows[slug][2]))
        assert new == {f"data/raw/{slug}/<device>/"}, slug
        assert modified == expected, slug


def test_page_lists_every_study_in_the_stages_table():
    rows = {r[0]: r for r in _table_after("Next: `make` (or `dvc repro`) runs")}
    for slug, study in registry.by_slug().items():
        assert f"`{study.params_section}.devices`" == rows[slug][1]
        for stage in study.device_stages():
            assert f"`{stage.format(device='<device>')}`" in rows[slug][2]
        for stage in study.summary_stages():
            assert f"`{stage}`" in rows[slug][3]

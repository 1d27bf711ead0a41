"""Lighthouse on the built book (tests/e2e/test_browser.py serves it): the
landing page and every chapter score at least 95 for accessibility and best
practices, and show no text under 12 px on a phone. Its own module, so xdist
runs it on another worker than the Selenium checks (it is the longest
browser test)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from .test_browser import BROWSER_TOOLS, CHROMIUM, _landing_and_chapters, _report, _tool, site  # noqa: F401

pytestmark = pytest.mark.e2e

LIGHTHOUSE_LANES = 2  # Node processes, each with its own Chrome, auditing a share of the pages


def test_lighthouse_scores_accessibility_and_best_practices_at_least_95(site, repo):
    """Lighthouse (mobile form factor) drives Debian's Chromium via
    CHROME_PATH, in one Node and one Chrome per lane
    (tests/browser/lighthouse-pages.mjs)."""
    _tool(".bin/lighthouse")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"needs {CHROMIUM}")
    base, html_dir = site
    env = dict(os.environ, CHROME_PATH=CHROMIUM)
    pages = _landing_and_chapters(html_dir)
    command = ["node", str(BROWSER_TOOLS.parent / "lighthouse-pages.mjs"),
               "--headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage"]

    def start(lane):
        return subprocess.Popen([*command, *(base + p for p in lane)], env=env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    lanes = [pages[i::LIGHTHOUSE_LANES] for i in range(LIGHTHOUSE_LANES)]
    reports = {}
    for lane, proc in [(lane, start(lane)) for lane in lanes]:
        for attempt in range(2):
            out, err = proc.communicate(timeout=300 * len(lane))
            # Lighthouse's own Chrome sometimes drops its DevTools connection on
            # a loaded machine (CI: "Runtime error encountered: Connection
            # closed"); that is the tool failing, not the page: one more try.
            if proc.returncode == 0 or "Connection closed" not in err or attempt:
                break
            proc = start(lane)
        assert proc.returncode == 0, f"lighthouse {lane}: {err[-2000:]}"
        reports.update(json.loads(out))
    scores, low, small = {}, {}, {}
    for page in pages:
        report = reports[base + page]
        cats = report["categories"]
        scores[page] = {k: round(100 * cats[k]) for k in ("accessibility", "best-practices")}
        if min(scores[page].values()) < 95:
            low[page] = scores[page] | {"failing audits": sorted(
                a for refs in report["refs"].values() for a in refs
                if report["audits"][a][0] is not None and report["audits"][a][0] < 1
                and report["audits"][a][1] == "binary")}
        if report["smallText"]:
            small[page] = report["smallText"]
    _report(repo, "lighthouse.json", scores)
    assert not low, low
    assert not small, f"text under 12 px on a phone (Lighthouse's font-size audit): {small}"



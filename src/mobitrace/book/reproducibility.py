"""The book's reproducibility page: the pinned packages and the DVC stages
with their input hashes (static, the same for the same inputs), and the
build machine with each stage's wall time (build-info.json, read by the page
in the browser, since it differs from run to run)."""

from __future__ import annotations

import json
import os
import platform
import re
import sys
from importlib import metadata
from pathlib import Path

from mobitrace.core import timings
from mobitrace.book.provenance import load_lock

# The book stage's own lock entry changes with every build of the book, so
# the page lists every other stage.
BOOK_STAGE = "book"
# The page's hand-written part: how the build, the tests and the site work.
GUIDE = Path("book") / "_reproducibility.md"


def _top_level_packages(root: Path) -> list[str]:
    names = []
    for line in (root / "requirements.in").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            names.append(re.split(r"[<>=!~\[ ]", line)[0])
    return names


def _md_cell(text: str) -> str:
    """Text for a Markdown table cell: escaped, pipes protected."""
    return (str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace("|", "\\|").replace("`", "'"))


def write_page(root: Path, path: Path) -> Path:
    """Write the reproducibility page (MyST Markdown) to `path`."""
    lines = [
        "# Reproducibility",
        "",
        "Everything in this book is rebuilt by one command from the files in the",
        "repository: `make`. `make test` runs the test suite. `dvc status` says whether",
        "anything is out of date; `dvc metrics show` lists the key numbers.",
        "",
        (root / GUIDE).read_text(encoding="utf-8").rstrip("\n"),
        "",
        "## Pinned packages",
        "",
        "The top-level packages of `requirements.in` at the versions installed when",
        "this book was built (`requirements.txt` pins every package; `environment.yml`",
        "the same for conda).",
        "",
        "| package | version |",
        "|---|---|",
    ]
    for name in _top_level_packages(root):
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            version = "not installed"
        lines.append(f"| {_md_cell(name)} | {_md_cell(version)} |")
    lines += ["", "## Pipeline stages and the hashes of their inputs", "",
              "From `dvc.lock`: every stage's command, and the md5 DVC pinned for each input",
              "and output (a directory's hash covers the list of its files and their hashes).",
              ""]
    stages = load_lock(root / "dvc.lock") if (root / "dvc.lock").exists() else {}
    for name in sorted(s for s in stages if s != BOOK_STAGE):
        entry = stages[name]
        lines += [f"### `{_md_cell(name)}`", "", f"Command: `{_md_cell(entry.get('cmd', ''))}`", "",
                  "| role | path | md5 |", "|---|---|---|"]
        for role in ("deps", "outs"):
            for item in entry.get(role, []):
                lines.append(f"| {role[:-1]} | `{_md_cell(item['path'])}` | `{_md_cell(item.get('md5', ''))}` |")
        lines.append("")
    lines += [
        "## The build machine and wall times",
        "",
        "These differ from run to run, so they are not part of any hashed output: the",
        "page reads them from `_static/build-info.json`, written at the end of the build.",
        "",
        # _static/build-info.js (on every page, as Jupyter Book adds every
        # script of _static) fills this in.
        '<div id="build-info"><p>Build information loads with JavaScript.</p></div>',
        "",
    ]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def write_build_info(root: Path, path: Path, book_seconds: float) -> Path:
    """Write the build machine's facts and each stage's last wall time."""
    stages = load_lock(root / "dvc.lock") if (root / "dvc.lock").exists() else {}
    command_to_stage = {entry.get("cmd"): name for name, entry in stages.items()}
    recorded = timings.load(root)
    walls = []
    for command, rec in sorted(recorded.items()):
        stage = command_to_stage.get(command)
        if stage and stage != BOOK_STAGE:
            walls.append({"stage": stage, "command": command, **rec})
    walls.append({"stage": BOOK_STAGE, "command": "python -m mobitrace build-book book",
                  "wall_s": round(book_seconds, 3), "finished_utc": None})
    uname = platform.uname()
    info = {
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "os": platform.platform(),
        "kernel": f"{uname.system} {uname.release} {uname.version}",
        "machine": uname.machine,
        "cpu_model": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "stages": walls,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return path

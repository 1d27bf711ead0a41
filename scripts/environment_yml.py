"""Write environment.yml (conda/mamba) from requirements.txt, the pip lock:
conda brings Python and pip, and pip installs every pinned package of the
lock, so both environments hold the same versions of all of them.

    python scripts/environment_yml.py [--check]
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def pins(root: Path = ROOT) -> list[str]:
    """The lock's `name==version` lines, in its order."""
    return [line.strip() for line in (root / "requirements.txt").read_text().splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def environment_yml(root: Path = ROOT) -> str:
    lines = ["# Written by scripts/environment_yml.py (make environment.yml) from requirements.txt;",
             "# do not edit. Every package of the lock, at its pinned version, through pip.",
             "name: mobitrace",
             "channels:",
             "  - conda-forge",
             "dependencies:",
             "  - python=3.11",
             "  - pip",
             "  - pip:"]
    lines += [f"      - {pin}" for pin in pins(root)]
    lines.append("      - -e .")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    path = ROOT / "environment.yml"
    text = environment_yml()
    if "--check" in argv:
        if path.read_text() != text:
            print("environment.yml differs from requirements.txt: run make environment.yml", file=sys.stderr)
            return 1
        return 0
    path.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

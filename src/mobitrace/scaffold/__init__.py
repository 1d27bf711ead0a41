"""`python -m mobitrace new-study NAME`: a sixth study in four places.

Writes the study's folder (src/mobitrace/studies/<package>/: description,
ingest, analysis, schema), its notebook (notebooks/<name>.py), its
published-numbers file (data/published/<name>.yaml) and its params.yaml
section, then `sync` adds its stages to dvc.yaml, its chapter to the
book's table of contents and its rows to book/byod.md's tables. The tests
that list studies take them from the registry; the hostile corpus covers a
study once its capture kit exists (study.yaml's test_capture). Every TODO in the templates is for the person
adding the study: the scaffold invents no result. The one published value
it writes is a placeholder marked as such, replaced by the paper's numbers.
"""

from __future__ import annotations

import re
from pathlib import Path
from string import Template

from mobitrace import pipeline
from mobitrace.core.errors import InputError
from mobitrace.studies import registry

TEMPLATES = Path(__file__).parent / "templates"
SLUG = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")


def new_study(name: str, root: Path) -> list[Path]:
    """Create the study `name` (lower-case words joined by '-'); return the
    files written. Refuses a name that exists in any of the four places."""
    if not SLUG.fullmatch(name or ""):
        raise InputError(Path("new-study"), None, "NAME", "lower-case words joined by '-' (e.g. radio-sleep)", name)
    package = name.replace("-", "_")
    folder = root / "src" / "mobitrace" / "studies" / package
    files = {
        folder / "__init__.py": "init.py.tmpl",
        folder / "study.yaml": "study.yaml.tmpl",
        folder / "ingest.py": "ingest.py.tmpl",
        folder / "analysis.py": "analysis.py.tmpl",
        folder / "chapter.py": "chapter.py.tmpl",
        folder / "schema.py": "schema.py.tmpl",
        root / "notebooks" / f"{name}.py": "notebook.py.tmpl",
        root / "data" / "published" / f"{name}.yaml": "published.yaml.tmpl",
    }
    params = root / "params.yaml"
    taken = [p for p in files if p.exists()]
    if name in {s.slug for s in registry.studies()} or taken or re.search(rf"^{re.escape(name)}:", params.read_text(), re.M):
        raise InputError(taken[0] if taken else params, None, "NAME", "a study name not in use", name)
    values = {"slug": name, "package": package, "order": max(s.order for s in registry.studies()) + 1,
              "title": name.replace("-", " ").capitalize()}
    folder.mkdir(parents=True)
    for path, template in files.items():
        path.write_text(Template((TEMPLATES / template).read_text()).substitute(values))
    section = Template((TEMPLATES / "params.yaml.tmpl").read_text()).substitute(values)
    params.write_text(params.read_text().rstrip("\n") + "\n\n" + section)
    # The chapter reads data/interim/<name>/ (one folder per device, DVC's
    # outputs); the folder exists from the start, with the .gitignore DVC
    # keeps there, so the chapter builds before the first device.
    interim = root / "data" / "interim" / name / ".gitignore"
    interim.parent.mkdir(parents=True, exist_ok=True)
    interim.touch()
    registry.studies.cache_clear()
    return [*files, params, interim, *pipeline.sync(root)]

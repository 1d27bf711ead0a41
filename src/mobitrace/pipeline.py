"""dvc.yaml, book/_toc.yml and book/byod.md's per-study tables, written from the study registry.

`python -m mobitrace sync` writes both; tests/unit/test_registry.py fails
when the checked-in files differ from what this module writes. Each stage
depends on exactly the code it runs: the mobitrace modules its entry point
imports, followed transitively (so editing a study's analysis re-runs that
study's analysis stage, not its ingest and not the other studies).
"""

from __future__ import annotations

import ast
from pathlib import Path

import yaml

from mobitrace.studies.registry import Study, chapters, studies

PACKAGE = Path(__file__).parent                      # src/mobitrace
SRC = PACKAGE.parent                                 # src
HEADER = ("# Written by `python -m mobitrace sync` from the study registry\n"
          "# (src/mobitrace/studies/*/study.yaml): edit those, not this file.\n"
          "# ingest -> analyze (papermill) -> ledger, overview -> book. `make` runs this plan\n"
          "# with mobitrace.repro: independent stages side by side.\n")
# Each ingest writes its raw folder's hash here (mobitrace.core.raw_hashes).
RAW_HASHES = "data/interim/raw-hashes"
TOC_HEADER = "# Written by `python -m mobitrace sync` from the study registry.\n"


def _module_file(dotted: str) -> Path | None:
    base = SRC / Path(*dotted.split("."))
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    return None  # a package's __init__ (a description) or not ours


def _imports(path: Path) -> set[Path]:
    """The mobitrace module files `path` imports directly."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        for name in names:
            if name == "mobitrace" or name.startswith("mobitrace."):
                file = _module_file(name)
                if file is not None:
                    found.add(file)
    return found


def code_deps(*entry_points: Path) -> list[str]:
    """Every mobitrace module the entry points import, transitively, as
    repository paths (the entry points themselves included when they are
    modules of the package)."""
    seen: set[Path] = set()
    todo = list(entry_points)
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        todo.extend(_imports(path) - seen)
    root = SRC.parent
    return sorted(str(p.relative_to(root)) for p in seen if PACKAGE in p.parents)


def _notebook(name: str) -> Path:
    return SRC.parent / "notebooks" / f"{name}.py"


def _chapter_stage(name: str, params: list, deps: list[str], outs: list[str], metrics: list[str],
                   shared: tuple[str, ...] = (), supplements: tuple[str, ...] = (), results: tuple[str, ...] = ()
                   ) -> dict:
    """The stage of notebooks/<name>.py and of its `supplements`, which
    mobitrace.notebooks.run executes after it in the same kernel.
    `metrics`: the few key numbers `dvc metrics show` lists (kept in git);
    `results`: the other files of numbers, outputs like the tables (DVC's
    cache, so the stage stays in the run cache)."""
    runner = PACKAGE / "notebooks.py"
    cmd = " ".join(["python -m mobitrace run-notebook", name, *(f"--with {s}" for s in shared)])
    code = sorted(set().union(*(code_deps(_notebook(n), runner) for n in (name, *supplements))))
    stage = {"cmd": cmd, "params": params,
             "deps": [*(f"notebooks/{n}.py" for n in (name, *supplements)), *deps, *code],
             "outs": [outs[0], *(f"book/chapters/{n}.ipynb" for n in supplements), *outs[1:], *results]}
    if metrics:
        stage["metrics"] = [{m: {"cache": False}} for m in metrics]
    return stage


# Which claims are evidence (mobitrace.core.claims.categories): read by every chapter.
CLAIM_CATEGORIES = "data/published/claim-categories.yaml"


def _study_stages(study: Study) -> dict:
    slug, pkg = study.slug, study.package
    devices = "${" + study.params_section + ".devices}"
    cmd = (f"python -m mobitrace ingest {slug} data/raw/{slug}/${{item}} data/interim/{slug}/${{item}} "
           f"--raw-hashes {RAW_HASHES}/{slug}/${{item}}.json")
    # The superseded map chooses which sessions are read (cli ingest).
    params = [f"{study.params_section}.superseded"]
    code = [PACKAGE / "studies" / pkg / "ingest.py", PACKAGE / "core" / "raw_hashes.py"]
    outs = [f"data/interim/{slug}/${{item}}", f"{RAW_HASHES}/{slug}/${{item}}.json"]
    if study.device_analysis_params is not None:  # then analyzed in the same process
        cmd += f" --analyze data/results/{slug}-devices/${{item}}"
        params += [f"{study.params_section}.{key}" for key in study.device_analysis_params]
        code.append(PACKAGE / "studies" / pkg / "device_analysis.py")
        outs.append(f"data/results/{slug}-devices/${{item}}")
    stages = {study.ingest_stage: {"foreach": devices, "do": {
        "cmd": cmd, "params": params, "deps": [f"data/raw/{slug}/${{item}}", *code_deps(*code)], "outs": outs}}}
    for chapter in study.chapters:
        if chapter.supplement_to:  # runs in its chapter's stage, after it, and writes only its page
            continue
        extra = [c for c in study.chapters if c.supplement_to == chapter.name]
        shared = tuple(dict.fromkeys(s for c in (chapter, *extra) for s in c.shared_params))
        inputs = list(dict.fromkeys(i for c in (chapter, *extra) for i in c.inputs))
        res = f"data/results/{chapter.name}"
        stages[chapter.stage] = _chapter_stage(
            chapter.name, [chapter.params_section, *shared],
            [f"data/interim/published/{slug}", CLAIM_CATEGORIES, *inputs],
            [f"book/chapters/{chapter.name}.ipynb", f"{res}/tables", f"{res}/figures", f"{res}/claims.csv",
             *([chapter.device_pages] if chapter.device_pages else [])],
            [f"{res}/verdicts.json"], shared, tuple(c.name for c in extra), (f"{res}/metrics.json",))
    return stages


def _descriptions() -> list[str]:
    root = SRC.parent
    return [str((s.folder() / "study.yaml").relative_to(root)) for s in studies()]


def dvc_stages() -> dict:
    """The stages of dvc.yaml, in pipeline order."""
    # Every study's published numbers in one stage: a process each cost more
    # than the work, and a study's unchanged tables leave its chapter skipped.
    slugs = [s.slug for s in studies()]
    stages = {"ingest_published": {
        "cmd": "python -m mobitrace ingest-published data/published data/interim/published",
        "deps": [*(f"data/published/{slug}.yaml" for slug in slugs), *code_deps(PACKAGE / "core" / "published.py")],
        "outs": [f"data/interim/published/{slug}" for slug in slugs]}}
    for study in studies():
        stages.update(_study_stages(study))
    claims = [f"data/results/{c.name}/claims.csv" for c in chapters()]
    stages["ledger"] = _chapter_stage(
        "claims-ledger", ["claims-ledger"], [*claims, *_descriptions()],
        ["book/chapters/claims-ledger.ipynb", "data/results/claims.csv", "data/results/claims-ledger"],
        [], results=("data/results/claims-metrics.json",))
    per_chapter = [f"data/results/{c.name}/{part}" for c in chapters() for part in ("claims.csv", "tables", "figures")]
    stages["overview"] = _chapter_stage(
        "overview", ["overview"], [*per_chapter, *_descriptions()],
        ["book/chapters/overview.ipynb", "data/results/overview"], [])
    book = PACKAGE / "book"
    deps = ["book/_config.yml", "book/_toc.yml", "book/intro.md", "book/byod.md", "book/_byod_stages.md", "book/_byod_files.md", "book/code.md", "book/publish.md",
            "book/_reproducibility.md", "book/_static", "book/_templates", "book/chapters",
            *code_deps(book / "build.py", book / "sphinxext.py", book / "sphinx_a11y.py"),
            "requirements.txt", "data/results", "data/published"]
    # The reproducibility page prints every stage's inputs as dvc.lock pins
    # them, so the book depends on all of them: a code change whose outputs
    # come out identical still rebuilds the page that names its hash. The raw
    # folders' hashes reach it through data/interim/raw-hashes (ingest writes
    # them), not through data/raw: DVC would hash every capture file twice a build.
    listed = {"data/interim"} | {d for stage in stages.values() for d in stage.get("do", stage)["deps"]
                                             if "${" not in d and not d.startswith(("data/", "book/"))}
    stages["book"] = {
        "cmd": "python -m mobitrace build-book book",
        "deps": deps + sorted(listed - set(deps)),
        "outs": [{"book/_build/html": {"cache": False}}]}
    return stages


def dvc_yaml() -> str:
    return HEADER + yaml.safe_dump({"stages": dvc_stages()}, sort_keys=False, width=120, allow_unicode=True)


def _toc_entry(chapter) -> dict:
    """A chapter of the book, with its supplements nested under it."""
    entry = {"file": f"chapters/{chapter.name}"}
    nested = [{"file": f"chapters/{c.name}"} for c in chapters(supplements=True) if c.supplement_to == chapter.name]
    return {**entry, "sections": nested} if nested else entry


def toc_yaml() -> str:
    toc = {"format": "jb-book", "root": "chapters/overview", "parts": [
        {"caption": "Studies", "chapters": [_toc_entry(c) for c in chapters()]},
        {"caption": "The artifact", "chapters": [{"file": f} for f in
                                                 ("intro", "chapters/claims-ledger", "byod", "publish", "code",
                                                  "reproducibility")]}]}
    return TOC_HEADER + yaml.safe_dump(toc, sort_keys=False)


BYOD_HEADER = "% Written by `python -m mobitrace sync` from the study registry; book/byod.md includes it.\n\n"


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = [header, ["---"] * len(header), *rows]
    return BYOD_HEADER + "".join("| " + " | ".join(cells) + " |\n" for cells in lines)


def byod_stages_table() -> str:
    """book/byod.md's table of what add-device's `make` runs, per study."""
    rows = []
    for study in studies():
        summary = []
        for chapter in (c for c in study.chapters if c.per_device):
            extra = [c.name for c in study.chapters if c.supplement_to == chapter.name]
            docs = f"{{doc}}`chapters/{chapter.name}`" + "".join(
                f" and, in the same kernel, {{doc}}`chapters/{name}`" for name in extra)
            summary.append(f"`{chapter.stage}` ({docs})")
        rows.append([study.slug, f"`{study.params_section}.devices`",
                     ", ".join(f"`{s.format(device='<device>')}`" for s in study.device_stages()),
                     ", ".join(summary)])
    return _table(["study", "`params.yaml` list", "stages of the device",
                   "chapter that summarizes devices, and its supplement"], rows)


def byod_files_table() -> str:
    """book/byod.md's table of the files a new device changes, per study: what
    add-device writes, dvc.lock and the git-tracked outputs (verdicts.json) of
    the stages the device runs."""
    rows = []
    for study in studies():
        tracked = [f"data/results/{c.name}/verdicts.json" for c in study.chapters if c.per_device]
        rows.append([study.slug, f"`data/raw/{study.slug}/<device>/`",
                     ", ".join(f"`{f}`" for f in ["params.yaml", "dvc.lock", *tracked])])
    return _table(["study", "new (staged)", "modified"], rows)


def generated(root: Path) -> dict[Path, str]:
    """Each file this module writes, with the text it should hold."""
    return {root / "dvc.yaml": dvc_yaml(), root / "book" / "_toc.yml": toc_yaml(),
            root / "book" / "_byod_stages.md": byod_stages_table(),
            root / "book" / "_byod_files.md": byod_files_table()}


def sync(root: Path) -> list[Path]:
    """Write the generated files that differ, and drop stale stages from
    dvc.lock; return the files changed."""
    changed = []
    for path, text in generated(root).items():
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            changed.append(path)
    if prune_lock(root):
        changed.append(root / "dvc.lock")
    return changed


def prune_lock(root: Path) -> list[str]:
    """Remove from dvc.lock the stages dvc.yaml no longer has (a renamed stage
    or a removed device): DVC never drops them, and it re-reads and rewrites
    the whole lock after every stage it runs. Returns the names removed."""
    lock = root / "dvc.lock"
    if not lock.is_file():
        return []
    from dvc.repo import Repo
    from dvc.utils.serialize import modify_yaml

    with Repo(str(root)) as repo:
        current = {stage.name for stage in repo.index.stages if Path(stage.path).resolve() == lock.resolve().with_name("dvc.yaml")}
    with modify_yaml(str(lock)) as data:
        stale = [name for name in data.get("stages", {}) if name not in current]
        for name in stale:
            del data["stages"][name]
    return stale

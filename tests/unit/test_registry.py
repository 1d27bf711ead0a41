"""The study registry is the only list of studies: dvc.yaml, book/_toc.yml,
the CLI, the Makefile, params.yaml and the tests follow it, and each study's
stages depend on its own code only."""

import functools
from pathlib import Path

import pytest
import yaml
from dvc.dependency.param import ParamsDependency
from dvc.repo import Repo

from mobitrace import cli, pipeline
from mobitrace.studies import registry

pytestmark = pytest.mark.xdist_group("test_registry")  # `generated` (~2 s) made once (tests/conftest.py)

from tests import ROOT
STUDIES = registry.studies()


# The five papers' studies (shared/seeds); a study added later joins them.
PAPERS = ["cpu-gbps", "priority-boost", "stack-trim", "transfer-tuning", "mptcp-dualband"]


def test_registry_finds_every_study_folder_and_the_five_papers_in_book_order():
    folders = sorted(d.name for d in (ROOT / "src" / "mobitrace" / "studies").iterdir() if (d / "study.yaml").is_file())
    assert sorted(s.package for s in STUDIES) == folders
    assert [s.slug for s in STUDIES if s.slug in PAPERS] == PAPERS
    assert [s.order for s in STUDIES] == sorted(s.order for s in STUDIES)
    assert [c.name for c in registry.chapters()][:2] == ["cpu-gbps", "cpu-gbps-measured"]


@pytest.fixture(scope="module")
def generated() -> dict:
    return pipeline.generated(ROOT)  # ~2 s: once for both files


@pytest.mark.parametrize("path", ["dvc.yaml", "book/_toc.yml"])
def test_checked_in_file_is_what_the_registry_writes(path, generated):
    want = generated[ROOT / path]
    assert (ROOT / path).read_text() == want, f"{path} is out of date: run `python -m mobitrace sync`"


def _choices(command: str) -> list[str]:
    sub = next(a for a in cli._parser()._actions if a.dest == "command")
    return list(next(a for a in sub.choices[command]._actions if a.dest == "study").choices)


def test_cli_study_choices_are_the_registry():
    assert _choices("ingest") == [s.slug for s in STUDIES]
    # ingest --analyze: only a study with a per-device analysis, which its ingest stage runs
    analyzed = [s.slug for s in STUDIES if s.device_analysis_params is not None]
    assert "cpu-gbps" in analyzed
    stages = pipeline.dvc_stages()
    for study in STUDIES:
        assert ("--analyze" in stages[study.ingest_stage]["do"]["cmd"]) == (study.slug in analyzed), study.slug
        if study.slug not in analyzed:
            with pytest.raises(SystemExit) as refused:
                cli.main(["ingest", study.slug, "no-capture", "no-interim", "--analyze", "no-results"])
            assert refused.value.code == cli.EXIT["input"], study.slug


def test_makefile_names_no_study_outside_comments():
    code = [line for line in (ROOT / "Makefile").read_text().splitlines() if not line.lstrip().startswith("#")]
    for study in STUDIES:
        assert not [line for line in code if study.slug in line or study.package in line], study.slug


def test_every_study_has_its_files_and_params():
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    for study in STUDIES:
        assert isinstance(params[study.params_section]["devices"], list), study.slug
        assert (ROOT / "data" / "published" / f"{study.slug}.yaml").is_file()
        assert study.capture_kit is None or (ROOT / study.capture_kit).is_file()
        ingest = study.module("ingest")
        assert callable(ingest.ingest) and callable(ingest.validate_session)
        for chapter in study.chapters:
            assert (ROOT / "notebooks" / f"{chapter.name}.py").is_file()
            assert chapter.params_section in params, chapter.name
        assert (ROOT / "data" / "results" / study.thumbnail.chapter).parent.name == "results"


@functools.cache  # ~1 s of DVC's index per call; the checked-in files don't change during a run
def _stages() -> tuple:
    """Every stage DVC sees in the repository (foreach expanded); the tests only read them."""
    with Repo(str(ROOT)) as repo:
        return tuple(repo.index.stages)


@functools.cache
def _stage_deps() -> dict[str, list[str]]:
    """Every stage DVC sees (foreach expanded) with its dependency paths."""
    return {stage.addressing: [str(Path(d.fs_path).relative_to(ROOT)) for d in stage.deps] for stage in _stages()}


def _stages_depending_on(deps: dict[str, list[str]], file: str) -> set[str]:
    return {name for name, paths in deps.items() if any(file == p or file.startswith(p + "/") for p in paths)}


@pytest.mark.parametrize("study", STUDIES, ids=lambda s: s.slug)
def test_editing_analysis_reruns_only_that_studys_analysis(study):
    deps = _stage_deps()
    for module in sorted((ROOT / "src/mobitrace/studies" / study.package).glob("*.py")):
        rel = str(module.relative_to(ROOT))
        hit = _stages_depending_on(deps, rel)
        if module.name == "__init__.py":
            assert not hit, rel  # a docstring; the description is study.yaml
            continue
        # ... and the book, whose reproducibility page prints every input's hash.
        others = {n for n in hit if not (n.startswith(study.ingest_stage + "@") or n.startswith(f"analyze_{study.package}")
                                         or n == "book")}
        assert not others, f"{rel} re-runs {sorted(others)}"
        if "analysis" in module.name:
            # Only the per-device analysis re-runs the device's stage: that stage ingests, then analyzes.
            per_device = module.name == "device_analysis.py" and study.device_analysis_params is not None
            assert hit and any(n.startswith(study.ingest_stage + "@") for n in hit) == per_device, \
                f"{rel}: {sorted(hit)}"


@pytest.mark.parametrize("study", STUDIES, ids=lambda s: s.slug)
def test_description_reaches_only_the_summaries(study):
    rel = str((study.folder() / "study.yaml").relative_to(ROOT))
    assert _stages_depending_on(_stage_deps(), rel) == {"ledger", "overview", "book"}


def test_the_book_depends_on_every_input_and_output_its_reproducibility_page_prints():
    """The page prints each stage's deps and outs with the md5 dvc.lock pins:
    if the book did not depend on one, a change to it (e.g. code whose outputs
    come out identical) would leave the page, and the book's hash, stale. A raw
    capture folder reaches the book through the hash file its ingest writes
    (data/interim/raw-hashes), which changes whenever the folder does."""
    stages = {stage.addressing: stage for stage in _stages()}
    book = [str(Path(d.fs_path).relative_to(ROOT)) for d in stages.pop("book").deps]
    assert not any(p == "data/raw" or p.startswith("data/raw/") for p in book)
    for name, stage in stages.items():
        outs = [str(Path(o.fs_path).relative_to(ROOT)) for o in stage.outs]
        for item in [*stage.deps, *stage.outs]:
            if isinstance(item, ParamsDependency):  # the page lists files, not params
                continue
            rel = str(Path(item.fs_path).relative_to(ROOT))
            if rel.startswith("data/raw/"):
                slug, device = Path(rel).relative_to("data/raw").parts
                rel = f"{pipeline.RAW_HASHES}/{slug}/{device}.json"
                assert rel in outs and f"--raw-hashes {rel}" in stage.cmd, f"{name}: no hash file of its raw folder"
            assert any(rel == p or rel.startswith(p + "/") for p in book), f"{name}: {rel} is not a dep of the book"


def test_every_ingest_reruns_when_its_superseded_map_changes():
    """cli ingest leaves out the sessions params.yaml marks superseded: each
    device's ingest depends on that map, so marking a session re-reads it."""
    for stage in _stages():
        if stage.addressing.split("@")[0] in {s.ingest_stage for s in registry.studies()}:
            params = {p for d in stage.deps if isinstance(d, ParamsDependency) for p in d.params}
            section = next(s for s in registry.studies() if stage.addressing.startswith(s.ingest_stage + "@"))
            assert f"{section.params_section}.superseded" in params, stage.addressing


def test_description_with_an_unknown_key_is_one_line(tmp_path):
    from mobitrace.core.errors import InputError
    bad = tmp_path / "toy"
    bad.mkdir()
    (bad / "study.yaml").write_text("slug: toy\ncolour: blue\n")
    with pytest.raises(InputError, match=r"study.yaml: field 'colour': expected only the keys"):
        registry._load(bad)


def test_ledger_and_overview_read_every_chapter():
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    claims = sorted(d for d in stages["ledger"]["deps"] if d.endswith("/claims.csv"))
    assert claims == sorted(f"data/results/{c.name}/claims.csv" for c in registry.chapters())
    assert {f"data/results/{c.name}/figures" for c in registry.chapters()} <= set(stages["overview"]["deps"])


def test_toc_lists_every_chapter_once():
    toc = yaml.safe_load((ROOT / "book" / "_toc.yml").read_text())
    files = [c["file"] for part in toc["parts"] for c in part["chapters"]]
    assert files[: len(registry.chapters())] == [f"chapters/{c.name}" for c in registry.chapters()]
    nested = [s["file"] for part in toc["parts"] for c in part["chapters"] for s in c.get("sections", [])]
    assert len(files + nested) == len(set(files + nested))


def test_supplements_nest_under_their_chapter_run_in_its_stage_and_write_no_results():
    supplements = [c for c in registry.chapters(supplements=True) if c.supplement_to]
    assert {c.name for c in supplements} == {"cpu-gbps-measured-methods", "priority-boost-methods",
                                             "stack-trim-methods", "transfer-tuning-methods",
                                             "mptcp-dualband-methods"}
    toc = yaml.safe_load((ROOT / "book" / "_toc.yml").read_text())
    studies = next(p for p in toc["parts"] if p["caption"] == "Studies")["chapters"]
    nested = {s["file"]: c["file"] for c in studies for s in c.get("sections", [])}
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    for c in supplements:
        assert nested[f"chapters/{c.name}"] == f"chapters/{c.supplement_to}"
        # one stage, one kernel: the chapter's command runs the supplement after it
        stage = stages[c.stage]
        assert c.stage == "analyze_" + c.supplement_to.replace("-", "_")
        assert stage["cmd"].split()[4] == c.supplement_to
        assert f"notebooks/{c.name}.py" in stage["deps"]
        assert f"book/chapters/{c.name}.ipynb" in stage["outs"]
        assert not [o for o in stage["outs"] if f"results/{c.name}" in str(o)]
        assert stage["params"][0] == c.supplement_to
        assert "analyze_" + c.name.replace("-", "_") not in stages
        assert f"data/results/{c.name}/claims.csv" not in stages["ledger"]["deps"]
    cards = {ch["chapter"] for s in STUDIES for ch in s.card()["chapters"]}
    assert not cards & {c.name for c in supplements}


def _toy_with_supplement(tmp_path, supplement_to: str) -> Path:
    folder = tmp_path / "toy"
    folder.mkdir()
    (folder / "study.yaml").write_text(yaml.safe_dump({
        "slug": "toy", "title": "t", "venue": "v", "order": 9, "params_section": "toy", "capture_kit": None,
        "chapters": [{"name": "toy", "label": "x"},
                     {"name": "toy-methods", "label": "y", "supplement_to": supplement_to}],
        "thumbnail": {"chapter": "toy", "name": "f", "alt": "a"}}))
    return folder


def test_supplement_is_no_device_chapter_and_has_its_chapters_params(tmp_path):
    toy = registry._load(_toy_with_supplement(tmp_path, "toy"))
    assert toy.device_chapter.name == "toy"
    assert [c.params_section for c in toy.chapters] == ["toy", "toy"]
    assert toy.summary_stages() == []


def test_supplement_of_no_chapter_is_one_line(tmp_path):
    from mobitrace.core.errors import InputError
    with pytest.raises(InputError, match="supplement_to names no chapter"):
        registry._load(_toy_with_supplement(tmp_path, "toi"))


def test_checked_in_lock_has_only_the_stages_of_dvc_yaml():
    current = {stage.name for stage in _stages()}
    locked = set(yaml.load((ROOT / "dvc.lock").read_text(), Loader=yaml.CSafeLoader)["stages"])
    assert locked <= current, f"stale stages in dvc.lock: {sorted(locked - current)}: run `python -m mobitrace sync`"


def test_prune_lock_drops_a_renamed_stage_and_keeps_the_rest_synthetic(tmp_path):
    (tmp_path / "dvc.yaml").write_text("stages:\n  kept:\n    cmd: echo kept\n"
                                       "  each:\n    foreach: [a, b]\n    do:\n      cmd: echo ${item}\n")
    entry = "    cmd: echo {0}\n"
    (tmp_path / "dvc.lock").write_text("schema: '2.0'\nstages:\n  kept:\n" + entry.format("kept")
                                       + "  each@a:\n" + entry.format("a") + "  old_name:\n" + entry.format("old")
                                       + "  each@c:\n" + entry.format("c"))
    Repo.init(str(tmp_path), no_scm=True)
    assert pipeline.prune_lock(tmp_path) == ["old_name", "each@c"]
    assert (tmp_path / "dvc.lock").read_text() == ("schema: '2.0'\nstages:\n  kept:\n" + entry.format("kept")
                                                   + "  each@a:\n" + entry.format("a"))
    assert pipeline.prune_lock(tmp_path) == []

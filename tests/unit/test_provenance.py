import pytest
import yaml

from mobitrace.book import provenance

LOCK = {
    "schema": "2.0",
    "stages": {
        "ingest@dev": {
            "cmd": "ingest",
            "deps": [{"path": "data/raw/study/dev", "md5": "aaa.dir", "size": 10, "nfiles": 3},
                     {"path": "src/mobitrace/parse.py", "md5": "code1"}],
            "outs": [{"path": "data/interim/study/dev", "md5": "bbb.dir"}],
        },
        "ingest_published@study": {
            "cmd": "ingest-published",
            "deps": [{"path": "data/published/study.yaml", "md5": "ccc", "size": 5}],
            "outs": [{"path": "data/interim/published/study", "md5": "ddd.dir"}],
        },
        "analyze@study": {
            "cmd": "run",
            "deps": [{"path": "data/interim/study/dev", "md5": "bbb.dir"},
                     {"path": "data/interim/published/study", "md5": "ddd.dir"},
                     {"path": "notebooks/study.py", "md5": "nb"}],
            "outs": [{"path": "data/results/study/claims.csv", "md5": "eee"}],
        },
        "ledger": {
            "cmd": "ledger",
            "deps": [{"path": "data/results/study/claims.csv", "md5": "eee"}],
            "outs": [{"path": "data/results/claims.csv", "md5": "fff"}],
        },
        "unrelated": {"cmd": "x", "deps": [{"path": "data/raw/other", "md5": "zzz.dir"}], "outs": []},
    },
}


@pytest.fixture
def stages(tmp_path):
    path = tmp_path / "dvc.lock"
    path.write_text(yaml.safe_dump(LOCK))
    return provenance.load_lock(path)


def test_sources_walk_upstream_to_raw_and_published_inputs_synthetic(stages):
    found = provenance.sources(stages, "analyze@study")
    assert [(s.path, s.md5, s.nfiles) for s in found] == [
        ("data/published/study.yaml", "ccc", None),
        ("data/raw/study/dev", "aaa.dir", 3),
    ]


def test_sources_follow_several_stages_synthetic(stages):
    assert [s.path for s in provenance.sources(stages, "ledger")] == [
        "data/published/study.yaml", "data/raw/study/dev"]


def test_sources_of_an_unknown_stage_name_it_synthetic(stages):
    with pytest.raises(KeyError, match="no stage 'nope'"):
        provenance.sources(stages, "nope")


def test_rebuild_command():
    assert provenance.rebuild_command("analyze_cpu_gbps") == "dvc repro analyze_cpu_gbps"


def test_sources_of_the_real_pipeline(repo):
    stages = provenance.load_lock(repo / "dvc.lock")
    paths = [s.path for s in provenance.sources(stages, "analyze_cpu_gbps")]
    assert "data/published/cpu-gbps.yaml" in paths


def test_provenance_line_shows_its_kinds_with_sources_md5_and_command_folded():
    from mobitrace.book.sphinxext import provenance_line
    srcs = [provenance.Source("data/raw/a", "0123456789abcdef.dir", None, 12),
            provenance.Source("data/published/b.yaml", "fedcba9876543210", 10, None),
            provenance.Source("data/raw/c", "aaaaaaaabbbb", None, 3)]
    box = provenance_line(["measured", "modeled"], "How <it> was made.", srcs, "dvc repro analyze_x")
    summary, line, details, close = box.children
    assert summary.tagname == "raw" and summary.astext().startswith("<details><summary>")
    assert ">measured</span> + <span" in summary.astext() and ">modeled</span>" in summary.astext()
    text = line.astext()
    assert text.startswith("data/raw/a md5 01234567, data/published/b.yaml md5 fedcba98")
    assert text.endswith("and 1 more · dvc repro analyze_x")
    folded = details.astext()
    assert "How <it> was made." in folded and "0123456789abcdef.dir (12 files)" in folded
    assert close.astext() == "</details>"


def test_an_identical_strip_is_shown_once_per_page_synthetic():
    from docutils import nodes
    from docutils.utils import new_document
    from docutils.frontend import get_default_settings
    from docutils.parsers.rst import Parser

    from mobitrace.book.sphinxext import _one_strip_per_provenance, provenance_line
    srcs = [provenance.Source("data/raw/a", "0123456789abcdef", None, None)]
    doc = new_document("page", get_default_settings(Parser))
    for text in ("Same.", "Same.", "Other."):
        doc += provenance_line(["measured"], text, srcs, "dvc repro x")
    _one_strip_per_provenance(None, doc, "page")
    boxes = list(doc.findall(nodes.container))
    full = [b for b in boxes if "provenance-repeat" not in b["classes"] and "provenance" in b["classes"]]
    repeats = [b for b in boxes if "provenance-repeat" in b["classes"]]
    assert len(full) == 2 and len(repeats) == 1
    assert repeats[0].astext() == "measured · same as above"
    assert next(repeats[0].findall(nodes.reference))["refuri"] == "#" + full[0]["ids"][0]


def test_load_lock_is_parsed_once_per_file_version_synthetic(tmp_path):
    from mobitrace.book import provenance as prov
    lock = tmp_path / "dvc.lock"
    lock.write_text("schema: '2.0'\nstages:\n  a:\n    cmd: x\n")
    first = prov.load_lock(lock)
    assert first == {"a": {"cmd": "x"}}
    assert prov.load_lock(lock) is first  # cached: the book asks for it once per provenance box
    lock.write_text("schema: '2.0'\nstages:\n  bb:\n    cmd: yy\n")  # a new version: parsed again
    assert prov.load_lock(lock) == {"bb": {"cmd": "yy"}}


def test_lock_sources_are_those_of_the_parsed_lock_and_follow_a_new_version_synthetic(tmp_path):
    from mobitrace.book import provenance as prov
    lock = tmp_path / "dvc.lock"
    body = ("schema: '2.0'\nstages:\n  a:\n    cmd: x\n    deps:\n    - path: data/raw/{}\n      md5: m\n"
            "    outs:\n    - path: data/interim/a\n      md5: n\n"
            "  b:\n    cmd: y\n    deps:\n    - path: data/interim/a\n      md5: n\n")
    lock.write_text(body.format("one"))
    assert prov.lock_sources(lock, "b") == prov.sources(prov.load_lock(lock), "b")
    assert [s.path for s in prov.lock_sources(lock, "b")] == ["data/raw/one"]
    lock.write_text(body.format("second"))  # a new version (another size): computed again
    assert [s.path for s in prov.lock_sources(lock, "b")] == ["data/raw/second"]

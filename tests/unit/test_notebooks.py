import nbformat
import pytest

from mobitrace import notebooks
from mobitrace.core import io
from mobitrace.core.errors import InputError
from mobitrace.book.chapter import KEY_FINDINGS


def test_strip_volatile_removes_times_paths_and_random_ids_synthetic():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("1 + 1"), nbformat.v4.new_markdown_cell("text")]
    nb.metadata["papermill"] = {"start_time": "t0", "end_time": "t1", "duration": 1.5,
                                "input_path": "/tmp/x.ipynb", "output_path": "/tmp/y.ipynb",
                                "parameters": {"a": 1}, "environment_variables": {}, "version": "2"}
    nb.cells[0].metadata["papermill"] = {"start_time": "t0", "end_time": "t1", "duration": 0.1,
                                         "status": "completed", "exception": False}
    nb.cells[0].metadata["execution"] = {"iopub.status.busy": "t0"}
    out = notebooks.strip_volatile(nb)
    assert out.metadata["papermill"] == {"parameters": {"a": 1}}
    assert out.cells[0].metadata == {"papermill": {"status": "completed", "exception": False}}
    assert [c.id for c in out.cells] == ["cell-000", "cell-001"]
    nbformat.validate(out)


def test_repo_root_is_found_from_a_subfolder(repo):
    assert io.repo_root(repo / "src" / "mobitrace") == repo


def test_repo_root_outside_a_repo_is_an_error(tmp_path):
    with pytest.raises(InputError, match="dvc.yaml"):
        io.repo_root(tmp_path)


def _display(mime: dict, metadata: dict | None = None):
    return nbformat.v4.new_output("display_data", data=mime, metadata=metadata or {})


def test_for_readers_removes_setup_folds_code_and_drops_streams_synthetic():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Title\n\nIntro paragraph."),
                nbformat.v4.new_code_cell("a = 1"), nbformat.v4.new_code_cell("a = 2"),
                nbformat.v4.new_code_cell("import x"), nbformat.v4.new_code_cell("show()"),
                nbformat.v4.new_code_cell("frame")]
    nb.cells[1].metadata["tags"] = ["parameters"]
    nb.cells[2].metadata["tags"] = ["injected-parameters"]
    nb.cells[3].outputs = [nbformat.v4.new_output("stream", name="stderr", text="a warning")]
    nb.cells[4].outputs = [nbformat.v4.new_output("stream", name="stdout", text="noise"),
                           _display({"text/html": "<p>table</p>", "text/plain": "<HTML>"})]
    nb.cells[5].outputs = [nbformat.v4.new_output("execute_result", data={"text/plain": "<Figure>"},
                                                  execution_count=1)]
    out = notebooks.for_readers(nb)
    assert out.cells[0].source == "# Title"
    assert out.cells[1].source == "Intro paragraph."
    tags = [c.metadata.get("tags") for c in out.cells[2:]]
    assert tags == [["parameters", "remove-cell"], ["injected-parameters", "remove-cell"],
                    ["remove-cell"], ["hide-input"], ["remove-cell"]]
    assert [o["output_type"] for o in out.cells[5].outputs] == ["display_data"]
    assert out.cells[3].outputs == [] and out.cells[6].outputs == []


def test_for_readers_keeps_the_sources_remove_input_synthetic():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Title"), nbformat.v4.new_code_cell("show()"),
                nbformat.v4.new_code_cell("show()")]
    nb.cells[1].metadata["tags"] = ["remove-input"]
    nb.cells[2].metadata["tags"] = ["hide-input"]
    for cell in nb.cells[1:]:
        cell.outputs = [_display({"text/html": "<p>table</p>", "text/plain": "<HTML>"})]
    out = notebooks.for_readers(nb)
    assert [c.metadata["tags"] for c in out.cells[1:]] == [["remove-input"], ["hide-input"]]


def test_for_readers_moves_key_findings_under_the_title_synthetic():
    nb = nbformat.v4.new_notebook()
    findings = _display({"text/html": "<div class='key-findings'></div>"}, KEY_FINDINGS)
    claims_table = _display({"text/html": "<table></table>"})
    nb.cells = [nbformat.v4.new_markdown_cell("# Title\n\nIntro."), nbformat.v4.new_markdown_cell("## Claims"),
                nbformat.v4.new_code_cell("out.show(claims); out.findings(claims)")]
    nb.cells[2].outputs = [claims_table, findings]
    out = notebooks.for_readers(nb)
    assert [c.cell_type for c in out.cells] == ["markdown", "code", "markdown", "markdown", "code"]
    assert out.cells[1].outputs == [findings] and out.cells[1].metadata["tags"] == ["remove-input"]
    assert out.cells[1].source  # myst-nb skips empty cells
    assert out.cells[4].outputs == [claims_table]


def test_glue_outputs_do_not_keep_a_cell_on_the_page_synthetic():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("glue('x', 1, display=False)")]
    nb.cells[0].outputs = [_display({"text/plain": "1"}, {"scrapbook": {"name": "x"}})]
    out = notebooks.for_readers(nb)
    assert out.cells[0].metadata["tags"] == ["remove-cell"]
    assert len(out.cells[0].outputs) == 1  # the glue value stays for the prose



def test_verdicts_json_counts_a_chapters_claims_synthetic(tmp_path):
    """A chapter's DVC metrics: its claims per verdict every tally shows, and the total (synthetic claims)."""
    import json
    from mobitrace.notebooks import write_verdicts
    (tmp_path / "claims.csv").write_text("claim_id,verdict\na,reproduced\nb,not reproduced\nc,reproduced\n"
                                         "d,inconclusive\ne,\"not checkable\"\n")
    write_verdicts(tmp_path)
    from mobitrace.core import claims
    found = json.loads((tmp_path / "verdicts.json").read_text())
    assert set(found) == {claims.key(label) for label in claims.COUNTED} | {"total"}
    assert {k: found[k] for k in ("reproduced", "not_reproduced", "inconclusive", "not_checkable", "total")} == {
        "reproduced": 2, "not_reproduced": 1, "inconclusive": 1, "not_checkable": 1, "total": 5}


def test_dvc_metrics_are_the_chapters_verdicts_only():
    """`dvc metrics show` is a narrow table: a row per chapter, the verdict counts."""
    from mobitrace.pipeline import dvc_stages
    from mobitrace.studies import registry
    declared = [next(iter(m)) for stage in dvc_stages().values() for m in stage.get("metrics", [])]
    assert declared == [f"data/results/{c.name}/verdicts.json" for c in registry.chapters()]

import nbformat
import pytest

from mobitrace import notebooks


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
    assert notebooks.repo_root(repo / "src" / "mobitrace") == repo


def test_repo_root_outside_a_repo_is_an_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="dvc.yaml"):
        notebooks.repo_root(tmp_path)


def test_parameter_cells_are_removed_or_folded_synthetic():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("a = 1"), nbformat.v4.new_code_cell("a = 2"),
                nbformat.v4.new_code_cell("print(a)")]
    nb.cells[0].metadata["tags"] = ["parameters"]
    nb.cells[1].metadata["tags"] = ["injected-parameters"]
    out = notebooks.tag_parameter_cells(nb)
    assert [c.metadata.get("tags") for c in out.cells] == [
        ["parameters", "remove-cell"], ["injected-parameters", "hide-cell"], []]

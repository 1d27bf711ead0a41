"""Run a study's text notebook with papermill and keep the executed notebook
deterministic, so the same inputs give the same bytes.

notebooks/<study>.py (jupytext percent format) -> book/chapters/<study>.ipynb,
with the parameters in params.yaml's <study> section. On failure every output
of the stage is removed: no partial results are left behind.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import jupytext
import nbformat
import papermill
import yaml

ROOT_FILES = ("dvc.yaml", "params.yaml")
# Papermill and nbclient record run times and paths; none of that is a result.
_VOLATILE_NB_KEYS = ("start_time", "end_time", "duration", "input_path", "output_path",
                     "environment_variables", "version")


def repo_root(start: Path | None = None) -> Path:
    """The folder holding dvc.yaml and params.yaml, searched upwards."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if all((folder / f).exists() for f in ROOT_FILES):
            return folder
    raise FileNotFoundError(f"no {' and '.join(ROOT_FILES)} in {here} or above")


def strip_volatile(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Remove timestamps, durations and absolute paths papermill/nbclient add,
    and replace the random cell ids (jupytext, papermill) by their positions."""
    pm = nb.metadata.get("papermill", {})
    for key in _VOLATILE_NB_KEYS:
        pm.pop(key, None)
    for number, cell in enumerate(nb.cells):
        cell.id = f"cell-{number:03d}"
        cell.metadata.pop("execution", None)
        cell_pm = cell.metadata.get("papermill")
        if cell_pm is not None:
            for key in ("start_time", "end_time", "duration"):
                cell_pm.pop(key, None)
    return nb


def tag_parameter_cells(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """For the book: drop the notebook's default parameters and fold the
    parameters papermill injected (the ones the run used) behind a toggle."""
    for cell in nb.cells:
        tags = cell.metadata.setdefault("tags", [])
        if "parameters" in tags and "remove-cell" not in tags:
            tags.append("remove-cell")
        if "injected-parameters" in tags and "hide-cell" not in tags:
            tags.append("hide-cell")
    return nb


def study_outputs(root: Path, study: str) -> list[Path]:
    """The analyze stage's outputs for a study."""
    return [root / "book" / "chapters" / f"{study}.ipynb", root / "data" / "results" / study]


def run(study: str, root: Path | None = None) -> Path:
    """Execute notebooks/<study>.py with params.yaml[<study>]; return the
    executed notebook's path."""
    root = repo_root(root)
    params = yaml.safe_load((root / "params.yaml").read_text())
    if study not in params:
        raise KeyError(f"params.yaml has no section {study!r}")
    parameters = {"study": study, **params[study]}
    source = root / "notebooks" / f"{study}.py"
    out_nb, results = study_outputs(root, study)
    for path in (out_nb, results):  # a rerun starts from nothing
        shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        src_nb = Path(tmp) / f"{study}.ipynb"
        executed = Path(tmp) / f"{study}.executed.ipynb"
        nbformat.write(jupytext.read(source), src_nb)
        try:
            papermill.execute_notebook(
                str(src_nb), str(executed), parameters=parameters, cwd=str(root),
                kernel_name="python3", progress_bar=False, log_output=False,
                request_save_on_cell_execute=False,
            )
        except BaseException:
            shutil.rmtree(results, ignore_errors=True)
            raise
        nb = tag_parameter_cells(strip_volatile(nbformat.read(executed, as_version=4)))
    out_nb.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, out_nb)
    return out_nb

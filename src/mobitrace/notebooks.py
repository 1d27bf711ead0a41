"""Run a study's text notebook with papermill and keep the executed notebook
deterministic, so the same inputs give the same bytes.

notebooks/<study>.py (jupytext percent format) -> book/chapters/<study>.ipynb,
with the parameters in params.yaml's <study> section; a chapter's supplements
(methods pages) run after it in the same kernel, in the same stage. On failure
every output of the stage is removed: no partial results are left behind.
"""

from __future__ import annotations

import ast
import os
import shutil
import tempfile
from pathlib import Path

from mobitrace import warm
from mobitrace.core.errors import InputError, Plain
from mobitrace.core.io import repo_root
from mobitrace.core.params import load as load_params
from mobitrace.core.params import section_of, unused
from mobitrace.studies import registry

# nbformat, jupytext and papermill are imported where they are used,
# after `run` has started the kernel, which boots meanwhile.

# Papermill and nbclient record run times and paths; none of that is a result.
_VOLATILE_NB_KEYS = ("start_time", "end_time", "duration", "input_path", "output_path",
                     "environment_variables", "version")


def strip_volatile(nb: "nbformat.NotebookNode") -> "nbformat.NotebookNode":
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


def _is_key_findings(output) -> bool:
    return output.get("metadata", {}).get("mobitrace", {}).get("role") == "key-findings"


def _visible(output) -> bool:
    """An output a reader should see: displays and results other than glue
    and bare object reprs (text/plain only); never streams or warnings."""
    if output.get("output_type") in ("display_data", "execute_result"):
        data = output.get("data", {})
        if "scrapbook" in output.get("metadata", {}) or "application/papermill.record+json" in data:
            return False
        return bool(set(data) - {"text/plain"})
    return output.get("output_type") == "error"


def _add_tag(cell, tag: str) -> None:
    tags = cell.metadata.setdefault("tags", [])
    if tag not in tags:
        tags.append(tag)


def for_readers(nb: "nbformat.NotebookNode") -> "nbformat.NotebookNode":
    """Make the executed notebook a page for readers:

    - the title line of the first markdown cell stands alone, and the key
      findings (the display mobitrace.book.chapter.ChapterOutputs.findings makes)
      come right under it;
    - parameter cells, and code cells that show nothing, are removed from the
      page; every other code input is folded (a click shows it) unless the
      source tags it remove-input or remove-cell (every source cell carries
      one such tag, tests/unit/test_notebooks_thin.py);
    - streams (stdout, stderr, warnings) and bare object reprs are dropped.
    Glue outputs stay in the notebook, so the prose can still use them."""
    import nbformat
    findings = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        tags = cell.metadata.get("tags", [])
        kept = []
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                continue
            if output.get("output_type") == "execute_result" and set(output.get("data", {})) <= {"text/plain"}:
                continue
            if _is_key_findings(output):
                findings.append(output)
                continue
            kept.append(output)
        cell.outputs = kept
        if "parameters" in tags or "injected-parameters" in tags or not any(_visible(o) for o in kept):
            _add_tag(cell, "remove-cell")
        elif not {"remove-input", "remove-cell"} & set(tags):  # the source's own choice stands
            _add_tag(cell, "hide-input")
    first_md = next((i for i, c in enumerate(nb.cells) if c.cell_type == "markdown"), None)
    if first_md is None:
        return nb
    title_cell = nb.cells[first_md]
    title, _, rest = title_cell.source.partition("\n")
    insert_at = first_md + 1
    if title.startswith("# ") and rest.strip():
        title_cell.source = title
        nb.cells.insert(insert_at, nbformat.v4.new_markdown_cell(rest.strip("\n")))
    for output in reversed(findings):
        cell = nbformat.v4.new_code_cell(source="# Key findings (made at the end of the chapter)",
                                         metadata={"tags": ["remove-input"]})
        cell.outputs = [output]
        nb.cells.insert(insert_at, cell)
    return nb


def study_outputs(root: Path, study: str) -> list[Path]:
    """The analyze stage's outputs for a study."""
    return [root / "book" / "chapters" / f"{study}.ipynb", root / "data" / "results" / study]


def supplements(study: str) -> list[str]:
    """The supplements of chapter `study` (registry.Chapter.supplement_to), in book order."""
    return [c.name for c in registry.chapters(supplements=True) if c.supplement_to == study]


def _fresh_session(km) -> None:
    """Make the running kernel what a new one would be, its imported modules
    kept: an empty namespace and execution count 1, so the next notebook's
    bytes are those it gets in a kernel of its own. Silent: no output, no count."""
    kc = km.blocking_client()
    kc.start_channels()
    try:
        reply = kc.execute_interactive("get_ipython().reset(new_session=True)", silent=True,
                                       store_history=False, timeout=60)
    finally:
        kc.stop_channels()
    if reply["content"]["status"] != "ok":
        raise RuntimeError(f"the kernel could not reset its session: {reply['content'].get('evalue')}")


def imported_modules(source: Path) -> list[str]:
    """The modules a text notebook imports at its top level, in order (a
    percent-format notebook is a Python file: its markdown cells are
    comments); `from m import x` names m and m.x, which may be a module."""
    try:
        body = ast.parse(source.read_text(), str(source)).body
    except SyntaxError:  # e.g. an uncommented magic: no preload, the notebook runs as it is
        return []
    found = []
    for node in body:
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found += [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
    return list(dict.fromkeys(found))


# Imports `names` without binding any name in the user's namespace (m.x that
# is not a module is skipped); a module that fails fails again in its cell.
# pandera goes without hypothesis here too (see mobitrace/__main__.py).
_PRELOAD = """__import__("sys").modules.setdefault("hypothesis", None)
for __mobitrace_module in {names!r}:
    try:
        __import__(__mobitrace_module)
    except ImportError:
        pass
globals().pop("__mobitrace_module", None)
"""


def _start_kernel(root: Path, preload: list[str], sockets: str):
    """Start the stage's kernel as nbclient would (papermill's kernel
    manager, history in memory, in `root`) and send it a silent request to
    import `preload`, the notebook's own imports: the kernel loads them while
    this process loads papermill and prepares the notebook, instead of after.
    Silent: no output, no execution count, no name bound; a module that fails
    to import fails again, visibly, in the notebook's own cell. The kernel
    listens on Unix sockets in the folder `sockets`: stages start kernels
    side by side, and a TCP port jupyter_client found free for one kernel
    could be bound by another first (zmq: Address already in use). Returns
    the kernel manager and the client that sent the request."""
    from jupyter_client.manager import AsyncKernelManager
    from jupyter_core.utils import run_sync

    km = AsyncKernelManager(kernel_name="python3", transport="ipc", ip=os.path.join(sockets, "kernel"))
    argv = km.kernel_spec.argv
    if os.environ.get(warm.ENV) and argv[1:3] == ["-m", "ipykernel_launcher"]:
        # A fork of the run's warm server, its libraries loaded (mobitrace.warm).
        km.kernel_spec.argv = [argv[0], "-m", "mobitrace.warm", "run", "ipykernel_launcher", *argv[3:]]
    run_sync(km.start_kernel)(extra_arguments=["--HistoryManager.hist_file=:memory:"], cwd=str(root))
    kc = km.blocking_client()
    kc.start_channels(iopub=False, stdin=False, hb=False, control=False)
    kc.execute(_PRELOAD.format(names=preload), silent=True, store_history=False)
    return km, kc


def run(study: str, root: Path | None = None, shared: tuple[str, ...] = ()) -> list[Path]:
    """Execute notebooks/<study>.py, then each supplement of the chapter
    (which shows its results) in the same kernel, so that the supplement
    does not pay a kernel start and its imports again (one stage runs both).
    A chapter's notebook declares one parameter, `study` (its params.yaml
    section); its chapter class reads the section's knobs itself
    (mobitrace.core.params), as the ledger and the landing page read theirs
    and the registry's cards. A notebook that declares its knobs gets each
    section named in `shared` as one parameter (power-models: power_models).
    A declared parameter that params.yaml does not hold, or a knob of the
    section that nothing reads, stops the stage first.
    Return the executed notebooks' paths. If any notebook fails, no output
    of the stage is left."""
    root = repo_root(root)
    params = load_params(root)
    # A supplement runs with its chapter's parameters (registry.Chapter.supplement_to).
    own = next((c.params_section for c in registry.chapters(supplements=True) if c.name == study), study)
    parameters = {"study": own, **section_of(params, own),
                  **{section.replace("-", "_"): section_of(params, section) for section in shared}}
    names = [study, *supplements(study)]
    _check_parameters(root, names, own, params, parameters)
    out_nbs = [study_outputs(root, name)[0] for name in names]
    results = study_outputs(root, study)[1]
    pages = next((root / c.device_pages for c in registry.chapters() if c.name == study and c.device_pages), None)
    for path in (*out_nbs, results, *([pages] if pages else [])):  # a rerun starts from nothing
        shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="mobitrace-kernel-") as tmp:  # the kernel's sockets, the notebooks
        km, kc = _start_kernel(root, imported_modules(root / "notebooks" / f"{study}.py"), tmp)
        executed = []
        try:
            for number, name in enumerate(names):
                if number:
                    _fresh_session(km)
                executed.append(_execute(root, name, parameters, Path(tmp), km))
        except BaseException:
            shutil.rmtree(results, ignore_errors=True)
            if pages:
                shutil.rmtree(pages, ignore_errors=True)
            raise
        finally:
            from jupyter_core.utils import run_sync
            kc.stop_channels()
            if km.has_kernel:
                run_sync(km.shutdown_kernel)()
    import nbformat
    for nb, out_nb in zip(executed, out_nbs):
        out_nb.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, out_nb)
    if (results / "claims.csv").is_file():
        write_verdicts(results)
    return out_nbs


def write_verdicts(results: Path) -> None:
    """<results>/verdicts.json: the chapter's claims counted as every tally
    counts them (claims.verdict_counts: testbed-bound and follows-from-the-
    model apart from evidence) and their total. These few numbers are the
    chapter's DVC metrics, so that `dvc metrics show` is a narrow table, a
    row per chapter; metrics.json keeps the rest."""
    import json

    import pandas as pd

    from mobitrace.core.claims import keyed, verdict_counts

    claims = pd.read_csv(results / "claims.csv", dtype=str, keep_default_na=False)
    counts = keyed(verdict_counts(claims))
    (results / "verdicts.json").write_text(json.dumps({**counts, "total": len(claims)}, indent=2) + "\n")
def declared_parameters(path: Path) -> list[str]:
    """The names the `parameters` cell of a text notebook (percent format)
    assigns."""
    cell, inside = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# %%"):
            inside = '"parameters"' in line
        elif inside:
            cell.append(line)
    return [target.id for node in ast.parse("\n".join(cell)).body if isinstance(node, ast.Assign)
            for target in node.targets if isinstance(target, ast.Name)]


def _check_parameters(root: Path, names: list[str], section: str, params: dict, parameters: dict) -> None:
    """Stop before any kernel starts when a notebook of the stage declares a
    parameter that params.yaml does not give, or when the notebooks declare
    their knobs themselves (no chapter class reads them) and leave a knob of
    their section unread."""
    read = set()
    for name in names:
        path = root / "notebooks" / f"{name}.py"
        declared = declared_parameters(path)
        missing = [p for p in declared if p not in parameters]
        if missing:
            raise InputError(path, "its parameters cell", ", ".join(missing),
                             f"only parameters that params.yaml gives (section {section})",
                             Plain("a parameter it does not"))
        read.update(declared)
    if read - {"study"}:
        extra = unused(params, section, read)
        if extra:
            raise InputError("params.yaml", f"section {section}", ", ".join(extra),
                             "only knobs that a stage reads (its notebooks declare others)",
                             Plain("a knob no stage reads"))


def _execute(root: Path, name: str, parameters: dict, tmp: Path, km) -> "nbformat.NotebookNode":
    """notebooks/<name>.py executed in the running kernel of `km`, made
    deterministic and for readers."""
    import jupytext
    import nbformat
    import papermill

    src_nb = tmp / f"{name}.ipynb"
    executed = tmp / f"{name}.executed.ipynb"
    nbformat.write(jupytext.read(root / "notebooks" / f"{name}.py"), src_nb)
    declared = papermill.inspect_notebook(str(src_nb))
    papermill.execute_notebook(
        str(src_nb), str(executed), parameters={k: v for k, v in parameters.items() if k in declared},
        cwd=str(root), kernel_name="python3", progress_bar=False, log_output=False,
        request_save_on_cell_execute=False, km=km,
    )
    return strip_volatile(for_readers(nbformat.read(executed, as_version=4)))

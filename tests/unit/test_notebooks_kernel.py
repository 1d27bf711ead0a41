"""mobitrace.notebooks.run executes a chapter and its supplements in one
kernel (one stage), which imports the chapter's modules before its first cell:
each executed notebook must be the bytes it would be in a kernel of its own,
and a failure in any of them leaves no output of the stage. Toy notebooks in a
scratch project (synthetic)."""

import os

import pytest

from mobitrace import notebooks

pytestmark = pytest.mark.waits  # run first, beside the shared build (tests/conftest.py)

HEADER = "# ---\n# jupyter:\n#   kernelspec:\n#     display_name: Python 3\n#     language: python\n#     name: python3\n# ---\n"
CHAPTER = HEADER + """
# %% [markdown]
# # Toy

# %% tags=["parameters"]
x = 0
results_dir = "data/results/toy"

# %%
names = sorted(globals())
import sys
from pathlib import Path

Path(results_dir).mkdir(parents=True, exist_ok=True)
(Path(results_dir) / "preloaded.txt").write_text(str("tabnanny" in sys.modules))
from IPython.display import HTML
HTML("names: " + " ".join(names))

# %%
import os
import tabnanny

(Path(results_dir) / "pid.txt").write_text(str(os.getpid()))
leftover = x + 1
leftover
"""
SUPPLEMENT = HEADER + """
# %% [markdown]
# # Toy methods

# %% tags=["parameters"]
x = 0

# %%
names = sorted(k for k in globals() if not k.startswith("_"))
from IPython.display import HTML
HTML("names: " + " ".join(names))

# %%
{FAIL}x * 10
"""


def _project(tmp_path, fail: bool = False):
    (tmp_path / "dvc.yaml").write_text("stages: {}\n")
    (tmp_path / "params.yaml").write_text("toy: {x: 4, results_dir: data/results/toy}\ntoy-methods: {x: 4}\n")
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "toy.py").write_text(CHAPTER)
    (tmp_path / "notebooks" / "toy-methods.py").write_text(SUPPLEMENT.replace("{FAIL}", "1 / 0\n" if fail else ""))
    return tmp_path


@pytest.fixture
def toy_supplement(monkeypatch):
    monkeypatch.setattr(notebooks, "supplements", lambda study: ["toy-methods"] if study == "toy" else [])


def test_a_supplement_run_in_its_chapters_kernel_is_byte_identical_to_its_own_run_synthetic(
        tmp_path, toy_supplement):
    root = _project(tmp_path)
    chapter_nb, supplement_nb = notebooks.run("toy", root=root)
    assert chapter_nb.name == "toy.ipynb" and supplement_nb.name == "toy-methods.ipynb"
    shared = supplement_nb.read_bytes()
    # the chapter's kernel ran it: the imports are warm, but the namespace was emptied
    # (no `leftover`, no `os`) and execution counts restart at 1
    assert b"names: In Out exit get_ipython" in shared and b"leftover" not in shared and b" os " not in shared
    assert b'"execution_count": 1' in shared
    pid = (root / "data" / "results" / "toy" / "pid.txt").read_text()
    assert pid != str(os.getpid())  # a kernel process, not this one
    notebooks.run("toy-methods", root=root)  # alone, in a kernel of its own
    assert supplement_nb.read_bytes() == shared
    assert chapter_nb.is_file()


def test_preloading_the_chapters_imports_changes_no_byte_synthetic(tmp_path, toy_supplement, monkeypatch):
    root = _project(tmp_path)
    chapter_nb, _ = notebooks.run("toy", root=root)
    preloaded = chapter_nb.read_bytes()
    assert (root / "data" / "results" / "toy" / "preloaded.txt").read_text() == "True"
    assert b"names: In Out _ __ ___ __builtin__" in preloaded and b"mobitrace" not in preloaded  # nothing bound
    monkeypatch.setattr(notebooks, "_PRELOAD", "pass")
    notebooks.run("toy", root=root)
    assert (root / "data" / "results" / "toy" / "preloaded.txt").read_text() == "False"
    assert chapter_nb.read_bytes() == preloaded


def test_a_failing_supplement_leaves_no_output_of_the_stage_synthetic(tmp_path, toy_supplement):
    from papermill.exceptions import PapermillExecutionError

    root = _project(tmp_path, fail=True)
    with pytest.raises(PapermillExecutionError, match="ZeroDivisionError"):
        notebooks.run("toy", root=root)
    assert not (root / "book" / "chapters" / "toy.ipynb").exists()
    assert not (root / "book" / "chapters" / "toy-methods.ipynb").exists()
    assert not (root / "data" / "results" / "toy").exists()


def test_imported_modules_in_order_and_none_for_a_file_python_cannot_parse_synthetic(tmp_path):
    source = tmp_path / "nb.py"
    source.write_text("# %%\nimport os, json\nfrom pathlib import Path\n# %%\nimport os\nfrom . import x\n")
    assert notebooks.imported_modules(source) == ["os", "json", "pathlib", "pathlib.Path"]
    source.write_text("# %%\n%matplotlib inline\nimport os\n")
    assert notebooks.imported_modules(source) == []


def test_the_kernel_listens_on_unix_sockets_of_its_own_not_tcp_ports_synthetic(tmp_path, toy_supplement,
                                                                               monkeypatch):
    """Stages start kernels side by side: a TCP port jupyter_client found
    free for one kernel could be bound by another's first (zmq: Address
    already in use, seen in a cold build). Unix sockets in a folder of the
    kernel's own cannot collide; the folder goes with the kernel."""
    root = _project(tmp_path)
    seen = {}
    start = notebooks._start_kernel

    def spy(root, preload, sockets):
        km, kc = start(root, preload, sockets)
        seen.update(transport=km.transport, ip=km.ip, sockets=sockets)
        return km, kc
    monkeypatch.setattr(notebooks, "_start_kernel", spy)
    chapter_nb, supplement_nb = notebooks.run("toy", root=root)  # the supplement's client connects too
    assert chapter_nb.is_file() and supplement_nb.is_file()
    assert seen["transport"] == "ipc" and seen["ip"].startswith(seen["sockets"] + os.sep), seen
    assert not os.path.exists(seen["sockets"])

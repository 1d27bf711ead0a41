"""Contracts with the library versions our machinery leans on (requirements.txt
pins them). Each piece is kept because the library's own mechanism does not
do the job, and `make bench` states what it saves; a test here fails when
the library changes under it, or starts doing the job itself, so that the
piece is mended or removed, not left to drift.

- mobitrace.repro (the runner) calls DVC's reproduce internals, answers
  scm.is_tracked from one read of .git/index, prunes the walk in which DVC
  looks for stage files, and parses params.yaml once per version of it;
- mobitrace.warm and mobitrace/__main__.py keep pandera from importing
  hypothesis at its first validation;
- mobitrace.book.figures.layout_only_draws answers seaborn's heatmap's
  forced draw (it only measures tick labels) with a layout;
- mobitrace.book.figures.save_svg answers the layout draw matplotlib's
  savefig(bbox_inches="tight") makes before measuring with the layout
  engine alone;
- tests/conftest.py's scheduler subclasses xdist's LoadGroupScheduling,
  because xdist's own grouping does nothing on the pinned pytest.
"""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import ROOT


def _pinned(name: str) -> str:
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        if line.lower().startswith(f"{name.lower()}=="):
            return line.split("==", 1)[1].split()[0]
    raise AssertionError(f"{name} is not pinned in requirements.txt")


@pytest.mark.parametrize("dist", ["dvc", "matplotlib", "pandera", "pytest", "pytest-xdist", "seaborn"])
def test_the_installed_versions_are_the_pinned_ones(dist):
    """The contracts below were checked with these versions."""
    from importlib.metadata import version
    assert version(dist) == _pinned(dist)


def test_dvc_reproduce_internals_the_runner_calls_exist():
    """mobitrace.repro runs DVC's plan with DVC's own functions; their names
    and parameters (tests/unit/test_repro_runner.py checks the outputs and
    dvc.lock against plain `dvc repro`, byte for byte)."""
    from dvc.repo.reproduce import collect_stages, get_active_graph, plan_repro
    from dvc.stage import PipelineStage, Stage
    from dvc.stage.run import _enforce_cmd_list, _make_cmd, get_executable, prepare_kwargs
    from dvc.stage.serialize import to_lockfile
    from dvc.utils.serialize._yaml import dumps_yaml

    for fn in (collect_stages, get_active_graph, plan_repro, _enforce_cmd_list, _make_cmd, get_executable,
               prepare_kwargs, to_lockfile, dumps_yaml):
        assert callable(fn)
    assert "run_env" in inspect.signature(prepare_kwargs).parameters
    for method, params in (("changed", {"upstream"}), ("save", {"run_cache"}),
                           ("remove_outs", {"ignore_remove", "force"}), ("save_deps", set()), ("commit", set())):
        assert params <= set(inspect.signature(getattr(Stage, method)).parameters), method
    # keyword arguments these take through **kwargs
    assert {'kwargs.get("force"', 'kwargs.pop("upstream"'} <= {
        k for k in ('kwargs.get("force"', 'kwargs.pop("upstream"') if k in inspect.getsource(Stage.reproduce)}
    from dvc.dvcfile import ProjectFile
    assert "update_pipeline" in inspect.signature(ProjectFile.dump).parameters
    assert issubclass(PipelineStage, Stage)
    # Stage.run's rule for the run cache, which the runner's _record copies
    assert "no_cache_outs" in inspect.getsource(Stage.run)


def test_pandera_imports_hypothesis_at_its_first_validation_unless_blocked():
    """Why __main__.py and the kernels' preload set sys.modules["hypothesis"]
    to None: pandera imports it (and pytest with it) when it is installed, at
    its first validation, for data synthesis no command does; blocked, the
    validation still works."""
    probe = ("import sys\n{block}import pandas as pd, pandera.pandas as pa\n"
             "pa.DataFrameSchema({{'a': pa.Column(int, pa.Check.ge(0))}}).validate(pd.DataFrame({{'a': [1]}}))\n"
             "print(sys.modules.get('hypothesis') is not None)\n")
    seen = [subprocess.run([sys.executable, "-c", probe.format(block=block)], capture_output=True, text=True,
                           check=True).stdout.strip()
            for block in ("", "sys.modules.setdefault('hypothesis', None)\n")]
    assert seen == ["True", "False"]


def test_xdist_loadgroup_alone_does_not_group_on_the_pinned_pytest_synthetic(tmp_path):
    """Why tests/conftest.py subclasses LoadGroupScheduling: xdist marks a
    test's group by rewriting item._nodeid, which pytest no longer reads
    (pytest-dev/pytest-xdist#1386), so one group's tests spread over the
    workers. When this fails, xdist groups again: drop the subclass."""
    (tmp_path / "test_g.py").write_text(
        "import os, pytest\n"
        "@pytest.mark.xdist_group('g')\n"
        "@pytest.mark.parametrize('i', range(6))\n"
        "def test_a(i, tmp_path_factory):\n"
        "    (tmp_path_factory.getbasetemp().parent.parent / f'w{i}').write_text(os.environ['PYTEST_XDIST_WORKER'])\n")
    # xdist alone: the other installed plugins (hypothesis, hydra, ...) cost each of the 3 processes seconds of imports
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "xdist.plugin", "-n", "2",
                    "--dist", "loadgroup", f"--basetemp={tmp_path / 'base'}", "test_g.py"], cwd=tmp_path, check=True,
                   capture_output=True, env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    workers = {p.read_text() for p in tmp_path.rglob("w[0-9]")}
    assert len(workers) > 1, workers
    from xdist.scheduler import LoadGroupScheduling
    for name in ("_split_scope", "_assign_work_unit"):
        assert callable(getattr(LoadGroupScheduling, name)), name
    assert "self.workqueue" in inspect.getsource(LoadGroupScheduling.__mro__[1])


def test_dvc_asks_scm_is_tracked_which_the_runner_answers_alike_synthetic(tmp_path):
    """mobitrace.repro replaces scm.is_tracked (one read of .git/index per
    version of it): DVC's Output.ignore still calls it, and on a synthetic
    repository it answers as scmrepo's own for a tracked file, a folder
    holding one, an untracked file and a missing path."""
    from dvc.output import Output
    from dvc.scm import SCM

    from mobitrace import repro

    assert "is_tracked" in inspect.getsource(Output.ignore)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "data" / "sub").mkdir(parents=True)
    (tmp_path / "data" / "sub" / "a.txt").write_text("a\n")
    (tmp_path / "loose.txt").write_text("b\n")
    subprocess.run(["git", "add", "data"], cwd=tmp_path, check=True)
    paths = [str(tmp_path / p) for p in ("data/sub/a.txt", "data", "data/sub", "loose.txt", "absent", "dat")]
    theirs = SCM(str(tmp_path))
    ours = SCM(str(tmp_path))
    repro._read_git_index_once(ours)
    assert "is_tracked" in vars(ours) and "is_tracked" not in vars(theirs), "the runner did not replace it"
    assert [ours.is_tracked(p) for p in paths] == [theirs.is_tracked(p) for p in paths] \
        == [True, True, True, False, False, False]


def test_dvc_finds_stage_files_in_collect_files_walk_which_the_runner_prunes():
    """mobitrace.repro replaces dvc.repo.index.collect_files by a wrapper
    that hands DVC's own function a walk pruned below the session folders:
    Index.from_repo must call it by its module name, and it must walk with
    repo.dvcignore.walk (tests/unit/test_repro_runner.py checks what the
    pruned walk still finds)."""
    from dvc.repo import index

    assert list(inspect.signature(index.collect_files).parameters) == ["repo", "onerror"]
    assert "repo.dvcignore.walk(" in inspect.getsource(index.collect_files)
    assert "collect_files(repo, onerror=onerror)" in inspect.getsource(index.Index.from_repo)


def test_dvc_reads_params_through_load_path_which_the_runner_parses_once():
    """mobitrace.repro replaces dvc.dependency.param.load_path (parsed once
    per version of params.yaml): DVC's params dependency must read every
    params file through that name, called with (path, fs)."""
    from dvc.dependency import param

    assert list(inspect.signature(param.load_path).parameters)[:2] == ["fs_path", "fs"]
    assert "load_path(path, fs, **load_kwargs)" in inspect.getsource(param.read_param_file)
    assert "read_param_file(" in inspect.getsource(param.ParamsDependency)


def test_seaborn_heatmap_draws_only_through_canvas_draw_and_a_stale_check():
    """Why layout_only_draws may replace fig.canvas.draw and clear
    fig.stale: seaborn's heatmap forces its draw (to see whether tick labels
    overlap) with utils._draw_figure, which calls fig.canvas.draw() and then
    draws again only if the figure is still stale."""
    from seaborn import matrix, utils

    source = inspect.getsource(utils._draw_figure)
    assert "fig.canvas.draw()" in source and "if fig.stale:" in source
    assert "_draw_figure(ax.figure)" in inspect.getsource(matrix._HeatMapper.plot)
    assert "axis_ticklabels_overlap" in inspect.getsource(matrix._HeatMapper.plot)


def test_tight_savefig_lays_out_with_one_draw_before_its_measure_and_draws_once_more():
    """Why figures._save_tight may answer the first Figure.draw of a
    savefig(bbox_inches="tight") with the layout engine alone: print_figure
    draws the figure with drawing disabled (after _get_renderer, which
    shadows `draw` itself and restores it), then measures the tight bbox
    (which lays out ticks, labels and legends itself), then draws it for
    real, both through the figure's `draw` attribute; and Figure.draw runs
    the layout engine only when the figure has axes.
    (tests/unit/test_figures.py checks the bytes against plain savefig.)"""
    import io

    import matplotlib.pyplot as plt
    from matplotlib.backend_bases import FigureCanvasBase
    from matplotlib.figure import Figure

    source = inspect.getsource(FigureCanvasBase.print_figure)
    assert source.index("_draw_disabled") < source.index("self.figure.draw(renderer)") \
        < source.index("get_tightbbox(") < source.index("result = print_method(")
    assert "if self.axes and self.get_layout_engine() is not None:" in inspect.getsource(Figure.draw)

    fig, ax = plt.subplots(layout="constrained")
    ax.plot([0, 1], [0, 1])
    drawn = []
    real = fig.draw

    def draw(renderer):
        # _draw_disabled shadows the drawing methods of the renderer (the SVG one MixedModeRenderer wraps)
        drawn.append("open_group" in vars(getattr(renderer, "_renderer", renderer)))
        real(renderer)

    fig.draw = draw
    fig.savefig(io.StringIO(), format="svg", bbox_inches="tight")
    plt.close(fig)
    assert drawn == [True, False]  # the layout draw, then the real one

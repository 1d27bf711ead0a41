"""params.yaml is the one place a knob is declared: a chapter reads its
knobs from its section by name, a notebook declares only `study`, and a
knob that nothing reads, or a parameter that params.yaml does not hold,
stops the stage with one line (synthetic projects, and the real params.yaml)."""

import inspect

import pytest

from mobitrace import notebooks
from mobitrace.core import params
from mobitrace.core.errors import InputError
from mobitrace.studies import registry

HEADER = "# ---\n# jupyter:\n#   kernelspec:\n#     name: python3\n# ---\n"


def _project(tmp_path, section: str, notebook: str | None = None):
    (tmp_path / "dvc.yaml").write_text("stages: {}\n")
    (tmp_path / "params.yaml").write_text(section)
    if notebook is not None:
        (tmp_path / "notebooks").mkdir()
        (tmp_path / "notebooks" / "toy.py").write_text(HEADER + notebook)
    return tmp_path


def test_arguments_come_from_the_section_and_whole_sections_by_name_synthetic(tmp_path):
    root = _project(tmp_path, "toy: {alpha: 0.01, devices: [a]}\npower-models: {cpu: {k: 1}}\n")
    found = params.arguments("toy", ["study", "alpha", "power_models", "superseded"], {"superseded"}, root)
    assert found == {"study": "toy", "alpha": 0.01, "power_models": {"cpu": {"k": 1}}}


def test_an_argument_params_yaml_does_not_hold_stops_synthetic(tmp_path):
    root = _project(tmp_path, "toy: {alpha: 0.01}\n")
    with pytest.raises(InputError, match="section toy: field 'level'"):
        params.arguments("toy", ["study", "alpha", "level"], root=root)


def test_a_knob_nothing_reads_stops_synthetic(tmp_path):
    root = _project(tmp_path, "toy: {alpha: 0.01, ci_level: 0.95, devices: [], superseded: {}}\n")
    with pytest.raises(InputError, match="field 'ci_level'.*no stage reads"):
        params.arguments("toy", ["study", "alpha"], root=root)


def test_run_notebook_refuses_a_parameter_params_yaml_does_not_give_before_any_kernel_synthetic(tmp_path):
    root = _project(tmp_path, "toy: {x: 1}\n", '\n# %% tags=["parameters"]\nstudy = "toy"\nx = 0\ny = 0\n')
    with pytest.raises(InputError, match="notebooks/toy.py: its parameters cell: field 'y'"):
        notebooks.run("toy", root)


def test_run_notebook_refuses_a_knob_its_notebook_leaves_unread_synthetic(tmp_path):
    root = _project(tmp_path, "toy: {x: 1, y: 2}\n", '\n# %% tags=["parameters"]\nstudy = "toy"\nx = 0\n')
    with pytest.raises(InputError, match="section toy: field 'y'"):
        notebooks.run("toy", root)


def test_declared_parameters_reads_the_parameters_cell_only_synthetic(tmp_path):
    path = tmp_path / "n.py"
    path.write_text(HEADER + '\n# %%\na = 1\n\n# %% tags=["parameters"]\nstudy = "s"\nb = [1]\n\n# %%\nc = 2\n')
    assert notebooks.declared_parameters(path) == ["study", "b"]


@pytest.mark.parametrize("chapter", registry.chapters(supplements=True), ids=lambda c: c.name)
def test_every_chapter_reads_exactly_its_knobs_and_its_notebook_declares_only_study(chapter, repo):
    study = next(s for s in registry.studies() if chapter in s.chapters)
    cls = study.module(study.chapter_module(chapter.name)).Chapter
    signature = inspect.signature(cls.__init__).parameters
    names = [p for p in signature if p != "self"]
    optional = {p for p in names if signature[p].default is not inspect.Parameter.empty}
    params.arguments(chapter.params_section, names, optional, repo)  # raises on a missing or unread knob
    assert notebooks.declared_parameters(repo / "notebooks" / f"{chapter.name}.py") == ["study"]
    shared = {n for n in names if n.replace("_", "-") in params.load(repo) and n not in
              params.section_of(params.load(repo), chapter.params_section)}
    assert {s.replace("-", "_") for s in chapter.shared_params} >= shared, "dvc.yaml must track every section it reads"

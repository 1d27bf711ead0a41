"""environment.yml (conda, every pin through its pip: section) is generated from requirements.txt (the pip lock)."""

import re

import yaml


def _normal(name):
    """PEP 503 name: ruamel.yaml and ruamel-yaml are one package."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _lock(repo):
    pins = {}
    for line in (repo / "requirements.txt").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            name, version = line.split("==")
            pins[_normal(name)] = version
    return pins


def _top_level(repo):
    names = []
    for line in (repo / "requirements.in").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            names.append(_normal(re.split(r"[<>=!~\[ ]", line)[0]))
    return names


def test_every_lock_line_is_an_exact_pin(repo):
    for line in (repo / "requirements.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            assert re.fullmatch(r"[A-Za-z0-9_.\-]+==[A-Za-z0-9_.+\-]+", line), line


def _environment_yml_module(repo):
    import importlib.util

    spec = importlib.util.spec_from_file_location("environment_yml", repo / "scripts" / "environment_yml.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_environment_yml_is_generated_from_the_lock(repo):
    assert (repo / "environment.yml").read_text() == _environment_yml_module(repo).environment_yml(repo), \
        "environment.yml differs from requirements.txt: run make environment.yml"


def test_environment_yml_pins_every_package_of_the_lock(repo):
    lock = _lock(repo)
    env = yaml.safe_load((repo / "environment.yml").read_text())
    pinned = {}
    pip_section = next((d["pip"] for d in env["dependencies"] if isinstance(d, dict)), [])
    for dep in pip_section:
        if "==" in dep:
            name, version = dep.split("==")
            pinned[_normal(name)] = version
    assert pinned == lock


def test_environment_yml_check_fails_on_a_stale_file(repo, tmp_path):
    (tmp_path / "requirements.txt").write_text("pandas==1.0.0\n")
    generated = _environment_yml_module(repo).environment_yml(tmp_path)
    assert "      - pandas==1.0.0\n" in generated
    assert generated != (repo / "environment.yml").read_text()


def test_lock_contains_every_top_level_package(repo):
    lock = _lock(repo)
    missing = [name for name in _top_level(repo) if name not in lock]
    assert not missing


def _third_party_imports(repo):
    """Top-level modules imported by the package, tests, scripts and
    notebooks, and Sphinx extensions the book loads, that are neither the
    standard library nor the project's own: {module: first file importing it}."""
    import ast
    import sys

    files = [p for folder in ("src", "tests", "scripts", "notebooks") for p in sorted((repo / folder).rglob("*.py"))
             if "node_modules" not in p.parts]
    local = {p.stem for p in files} | {p.parent.name for p in files}
    found = {}
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in local and top != "__future__":
                    found.setdefault(top, str(path.relative_to(repo)))
    config = yaml.safe_load((repo / "book" / "_config.yml").read_text())
    for ext in config["sphinx"].get("extra_extensions", []):
        top = ext.split(".")[0]
        if top != "mobitrace":
            found.setdefault(top, "book/_config.yml")
    return found


def test_the_lock_pins_every_package_the_code_imports(repo):
    """A fresh machine installs only requirements.txt: whatever the build and
    the tests import must come from a pinned distribution in it."""
    from importlib.metadata import packages_distributions

    lock = _lock(repo)
    dists = packages_distributions()
    unpinned = {}
    for module, where in sorted(_third_party_imports(repo).items()):
        names = [re.sub(r"[-_.]+", "-", d).lower() for d in dists.get(module, [])]
        if not any(n in lock for n in names):
            unpinned[module] = (where, names or "not installed")
    assert not unpinned, f"imported but not pinned in requirements.txt: {unpinned}"


def test_the_lock_pins_every_command_the_build_and_tests_run(repo):
    for name in ("dvc", "jupyter-book", "papermill", "jupytext", "ghp-import", "zizmor", "cffconvert",
                 "selenium", "pytest"):
        assert name in _lock(repo), name

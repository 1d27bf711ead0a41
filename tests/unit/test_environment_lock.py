"""environment.yml (conda, and its pip: section) and requirements.txt (pip lock) pin the same versions."""

import re

import yaml


def _lock(repo):
    pins = {}
    for line in (repo / "requirements.txt").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            name, version = line.split("==")
            pins[re.sub(r"[-_.]+", "-", name).lower()] = version
    return pins


def _top_level(repo):
    names = []
    for line in (repo / "requirements.in").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            names.append(re.split(r"[<>=!~\[ ]", line)[0].lower())
    return names


def test_every_lock_line_is_an_exact_pin(repo):
    for line in (repo / "requirements.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            assert re.fullmatch(r"[A-Za-z0-9_.\-]+==[A-Za-z0-9_.+\-]+", line), line


def test_environment_yml_pins_agree_with_the_lock(repo):
    lock = _lock(repo)
    env = yaml.safe_load((repo / "environment.yml").read_text())
    conda = {}
    pip_section = next((d["pip"] for d in env["dependencies"] if isinstance(d, dict)), [])
    for dep in env["dependencies"] + pip_section:
        if isinstance(dep, str) and "==" in dep:
            name, version = dep.split("==")
            conda[name.lower()] = version
    top = _top_level(repo)
    assert set(conda) == set(top), "environment.yml must list exactly the packages of requirements.in"
    for name, version in conda.items():
        assert lock.get(name) == version, f"{name}: environment.yml has {version}, requirements.txt has {lock.get(name)}"


def test_lock_contains_every_top_level_package(repo):
    lock = _lock(repo)
    missing = [name for name in _top_level(repo) if name not in lock]
    assert not missing

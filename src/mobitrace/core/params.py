"""params.yaml, the one place every knob is declared.

A chapter takes its knobs as constructor arguments and reads them here, by
name, from its section of params.yaml; an argument named after a whole
section (power_models: the section power-models) gets that section. A knob
of the section that neither the chapter nor the pipeline reads, or an
argument that params.yaml does not hold, stops the stage with one line."""

from __future__ import annotations

from pathlib import Path

import yaml

from mobitrace.core.errors import InputError, Plain
from mobitrace.core.io import repo_root

# Keys of a study's section that the pipeline reads, not its chapter:
# the devices the ingest stages loop over, and the sessions they leave out.
READ_BY_PIPELINE = frozenset({"devices", "superseded"})


def load(root: Path | None = None) -> dict:
    return yaml.safe_load((repo_root(root) / "params.yaml").read_text()) or {}


def section_of(params: dict, name: str) -> dict:
    if name not in params:
        raise InputError("params.yaml", None, name, "a section for this stage", Plain("none"))
    return params[name] or {}


def unused(params: dict, section: str, read: set[str]) -> list[str]:
    """The knobs of `section` that neither `read` nor the pipeline reads."""
    return sorted(set(section_of(params, section)) - set(read) - READ_BY_PIPELINE)


def arguments(section: str, names: list[str], optional: set[str] = frozenset(),
              root: Path | None = None) -> dict:
    """{name: value} for the arguments `names` of the chapter whose section
    is `section` (`study` is the section's name). An argument in `optional`
    (it has a default) may be absent."""
    params = load(root)
    own = section_of(params, section)
    found, missing = {}, []
    for name in names:
        if name == "study":
            found[name] = section
        elif name in own:
            found[name] = own[name]
        elif name.replace("_", "-") in params:
            found[name] = params[name.replace("_", "-")]
        elif name not in optional:
            missing.append(name)
    if missing:
        raise InputError("params.yaml", f"section {section}", ", ".join(missing),
                         "a value for each knob its chapter reads", Plain("none"))
    extra = unused(params, section, set(names))
    if extra:
        raise InputError("params.yaml", f"section {section}", ", ".join(extra),
                         "only knobs that a stage reads (remove it, or read it)", Plain("a knob no stage reads"))
    return found

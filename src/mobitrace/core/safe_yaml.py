"""YAML of capture files, read safely: no anchors, aliases or duplicate
keys, finite numbers of sane magnitude, bounded nesting and size
(capture_reader.LIMITS); every refusal one InputError line."""

from __future__ import annotations

import math
import re
from dataclasses import replace
from pathlib import Path

import yaml

from mobitrace.core.capture_reader import LIMITS, Limits, exists, read_text, resolve
from mobitrace.core.errors import InputError, Plain

class CaptureLoader(yaml.SafeLoader):
    """yaml.SafeLoader refusing anchors, aliases, duplicate keys, non-finite
    floats, and documents deeper or larger than the limits."""

    limits = LIMITS

    def __init__(self, stream, path):
        super().__init__(stream)
        self.path, self.depth, self.nodes = path, 0, 0

    def _refuse(self, mark, field, expected, found):
        raise InputError(self.path, f"line {mark.line + 1}" if mark else None, field, expected, found)

    def compose_node(self, parent, index):
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            self._refuse(event.start_mark, None, "YAML without aliases", f"alias *{event.anchor}")
        if getattr(event, "anchor", None) is not None:
            self._refuse(event.start_mark, None, "YAML without anchors", f"anchor &{event.anchor}")
        self.nodes += 1
        if isinstance(event, yaml.ScalarEvent) and len(event.value) > self.limits.text_field_chars:
            self._refuse(event.start_mark, None, f"a text field of at most {self.limits.text_field_chars} characters",
                         Plain(f"{len(event.value)} characters"))
        if self.nodes > self.limits.yaml_nodes:
            self._refuse(event.start_mark, None, f"at most {self.limits.yaml_nodes} YAML nodes", "more")
        nested = isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent))
        if nested:
            self.depth += 1
            if self.depth > self.limits.yaml_depth:
                self._refuse(event.start_mark, None, f"YAML nested at most {self.limits.yaml_depth} levels",
                             "deeper nesting")
        try:
            return super().compose_node(parent, index)
        finally:
            if nested:
                self.depth -= 1

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen = set()
            for key_node, _ in node.value:
                key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
                if key_node.tag == "tag:yaml.org,2002:merge":
                    self._refuse(key_node.start_mark, key, "YAML without merge keys", "<<")
                if key is None:
                    continue
                # As Python compares them: `1`, `true` and `1.0` are one key of a dict, so a duplicate.
                value = self.construct_object(key_node)
                if isinstance(value, (list, dict)) or value in seen:
                    self._refuse(key_node.start_mark, key, "unique keys", "a duplicate key")
                seen.add(value)
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_float(self, node):
        val = super().construct_yaml_float(node)
        if not math.isfinite(val) or abs(val) > self.limits.magnitude:
            self._refuse(node.start_mark, None, f"a finite number of magnitude at most {self.limits.magnitude:g}",
                         node.value)
        return val

    def construct_yaml_int(self, node):
        if len(node.value) > 40:
            self._refuse(node.start_mark, None, f"an integer of magnitude at most {self.limits.magnitude:g}",
                         node.value[:40] + "...")
        val = super().construct_yaml_int(node)
        if abs(val) > self.limits.magnitude:
            self._refuse(node.start_mark, None, f"an integer of magnitude at most {self.limits.magnitude:g}",
                         val)
        return val


CaptureLoader.add_constructor("tag:yaml.org,2002:float", CaptureLoader.construct_yaml_float)
CaptureLoader.add_constructor("tag:yaml.org,2002:int", CaptureLoader.construct_yaml_int)


_CCaptureLoader = None
if getattr(yaml, "__with_libyaml__", False):
    class _CCaptureLoader(yaml.cyaml.CParser, CaptureLoader):
        """CaptureLoader reading its events from libyaml's C parser (~5x faster on
        a 230 kB manifest); composing and constructing, with every refusal above,
        stay CaptureLoader's."""

        get_single_node = yaml.composer.Composer.get_single_node
        compose_document = yaml.composer.Composer.compose_document
        check_node, get_node = yaml.composer.Composer.check_node, yaml.composer.Composer.get_node

        def __init__(self, stream, path):
            yaml.cyaml.CParser.__init__(self, stream)
            yaml.composer.Composer.__init__(self)
            yaml.constructor.SafeConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)
            self.path, self.depth, self.nodes = path, 0, 0


# What only the pure-Python loader reads: libyaml and PyYAML differ in corner
# cases of tabs, line breaks, byte order marks and control characters.
_PYTHON_ONLY = re.compile(r"[^\n\x20-\x7e]")


def _loads_yaml_c(text: str, path):
    """loads_yaml() by _CCaptureLoader for plain printable ASCII text with
    LF line ends; None for any other text, and for any problem (the Python
    loader then names it, as it always has)."""
    if _CCaptureLoader is None or _PYTHON_ONLY.search(text):
        return None
    loader = None
    try:
        loader = _CCaptureLoader(text, path)
        node = loader.get_single_node()
        return (loader.construct_document(node) if node is not None else None), node
    except Exception:  # noqa: BLE001 -- any problem: the Python loader's error, exactly as before
        return None
    finally:
        if loader is not None:
            loader.dispose()


def loads_yaml(text: str, path: str | Path) -> tuple[object, yaml.Node | None]:
    """(document, composed node tree) of YAML text, one parse; syntax errors
    become InputError(path, line N, expected valid YAML, the problem)."""
    fast = _loads_yaml_c(text, path)
    if fast is not None:
        return fast
    loader = None
    try:
        loader = CaptureLoader(text, path)  # the reader refuses NUL and other control characters here
        node = loader.get_single_node()
        doc = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InputError(path, f"line {mark.line + 1}" if mark else None, None, "valid YAML",
                         getattr(exc, "problem", None) or str(exc).splitlines()[0]) from None
    except RecursionError:
        raise InputError(path, None, None, "YAML nested at most a few levels", "deeper nesting") from None
    finally:
        if loader is not None:
            loader.dispose()
    return doc, node


def load_yaml(path: str | Path, limits: Limits = LIMITS) -> tuple[object, yaml.Node | None]:
    """loads_yaml of a capture file."""
    return loads_yaml(read_text(path, limits), path)


def read_manifest(path: Path) -> dict:
    """A session's manifest.yaml as a mapping (its study's checks follow)."""
    if not exists(path):
        raise InputError(path, None, None, "a capture manifest.yaml", "no such file")
    doc, _ = load_yaml(resolve(path), replace(LIMITS, text_bytes=LIMITS.manifest_bytes))
    if doc is None:
        raise InputError(path, None, None, "a YAML mapping", "an empty file")
    if not isinstance(doc, dict):
        raise InputError(path, None, None, "a YAML mapping", type(doc).__name__)
    return doc

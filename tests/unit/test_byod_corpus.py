"""The malformed-capture corpus (tests/fixtures/byod/corpus.yaml): every
broken capture gets its exact error from `validate`, `add-device` and the
ingest; none leaves output behind and none changes the capture or data/raw."""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
from pathlib import Path

import pytest
import yaml

from mobitrace.studies.cpu_gbps import ingest as captures
from mobitrace import devices
from mobitrace.studies.priority_boost import ingest as priority_boost
from mobitrace.core.errors import InputError
from mobitrace.studies import registry

from tests import ROOT
from tests.unit import _forked_cli as forked_cli
CORPUS = yaml.safe_load((ROOT / "tests" / "fixtures" / "byod" / "corpus.yaml").read_text())["cases"]
CPU_BASE = ROOT / "tests" / "fixtures" / "captures" / "cpu-gbps" / "smoke-test" / "20261122T025322Z"
PB_SOURCE = ROOT / "data" / "raw" / "priority-boost" / "vm-2core" / "s20261122"
PB_RUNS = ["cpu-c0-x0-original-r00", "cpu-c0-x0-incr-r00", "cpu-c0-x0-decr-r00", "audio-c0-x0-original-r00"]


def make_base(base: str, root: Path) -> Path:
    """A valid capture laid out as root/<device>/<session>."""
    if base == "cpu-gbps":
        dest = root / "cpu-gbps" / "smoke-test" / CPU_BASE.name
        shutil.copytree(CPU_BASE, dest)
        return dest
    dest = root / "priority-boost" / "vm-2core" / PB_SOURCE.name
    (dest / "runs").mkdir(parents=True)
    shutil.copy(PB_SOURCE / "manifest.yaml", dest / "manifest.yaml")
    lines = (PB_SOURCE / "runs.csv").read_text().splitlines()
    keep = [lines[0]] + [ln for ln in lines[1:] if ln.split(",")[0] in PB_RUNS]
    (dest / "runs.csv").write_text("\n".join(keep) + "\n")
    for run in PB_RUNS:
        shutil.copytree(PB_SOURCE / "runs" / run, dest / "runs" / run)
    return dest


def _text(path: Path) -> str:
    raw = path.read_bytes()
    return (gzip.decompress(raw) if path.name.endswith(".gz") else raw).decode()


def _write(path: Path, text: str) -> None:
    data = text.encode()
    path.write_bytes(gzip.compress(data, mtime=0) if path.name.endswith(".gz") and data else data)


def _dotted(doc: dict, key: str):
    *parents, last = key.split(".")
    for p in parents:
        doc = doc[p]
    return doc, last


def break_capture(case: dict, session: Path) -> None:
    """Apply the case's one edit to a valid capture."""
    path = session / case["file"]
    if "truncate" in case:
        _write(path, _text(path)[: case["truncate"]])
    elif "write" in case:
        _write(path, case["write"])
    elif "garbage" in case:
        path.write_bytes(bytes((i * 151 + 7) % 256 for i in range(case["garbage"])))
    elif "delete" in case:
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    elif "mkdir" in case:
        path.mkdir()
    elif "replace" in case:
        old, new, k = (case["replace"] + [1])[:3]
        text = _text(path)
        parts = text.split(old)
        assert len(parts) > k, f"{case['id']}: fewer than {k} of {old!r} in {path}"
        _write(path, old.join(parts[:k]) + new + old.join(parts[k:]))
    elif "keep_lines" in case:
        _write(path, "".join(_text(path).splitlines(keepends=True)[: case["keep_lines"]]))
    elif "swap_lines" in case:
        lines = _text(path).splitlines(keepends=True)
        i, j = (n - 1 for n in case["swap_lines"])
        lines[i], lines[j] = lines[j], lines[i]
        _write(path, "".join(lines))
    elif "yaml_set" in case or "yaml_del" in case:
        doc = yaml.safe_load(_text(path))
        if "yaml_set" in case:
            for key, value in case["yaml_set"].items():
                parent, last = _dotted(doc, key)
                parent[last] = value
        else:
            parent, last = _dotted(doc, case["yaml_del"])
            del parent[last]
        _write(path, yaml.safe_dump(doc, sort_keys=False))
    elif "json_set" in case:
        doc = json.loads(_text(path))
        doc.update(case["json_set"])
        _write(path, json.dumps(doc))
    else:
        raise AssertionError(f"{case['id']}: no edit")


def tree_digest(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        h.update(p.relative_to(folder).as_posix().encode())
        if p.is_file():
            h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


def test_corpus_is_large_and_ids_are_unique():
    ids = [c["id"] for c in CORPUS]
    assert len(ids) >= 30 and len(set(ids)) == len(ids)
    assert all("error" in c for c in CORPUS), [c["id"] for c in CORPUS if "error" not in c]


@pytest.mark.parametrize("case", CORPUS, ids=[c["id"] for c in CORPUS])
def test_broken_capture_gets_its_exact_error(case, tmp_path, scratch_project):
    session = make_base(case["base"], tmp_path / "captures")
    break_capture(case, session)
    expected = case["error"].format(case=session, studies=sorted(registry.by_slug()))
    before = tree_digest(session.parent)
    params_before = (scratch_project / "params.yaml").read_bytes()

    study, problems = devices.validate(session)
    assert problems, "validate found nothing"
    assert str(problems[0]) == expected

    with pytest.raises(InputError) as exc:
        devices.add_device(session, root=scratch_project)
    assert str(exc.value) == expected
    assert list((scratch_project / "data" / "raw").iterdir()) == []
    assert (scratch_project / "params.yaml").read_bytes() == params_before

    out = tmp_path / "interim" / "dev"
    ingest = captures.ingest if case["base"] == "cpu-gbps" else priority_boost.ingest
    with pytest.raises(InputError):
        ingest(session.parent, out)
    assert not out.parent.exists() or list(out.parent.iterdir()) == []
    assert tree_digest(session.parent) == before


def test_validate_cli_prints_every_problem_and_exits_1(tmp_path):
    session = make_base("cpu-gbps", tmp_path)
    for case in CORPUS:
        if case["id"] in ("iperf3-truncated-json", "proc-pid-file-missing", "run-manifest-bad-direction"):  # 3 runs
            break_capture(case, session)
    out = forked_cli.run(ROOT, "validate", str(session), logs=tmp_path)  # a process of its own
    assert out.returncode == 1
    errors = [ln for ln in out.stderr.splitlines() if ln.startswith("error: ")]
    assert len(errors) == 3, out.stderr
    assert out.stderr.splitlines()[-1] == f"{session}: 3 problem(s)"


def test_validate_cli_accepts_a_valid_capture(tmp_path):
    session = make_base("cpu-gbps", tmp_path)
    out = forked_cli.run(ROOT, "validate", str(session), logs=tmp_path)  # a process of its own
    assert (out.returncode, out.stdout.strip()) == (0, f"{session}: valid cpu-gbps capture")

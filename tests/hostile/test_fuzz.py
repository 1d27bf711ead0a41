"""Property-based fuzzing of the capture reader and `validate`/`add-device`
with hypothesis.

Every example starts from a committed capture of one of the five studies
(tests/hostile/bases.py) and mutates it: truncation, byte flips and
insertions, numbers swapped for huge / non-finite / negative / wrongly typed
values, strings swapped for payloads, deep nesting, duplicated and deleted
lines, BOM and CRLF, gzip toggled or made a bomb; at the session level also
files renamed, duplicated, deleted or replaced by links, FIFOs, hard links
and folders. Every example asserts:

- no traceback: the only exception is the reader's InputError (and, at the
  reader level, json.JSONDecodeError from `loads_json`, which documents that
  its callers turn it into an InputError naming the line);
- nothing written outside the allowed folders: the capture, the folder next
  to it, the repository's data/raw and params.yaml are unchanged, no
  `mobitrace-*` temporary folder is left; `add-device` into a scratch project
  changes only data/raw/<study>/<device>/ and params.yaml there;
- at most 5 s (CPU time of the process; a 60 s wall-clock watchdog catches
  blocking reads) and at most 512 MB (tracemalloc peak of the example at the
  reader level; growth of the process's peak RSS at the session level).

Profiles (env MOBITRACE_FUZZ): `test` (default, `make test`: 500 examples,
derandomized) and `fuzz` (`make fuzz`: 10,000+ examples, random). Counts,
the slowest example and the peak memory are printed at the end of the run
(tests/hostile/conftest.py) and written to $MOBITRACE_FUZZ_REPORT if set."""

from __future__ import annotations

import gzip
import json
import os
import re
import resource
import shutil
import signal
import time
import tracemalloc
from contextlib import contextmanager
from pathlib import Path

import pytest

import hypothesis  # noqa: E402,F401  (pinned in requirements.txt; never skipped)
from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from mobitrace import devices  # noqa: E402
from mobitrace.core import capture_reader  # noqa: E402
from mobitrace.core import safe_yaml
from mobitrace.core.errors import InputError  # noqa: E402

from .bases import ROOT, STUDIES, make_base  # noqa: E402
from .test_corpus import digest, private_tmp, temp_leftovers  # noqa: E402,F401  (private_tmp: autouse)

PROFILE = os.environ.get("MOBITRACE_FUZZ", "test")
# examples per test: (reader level per study, session level per study)
EXAMPLES = {"test": (90, 10), "fuzz": (1940, 60)}[PROFILE]
# No shrinking: a failing example is reported by its label (file + mutation)
# and the blob; shrinking a capture-sized input takes many minutes.
_common = dict(deadline=None, database=None, print_blob=True, suppress_health_check=list(HealthCheck),
               phases=[Phase.explicit, Phase.reuse, Phase.generate])
settings.register_profile("mobitrace-test", derandomize=True, **_common)
settings.register_profile("mobitrace-fuzz", derandomize=False, **_common)
PROFILE_SETTINGS = settings.get_profile(f"mobitrace-{PROFILE}")

CPU_BUDGET_S = 5.0
MEMORY_BUDGET = 512 << 20
WATCHDOG_S = 60
STATS: dict = {"examples": {}, "outcomes": {}, "slowest": (0.0, ""), "slowest_wall": (0.0, ""),
               "peak_bytes": (0, "")}

# --------------------------------------------------------------------------- #
# Mutations

NUMBER = re.compile(rb"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
STRING = re.compile(rb'"[^"\n]{0,40}"|\'[^\'\n]{0,40}\'')
HOSTILE_NUMBERS = [b"nan", b"NaN", b"inf", b"-inf", b".inf", b"-.inf", b"Infinity", b"1e999", b"-1", b"-0",
                   b"1" * 400, b"9" * 25, b"1e308", b"0x1F", b"1_000", b"true", b"null", b"~", b'"7"', b"[]",
                   b"{}", b"[1, 2]", b"{a: 1}", b"''", b"0.0", b"18446744073709551616"]
HOSTILE_STRINGS = [b'"../../../etc/passwd"', b'"/etc/passwd"', b'"<script>alert(1)</script>"', b'"on"', b'"null"',
                   b'""', b'"\\u0000"', b'"{eval-rst}`x`"', b"*alias", b"&anchor x", b"!!python/object:os.system",
                   b'"\\ud800"', b"[[[[[[[[]]]]]]]]", b"- a\n- b", b'"\xe2\x80\xa8"']
GZ = b"\x1f\x8b"


def _content(raw: bytes) -> tuple[bytes, bool]:
    if raw[:2] == GZ:
        try:
            return gzip.decompress(raw), True
        except (OSError, EOFError, gzip.BadGzipFile):
            return raw, False
    return raw, False


@st.composite
def mutated(draw, raw: bytes) -> tuple[bytes, str]:
    """(new stored bytes, description) of one or two mutations of `raw`."""
    data, was_gz = _content(raw)
    names = []
    for _ in range(draw(st.integers(1, 2))):
        kind = draw(st.sampled_from(["truncate", "flip", "insert", "number", "string", "nest", "dup_line",
                                     "drop_line", "bom", "crlf", "empty", "nul"]))
        names.append(kind)
        n = len(data)
        if kind == "truncate":
            data = data[: draw(st.integers(0, max(n - 1, 0)))]
        elif kind == "flip":
            for _ in range(draw(st.integers(1, 8))):
                if data:
                    i = draw(st.integers(0, len(data) - 1))
                    data = data[:i] + bytes([data[i] ^ draw(st.integers(1, 255))]) + data[i + 1:]
        elif kind == "insert":
            i = draw(st.integers(0, n))
            data = data[:i] + draw(st.binary(min_size=1, max_size=16)) + data[i:]
        elif kind in ("number", "string"):
            spots = list((NUMBER if kind == "number" else STRING).finditer(data[:200_000]))
            if spots:
                m = spots[draw(st.integers(0, len(spots) - 1))]
                pool = HOSTILE_NUMBERS + HOSTILE_STRINGS if kind == "number" else HOSTILE_STRINGS + HOSTILE_NUMBERS
                new = draw(st.sampled_from(pool))
                data = data[: m.start()] + new + data[m.end():]
        elif kind == "nest":
            spots = list(NUMBER.finditer(data[:200_000]))
            depth = draw(st.sampled_from([33, 100, 1000, 50_000]))
            if spots:
                m = spots[draw(st.integers(0, len(spots) - 1))]
                data = data[: m.start()] + b"[" * depth + b"]" * depth + data[m.end():]
        elif kind in ("dup_line", "drop_line"):
            lines = data.splitlines(keepends=True)
            if lines:
                i = draw(st.integers(0, len(lines) - 1))
                lines[i:i + 1] = [lines[i], lines[i]] if kind == "dup_line" else []
                data = b"".join(lines)
        elif kind == "bom":
            data = b"\xef\xbb\xbf" + data
        elif kind == "crlf":
            data = data.replace(b"\n", b"\r\n")
        elif kind == "empty":
            data = b""
        elif kind == "nul":
            data = data + b"\x00"
    store = draw(st.sampled_from(["same", "same", "same", "toggle", "bomb"]))
    names.append(store)
    if store == "bomb":
        return gzip.compress(b"0" * (4 << 20), mtime=0), "+".join(names)
    gz = was_gz != (store == "toggle")
    return (gzip.compress(data, mtime=0) if gz and data else data), "+".join(names)


# --------------------------------------------------------------------------- #
# Budgets


def _maxrss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss << 10


class Budget:
    """Measure one example: CPU time, wall time and memory. Memory is the
    tracemalloc peak of the example (`traced`, the reader level), or the
    growth of the process's peak RSS over its value when the test started
    (session level, where tracemalloc would slow pandas tenfold): a bound on
    every example's footprint."""

    rss_base = 0

    def __init__(self, label: str, traced: bool = True):
        self.label, self.traced = label, traced

    def __enter__(self):
        if self.traced:
            tracemalloc.start()
            tracemalloc.reset_peak()
        self.cpu, self.wall = time.process_time(), time.perf_counter()
        signal.signal(signal.SIGALRM, self._bark)
        signal.alarm(WATCHDOG_S)
        return self

    @staticmethod
    def _bark(signum, frame):
        raise AssertionError(f"no answer within {WATCHDOG_S} s (a blocking read?)")

    def __exit__(self, *exc):
        signal.alarm(0)
        cpu, wall = time.process_time() - self.cpu, time.perf_counter() - self.wall
        if self.traced:
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        else:
            peak = _maxrss() - Budget.rss_base
        if cpu > STATS["slowest"][0]:
            STATS["slowest"] = (round(cpu, 3), self.label)
        if wall > STATS["slowest_wall"][0]:
            STATS["slowest_wall"] = (round(wall, 3), self.label)
        if peak > STATS["peak_bytes"][0]:
            STATS["peak_bytes"] = (peak, self.label)
        if exc[0] is None:
            assert cpu <= CPU_BUDGET_S, f"{self.label}: {cpu:.2f} s of CPU"
            assert peak <= MEMORY_BUDGET, f"{self.label}: {peak >> 20} MB"
        return False


def _count(level: str, study: str, outcome: str) -> None:
    key = f"{level} {study}"
    STATS["examples"][key] = STATS["examples"].get(key, 0) + 1
    STATS["outcomes"][outcome] = STATS["outcomes"].get(outcome, 0) + 1


def _repo_state() -> tuple:
    raw = ROOT / "data" / "raw"
    return ((ROOT / "params.yaml").read_bytes(),
            tuple(sorted((p.name, q.name) for p in raw.iterdir() if p.is_dir() for q in p.iterdir())))


@pytest.fixture(scope="module")
def bases(tmp_path_factory):
    root = tmp_path_factory.mktemp("bases")
    return {s: make_base(s, root) for s in STUDIES}


# --------------------------------------------------------------------------- #
# Reader level: one mutated file through the capture reader


def read_any(path: Path) -> None:
    """Read a capture file as the studies do, by its kind."""
    name = path.name[:-3] if path.name.endswith(".gz") else path.name
    capture_reader.read_raw(path)
    if name.endswith(".yaml"):
        safe_yaml.load_yaml(path)
    elif name.endswith(".jsonl"):
        for _, line in capture_reader.iter_lines(path):
            if line.strip():
                capture_reader.loads_json(line, path)
    elif name.endswith(".json"):
        capture_reader.loads_json(capture_reader.read_text(path), path)
    else:
        capture_reader.lines(capture_reader.read_text(path), path)
        for _ in capture_reader.iter_lines(path):
            pass


def _files(session: Path) -> list[Path]:
    return sorted(p for p in session.rglob("*") if p.is_file())


@pytest.mark.parametrize("study", STUDIES)
def test_reader_fuzz(study, bases, tmp_path_factory):
    session = bases[study]
    files = _files(session)
    work = tmp_path_factory.mktemp(f"reader-{study}")

    @settings(PROFILE_SETTINGS, max_examples=EXAMPLES[0])
    @given(data=st.data())
    def run(data):
        src = data.draw(st.sampled_from(files), label="file")
        raw, how = data.draw(mutated(src.read_bytes()), label="mutation")
        dest = work / "ex" / src.relative_to(session)
        shutil.rmtree(work / "ex", ignore_errors=True)
        dest.parent.mkdir(parents=True)
        dest.write_bytes(raw)
        before, temps = digest(work), temp_leftovers()
        label = f"reader {study} {src.relative_to(session)} {how}"
        outcome = "accepted"
        with Budget(label):
            try:
                read_any(dest)
            except InputError as exc:
                assert "\n" not in str(exc), (label, str(exc))
                outcome = "InputError"
            except json.JSONDecodeError:
                outcome = "JSONDecodeError (loads_json; callers name the line)"
        assert digest(work) == before and temp_leftovers() <= temps, label
        _count("reader", study, outcome)

    run()


# --------------------------------------------------------------------------- #
# Session level: validate + add-device on a mutated capture


@st.composite
def session_edit(draw, files: list[Path], session: Path):
    kind = draw(st.sampled_from(["content"] * 6 + ["rename", "duplicate", "delete", "symlink", "fifo",
                                                   "hardlink", "folder", "machinery", "machinery"]))
    src = draw(st.sampled_from(files))
    rel = src.relative_to(session)
    if kind == "machinery":  # a file DVC, git or a shell acts on, in any folder of the capture
        folder = draw(st.sampled_from(sorted({Path("."), *(p.parent.relative_to(session) for p in files)})))
        return kind, folder / draw(st.sampled_from(MACHINERY)), draw(st.sampled_from(MACHINERY_CONTENT))
    if kind == "content":
        raw, how = draw(mutated(src.read_bytes()))
        return kind, rel, (raw, how)
    if kind in ("rename", "duplicate"):
        name = src.name
        new = draw(st.sampled_from([name[:-3] if name.endswith(".gz") else name + ".gz", name.upper(),
                                    name + ".bak", "manifest.yaml", ".hidden", "runs.csv"]))
        return kind, rel, new
    if kind == "symlink":
        return kind, rel, draw(st.sampled_from(["/etc/passwd", "/dev/zero", "../outside/canary", "."]))
    return kind, rel, None


# DVC's and git's own file names, and what a stranger would put in them.
MACHINERY = ["dvc.yaml", "dvc.yml", "dvc.lock", "evil.dvc", "data.dvc", ".dvc/config", ".dvc/config.local",
             ".dvcignore", ".gitignore", ".gitattributes", ".gitmodules", ".git/config", ".git/HEAD", ".git",
             "params.yaml", ".envrc", "Makefile"]
MACHINERY_CONTENT = ["stages:\n  evil:\n    cmd: touch PWNED\n", "cmd: touch PWNED\nouts:\n- path: x\n",
                     "deps:\n- path: /etc/passwd\nouts:\n- path: x\n", "*\n", "* filter=evil\n",
                     "[core]\n\tfsmonitor = touch PWNED\n", ""]


def apply_session_edit(edit, session: Path, outside: Path) -> str:
    kind, rel, arg = edit
    path = session / rel
    if kind == "machinery":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(arg)
        return f"{rel} machinery"
    if kind == "content":
        path.write_bytes(arg[0])
        return f"{rel} {arg[1]}"
    if kind == "rename":
        path.rename(path.with_name(arg))
    elif kind == "duplicate":
        shutil.copyfile(path, path.with_name(arg))
    elif kind == "delete":
        path.unlink()
    elif kind == "symlink":
        path.unlink()
        os.symlink(arg, path)
    elif kind == "fifo":
        path.unlink()
        os.mkfifo(path)
    elif kind == "hardlink":
        os.link(path, outside / "second-name")
    elif kind == "folder":
        path.unlink()
        path.mkdir()
    return f"{rel} {kind} {arg or ''}".strip()


def _changed(before: dict, after: dict) -> set[str]:
    return {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}


def _snapshot(project: Path) -> dict:
    out = {}
    for dirpath, _, filenames in os.walk(project):
        for name in filenames:
            p = Path(dirpath) / name
            out[str(p.relative_to(project))] = p.read_bytes()
    return out


@pytest.mark.parametrize("study", STUDIES)
def test_validate_fuzz(study, bases, tmp_path_factory):
    base = bases[study]
    files = _files(base)
    work = tmp_path_factory.mktemp(f"session-{study}")
    repo_before = _repo_state()
    Budget.rss_base = _maxrss()

    @settings(PROFILE_SETTINGS, max_examples=EXAMPLES[1])
    @given(data=st.data())
    def run(data):
        shutil.rmtree(work, ignore_errors=True)
        session = work / "captures" / base.relative_to(base.parents[2])
        shutil.copytree(base, session)
        outside = work / "outside"
        outside.mkdir()
        (outside / "canary").write_text("not part of any capture\n")
        how = apply_session_edit(data.draw(session_edit(files, base), label="edit"), session, outside)
        project = work / "project"
        (project / "data" / "raw").mkdir(parents=True)
        shutil.copy(ROOT / "params.yaml", project / "params.yaml")
        label = f"validate {study} {how}"
        before, outside_before, temps = digest(work / "captures"), digest(outside), temp_leftovers()
        project_before = _snapshot(project)
        with Budget(label, traced=False):
            _, problems = devices.validate(session)
        assert all(isinstance(p, InputError) for p in problems), label
        assert problems or not how.endswith(" machinery"), f"{label}: a file DVC or git acts on was accepted"
        outcome = "refused" if problems else "accepted"
        with Budget(label.replace("validate", "add-device", 1), traced=False):
            try:
                # a name params.yaml does not list: the base's own device is registered there
                reg = devices.add_device(session, device=f"fuzz-{study}", root=project)
            except InputError:
                reg = None
        changed = _changed(project_before, _snapshot(project))
        if reg is None:
            assert not changed, (label, changed)
        else:
            prefix = f"data/raw/{reg.study.slug}/{reg.device}/"
            assert all(c == "params.yaml" or c.startswith(prefix) for c in changed), (label, changed)
        assert (reg is None) == bool(problems), (label, [str(p) for p in problems])
        assert digest(work / "captures") == before, label
        assert digest(outside) == outside_before, label
        assert temp_leftovers() <= temps, label
        _count("validate+add-device", study, outcome)

    run()
    assert _repo_state() == repo_before, "the repository's data/raw or params.yaml changed"

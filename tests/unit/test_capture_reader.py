"""The one safe reader of capture files (mobitrace.core.capture_reader):
what it refuses, with which one-line message."""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import socket
import stat
import zlib
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from mobitrace.core import capture_reader as cr
from mobitrace.core import safe_yaml, table_checks
from mobitrace.core.errors import InputError


def _refused(fn, *args, match: str, **kw) -> InputError:
    with pytest.raises(InputError) as info:
        fn(*args, **kw)
    assert "\n" not in str(info.value)
    assert match in str(info.value), str(info.value)
    return info.value


@pytest.fixture
def session(tmp_path) -> Path:
    s = tmp_path / "dev" / "s1"
    (s / "runs").mkdir(parents=True)
    (s / "manifest.yaml").write_text("study: cpu-gbps\n")
    (s / "runs" / "a.csv").write_text("x\n1\n")
    return s


# --------------------------------------------------------------------------- files


def test_a_clean_tree_is_listed(session):
    dirs, files = cr.tree(session)
    assert dirs == [session / "runs"] and files == [session / "manifest.yaml", session / "runs" / "a.csv"]


def test_symlinks_are_refused_even_to_inside_files(session):
    (session / "runs" / "b.csv").symlink_to(session / "runs" / "a.csv")
    _refused(cr.walk, session, match="runs/b.csv: expected a regular file, found 'a symbolic link'")
    _refused(cr.read_text, session / "runs" / "b.csv", match="found 'a symbolic link'")


def test_a_symlinked_folder_is_refused_not_followed(session, tmp_path):
    (tmp_path / "outside").mkdir()
    (session / "runs" / "r2").symlink_to(tmp_path / "outside")
    _refused(cr.walk, session, match="runs/r2: expected a regular file, found 'a symbolic link'")


def test_hard_links_are_refused(session, tmp_path):
    os.link(session / "runs" / "a.csv", tmp_path / "elsewhere.csv")
    _refused(cr.walk, session, match="expected a regular file, found 'a hard link (2 names)'")
    _refused(cr.read_raw, session / "runs" / "a.csv", match="a hard link")


def test_fifos_are_refused_without_blocking(session):
    os.mkfifo(session / "runs" / "pipe.csv")
    _refused(cr.walk, session, match="runs/pipe.csv: expected a regular file, found 'a FIFO'")
    _refused(cr.read_text, session / "runs" / "pipe.csv", match="found 'a FIFO'")


def test_sockets_are_refused(tmp_path):
    s = tmp_path / "s"
    s.mkdir()
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(s / "sock"))
        _refused(cr.walk, s, match="sock: expected a regular file, found 'a socket'")
    finally:
        sock.close()


def test_devices_are_refused(tmp_path):
    s = tmp_path / "s"
    s.mkdir()
    try:
        os.mknod(s / "zero", stat.S_IFCHR | 0o600, os.makedev(1, 5))
    except PermissionError:
        pytest.skip("mknod needs privileges")
    _refused(cr.walk, s, match="zero: expected a regular file, found 'a character device'")
    _refused(cr.read_bytes, s / "zero", match="found 'a character device'")


def test_sizes_are_bounded_per_file_and_session(session):
    small = replace(cr.LIMITS, file_bytes=20)
    (session / "runs" / "big.csv").write_text("x" * 21)
    _refused(cr.walk, session, small, match="big.csv: expected at most 20 bytes per file, found '21 bytes'")
    _refused(cr.read_raw, session / "runs" / "big.csv", small, match="expected at most 20 bytes per file")
    _refused(cr.copy_raw, session / "runs" / "big.csv", io.BytesIO(), small, match="expected at most 20 bytes per file")
    _refused(cr.md5_raw, session / "runs" / "big.csv", small, match="expected at most 20 bytes per file")
    assert cr.md5_raw(session / "runs" / "big.csv") == "ae16948914b358204ec4377377c3794f"  # md5 of 21 x's
    _refused(cr.walk, session, replace(cr.LIMITS, session_bytes=30),
             match="s1: expected at most 30 bytes per session, found '41 bytes'")


def test_table_rows_are_bounded(session):
    (session / "runs" / "rows.csv").write_text("x\n" * 50)
    _refused(cr.read_text, session / "runs" / "rows.csv", replace(cr.LIMITS, table_rows=10),
             match="expected at most 10 rows, found '50 rows'")


@pytest.mark.parametrize("relative, expected", [
    ("/etc/passwd", "a relative path inside the session folder"),
    ("../other/x.csv", "a path inside the session folder (no '..')"),
    ("runs/../../x.csv", "a path inside the session folder (no '..')"),
    ("~/x.csv", "a relative path inside the session folder"),
    ("", "a relative path inside the session folder"),
    (["a"], "a relative path inside the session folder"),
])
def test_paths_written_in_a_manifest_stay_inside_the_session(session, relative, expected):
    _refused(cr.inside, session, relative, session / "manifest.yaml", "power_trace.file",
             match=f"manifest.yaml: field 'power_trace.file': expected {expected}")
    assert cr.inside(session, "runs/a.csv", session / "manifest.yaml", "f") == session / "runs" / "a.csv"


# --------------------------------------------------------------------------- text and gzip


def test_plain_gz_and_bom_read_the_same(tmp_path):
    text = "t,v\n1,2\n"
    (tmp_path / "plain.csv").write_text(text)
    (tmp_path / "bom.csv").write_bytes(b"\xef\xbb\xbf" + text.encode())
    (tmp_path / "z.csv.gz").write_bytes(gzip.compress(text.encode()))
    (tmp_path / "zbom.csv.gz").write_bytes(gzip.compress(b"\xef\xbb\xbf" + text.encode()))
    for name in ("plain.csv", "bom.csv", "z.csv.gz", "zbom.csv.gz"):
        assert cr.read_text(tmp_path / name) == text, name
        assert [ln for _, ln in cr.iter_lines(tmp_path / name)] == ["t,v\n", "1,2\n"], name
    # `name` and `name.gz` are interchangeable
    assert cr.resolve(tmp_path / "z.csv") == tmp_path / "z.csv.gz"
    assert cr.resolve(tmp_path / "plain.csv.gz") == tmp_path / "plain.csv"


def test_bytes_that_are_not_utf8_are_named_with_their_offset(tmp_path):
    (tmp_path / "bad.csv").write_bytes(b"ab\xffc")
    _refused(cr.read_text, tmp_path / "bad.csv", match="bad.csv: expected UTF-8 text, found byte 0xff at offset 2")
    (tmp_path / "bad.csv.gz").write_bytes(gzip.compress(b"\xef\xbb\xbfab\n\xfe"))
    _refused(cr.read_text, tmp_path / "bad.csv.gz", match="expected UTF-8 text, found byte 0xfe at offset 6")


def test_a_gzip_bomb_stops_at_the_ratio(tmp_path):
    bomb = zlib.compressobj(9, zlib.DEFLATED, 31)
    data = bomb.compress(b"\0" * (64 << 20)) + bomb.flush()
    (tmp_path / "bomb.csv.gz").write_bytes(data)
    _refused(cr.read_text, tmp_path / "bomb.csv.gz", match="expected a gzip ratio of at most 100")


def test_gzip_output_is_bounded(tmp_path):
    (tmp_path / "big.csv.gz").write_bytes(gzip.compress(os.urandom(4096)))
    _refused(cr.read_bytes, tmp_path / "big.csv.gz", replace(cr.LIMITS, text_bytes=1000),
             match="expected at most 1000 bytes after gunzip")


@pytest.mark.parametrize("data, found", [
    (gzip.compress(b"abc\n" * 1000, mtime=0)[:-20], "a truncated gzip stream"),
    (b"\x1f\x8b\x08\x00garbage-garbage", "corrupt compressed data"),
])
def test_broken_gzip_is_one_line(tmp_path, data, found):
    (tmp_path / "x.gz").write_bytes(data)
    _refused(cr.read_text, tmp_path / "x.gz", match=found)


# --------------------------------------------------------------------------- YAML and JSON


@pytest.mark.parametrize("text, message", [
    ("a: &x 1\nb: *x\n", "m.yaml: line 1: expected YAML without anchors, found 'anchor &x'"),
    ("a: [1]\nb: *x\n", "m.yaml: line 2: expected YAML without aliases, found 'alias *x'"),
    ("a: 1\nb: 2\na: 3\n", "m.yaml: line 3: field 'a': expected unique keys, found 'a duplicate key'"),
    ("a: {b: 1}\nc:\n  <<: {d: 1}\n", "expected YAML without merge keys"),
    ("a: .inf\n", "m.yaml: line 1: expected a finite number of magnitude at most 1e+18, found '.inf'"),
    ("a: .nan\n", "expected a finite number"),
    ("a: 1.0e+400\n", "expected a finite number"),
    ("a: 123456789012345678901234567890\n", "expected an integer of magnitude at most 1e+18"),
    ("a: " + "[" * 40 + "]" * 40 + "\n", "expected YAML nested at most 32 levels, found 'deeper nesting'"),
    ("a: [1, 2\n", "m.yaml: line 2: expected valid YAML"),
    ("a: !!python/object:os.system 1\n", "expected valid YAML"),
])
def test_yaml_refusals(text, message):
    _refused(safe_yaml.loads_yaml, text, "m.yaml", match=message)
    assert safe_yaml._loads_yaml_c(text, "m.yaml") is None  # the C path never answers a refusal: the Python loader does


from tests import ROOT as REPO


def _node_lines(node):
    """(tag, value, line, column) of every node of a composed YAML tree."""
    if isinstance(node, yaml.ScalarNode):
        return [(node.tag, node.value, node.start_mark.line, node.start_mark.column)]
    items = node.value if isinstance(node, yaml.SequenceNode) else [x for kv in node.value for x in kv]
    return [(node.tag, None, node.start_mark.line, node.start_mark.column)] + [t for n in items for t in _node_lines(n)]


def test_yaml_c_loader_reads_every_committed_session_manifest_as_the_python_loader():
    if safe_yaml._CCaptureLoader is None:
        pytest.skip("PyYAML without libyaml: only the Python loader")
    paths = sorted(p for p in (REPO / "data" / "raw").glob("*/*/*/manifest.yaml*"))
    assert paths
    for path in paths:
        text = cr.read_text(path)
        fast = safe_yaml._loads_yaml_c(text, path)
        assert fast is not None, path
        slow = safe_yaml.CaptureLoader(text, path)
        try:
            node = slow.get_single_node()
            doc = slow.construct_document(node)
        finally:
            slow.dispose()
        assert repr(fast[0]) == repr(doc), path
        assert _node_lines(fast[1]) == _node_lines(node), path  # the lines errors name


@pytest.mark.parametrize("text", ["a: 1\tb\n", "a: 1\r\n", "\ufeffa: 1\n", "a: caf\u00e9\n", "a: 1\x85b: 2\n"])
def test_yaml_beyond_plain_ascii_goes_to_the_python_loader(text):
    assert safe_yaml._loads_yaml_c(text, "m.yaml") is None
    with contextlib.suppress(InputError):
        safe_yaml.loads_yaml(text, "m.yaml")  # read, or refused in one line, by the Python loader as before


def test_yaml_node_count_is_bounded():
    text = "a: [" + ", ".join(["1"] * 200) + "]\n"
    old = safe_yaml.CaptureLoader.limits
    safe_yaml.CaptureLoader.limits = replace(old, yaml_nodes=100)
    try:
        _refused(safe_yaml.loads_yaml, text, "m.yaml", match="expected at most 100 YAML nodes")
    finally:
        safe_yaml.CaptureLoader.limits = old


def test_yaml_names_stay_strings_when_quoted():
    doc, _ = safe_yaml.loads_yaml("device: 'on'\nsession: '007'\nother: 'null'\n", "m.yaml")
    assert doc == {"device": "on", "session": "007", "other": "null"}


@pytest.mark.parametrize("text, message", [
    ('{"a": 1, "a": 2}', "r.json: field 'a': expected unique JSON keys, found 'a duplicate key'"),
    ('{"a": NaN}', "expected a finite JSON number, found 'NaN'"),
    ('{"a": -Infinity}', "expected a finite JSON number, found '-Infinity'"),
    ('{"a": 1e400}', "expected a finite number of magnitude at most 1e+18, found '1e400'"),
    ('{"a": ' + "9" * 30 + "}", "expected an integer of magnitude at most 1e+18"),
    ("[" * 100000 + "]" * 100000, "expected JSON nested at most a few hundred levels"),
])
def test_json_refusals(text, message):
    _refused(cr.loads_json, text, "r.json", match=message)


# --------------------------------------------------------------------------- numbers


@pytest.mark.parametrize("value, kw, message", [
    (float("nan"), {}, "field 'cpu_count': expected a finite number, found nan"),
    (float("inf"), {}, "field 'cpu_count': expected a finite number, found inf"),
    (-1, {"integer": True}, "field 'cpu_count': expected an integer >= 0, found -1"),
    (0, {"integer": True, "minimum": 1}, "expected an integer >= 1, found 0"),
    (True, {"integer": True}, "expected an integer, found True"),
    ("4", {}, "expected a number, found '4'"),
    (1e30, {}, "expected a number of magnitude at most 1e+18, found 1e+30"),
    (2.5, {"integer": True}, "expected an integer, found 2.5"),
])
def test_numbers_are_refused_with_the_field_named(value, kw, message):
    _refused(cr.check_number, value, "m.yaml", None, "cpu_count", match=message, **kw)
    assert cr.check_number(4, "m.yaml", None, "cpu_count", integer=True, minimum=1) == 4


def test_limits_are_in_one_place():
    assert cr.LIMITS == cr.Limits() and safe_yaml.CaptureLoader.limits is cr.LIMITS and safe_yaml.LIMITS is cr.LIMITS
    assert all(v > 0 for v in vars(cr.LIMITS).values())


# --------------------------------------------------------------------------- superseded sessions


def test_a_superseded_session_is_not_read(session):
    newer = session.parent / "s2"
    newer.mkdir()
    (newer / "manifest.yaml").write_text("study: cpu-gbps\n")
    assert [p.name for p in cr.session_folders(session.parent)] == ["s1", "s2"]
    with cr.superseding({"dev/s1": "contaminated, 2026-11-23", "other/s9": "another device"}):
        assert [p.name for p in cr.session_folders(session.parent)] == ["s2"]
    assert [p.name for p in cr.session_folders(session.parent)] == ["s1", "s2"]


def test_a_superseded_session_that_is_not_there_is_a_one_line_error(session):
    with cr.superseding({"dev/s0": "never captured"}):
        _refused(cr.session_folders, session.parent, match="superseded.dev/s0")


def test_superseding_every_session_leaves_none(session):
    with cr.superseding({"dev/s1": "why"}):
        _refused(cr.session_folders, session.parent, match="not superseded")


@pytest.mark.parametrize("bad", [["dev/s1"], {"s1": "no device"}, {"dev/s1": ""}, {"dev/s1": 3}])
def test_a_malformed_superseded_map_is_a_one_line_error(bad):
    _refused(lambda: cr.superseding(bad).__enter__(), match="superseded")


def test_copy_raw_copies_in_chunks_synthetic(session, monkeypatch):
    """A file several chunks long is copied byte for byte, one chunk read at a time."""
    monkeypatch.setattr(cr, "_CHUNK", 7)
    data = bytes(range(256)) * 3
    (session / "runs" / "bin.dat").write_bytes(data)
    out = io.BytesIO()
    assert cr.copy_raw(session / "runs" / "bin.dat", out) == len(data)
    assert out.getvalue() == data == cr.read_raw(session / "runs" / "bin.dat")


def test_synthetic_power_trace_has_its_own_row_limit(session):
    """A power trace is only streamed, so it may hold more rows than any other
    table (Limits.power_rows), and no more; a table keeps table_rows."""
    from mobitrace.energy import power_traces as pt
    spec = pt.spec_from_manifest({"format": "power-meter", "units": {"time": "s", "power": "W"}})
    small = replace(cr.LIMITS, table_rows=5, power_rows=12)
    trace = session / "runs" / "power.csv"
    trace.write_text("time,power\n" + "".join(f"{i},{1 + i % 2}\n" for i in range(12)))
    got = [len(t) for t, _ in pt.iter_chunks(trace, spec, chunk_rows=4, limits=small)]
    assert got == [4, 4, 4]  # 12 rows: over table_rows, within power_rows, streamed
    _refused(cr.read_text, trace, small, match="expected at most 5 rows, found '13 rows'")  # lines, header included
    trace.write_text("time,power\n" + "".join(f"{i},1\n" for i in range(13)))
    err = _refused(lambda: list(pt.iter_chunks(trace, spec, chunk_rows=4, limits=small)),
                   match="power.csv: expected at most 12 rows of a power trace, found 'more'")
    assert err.path.endswith("power.csv")


# --------------------------------------------------------------------------- checks run once per table


def _synthetic_schema(unique: bool = False):
    import pandera.pandas as pa
    return pa.DataFrameSchema({"n": pa.Column("int64", pa.Check.ge(0), unique=unique)}, strict=True)


def _fail(name):
    return lambda exc: InputError(name, f"line {int(exc.failure_cases['index'].iloc[0]) + 2}", "n",
                                  "a count", exc.failure_cases["failure_case"].iloc[0])


def _read_synthetic(schema, frames, then=None):
    import pandas as pd
    for name, values in frames:
        table_checks.validated(schema, pd.DataFrame({"n": pd.Series(values, dtype="int64")}), _fail(name))
        if then and then[0] == name:
            raise then[1]


@pytest.mark.parametrize("frames, message", [
    ([("a", [1, 2]), ("b", [3, -4]), ("c", [-5])], "b: line 3: field 'n': expected a count, found -4"),
    ([("a", [1, 2]), ("b", [3, 4])], None),
])
def test_checked_once_names_the_first_bad_file_as_a_check_per_file_does_synthetic(frames, message):
    schema = _synthetic_schema()
    for batched in (False, True):
        if message is None:
            with table_checks.checked_once() if batched else contextlib.nullcontext():
                _read_synthetic(schema, frames)
            continue
        with pytest.raises(InputError) as info:
            with table_checks.checked_once() if batched else contextlib.nullcontext():
                _read_synthetic(schema, frames)
        assert str(info.value) == message


def test_checked_once_puts_an_earlier_schema_failure_before_a_later_error_synthetic():
    later = InputError("c", "line 9", None, "a later problem", "x")
    with pytest.raises(InputError, match="^b: line 2: field 'n'"):
        with table_checks.checked_once():
            _read_synthetic(_synthetic_schema(), [("a", [1]), ("b", [-1]), ("c", [2])], then=("c", later))
    with pytest.raises(InputError, match="^c: line 9"):  # no schema failure before it: the error itself
        with table_checks.checked_once():
            _read_synthetic(_synthetic_schema(), [("a", [1]), ("c", [2])], then=("c", later))


def test_checked_once_leaves_uniqueness_to_each_file_synthetic():
    schema = _synthetic_schema(unique=True)
    with table_checks.checked_once():  # 1 in two files: unique within each, as when checked one by one
        _read_synthetic(schema, [("a", [1, 2]), ("b", [1])])
    with pytest.raises(InputError, match="^b: "):
        with table_checks.checked_once():
            _read_synthetic(schema, [("a", [1, 2]), ("b", [3, 3])])


def test_checked_once_checks_early_past_its_row_bound_with_the_same_error_synthetic(monkeypatch):
    import pandas as pd
    monkeypatch.setattr(table_checks, "DEFERRED_ROWS", 3)
    read = []
    with pytest.raises(InputError) as info:
        with table_checks.checked_once():
            for name, values in [("a", [1, 2]), ("b", [3, -4]), ("c", [-5])]:
                read.append(name)
                table_checks.validated(_synthetic_schema(), pd.DataFrame({"n": pd.Series(values, dtype="int64")}), _fail(name))
    assert str(info.value) == "b: line 3: field 'n': expected a count, found -4"
    assert read == ["a", "b"]  # checked once 4 rows were held, before c was read


def _record_schema():
    import pandera.pandas as pa
    return pa.DataFrameSchema({"n": pa.Column("int64", pa.Check.ge(0)), "x": pa.Column(float, pa.Check.gt(0)),
                               "name": pa.Column(str, pa.Check.isin(["TCP"]))}, strict=True)


def _record_fail(name):
    return lambda exc: InputError(name, None, exc.failure_cases["column"].iloc[0], "a record",
                                  exc.failure_cases["failure_case"].iloc[0])


@pytest.mark.parametrize("records, message", [
    # an int and a float in one column, a Python int past 2**53 beside a float: each file's frame passes
    ([("a", {"n": 1, "x": 2, "name": "TCP"}), ("b", {"n": 2.0, "x": 0.5, "name": "TCP"}),
      ("c", {"n": 2 ** 60 + 1, "x": 1.0, "name": "TCP"})], None),
    ([("a", {"n": 1, "x": 2, "name": "TCP"}), ("b", {"n": 2, "x": 0.0, "name": "TCP"}),
      ("c", {"n": -1, "x": 1.0, "name": "TCP"})], "b: field 'x': expected a record, found 0.0"),
    ([("a", {"n": 1, "x": 2, "name": 5}), ("b", {"n": 2, "x": 1.5, "name": "TCP"})],
     "a: field 'name': expected a record, found '5'"),
    ([("a", {"n": 1, "x": 2, "name": "TCP"}), ("b", {"n": 2 ** 63 - 1, "x": 1.5, "name": "TCP"}),
      ("c", {"n": 0, "x": 1e300, "name": None})], "c: field 'name': expected a record, found nan"),
])
def test_validated_record_batched_gives_what_a_frame_per_file_gives_synthetic(records, message):
    """validated_record's one frame per schema inside checked_once passes and
    fails (with the first bad file's error) exactly as one frame per file."""
    schema, dtypes = _record_schema(), {"n": "int64", "x": float, "name": str}
    outcomes = []
    for batched in (False, True):
        try:
            with table_checks.checked_once() if batched else contextlib.nullcontext():
                for name, record in records:
                    table_checks.validated_record(schema, record, dtypes, _record_fail(name))
            outcomes.append(None)
        except InputError as exc:
            outcomes.append(str(exc))
    assert outcomes == [message, message]


def test_validated_record_a_cast_that_fails_names_the_file_as_reading_it_would_synthetic():
    schema, dtypes = _record_schema(), {"n": "int64", "x": float, "name": str}
    records = [("a", {"n": 1, "x": 2.0, "name": "TCP"}), ("b", {"n": 2 ** 70, "x": 1.0, "name": "TCP"})]
    errors = []
    for batched in (False, True):
        with pytest.raises(OverflowError) as info:
            with table_checks.checked_once() if batched else contextlib.nullcontext():
                for name, record in records:
                    table_checks.validated_record(schema, record, dtypes, _record_fail(name))
        errors.append(str(info.value))
    assert errors[0] == errors[1]


def test_read_once_walks_and_hashes_each_synthetic_capture_once(session, monkeypatch):
    """Inside read_once() a folder is walked once and a file hashed once (read_raw's
    bytes count), with the same results as outside; the memo ends with the block."""
    import hashlib
    walks = []
    real_tree = cr._tree
    monkeypatch.setattr(cr, "_tree", lambda folder, limits: walks.append(folder) or real_tree(folder, limits))
    first = sorted(cr.walk(session))[0]
    want_files, want_md5 = cr.walk(session), cr.md5_raw(first)
    assert want_md5 == hashlib.md5(first.read_bytes()).hexdigest()
    walks.clear()
    with cr.read_once():
        assert cr.walk(session) == want_files and cr.tree(session)[1] == want_files
        cr.walk(session).clear()  # a caller's list is its own
        assert cr.walk(session) == want_files
        assert walks == [session]
        cr.read_raw(first)
        monkeypatch.setattr(cr, "_raw_chunks", lambda *a: pytest.fail("hashed twice"))
        assert cr.md5_raw(first) == want_md5
    monkeypatch.undo()
    walks.clear()
    monkeypatch.setattr(cr, "_tree", lambda folder, limits: walks.append(folder) or real_tree(folder, limits))
    cr.walk(session)
    cr.walk(session)
    assert walks == [session, session]  # outside the block every call walks again

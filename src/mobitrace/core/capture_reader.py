"""The one reader of capture folders: captures come from strangers.

Every capture file is opened here, treated as untrusted input the way
Python's tarfile "data" filter treats an archive:

- only regular files and folders: symlinks, hard links (st_nlink > 1),
  FIFOs, sockets and devices are refused, naming the file (lstat first,
  then open with O_NOFOLLOW | O_NONBLOCK and re-check the open file);
- paths written inside a manifest must stay inside the session folder;
- sizes are bounded (LIMITS): bytes per file, session and capture, gzip
  output (bytes and ratio, decompressed as a stream), rows per table (a
  power trace, which is only ever streamed, has its own larger bound),
  YAML nesting depth and node count;
- YAML has no anchors, aliases or duplicate keys; JSON has no duplicate
  keys and no NaN/Infinity; numbers must be finite and of sane magnitude;
- text is UTF-8 with or without a BOM, plain or gzip (decided by the
  content, and `name` and `name.gz` are interchangeable) in every study.

Every refusal is an InputError: one line naming the file, the field, what
was expected and what was found.
"""

from __future__ import annotations

import codecs
import contextlib
import hashlib
import io
import json
import math
import os
import re
import stat
import statistics
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from mobitrace.core.errors import InputError, Plain

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30


@dataclass(frozen=True)
class Limits:
    """Every bound on a capture, in one place (documented in book/byod.md)."""

    file_bytes: int = 1 * GiB          # one file as stored
    session_bytes: int = 4 * GiB       # all files of one session folder
    capture_bytes: int = 16 * GiB      # all sessions of one device / upload
    files_per_session: int = 200_000
    text_bytes: int = 64 * MiB         # a file read whole (after gzip)
    stream_bytes: int = 4 * GiB        # a file read as a stream (power traces, after gzip)
    gzip_ratio: int = 100              # decompressed / compressed bytes ...
    gzip_ratio_after: int = 1 * MiB    # ... checked once this much came out
    table_rows: int = 10_000_000       # data rows of one CSV / JSON-lines table
    power_rows: int = 500_000_000      # samples of one power trace: streamed, so this bounds time, not memory
    yaml_depth: int = 32               # nesting of mappings and lists
    yaml_nodes: int = 100_000          # scalars, mappings and lists of one document
    magnitude: float = 1e18            # |number| in any structured field
    line_bytes: int = 1 * MiB          # one line of any text file (the kits' longest are ~2 kB)
    text_field_chars: int = 64 * KiB   # one YAML scalar (a host note, a kernel string)
    manifest_bytes: int = 8 * MiB      # a manifest.yaml (the largest committed one: 0.23 MB)


LIMITS = Limits()
GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 256 * KiB


# --------------------------------------------------------------------------- #
# Files and folders


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "a special file"


def _check_regular(path: Path, st: os.stat_result, limits: Limits) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise InputError(path, None, None, "a regular file", _kind(st.st_mode))
    if st.st_nlink > 1:
        raise InputError(path, None, None, "a regular file", f"a hard link ({st.st_nlink} names)")
    if st.st_size > limits.file_bytes:
        raise InputError(path, None, None, f"at most {limits.file_bytes} bytes per file", f"{st.st_size} bytes")


def tree(folder: str | Path, limits: Limits = LIMITS) -> tuple[list[Path], list[Path]]:
    """(sub-folders, regular files) under `folder`, sorted, after checking
    that the tree holds only regular files and folders, within the limits."""
    folder = Path(folder)
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        raise InputError(folder, None, None, "a capture folder", "no such folder") from None
    if not stat.S_ISDIR(st.st_mode):
        raise InputError(folder, None, None, "a folder", "a file" if stat.S_ISREG(st.st_mode) else _kind(st.st_mode))
    dirs, files, total, stack = [], [], 0, [folder]
    while stack:
        here = stack.pop()
        with os.scandir(here) as it:
            entries = sorted(it, key=lambda e: e.name)
        for entry in entries:
            path = Path(entry.path)
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                dirs.append(path)
                stack.append(path)
                continue
            _check_regular(path, st, limits)
            files.append(path)
            total += st.st_size
            if len(files) + len(dirs) > limits.files_per_session:
                raise InputError(folder, None, None, f"at most {limits.files_per_session} files and folders",
                                 "more")
    if total > limits.session_bytes:
        raise InputError(folder, None, None, f"at most {limits.session_bytes} bytes per session",
                         f"{total} bytes")
    return sorted(dirs), sorted(files)


def walk(folder: str | Path, limits: Limits = LIMITS) -> list[Path]:
    """Every regular file under `folder`, sorted (see tree())."""
    return tree(folder, limits)[1]


def check_capture(device_dir: str | Path, limits: Limits = LIMITS) -> list[Path]:
    """walk() every session folder of a device folder (or upload), and bound
    their total size. Returns every file."""
    device_dir = Path(device_dir)
    files = walk(device_dir, replace(limits, session_bytes=limits.capture_bytes,
                                     files_per_session=limits.files_per_session * 16))
    for entry in sorted(device_dir.iterdir()):
        if entry.is_dir():
            walk(entry, limits)
    return files


def inside(session: str | Path, relative: object, manifest: str | Path, field: str) -> Path:
    """`session / relative` for a path written in a manifest, refused when it
    is not a relative path that stays inside the session folder."""
    manifest = Path(manifest)
    if not isinstance(relative, str) or not relative:
        raise InputError(manifest, None, field, "a relative path inside the session folder", relative)
    if "\0" in relative or os.path.isabs(relative) or relative.startswith("~"):
        raise InputError(manifest, None, field, "a relative path inside the session folder", relative)
    parts = Path(relative).parts
    if ".." in parts:
        raise InputError(manifest, None, field, "a path inside the session folder (no '..')", relative)
    return Path(session) / relative


def resolve(path: str | Path) -> Path:
    """`path`, or the same name with/without `.gz` when only that exists
    (checked without following links)."""
    path = Path(path)
    other = path.with_name(path.name[:-3]) if path.name.endswith(".gz") else path.with_name(path.name + ".gz")
    for p in (path, other):
        if os.path.lexists(p):
            return p
    raise InputError(path, None, None, "a file (or its .gz)", "no such file")


def exists(path: str | Path) -> bool:
    """Whether `path` (or its .gz / plain twin) is there, without following links."""
    try:
        resolve(path)
        return True
    except InputError:
        return False


def _open_fd(path: Path, limits: Limits) -> int:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise InputError(path, None, None, "a file", "no such file") from None
    _check_regular(path, st, limits)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise InputError(path, None, None, "a readable regular file", exc.strerror or type(exc).__name__) from None
    try:
        _check_regular(path, os.fstat(fd), limits)  # the file opened is the file checked
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_at_most(fh, n: int) -> bytes:
    """Up to `n` bytes of `fh`, in chunks: `fh.read(n)` would allocate all
    `n` bytes up front (1 GiB for a 10 KB file; found by the fuzzing)."""
    parts, got = [], 0
    while got < n:
        chunk = fh.read(min(_CHUNK, n - got))
        if not chunk:
            break
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)


def read_raw(path: str | Path, limits: Limits = LIMITS) -> bytes:
    """The bytes of a capture file as stored (for hashes and copies)."""
    path = Path(path)
    fd = _open_fd(path, limits)
    with os.fdopen(fd, "rb") as fh:
        data = _read_at_most(fh, limits.file_bytes + 1)
    if len(data) > limits.file_bytes:
        raise InputError(path, None, None, f"at most {limits.file_bytes} bytes per file", "more")
    return data


def _raw_chunks(path: Path, limits: Limits) -> Iterator[bytes]:
    """A capture file's stored bytes in chunks, refused past limits.file_bytes."""
    fd = _open_fd(path, limits)
    got = 0
    with os.fdopen(fd, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            got += len(chunk)
            if got > limits.file_bytes:
                raise InputError(path, None, None, f"at most {limits.file_bytes} bytes per file", "more")
            yield chunk


def copy_raw(path: str | Path, out, limits: Limits = LIMITS) -> int:
    """Copy a capture file's stored bytes into the binary file `out` in
    chunks (a 2 GB capture never sits in memory); returns the byte count.
    Refuses a file past limits.file_bytes, as read_raw does."""
    got = 0
    for chunk in _raw_chunks(Path(path), limits):
        out.write(chunk)
        got += len(chunk)
    return got


def md5_raw(path: str | Path, limits: Limits = LIMITS) -> str:
    """The MD5 (hex) of a capture file's stored bytes, read in chunks:
    hashlib.md5(read_raw(path)) without holding the file in memory."""
    h = hashlib.md5()
    for chunk in _raw_chunks(Path(path), limits):
        h.update(chunk)
    return h.hexdigest()


class _Gunzip(io.RawIOBase):
    """A bounded streaming gzip reader (multi-member), refusing output past
    `max_bytes` or a ratio past limits.gzip_ratio."""

    def __init__(self, raw, path: Path, max_bytes: int, limits: Limits):
        self.raw, self.path, self.max_bytes, self.limits = raw, path, max_bytes, limits
        self.dec = zlib.decompressobj(wbits=31)
        self.buf, self.pending, self.n_in, self.n_out, self.eof, self.started = b"", b"", 0, 0, False, False

    def readable(self) -> bool:
        return True

    def _fail(self, expected: str, found: str):
        raise InputError(self.path, None, None, expected, found)

    def _more(self) -> None:
        while not self.buf and not self.eof:
            if self.dec.unconsumed_tail:
                data = self.dec.unconsumed_tail
            elif self.pending:
                data, self.pending = self.pending, b""
            else:
                data = self.raw.read(_CHUNK)
                self.n_in += len(data)
                if not data:
                    if self.started:
                        self._fail("a complete gzip stream", "a truncated gzip stream")
                    self.eof = True
                    return
            self.started = True
            try:
                out = self.dec.decompress(data, _CHUNK)
            except zlib.error:
                self._fail("a valid gzip stream", "corrupt compressed data")
            if self.dec.eof:  # a member ended; what follows must be another member
                self.pending = self.dec.unused_data
                self.dec, self.started = zlib.decompressobj(wbits=31), False
            self.n_out += len(out)
            if self.n_out > self.max_bytes:
                self._fail(f"at most {self.max_bytes} bytes after gunzip", "more")
            if self.n_out > self.limits.gzip_ratio_after and self.n_out > self.limits.gzip_ratio * max(self.n_in, 1):
                self._fail(f"a gzip ratio of at most {self.limits.gzip_ratio}",
                           f"{self.n_out // max(self.n_in, 1)} (a decompression bomb?)")
            self.buf = out

    def readinto(self, b) -> int:
        self._more()
        n = min(len(b), len(self.buf))
        b[:n] = self.buf[:n]
        self.buf = self.buf[n:]
        return n

    def close(self) -> None:
        self.raw.close()
        super().close()


def open_binary(path: str | Path, max_bytes: int | None = None, limits: Limits = LIMITS):
    """A binary stream of a capture file's content, gunzipped (bounded) when
    it is gzip data. The caller closes it."""
    path = Path(path)
    fh = os.fdopen(_open_fd(path, limits), "rb")
    head = fh.peek(2)[:2] if hasattr(fh, "peek") else b""
    if head == GZIP_MAGIC:
        return io.BufferedReader(_Gunzip(fh, path, max_bytes or limits.stream_bytes, limits), _CHUNK)
    return fh


def _longest_line(data: bytes, carried: int = 0) -> tuple[int, int]:
    """(the longest line in `data`, counting `carried` bytes of a line begun
    before it; the length of the line still open at its end)."""
    import numpy as np

    ends = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
    if not len(ends):
        return carried + len(data), carried + len(data)
    longest = max(carried + int(ends[0]), int(np.diff(ends).max(initial=1)) - 1)
    return longest, len(data) - int(ends[-1]) - 1


def _check_lines(path: Path, data: bytes, carried: int, limits: Limits) -> int:
    """Refuse a line longer than limits.line_bytes; the open line's length."""
    if carried + len(data) <= limits.line_bytes:
        tail = data.rfind(b"\n")
        return carried + len(data) if tail < 0 else len(data) - tail - 1
    longest, open_line = _longest_line(data, carried)
    if longest > limits.line_bytes:
        raise InputError(path, None, None, f"lines of at most {limits.line_bytes} bytes", "a longer line")
    return open_line


class _CheckUtf8(io.RawIOBase):
    """Passes bytes through, refusing the first that is not UTF-8 (with the
    offset in the decompressed content) and a line past limits.line_bytes."""

    def __init__(self, raw, path: Path, limits: Limits = LIMITS):
        self.raw, self.path, self.offset, self.limits, self.line = raw, path, 0, limits, 0
        self.dec = codecs.getincrementaldecoder("utf-8")()

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        data = self.raw.read(len(b))
        pending = len(self.dec.getstate()[0])
        try:
            self.dec.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            raise InputError(self.path, None, None, "UTF-8 text",
                             Plain(f"byte 0x{exc.object[exc.start]:02x} at offset "
                                   f"{self.offset - pending + exc.start}")) from None
        self.offset += len(data)
        self.line = _check_lines(self.path, data, self.line, self.limits)
        b[:len(data)] = data
        return len(data)

    def close(self) -> None:
        self.raw.close()
        super().close()


def open_text_stream(path: str | Path, limits: Limits = LIMITS):
    """A binary stream of a capture file's content (gunzipped, bounded) that
    refuses bytes that are not UTF-8 as they are read."""
    return io.BufferedReader(_CheckUtf8(open_binary(path, None, limits), Path(path), limits), _CHUNK)


def read_bytes(path: str | Path, limits: Limits = LIMITS) -> bytes:
    """The content of a capture file, gunzipped when it is gzip data, at most
    limits.text_bytes."""
    path = Path(path)
    with open_binary(path, limits.text_bytes, limits) as fh:
        data = _read_at_most(fh, limits.text_bytes + 1)
    if len(data) > limits.text_bytes:
        raise InputError(path, None, None, f"at most {limits.text_bytes} bytes of text", "more")
    _check_lines(path, data, 0, limits)
    return data


def decode(data: bytes, path: str | Path) -> str:
    """UTF-8 text, with or without a BOM."""
    bom = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    try:
        return data[bom:].decode("utf-8")
    except UnicodeDecodeError as exc:  # the offset counts the BOM, as a hex editor would
        raise InputError(path, None, None, "UTF-8 text",
                         Plain(f"byte 0x{data[bom + exc.start]:02x} at offset {bom + exc.start}")) from None


def read_text(path: str | Path, limits: Limits = LIMITS) -> str:
    """The UTF-8 text of a capture file (BOM dropped, gzip read transparently),
    at most limits.table_rows lines."""
    text = decode(read_bytes(path, limits), path)
    check_rows(path, text.count("\n"), limits)
    return text


def check_rows(path: str | Path, n_rows: int, limits: Limits = LIMITS, power: bool = False) -> None:
    """Refuse a table past limits.table_rows rows, or, with `power`, a power
    trace (read only as a stream, chunk by chunk) past limits.power_rows."""
    cap = limits.power_rows if power else limits.table_rows
    if n_rows > cap:
        raise InputError(path, None, None, f"at most {cap} rows" + (" of a power trace" if power else ""),
                         f"{n_rows} rows" if not power else "more")


def lines(text: str, path: str | Path, limits: Limits = LIMITS) -> list[str]:
    """text.splitlines(), bounded by limits.table_rows."""
    out = text.splitlines()
    check_rows(path, len(out) - 1, limits)
    return out


def iter_lines(path: str | Path, limits: Limits = LIMITS) -> Iterator[tuple[int, str]]:
    """(1-based number, text) of each line of a (gzip) UTF-8 file, streamed."""
    path = Path(path)
    with open_binary(path, limits.stream_bytes, limits) as fh:
        offset = 0
        # readline(limit): a line past the bound is refused before it is all in memory
        for n, raw in enumerate(iter(lambda: fh.readline(limits.line_bytes + 1), b""), 1):
            if len(raw) > limits.line_bytes:
                raise InputError(path, f"line {n}", None, f"lines of at most {limits.line_bytes} bytes",
                                 "a longer line")
            if n > limits.table_rows + 1:
                check_rows(path, n - 1, limits)
            if n == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw, offset = raw[3:], 3
            try:
                yield n, raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(path, f"line {n}", None, "UTF-8 text",
                                 Plain(f"byte 0x{raw[exc.start]:02x} at offset {offset + exc.start}")) from None
            offset += len(raw)


# --------------------------------------------------------------------------- #
# Names

# The one rule for every name a capture gives that becomes a path component
# (device, session, run id): checked before any path is built from it.
# Matched over the whole string (fullmatch): `$` would let a final newline through.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
NAME_RULE = ("a name of letters, digits, '.', '_' or '-' (first a letter or digit, at most 64; "
             "not dvc.yaml, dvc.lock or *.dvc)")
# Names DVC acts on wherever they are: a capture's folder may not take them.
_RESERVED = re.compile(r"dvc\.(yaml|yml|lock)|.*\.dvc|.*\.partial", re.IGNORECASE)


def is_name(value) -> bool:
    """Whether `value` is a string obeying NAME over its whole length, and
    not a name DVC acts on nor '.partial' (the kits' unfinished folders)."""
    return isinstance(value, str) and NAME.fullmatch(value) is not None and not _RESERVED.fullmatch(value)


def check_name(value, path: str | Path, where: str | None, field: str) -> str:
    """`value` when is_name(value), else InputError."""
    if not is_name(value):
        raise InputError(path, where, field, NAME_RULE, value)
    return value


# --------------------------------------------------------------------------- #
# Numbers


def check_number(value, path: str | Path, where: str | None, field: str, *, minimum: float | None = 0,
                 maximum: float | None = None, integer: bool = False, limits: Limits = LIMITS):
    """`value` if it is a finite number (not a bool) in [minimum, maximum]
    and of sane magnitude, else InputError naming the field."""
    kind = "an integer" if integer else "a number"
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (integer and not isinstance(value, int)):
        raise InputError(path, where, field, kind, value)
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(path, where, field, f"a finite {'integer' if integer else 'number'}", value)
    if abs(value) > limits.magnitude:
        raise InputError(path, where, field, f"{kind} of magnitude at most {limits.magnitude:g}", value)
    if minimum is not None and value < minimum:
        raise InputError(path, where, field, f"{kind} >= {minimum:g}", value)
    if maximum is not None and value > maximum:
        raise InputError(path, where, field, f"{kind} <= {maximum:g}", value)
    return value


def is_count(text: str) -> bool:
    """Whether `text` is a non-negative integer in ASCII digits of sane size."""
    return text.isascii() and text.isdigit() and len(text) <= 18


def count_matrix(rows: list[list[str]]):
    """Rows of text fields of equal length as an int64 numpy matrix when every
    field is_count(), else None (the caller's field-by-field check then names
    the first bad one): one join and one map instead of a check per field,
    for tables of thousands of counters."""
    import numpy as np
    flat = [v for row in rows for v in row]
    if not flat or not all(isinstance(v, str) for v in flat):
        return None
    joined = "".join(flat)
    if not (joined.isascii() and joined.isdigit()) or not 0 < min(map(len, flat)) <= max(map(len, flat)) <= 18:
        return None
    return np.array(list(map(int, flat)), dtype="int64").reshape(len(rows), -1)


# --------------------------------------------------------------------------- #
# JSON


def _json_pairs(path):
    def hook(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise InputError(path, None, key, "unique JSON keys", "a duplicate key")
            seen.add(key)
        return dict(pairs)
    return hook


def _json_number(path, limits: Limits):
    def parse_float(text):
        val = float(text)
        if not math.isfinite(val) or abs(val) > limits.magnitude:
            raise InputError(path, None, None, f"a finite number of magnitude at most {limits.magnitude:g}", text)
        return val

    def parse_int(text):
        if len(text.lstrip("-")) > 19 or abs(int(text)) > limits.magnitude:
            raise InputError(path, None, None, f"an integer of magnitude at most {limits.magnitude:g}",
                             text[:40] + ("..." if len(text) > 40 else ""))
        return int(text)
    return parse_float, parse_int


def _json_constant(path):
    def hook(name):
        raise InputError(path, None, None, "a finite JSON number", name)
    return hook


def loads_json(text: str, path: str | Path, limits: Limits = LIMITS):
    """json.loads refusing duplicate keys, NaN/Infinity and huge numbers.
    Syntax errors raise json.JSONDecodeError (the caller says where)."""
    parse_float, parse_int = _json_number(path, limits)
    if not text.strip():  # json's own "Expecting value: line 1 column 1" says nothing of the file
        raise InputError(path, None, None, "a JSON document (the tool's output)", Plain("an empty file"))
    try:
        return json.loads(text, object_pairs_hook=_json_pairs(path), parse_constant=_json_constant(path),
                          parse_float=parse_float, parse_int=parse_int)
    except RecursionError:
        raise InputError(path, None, None, "JSON nested at most a few hundred levels", "deeper nesting") from None


# --------------------------------------------------------------------------- #
# YAML


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


# --------------------------------------------------------------------------- #
# Host metadata: schema 2, and the schema-1 manifests already committed

HOST_SCHEMA = 2
# The one key set of `host:` in a schema-2 manifest (mobitrace.capture.host writes it).
HOST_KEYS = ("hostname_hash", "kernel", "kernel_version", "machine", "os", "cpu_model", "cpu_count", "cpus_online",
             "hypervisor", "virtualization", "user_hz", "cpu_mhz", "cpufreq", "memory_kb", "clocksource",
             "kernel_config", "irqbalance_running", "dmi_product", "sys_vendor", "sysctls", "loadavg_1min",
             "tools", "note")


def hostname_hash(name: str) -> str:
    """What the kits record instead of a host name (privacy)."""
    return hashlib.sha256(str(name).encode()).hexdigest()[:12]


def _as_list(v):
    return None if v is None else [str(x) for x in v] if isinstance(v, list) else [str(v)]


def _mhz(values):
    if not isinstance(values, list):
        return None
    out = []
    for v in values:
        try:
            out.append(float(v))
        except (TypeError, ValueError):
            out.append(None)
    return out


def _hz(v):
    return int(v) if isinstance(v, str) and is_count(v) else v if isinstance(v, int) else None


def _freq_table(freqs):
    return [{k: f.get(k) for k in ("cpu", "governor", "cur_khz", "max_khz")} for f in freqs if isinstance(f, dict)] \
        if isinstance(freqs, list) else None


def _per_cpu_dicts(host):
    gov, cur = host.get("governor"), host.get("cpufreq_cur_khz")
    if not isinstance(gov, dict):
        return None
    cur = cur if isinstance(cur, dict) else {}
    return [{"cpu": int(c[3:]) if c[3:].isdigit() else c, "governor": g, "cur_khz": cur.get(c), "max_khz": None}
            for c, g in gov.items()]


# Where the schema-1 kits wrote each schema-2 key: (path in the manifest, conversion), first present wins.
#   cpu-gbps (capture.py, adb_capture.py): hostname, cpu.{model,count,online,hypervisor,frequency}, user_hz, ...
#   priority-boost, mptcp-dualband: hostname_hash, cpu_model [list], cpu_count, kernel_hz_hint (getconf CLK_TCK)
#   stack-trim: hostname_hash, cpu_model [list], cpu_count, cpuinfo_mhz, cpufreq (a note), user_hz
#   transfer-tuning: hostname, cpu_model (text), cpus, cpu_mhz, loadavg_at_start
_same = None
HOST_SCHEMA1 = {
    "hostname_hash": [(("host", "hostname_hash"), _same), (("host", "hostname"), hostname_hash)],
    "kernel": [(("host", "kernel"), _same)],
    "kernel_version": [(("host", "kernel_version"), _same)],
    "machine": [(("host", "machine"), _same)],
    "os": [(("host", "os_release", "PRETTY_NAME"), _same)],
    "cpu_model": [(("host", "cpu_model"), _as_list), (("host", "cpu", "model"), _as_list)],
    "cpu_count": [(("host", "cpu_count"), _same), (("host", "cpus"), _same), (("host", "cpu", "count"), _same)],
    "cpus_online": [(("host", "cpu", "online"), _same)],
    "hypervisor": [(("host", "hypervisor"), _same), (("host", "cpu", "hypervisor"), _same)],
    "virtualization": [(("host", "virtualization"), _same)],
    "user_hz": [(("host", "user_hz"), _same), (("host", "kernel_hz_hint"), _hz)],
    "cpu_mhz": [(("host", "cpu_mhz"), _mhz), (("host", "cpuinfo_mhz"), _mhz),
                (("host", "cpu", "frequency"), lambda fs: _mhz([f.get("cpuinfo_mhz") for f in fs
                                                                if isinstance(f, dict)]) if isinstance(fs, list) else None)],
    "cpufreq": [(("host", "cpufreq"), _same), (("host", "cpu", "frequency"), _freq_table),
                (("host", "governor"), "per-cpu"), (("host", "cpu_mhz_source"), _same)],
    "memory_kb": [(("host", "memory_kb"), _same)],
    "clocksource": [(("host", "clocksource"), _same)],
    "kernel_config": [(("host", "kernel_config"), _same)],
    "irqbalance_running": [(("host", "irqbalance_running"), _same)],
    "dmi_product": [(("host", "dmi_product"), _same)],
    "sys_vendor": [(("host", "sys_vendor"), _same)],
    "sysctls": [(("host", "sysctls"), _same)],
    "loadavg_1min": [(("host", "loadavg_1min"), _same), (("host", "loadavg_at_start"), _same)],
    "tools": [(("host", "tools"), _same), (("tools",), _same)],
    "note": [(("host", "note"), _same), (("host", "shared_host_note"), _same), (("host", "shared_host"), _same)],
}


def manifest_schema(manifest) -> int:
    """A manifest's schema: its `schema:` field, 1 where there is none."""
    s = manifest.get("schema", 1) if isinstance(manifest, dict) else 1
    return s if isinstance(s, int) and not isinstance(s, bool) else 1


def _get(doc, keys):
    cur = doc
    for k in keys:
        if not isinstance(cur, dict) or k not in cur:
            return False, None
        cur = cur[k]
    return True, cur


def host_sources(manifest: dict) -> dict[str, tuple[str, ...] | None]:
    """For each schema-2 host key, where this manifest keeps it (a key path),
    or None: the schema-2 path, or the schema-1 path it is mapped from."""
    if manifest_schema(manifest) >= 2:
        return {k: ("host", k) for k in HOST_KEYS}
    out = {}
    for key in HOST_KEYS:
        out[key] = next((keys for keys, _ in HOST_SCHEMA1[key] if _get(manifest, keys)[0]), None)
    return out


def host_metadata(manifest: dict, path: str | Path) -> dict:
    """The host metadata of a session manifest with exactly the schema-2 keys
    (HOST_KEYS; None where the kit did not record it), from a schema-2
    manifest or mapped from a schema-1 one (HOST_SCHEMA1: plain host names
    are hashed, a single CPU model becomes a list, `cpus` and `cpu.count`
    become cpu_count, getconf CLK_TCK becomes user_hz, ...). cpu_count and
    user_hz, where recorded, must be integers >= 1 (InputError naming the
    field as written in the file)."""
    if not isinstance(manifest, dict):
        raise InputError(path, None, None, "a mapping", type(manifest).__name__)
    host = manifest.get("host")
    if not isinstance(host, dict):
        raise InputError(path, None, "host", "a mapping", host if host is not None else "nothing")
    out = {}
    if manifest_schema(manifest) >= 2:
        out = {k: host.get(k) for k in HOST_KEYS}
        where = {k: f"host.{k}" for k in HOST_KEYS}
    else:
        where = {}
        for key in HOST_KEYS:
            out[key] = None
            for keys, convert in HOST_SCHEMA1[key]:
                found, value = _get(manifest, keys)
                if found:
                    if convert == "per-cpu":  # priority-boost: governor and cur_khz by cpuN
                        value = _per_cpu_dicts(host)
                    elif convert is not None:
                        value = convert(value)
                    if value is not None:
                        out[key], where[key] = value, ".".join(keys)
                        break
    for key in ("cpu_count", "user_hz"):
        if out[key] is not None:
            check_number(out[key], path, None, where[key], minimum=1, integer=True)
    return out


def host_list(value) -> list[str]:
    """A CPU model list (schema 2) from a list or one text (schema 1)."""
    return _as_list(value) or []


def host_key_paths(manifest: dict, legacy: dict[str, list[str]], columns: dict[str, str]) -> dict[str, list[str]]:
    """For a reader's columns {column: schema-2 host key}: the key path each
    is read from in this manifest (host_sources), or, where a schema-1
    manifest lacks it, the reader's own schema-1 path `legacy[column]`
    (so that a missing field is named as that reader always named it)."""
    src = host_sources(manifest)
    return {col: list(src[key] or legacy.get(col) or ("host", key)) for col, key in columns.items()}


# Sessions ingest skips: {"<device>/<session>": why}, from the study's
# `superseded` in params.yaml (set by `python -m mobitrace ingest` via
# superseding()). Raw data is immutable, so a re-captured session stays in
# data/raw and is only left out of the analysis.
_SUPERSEDED: dict[str, str] = {}


@contextlib.contextmanager
def superseding(superseded: dict | None, where: str | Path = "params.yaml") -> Iterator[None]:
    """Within the block, session_folders() leaves out the sessions named in
    `superseded` ({"<device>/<session>": why}); a malformed map is an InputError."""
    global _SUPERSEDED
    superseded = superseded or {}
    if not isinstance(superseded, dict):
        raise InputError(where, None, "superseded", "a mapping of '<device>/<session>': why",
                         type(superseded).__name__)
    for key, why in superseded.items():
        if not isinstance(key, str) or key.count("/") != 1 or not all(key.split("/")):
            raise InputError(where, None, "superseded", "keys '<device>/<session>'", key)
        if not isinstance(why, str) or not why.strip():
            raise InputError(where, None, f"superseded.{key}", "a reason (text)", why)
    saved, _SUPERSEDED = _SUPERSEDED, dict(superseded)
    try:
        yield
    finally:
        _SUPERSEDED = saved


def session_folders(device_dir: str | Path) -> list[Path]:
    """The complete capture sessions of a device folder, sorted: the one
    session listing. The tree is checked first (check_capture); *.partial
    folders, left by an interrupted capture, are not sessions, nor are the
    sessions superseded (see superseding()). A superseded session that is not
    there is an InputError: the map would otherwise silently name nothing."""
    device_dir = Path(device_dir)
    if not device_dir.is_dir():
        raise InputError(device_dir, None, None, "a device folder of capture sessions", "no such folder")
    check_capture(device_dir)
    found = sorted(p for p in device_dir.iterdir() if p.is_dir() and not p.name.endswith(".partial"))
    names = {p.name for p in found}
    skip = {key.split("/")[1] for key in _SUPERSEDED if key.split("/")[0] == device_dir.name}
    for session in sorted(skip - names):
        raise InputError("params.yaml", None, f"superseded.{device_dir.name}/{session}",
                         f"a session folder of {device_dir}", "no such session")
    found = [p for p in found if p.name not in skip]
    if not found:
        raise InputError(device_dir, None, None, "at least one session folder (not superseded)", "none")
    return found


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


# --------------------------------------------------------------------------- #
# Schema checks of per-file tables, run once per table

class _Deferred(list):
    """The (schema, frame, fail, lazy) checks validated() deferred, in reading order."""

    rows = 0


# Inside checked_once(): the checks deferred so far.
_DEFERRED: _Deferred | None = None
# Deferred rows held at most: then they are checked (memory stays bounded for a large capture).
DEFERRED_ROWS = 1_000_000


def validated(schema, frame, fail, lazy: bool = True):
    """`schema.validate(frame, lazy=lazy)` (a pandera schema of one file's
    table); a failure becomes `fail(exc)`, the InputError the caller raises
    (or `fail` raises it). Inside checked_once() the check is deferred and
    `frame` returned as it is (pandera checks here never coerce)."""
    row_wise = getattr(schema, "unique", None) is None and not any(
        getattr(col, "unique", False) for col in schema.columns.values())
    if _DEFERRED is None or not row_wise:
        return _check(schema, frame, fail, lazy)
    _DEFERRED.append((schema, frame, fail, lazy))
    _DEFERRED.rows += len(frame)
    if _DEFERRED.rows > DEFERRED_ROWS:  # no error came between: checking now finds the same first failure
        _check_batched(_DEFERRED)
        _DEFERRED.clear()
        _DEFERRED.rows = 0
    return frame


class _Record:
    """One file's one-row table, made when it is checked (validated_record)."""

    __slots__ = ("record", "dtypes")

    def __init__(self, record: dict, dtypes: dict):
        self.record, self.dtypes = dict(record), dtypes  # as read: the caller may change its dict later

    def __len__(self) -> int:
        return 1

    def frame(self):
        import pandas as pd
        return pd.DataFrame([self.record]).astype(self.dtypes)


def validated_record(schema, record: dict, dtypes: dict, fail, lazy: bool = True) -> None:
    """validated(schema, pd.DataFrame([record]).astype(dtypes), fail): the
    check of a file's one-row table (a manifest, a summary). Inside
    checked_once() the records of one schema, keys and dtypes become one
    frame when the checks run (~1.5 ms less per file than a frame each). A
    column of them takes the dtype its values share, so the batch passes
    only when each file's frame would (the casts keep every value, or its
    sign where an integer past 2**53 goes through a float); a failure is
    checked file by file as before."""
    if _DEFERRED is None:
        validated(schema, _Record(record, dtypes).frame(), fail, lazy)
        return
    validated(schema, _Record(record, dtypes), fail, lazy)


def _frame(table):
    return table.frame() if isinstance(table, _Record) else table


def _check(schema, frame, fail, lazy: bool):
    from pandera.errors import SchemaError, SchemaErrors
    try:
        return schema.validate(_frame(frame), lazy=lazy)
    except (SchemaError, SchemaErrors) as exc:
        raise fail(exc) from None


@contextlib.contextmanager
def checked_once() -> Iterator[None]:
    """Within the block, validated() checks of row-wise schemas (no
    uniqueness) are deferred and run at its end (or every DEFERRED_ROWS rows)
    once per schema on the concatenation of the files' tables: pandera's fixed
    cost per call (~10 ms) times a few hundred small files was most of an
    ingest's time. A table whose checks are all element- or row-wise (as
    every per-file schema's are) passes exactly when each file's does (tables
    are grouped by their columns and dtypes, so concatenating changes no
    dtype). When one fails, or the block raises, the deferred checks run file
    by file in reading order, so the error is the one the check at reading
    would have raised first."""
    global _DEFERRED
    saved, _DEFERRED = _DEFERRED, _Deferred()
    pending = _DEFERRED
    try:
        yield
    except Exception:
        _DEFERRED = saved
        _check_each(pending)  # an earlier file's schema failure came first when each was checked on reading
        raise
    finally:
        _DEFERRED = saved
    _check_batched(pending)


def _check_batched(pending: list) -> None:
    """The deferred checks, once per (schema, columns, dtypes); on a failure,
    file by file (the first failing file's error)."""
    import pandas as pd
    from pandera.errors import SchemaError, SchemaErrors
    groups: dict[tuple, list] = {}
    for schema, frame, *_ in pending:
        if isinstance(frame, _Record):
            key = (id(schema), "records", tuple(frame.record), tuple((k, str(t)) for k, t in frame.dtypes.items()))
        else:
            key = (id(schema), tuple(frame.columns), tuple(str(t) for t in frame.dtypes))
        groups.setdefault(key, []).append((schema, frame))
    try:
        for key, items in groups.items():
            frames = [frame for _, frame in items]
            if key[1] == "records":
                try:
                    table = pd.DataFrame([r.record for r in frames]).astype(frames[0].dtypes)
                except (TypeError, ValueError, OverflowError):  # a cast that fails in a file's frame or only here
                    _check_each(pending)  # that file's error, in reading order; else each file passed
                    return
            else:
                table = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
            items[0][0].validate(table, lazy=False)
    except (SchemaError, SchemaErrors):
        _check_each(pending)


def _check_each(pending: list) -> None:
    for check in pending:
        _check(*check)


# --------------------------------------------------------------------------- #
# The idle gate (mobitrace.capture.idle): background load per run

IDLE_PCT_KEYS = ("before_pct", "during_pct")
IDLE_OPTIONAL_PCT = ("kthreads_before_pct", "kthreads_during_pct", "cost_pct")


def background_load(manifest: dict, path: str | Path = "manifest.yaml") -> dict | None:
    """The idle-gate record of a session manifest, checked: None for a
    capture made without the gate (every schema-1/2 manifest before it), else
    {"max_pct": threshold, "runs": {run_id: {"before_pct", "during_pct",
    "flagged"}}} with the loads in % of one core (finite, >= 0). A malformed
    record is an InputError naming the field."""
    gate = manifest.get("idle_gate") if isinstance(manifest, dict) else None
    if gate is None:
        return None
    if not isinstance(gate, dict):
        raise InputError(path, None, "idle_gate", "a mapping", type(gate).__name__)
    max_pct = check_number(gate.get("max_pct"), path, None, "idle_gate.max_pct")
    runs = gate.get("runs")
    if not isinstance(runs, dict):
        raise InputError(path, None, "idle_gate.runs", "a mapping of run ids", type(runs).__name__)
    out = {}
    for run_id, rec in runs.items():
        where = f"idle_gate.runs.{run_id}"
        check_name(run_id, path, None, "idle_gate.runs")
        if not isinstance(rec, dict):
            raise InputError(path, None, where, "a mapping", type(rec).__name__)
        for key in IDLE_PCT_KEYS:
            check_number(rec.get(key), path, None, f"{where}.{key}")
        for key in IDLE_OPTIONAL_PCT:
            if key in rec:
                check_number(rec[key], path, None, f"{where}.{key}")
        if not isinstance(rec.get("flagged"), bool):
            raise InputError(path, None, f"{where}.flagged", "true or false", rec.get("flagged"))
        out[run_id] = {"before_pct": rec["before_pct"], "during_pct": rec["during_pct"], "flagged": rec["flagged"]}
    return {"max_pct": max_pct, "runs": out}


NOT_MEASURED = "not measured (captured before the idle gate)"


def background_text(gate: dict | None) -> str:
    """A background_load() record for a chapter's captures table: the load
    outside the experiment during the runs (% of one core, median and
    largest) and how many runs were flagged; "not measured" for a capture
    without the gate (no number is made up for it)."""
    if gate is None:
        return NOT_MEASURED
    during = [r["during_pct"] for r in gate["runs"].values()]
    if not during:
        return f"measured, no runs recorded (threshold {gate['max_pct']:g}% of one core)"
    flagged = sum(r["flagged"] for r in gate["runs"].values())
    return (f"measured: median {statistics.median(during):.1f}%, largest {max(during):.1f}% of one core during "
            f"runs; {flagged} of {len(during)} runs flagged (threshold {gate['max_pct']:g}%)")


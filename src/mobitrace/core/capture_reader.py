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


# Inside read_once(): each folder's tree() and each file's MD5, by (path, limits).
_ONCE: dict | None = None


@contextlib.contextmanager
def read_once() -> Iterator[None]:
    """Within the block, each folder is walked (tree()) and each file hashed
    (md5_raw(), or read_raw()'s bytes) once: an ingest command checks the
    layout, lists the sessions, hashes them and writes DVC's hash of the
    folder, each of which walked and read the whole capture again. Every
    check still runs, on the first walk; for one command, whose capture does
    not change meanwhile."""
    global _ONCE
    saved, _ONCE = _ONCE, {}
    try:
        yield
    finally:
        _ONCE = saved


def tree(folder: str | Path, limits: Limits = LIMITS) -> tuple[list[Path], list[Path]]:
    """(sub-folders, regular files) under `folder`, sorted, after checking
    that the tree holds only regular files and folders, within the limits."""
    if _ONCE is None:
        return _tree(Path(folder), limits)
    key = ("tree", Path(folder), limits)
    if key not in _ONCE:
        _ONCE[key] = _tree(Path(folder), limits)
    dirs, files = _ONCE[key]
    return list(dirs), list(files)


def _tree(folder: Path, limits: Limits) -> tuple[list[Path], list[Path]]:
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
    if _ONCE is not None:
        _ONCE[("md5", path, limits)] = hashlib.md5(data).hexdigest()
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
    key = ("md5", Path(path), limits)
    if _ONCE is not None and key in _ONCE:
        return _ONCE[key]
    h = hashlib.md5()
    for chunk in _raw_chunks(Path(path), limits):
        h.update(chunk)
    if _ONCE is not None:
        _ONCE[key] = h.hexdigest()
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


@contextlib.contextmanager
def header_wide_rows(path: str | Path, width: int, lines) -> Iterator[None]:
    """Around a pandas read_csv(index_col=False) of a capture CSV whose header
    has `width` fields: a row with more fields is refused, naming its line.
    Without index_col=False pandas takes rows one field wider than the header
    for an index column and shifts every value; with it, pandas drops the
    extra fields and only warns. `lines()`: the file's text lines, read
    again (on refusal only) to find the first such row."""
    import csv
    import warnings

    from pandas.errors import ParserWarning

    with warnings.catch_warnings():
        warnings.simplefilter("error", ParserWarning)
        try:
            yield
        except ParserWarning:
            expected = f"{width} comma-separated fields, as the header"
            for n, row in enumerate(csv.reader(lines()), 1):
                if len(row) > width:
                    raise InputError(path, f"line {n}", None, expected, f"{len(row)} fields") from None
            raise InputError(path, None, None, expected, "a row with more") from None


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


"""pandera checks of the tables read from capture files, each run once per
table: inside checked_once() they are deferred and run in batches (one
pandera call per schema), a failure still naming its file."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

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

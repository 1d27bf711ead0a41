"""Numbers transcribed from the papers (data/published/<study>.yaml).

Each file holds `study`, `citation`, `seed`, optional `text_tables` (tables of
text kept as printed) and `values`: one record per stated number with its
unit, its qualifier (`relation`) and its location in the paper. `load` checks
every record and raises InputError naming the file, the line of the record,
the field, what was expected and what was found.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pandera.pandas as pa
import yaml

from .claims import RELATIONS
from .errors import InputError

VALUE_COLUMNS = ["id", "device", "quantity", "value", "unit", "relation",
                 "location", "quote", "throughput_gbps", "note", "line"]
REQUIRED_FIELDS = ("id", "device", "quantity", "value", "unit", "relation", "location", "quote")
OPTIONAL_FIELDS = ("throughput_gbps", "note")
UNITS = ("%", "Mbps", "Gbps", "GHz", "MHz", "mAh", "s", "ms", "min", "x", "W", "mW", "J", "nJ/bit")

VALUES_SCHEMA = pa.DataFrameSchema(
    {
        "id": pa.Column(str, unique=True, report_duplicates="exclude_first"),
        "device": pa.Column(str),
        "quantity": pa.Column(str),
        "value": pa.Column(float, pa.Check(lambda s: s.notna() & (s.abs() < 1e12))),
        "unit": pa.Column(str, pa.Check.isin(UNITS)),
        "relation": pa.Column(str, pa.Check.isin(RELATIONS)),
        "location": pa.Column(str, pa.Check.str_length(min_value=1)),
        "quote": pa.Column(str, pa.Check.str_length(min_value=1)),
        "throughput_gbps": pa.Column(float, pa.Check.ge(0), nullable=True),
        "note": pa.Column(str, nullable=True),
        "line": pa.Column(int),
    },
    strict=True,
    ordered=True,
)

# pandera's check names, in the words an error message should use.
_CHECK_WORDS = {"field_uniqueness": "an id no earlier record uses"}

TEXT_TABLE_COLUMNS = ["table", "location", "row", "column", "text"]


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _record_lines(path: Path, text: str) -> list[int]:
    """1-based line of each record in the `values` sequence."""
    root = yaml.compose(text)
    for key, node in root.value:
        if key.value == "values" and isinstance(node, yaml.SequenceNode):
            return [item.start_mark.line + 1 for item in node.value]
    return []


def load(path: str | Path) -> tuple[dict, pd.DataFrame, pd.DataFrame]:
    """Read and check a published-values file.

    Returns (meta, values, text_tables): meta has study, citation and seed;
    values has VALUE_COLUMNS (one row per stated number, `line` is its line in
    the file); text_tables is long-format (TEXT_TABLE_COLUMNS).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(path, f"byte {exc.start}", None, "UTF-8 text", "undecodable bytes") from None
    try:
        doc = yaml.safe_load(text)
        lines = _record_lines(path, text) if isinstance(doc, dict) else []
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else None
        raise InputError(path, where, None, "valid YAML", getattr(exc, "problem", str(exc))) from None
    if not isinstance(doc, dict):
        raise InputError(path, None, None, "a mapping with study, citation, seed and values",
                         type(doc).__name__)
    for key in ("study", "citation", "seed", "values"):
        if key not in doc:
            raise InputError(path, None, key, "a top-level key", "nothing")
    if doc["study"] != path.stem:
        raise InputError(path, None, "study", f"'{path.stem}' (the file's name)", doc["study"])
    records = doc["values"]
    if not isinstance(records, list) or not records:
        raise InputError(path, None, "values", "a non-empty list of records", records)

    rows = []
    for i, rec in enumerate(records):
        line = lines[i] if i < len(lines) else None
        where = f"line {line}, record {i + 1}" + (f" (id={rec.get('id')})" if isinstance(rec, dict) and rec.get("id") else "")
        if not isinstance(rec, dict):
            raise InputError(path, where, None, "a mapping", rec)
        unknown = set(rec) - set(REQUIRED_FIELDS) - set(OPTIONAL_FIELDS)
        if unknown:  # first, as a misspelt field also looks like a missing one
            raise InputError(path, where, sorted(unknown)[0],
                             f"one of {', '.join(REQUIRED_FIELDS + OPTIONAL_FIELDS)}", "an unknown field")
        for field in REQUIRED_FIELDS:
            if rec.get(field) in (None, ""):
                raise InputError(path, where, field, "a value", rec.get(field))
        for field in ("value", "throughput_gbps"):
            if field in rec and not _is_number(rec[field]):
                raise InputError(path, where, field, "a number", rec[field])
        if rec["relation"] not in RELATIONS:
            raise InputError(path, where, "relation", f"one of {' '.join(RELATIONS)}", rec["relation"])
        if rec["unit"] not in UNITS:
            raise InputError(path, where, "unit", f"one of {' '.join(UNITS)}", rec["unit"])
        row = {c: rec.get(c) for c in VALUE_COLUMNS}
        row["line"] = line if line is not None else -1
        rows.append(row)

    values = pd.DataFrame(rows, columns=VALUE_COLUMNS)
    values = values.astype({"value": float, "throughput_gbps": float, "line": int})
    for col in ("id", "device", "quantity", "unit", "relation", "location", "quote"):
        values[col] = values[col].astype(str)
    values["note"] = values["note"].astype(object).where(values["note"].notna(), None)
    try:
        values = VALUES_SCHEMA.validate(values, lazy=True)
    except pa.errors.SchemaErrors as exc:
        case = exc.failure_cases.iloc[0]
        idx = case["index"]
        where = None
        if idx is not None and not pd.isna(idx):
            idx = int(idx)
            where = f"line {values.loc[idx, 'line']}, record {idx + 1} (id={values.loc[idx, 'id']})"
        expected = _CHECK_WORDS.get(str(case["check"]), f"to pass check {case['check']}")
        raise InputError(path, where, case["column"], expected, case["failure_case"]) from None

    meta = {k: doc[k] for k in ("study", "citation", "seed")}
    return meta, values, _text_tables(path, doc.get("text_tables") or {})


def _text_tables(path: Path, tables: dict) -> pd.DataFrame:
    rows = []
    for name, table in tables.items():
        for field in ("location", "columns", "rows"):
            if field not in table:
                raise InputError(path, f"text_tables.{name}", field, "a value", "nothing")
        columns = table["columns"]
        for row_name, cells in table["rows"].items():
            if len(cells) != len(columns):
                raise InputError(path, f"text_tables.{name}.rows.{row_name}", "cells",
                                 f"{len(columns)} cells (one per column)", len(cells))
            rows += [{"table": name, "location": table["location"], "row": str(row_name),
                      "column": str(col), "text": str(cell)} for col, cell in zip(columns, cells)]
    return pd.DataFrame(rows, columns=TEXT_TABLE_COLUMNS)


def ingest(src: str | Path, out_dir: str | Path) -> None:
    """Validate a published file and write values.parquet and
    text_tables.parquet to out_dir; nothing is written if validation fails."""
    meta, values, text_tables = load(src)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    values.assign(study=meta["study"]).to_parquet(out_dir / "values.parquet", index=False)
    text_tables.to_parquet(out_dir / "text_tables.parquet", index=False)


def value_of(values: pd.DataFrame, value_id: str) -> float:
    """The stated number with id `value_id`."""
    hit = values.loc[values["id"] == value_id, "value"]
    if hit.empty:
        raise KeyError(f"no published value with id {value_id!r}")
    return float(hit.iloc[0])

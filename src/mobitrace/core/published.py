"""Numbers transcribed from the papers (data/published/<study>.yaml).

Each file holds `study`, `citation`, `seed`, optional `text_tables` (tables of
text kept as printed) and `values`: one record per stated number with its
unit, its qualifier (`relation`) and its location in the paper. `load` checks
every record and raises InputError naming the file, the line of the record,
the field, what was expected and what was found.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pandas as pd
import pandera.pandas as pa
import yaml

from mobitrace.core.claims import RELATIONS
from mobitrace.core.errors import InputError, plain_check

VALUE_COLUMNS = ["id", "device", "quantity", "value", "unit", "relation",
                 "location", "quote", "throughput_gbps", "note", "line"]
REQUIRED_FIELDS = ("id", "device", "quantity", "value", "unit", "relation", "location", "quote")
OPTIONAL_FIELDS = ("throughput_gbps", "note")
UNITS = ("%", "Mbps", "Gbps", "GHz", "MHz", "mAh", "s", "ms", "min", "x", "W", "mW", "J", "nJ/bit",
         "us", "B", "kB", "MB", "kbps")

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


@functools.lru_cache(maxsize=16)
def _parsed(text: str) -> tuple[object, yaml.Node | None]:
    """(yaml.safe_load(text), yaml.compose(text)) from one parse: `load` and
    `load_stat_tables` each want the document and its lines, and parsed each
    file twice each. Shared between them: read only."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        return (loader.construct_document(node) if node is not None else None), node
    finally:
        loader.dispose()


def _record_lines(root: yaml.Node) -> list[int]:
    """1-based line of each record in the `values` sequence (`root`: the file's composed tree)."""
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
        doc, root = _parsed(text)
        lines = _record_lines(root) if isinstance(doc, dict) else []
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
        expected = _CHECK_WORDS.get(str(case["check"])) or plain_check(case["check"])
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
    ingest_all({src: out_dir})


def ingest_all(pairs: dict) -> None:
    """ingest() of each published file (key) into its folder (value), in one
    process (one pipeline stage for every study): every file is validated
    before any folder is written."""
    loaded = [(Path(out_dir), load(src), load_stat_tables(src)) for src, out_dir in pairs.items()]
    for out_dir, (meta, values, text_tables), stats in loaded:
        out_dir.mkdir(parents=True, exist_ok=True)
        values.assign(study=meta["study"]).to_parquet(out_dir / "values.parquet", index=False)
        text_tables.to_parquet(out_dir / "text_tables.parquet", index=False)
        if not stats.empty:
            stats.to_parquet(out_dir / "stat_tables.parquet", index=False)


def value_of(values: pd.DataFrame, value_id: str) -> float:
    """The stated number with id `value_id`."""
    hit = values.loc[values["id"] == value_id, "value"]
    if hit.empty:
        raise KeyError(f"no published value with id {value_id!r}")
    return float(hit.iloc[0])


class Values:
    """The stated numbers of one paper (values.parquet written by `ingest`):
    `values.value(id)`, and `values.row(id)` for its relation, unit and location."""

    def __init__(self, published_dir: str | Path):
        self.frame = pd.read_parquet(Path(published_dir) / "values.parquet")
        # Position of each id's first row: chapters look values up hundreds of times
        # (robustness recomputes): an index, not a mask over the frame each time.
        self._first = {}
        for position, value_id in enumerate(self.frame["id"]):
            self._first.setdefault(value_id, position)

    def _position(self, value_id: str) -> int:
        if value_id not in self._first:
            raise KeyError(f"no published value with id {value_id!r}")
        return self._first[value_id]

    def value(self, value_id: str) -> float:
        return float(self.frame["value"].iloc[self._position(value_id)])

    def row(self, value_id: str) -> pd.Series:
        return self.frame.iloc[self._position(value_id)]

    __call__ = value


def table_location(stats: pd.DataFrame, table: str) -> str:
    """Where in the paper a table of summary statistics is printed."""
    return str(stats.loc[stats["table"] == table, "location"].iloc[0])


# ---------------------------------------------------------------------------
# Tables of summary statistics (e.g. mean/SD per cell, p-values), kept as the
# printed text so that the precision they were printed with is data.
#
# stat_tables:
#   <name>:
#     location: "§4, first table"      title: ...   quantity: ...   unit: s
#     statistic: mean/sd | mean | sd | p
#     n: 10                             (observations behind each cell)
#     note: ...                         (optional)
#     columns: [{cpu_procs: 0, cross_pct: 0}, ...]   (conditions, one per column)
#     rows: {policy: ["80.8/0.63", ...]}             (one printed cell per column)
#
# A cell "80.8/0.63" gives two numbers (mean, sd); "< 0.0001" a bound
# (relation "<"). `decimals` is the number of digits printed after the point,
# so the rounding interval of a value is value ± 0.5 * 10**-decimals.

STAT_STATISTICS = ("mean/sd", "mean", "sd", "p")
STAT_COLUMNS = ["table", "location", "title", "quantity", "unit", "policy", "column", "cpu_procs",
                "cross_pct", "statistic", "relation", "value", "text", "decimals", "n", "note", "line"]

STAT_SCHEMA = pa.DataFrameSchema(
    {
        "table": pa.Column(str),
        "location": pa.Column(str, pa.Check.str_length(min_value=1)),
        "title": pa.Column(str),
        "quantity": pa.Column(str),
        "unit": pa.Column(str),
        "policy": pa.Column(str),
        "column": pa.Column(int, pa.Check.ge(0)),
        "cpu_procs": pa.Column(int, pa.Check.ge(0)),
        "cross_pct": pa.Column(int, pa.Check.in_range(0, 100)),
        "statistic": pa.Column(str, pa.Check.isin(["mean", "sd", "p"])),
        "relation": pa.Column(str, pa.Check.isin(RELATIONS)),
        "value": pa.Column(float, pa.Check(lambda s: s.notna() & (s >= 0))),
        "text": pa.Column(str),
        "decimals": pa.Column(int, pa.Check.ge(0)),
        "n": pa.Column(int, pa.Check.gt(1)),
        "note": pa.Column(str, nullable=True),
        "line": pa.Column(int),
    },
    strict=True,
    ordered=True,
    unique=["table", "policy", "column", "statistic"],
)


def parse_number(text: str) -> tuple[str, float, int]:
    """Parse a printed number with an optional bound: "0.0031" -> ("=", 0.0031, 4);
    "< 0.0001" -> ("<", 0.0001, 4). Raises ValueError if it is not one."""
    t = str(text).strip()
    relation = "="
    for rel in ("<=", ">=", "<", ">", "~"):
        if t.startswith(rel):
            relation, t = rel, t[len(rel):].strip()
            break
    if not t or not all(c.isdigit() or c == "." for c in t) or t.count(".") > 1 or t == ".":
        raise ValueError(text)
    decimals = len(t.split(".")[1]) if "." in t else 0
    return relation, float(t), decimals


def _stat_lines(root: yaml.Node | None) -> dict:
    """1-based line of each row of each stat table: {(table, row): line} (`root`: the file's composed tree)."""
    out = {}
    for key, node in root.value:
        if key.value != "stat_tables" or not isinstance(node, yaml.MappingNode):
            continue
        for tkey, tnode in node.value:
            for fkey, fnode in getattr(tnode, "value", []):
                if getattr(fkey, "value", None) == "rows" and isinstance(fnode, yaml.MappingNode):
                    for rkey, _ in fnode.value:
                        out[(tkey.value, str(rkey.value))] = rkey.start_mark.line + 1
    return out


def load_stat_tables(path: str | Path) -> pd.DataFrame:
    """Read the `stat_tables` of a published file into long format
    (STAT_COLUMNS: one row per printed number). An empty frame if there are
    none; InputError naming file, line, field, expected and found otherwise."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    doc, root = _parsed(text)
    tables = (doc or {}).get("stat_tables") or {}
    if not isinstance(tables, dict):
        raise InputError(path, None, "stat_tables", "a mapping of table name to table", type(tables).__name__)
    lines = _stat_lines(root)
    rows = []
    for name, table in tables.items():
        where_t = f"stat_tables.{name}"
        if not isinstance(table, dict):
            raise InputError(path, where_t, None, "a mapping", table)
        for field in ("location", "title", "quantity", "unit", "statistic", "n", "columns", "rows"):
            if table.get(field) in (None, ""):
                raise InputError(path, where_t, field, "a value", table.get(field))
        statistic = table["statistic"]
        if statistic not in STAT_STATISTICS:
            raise InputError(path, where_t, "statistic", f"one of {' '.join(STAT_STATISTICS)}", statistic)
        n = table["n"]
        if not isinstance(n, int) or isinstance(n, bool) or n < 2:
            raise InputError(path, where_t, "n", "an integer >= 2", n)
        columns = table["columns"]
        if not isinstance(columns, list) or not columns:
            raise InputError(path, where_t, "columns", "a non-empty list of conditions", columns)
        for j, col in enumerate(columns):
            for key in ("cpu_procs", "cross_pct"):
                if not isinstance(col, dict) or not isinstance(col.get(key), int):
                    raise InputError(path, f"{where_t}.columns[{j}]", key, "an integer", 
                                     col.get(key) if isinstance(col, dict) else col)
        if not isinstance(table["rows"], dict):
            raise InputError(path, where_t, "rows", "a mapping of row name to cells", table["rows"])
        parts = statistic.split("/")
        for policy, cells in table["rows"].items():
            line = lines.get((name, str(policy)), -1)
            where = f"line {line}, {where_t}.rows.{policy}"
            if not isinstance(cells, list) or len(cells) != len(columns):
                raise InputError(path, where, "cells", f"{len(columns)} cells (one per column)",
                                 len(cells) if isinstance(cells, list) else cells)
            for j, cell in enumerate(cells):
                pieces = str(cell).split("/")
                if len(pieces) != len(parts):
                    raise InputError(path, f"{where}, cell {j + 1}", "text",
                                     f"'{statistic}' ({len(parts)} number(s) separated by '/')", cell)
                for stat, piece in zip(parts, pieces):
                    try:
                        relation, value, decimals = parse_number(piece)
                    except ValueError:
                        raise InputError(path, f"{where}, cell {j + 1}", stat,
                                         "a number, optionally after < > <= >= ~", piece) from None
                    if stat == "p" and value > 1:
                        raise InputError(path, f"{where}, cell {j + 1}", "p", "a p-value in [0, 1]", piece)
                    rows.append({
                        "table": str(name), "location": str(table["location"]), "title": str(table["title"]),
                        "quantity": str(table["quantity"]), "unit": str(table["unit"]), "policy": str(policy),
                        "column": j, "cpu_procs": columns[j]["cpu_procs"], "cross_pct": columns[j]["cross_pct"],
                        "statistic": stat, "relation": relation, "value": value, "text": piece.strip(),
                        "decimals": decimals, "n": n, "note": table.get("note"), "line": line,
                    })
    frame = pd.DataFrame(rows, columns=STAT_COLUMNS)
    if frame.empty:
        return frame
    frame = frame.astype({"value": float, "column": int, "cpu_procs": int, "cross_pct": int,
                          "decimals": int, "n": int, "line": int})
    frame["note"] = frame["note"].astype(object).where(frame["note"].notna(), None)
    try:
        return STAT_SCHEMA.validate(frame, lazy=True)
    except pa.errors.SchemaErrors as exc:
        case = exc.failure_cases.iloc[0]
        idx = case["index"]
        where = None
        if idx is not None and not pd.isna(idx):
            r = frame.loc[int(idx)]
            where = f"line {r['line']}, stat_tables.{r['table']}.rows.{r['policy']}, cell {r['column'] + 1}"
        raise InputError(path, where, case["column"], plain_check(case['check']),
                         case["failure_case"]) from None


def mean_sd_table(stats: pd.DataFrame, table: str) -> pd.DataFrame:
    """One row per (policy, column) of a mean/sd table: mean, sd, their
    decimals and n, with the conditions."""
    t = stats[stats["table"] == table]
    keys = ["policy", "column", "cpu_procs", "cross_pct", "n"]
    wide = t.pivot_table(index=keys, columns="statistic", values=["value", "decimals"], aggfunc="first")
    wide.columns = [f"{stat}{'' if what == 'value' else '_decimals'}" for what, stat in wide.columns]
    return wide.reset_index()

"""Chapter outputs whose every table is checked against its pandera schema
before it is written (a study's schema module says what each table holds)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pandera.pandas as pa

from mobitrace.book.chapter import ChapterOutputs


class SchemaCheckedOutputs(ChapterOutputs):
    """`ChapterOutputs` that validates each table with `schema_of(name)`
    (e.g. a study's `schema.result_schema`) before writing tables/<name>.csv;
    a table without a schema is a KeyError, a table that fails its schema a
    pandera SchemaError, and nothing is written for it. A frame without
    columns (nothing was computed, e.g. a capture with no completed runs) is
    written as it is."""

    def __init__(self, results_dir: str | Path, stage: str, schema_of: Callable[[str], pa.DataFrameSchema],
                 device_stage: Callable[[str], str] | None = None):
        super().__init__(results_dir, stage, device_stage)
        self.schema_of = schema_of

    def save_table(self, frame: pd.DataFrame, name: str) -> pd.DataFrame:
        schema = self.schema_of(name)
        if len(frame.columns):
            schema.validate(frame)
        return super().save_table(frame, name)

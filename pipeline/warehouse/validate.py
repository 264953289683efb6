"""Validating the core tables with their Pandera models, inside the build's transaction: a table
that breaks its model is never committed. They are small whatever the history's size (the facts
were validated when they were staged, a chunk of snapshots at a time)."""

from __future__ import annotations

import duckdb
import pandas as pd
import pandera.errors as pa_errors
import pandera.pandas as pa

FAILURES_SHOWN = 20


def validate_table(
    con: duckdb.DuckDBPyConnection, model: type[pa.DataFrameModel], table: str
) -> tuple[int, pd.DataFrame | None]:
    """Validate every row of `table`; returns (rows checked, Pandera's failure cases or None)."""
    rows = con.execute(f"SELECT * FROM {table}").df()
    try:
        model.validate(rows, lazy=True)
    except pa_errors.SchemaErrors as errors:
        return len(rows), errors.failure_cases.head(FAILURES_SHOWN)
    return len(rows), None

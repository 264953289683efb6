"""Validating the core tables with their Pandera models, inside the build's transaction: a table
that breaks its model is never committed. Each is first asked of DuckDB where it lives: its
columns and types the model's (sql_checks.columns_match), its checks as SQL and its key held once
(sql_checks.passes). Only a table that fails there, or whose model has a check with no SQL form,
is fetched into pandas, where Pandera's verdict stands and names the failures."""

from __future__ import annotations

import duckdb
import pandas as pd
import pandera.errors as pa_errors
import pandera.pandas as pa

from pipeline.schema.sql_checks import columns_match, passes

FAILURES_SHOWN = 20


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> dict[str, tuple[str, bool]]:
    schema, name = table.split(".")
    rows = con.execute(
        "SELECT column_name, data_type, is_nullable FROM duckdb_columns() "
        "WHERE database_name = current_database() AND schema_name = ? AND table_name = ?",
        [schema, name],
    ).fetchall()
    return {str(column): (str(sql_type), bool(nullable)) for column, sql_type, nullable in rows}


def validate_table(
    con: duckdb.DuckDBPyConnection, model: type[pa.DataFrameModel], table: str
) -> tuple[int, pd.DataFrame | None]:
    """Validate every row of `table`; returns (rows checked, Pandera's failure cases or None)."""
    if columns_match(model, _columns(con, table)) and passes(con, model, table):
        [(rows,)] = con.execute(f"SELECT count(*) FROM {table}").fetchall()
        return int(rows), None
    frame = con.execute(f"SELECT * FROM {table}").df()
    try:
        model.validate(frame, lazy=True)
    except pa_errors.SchemaErrors as errors:
        return len(frame), errors.failure_cases.head(FAILURES_SHOWN)
    return len(frame), None

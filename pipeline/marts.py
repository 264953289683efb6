"""The `mart` schema: analyst-facing views, all defined in `sql/mart/*.sql`."""

from __future__ import annotations

import duckdb

from pipeline.settings import SQL_DIR


def apply_marts(con: duckdb.DuckDBPyConnection) -> list[str]:
    """(Re)create every mart view; returns the files applied, in order."""
    con.execute("CREATE SCHEMA IF NOT EXISTS mart")
    applied = []
    for path in sorted((SQL_DIR / "mart").glob("*.sql")):
        con.execute(path.read_text(encoding="utf-8"))
        applied.append(path.name)
    return applied

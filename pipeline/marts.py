"""The `mart` schema: analyst-facing views, all defined in `sql/mart/*.sql`."""

from __future__ import annotations

import duckdb

from pipeline.settings import SQL_DIR


def apply_marts(con: duckdb.DuckDBPyConnection) -> list[str]:
    """(Re)create every mart view and table; returns the files applied, in order. The schema is
    dropped first: everything in it is derived, and an object that changed kind (a view that
    became a table) could not be replaced in place."""
    con.execute("DROP SCHEMA IF EXISTS mart CASCADE")
    con.execute("CREATE SCHEMA mart")
    applied = []
    for path in sorted((SQL_DIR / "mart").glob("*.sql")):
        con.execute(path.read_text(encoding="utf-8"))
        applied.append(path.name)
    return applied

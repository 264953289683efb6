"""The `mart` schema: analyst-facing views and the two tables each build computes, all defined
in `sql/mart/*.sql`; and the `history` tables they read, which are never dropped
(`sql/history/`). The core build applies them in its own transaction (pipeline/warehouse/core.py),
so a reader sees the core and the mart of one build."""

from __future__ import annotations

import duckdb

from pipeline.schema.mart import MART_VIEWS
from pipeline.support.duck import quote_literal
from pipeline.support.settings import SQL_DIR
from pipeline.warehouse.sqlfiles import run_sql_file

HISTORY_SQL = SQL_DIR / "history" / "00_tables.sql"
MART_SQL = SQL_DIR / "mart"


def ensure_history(con: duckdb.DuckDBPyConnection) -> None:
    """Create schema `history` and its tables if missing; never drops a row."""
    con.execute(HISTORY_SQL.read_text(encoding="utf-8"))


def apply_marts(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Create the mart's macros and views and compute its tables; returns the files applied, in
    order. Each object's description (pipeline/schema/mart.py) is its comment."""
    ensure_history(con)  # mart.figure_history reads the release history
    con.execute("CREATE SCHEMA IF NOT EXISTS mart")
    applied = []
    for path in sorted(MART_SQL.glob("*.sql")):
        run_sql_file(con, path)
        applied.append(path.name)
    kinds = dict(
        con.execute(
            "SELECT view_name, 'VIEW' FROM duckdb_views() WHERE schema_name = 'mart' "
            "AND database_name = current_database() UNION ALL "
            "SELECT table_name, 'TABLE' FROM duckdb_tables() WHERE schema_name = 'mart' "
            "AND database_name = current_database()"
        ).fetchall()
    )
    for name, view in MART_VIEWS.items():
        if name in kinds:
            con.execute(f"COMMENT ON {kinds[name]} mart.{name} IS {quote_literal(view.summary)}")
    return applied

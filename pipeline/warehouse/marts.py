"""The `mart` schema: analyst-facing views and the tables each build computes (those read more
than once a build: by the exports, the Parquet and other views), all defined in
`sql/mart/*.sql`; and the `history` tables they read, which are never dropped (`sql/history/`).
The core build applies them in its own transaction (pipeline/warehouse/core.py), so a reader sees
the core and the mart of one build."""

from __future__ import annotations

import re
from functools import lru_cache

import duckdb

from pipeline.schema.mart import MART_VIEWS
from pipeline.support.duck import quote_literal, table_names
from pipeline.support.settings import SQL_DIR
from pipeline.warehouse.sqlfiles import run_sql_file

HISTORY_SQL = SQL_DIR / "history" / "00_tables.sql"
MART_SQL = SQL_DIR / "mart"
_CREATED = re.compile(r"^CREATE OR REPLACE (VIEW|TABLE) mart\.(\w+)", re.MULTILINE)


Described = frozenset[tuple[str, str, str, str | None]]


def _described(con: duckdb.DuckDBPyConnection) -> Described:
    """Schema `history` of the connection's database: (table, column, type, comment), the
    table's own comment under column ''."""
    rows = con.execute(
        "SELECT table_name, '', '', comment FROM duckdb_tables() "
        "WHERE schema_name = 'history' AND database_name = current_database() UNION ALL "
        "SELECT table_name, column_name, data_type, comment FROM duckdb_columns() "
        "WHERE schema_name = 'history' AND database_name = current_database()"
    ).fetchall()
    return frozenset((str(t), str(c), str(d), k) for t, c, d, k in rows)


@lru_cache(maxsize=1)
def _history_as_written() -> Described:
    """What sql/history/ defines, applied to an empty in-memory database."""
    with duckdb.connect() as scratch:
        scratch.execute(HISTORY_SQL.read_text(encoding="utf-8"))
        return _described(scratch)


def ensure_history(con: duckdb.DuckDBPyConnection) -> None:
    """Create schema `history` and its tables if missing, and their comments where they differ
    from sql/history/; never drops a row. Run only when something differs: in a lake each
    COMMENT is a catalog change, and the file's forty of them cost seconds per build."""
    if _described(con) != _history_as_written():
        con.execute(HISTORY_SQL.read_text(encoding="utf-8"))


def _kinds(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """Each view and table of the connection's mart: VIEW or TABLE, by name."""
    views = con.execute(
        "SELECT view_name FROM duckdb_views() WHERE schema_name = 'mart' "
        "AND database_name = current_database() AND NOT internal"
    ).fetchall()
    return {str(name): "VIEW" for (name,) in views} | dict.fromkeys(
        table_names(con, "mart"), "TABLE"
    )


def _kinds_written() -> dict[str, str]:
    """What sql/mart/ creates each view and table as, by name."""
    text = "\n".join(p.read_text(encoding="utf-8") for p in sorted(MART_SQL.glob("*.sql")))
    return {name: kind.upper() for kind, name in _CREATED.findall(text)}


def apply_marts(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Create the mart's macros and views and compute its tables; returns the files applied, in
    order. Each object's description (pipeline/schema/mart.py) is its comment."""
    ensure_history(con)  # mart.figure_history reads the release history
    con.execute("CREATE SCHEMA IF NOT EXISTS mart")
    # a view the files now make a table (or the other way round) goes first: CREATE OR REPLACE
    # does not replace an object of another kind
    written = _kinds_written()
    for name, kind in _kinds(con).items():
        if written.get(name, kind) != kind:
            con.execute(f"DROP {kind} mart.{name}")
    applied = []
    for path in sorted(MART_SQL.glob("*.sql")):
        run_sql_file(con, path)
        applied.append(path.name)
    kinds = _kinds(con)
    for name, view in MART_VIEWS.items():
        if name in kinds:
            con.execute(f"COMMENT ON {kinds[name]} mart.{name} IS {quote_literal(view.summary)}")
    return applied

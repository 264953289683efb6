"""The `mart` schema: analyst-facing views, all defined in `sql/mart/*.sql`; and the `history`
tables they read, which are never dropped (`sql/history/`)."""

from __future__ import annotations

import hashlib
import pathlib

import duckdb

from pipeline.support.settings import SQL_DIR
from pipeline.warehouse.comments import inherit_comments
from pipeline.warehouse.connection import table_exists

# Relations that pass another's columns through unchanged, in dependency order. A column without
# a comment of its own takes the comment of the same column upstream, so the descriptions of
# core.observations (its Pandera model) are written once, not copied into every view.
PASS_THROUGH = (
    ("mart.published_observations", "core.observations"),
    ("mart.observations_as_of", "core.observations"),
    ("mart.current_observations_afresh", "core.observations"),
    ("mart.current_figures", "mart.observations_as_of"),
    ("mart.provider_headline", "mart.current_figures"),
    ("mart.endpoint_stats", "mart.observations_as_of"),
    ("mart.model_figures", "core.model_figures"),
)


HISTORY_SQL = SQL_DIR / "history" / "00_tables.sql"
MART_SQL = SQL_DIR / "mart"
# Files that compute rows from this build's tables: run by every build. The others only define
# views and macros, which stay as they are until their definition changes.
DATA_SUFFIX = "_table.sql"
# Where the definition the views were created from is kept (staging is not in the dictionary).
DEFINITION = "staging.mart_definition"


def ensure_history(con: duckdb.DuckDBPyConnection) -> None:
    """Create schema `history` and its tables if missing; never drops a row. A release_figures
    table of an older build (keyed by endpoint, metric and scope alone, before figures carried
    their method) is copied whole into today's shape."""
    _migrate_release_figures(con)
    con.execute(HISTORY_SQL.read_text(encoding="utf-8"))


def _migrate_release_figures(con: duckdb.DuckDBPyConnection) -> None:
    columns = {
        row[0]
        for row in con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE schema_name = 'history' "
            "AND table_name = 'release_figures' AND database_name = current_database()"
        ).fetchall()
    }
    if not columns or "method" in columns:
        return
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute("ALTER TABLE history.release_figures RENAME TO release_figures_before_methods")
        con.execute(HISTORY_SQL.read_text(encoding="utf-8"))  # today's table, empty
        con.execute(
            "INSERT INTO history.release_figures BY NAME "
            "SELECT * FROM history.release_figures_before_methods"
        )
        con.execute("DROP TABLE history.release_figures_before_methods")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def apply_marts(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Bring the mart schema up to date; returns the files applied, in order. The mart table
    (`*_table.sql`) is computed again by every build. The views and macros are created again
    only when their definition changed (see `_definition`): creating them took most of a build's
    `sql` stage, at every poll. Then the schema is dropped first: everything in it is derived,
    and an object that changed kind (a view that became a table) could not be replaced in place.
    """
    ensure_history(con)  # mart.figure_history reads the release history
    files = sorted(MART_SQL.glob("*.sql"))
    redefine = _stored_definition(con) != _definition(con, files)
    if redefine:
        con.execute("DROP SCHEMA IF EXISTS mart CASCADE")
        con.execute("CREATE SCHEMA mart")
    applied = []
    for path in files:
        if redefine or path.name.endswith(DATA_SUFFIX):
            con.execute(path.read_text(encoding="utf-8"))
            applied.append(path.name)
    tables = {f"mart.{name}" for name, kind in _mart_objects(con) if kind == "table"}
    for relation, upstream in PASS_THROUGH:
        if redefine or relation in tables:  # a table replaced lost what it inherited
            inherit_comments(con, relation, upstream)
    if redefine:
        con.execute("CREATE SCHEMA IF NOT EXISTS staging")
        con.execute(f"CREATE OR REPLACE TABLE {DEFINITION} (digest VARCHAR NOT NULL)")
        con.execute(f"INSERT INTO {DEFINITION} VALUES (?)", [_definition(con, files)])
    return applied


def _mart_objects(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    return con.execute(
        """
        SELECT view_name, 'view' FROM duckdb_views()
        WHERE schema_name = 'mart' AND database_name = current_database()
        UNION ALL SELECT table_name, 'table' FROM duckdb_tables()
        WHERE schema_name = 'mart' AND database_name = current_database()
        UNION ALL SELECT DISTINCT function_name, 'macro' FROM duckdb_functions()
        WHERE schema_name = 'mart' AND database_name = current_database()
        ORDER BY 1, 2
        """
    ).fetchall()


def _definition(con: duckdb.DuckDBPyConnection, files: list[pathlib.Path]) -> str:
    """Digest of what the mart objects are created from: the mart and core SQL (core's macros),
    DuckDB's version, the columns, types and comments of the core and history tables (the views
    bind to them and inherit their comments), and the mart objects there are (one dropped by
    hand is created again)."""
    digest = hashlib.sha256(duckdb.__version__.encode())
    for path in [*files, *sorted((SQL_DIR / "core").glob("*.sql"))]:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    columns = con.execute(
        """
        SELECT schema_name, table_name, column_name, data_type, coalesce(comment, '')
        FROM duckdb_columns()
        WHERE schema_name IN ('core', 'history') AND database_name = current_database()
        ORDER BY ALL
        """
    ).fetchall()
    for row in [*columns, *_mart_objects(con)]:
        digest.update(repr(row).encode())
    return digest.hexdigest()


def _stored_definition(con: duckdb.DuckDBPyConnection) -> str | None:
    if not table_exists(con, DEFINITION):
        return None
    row = con.execute(f"SELECT digest FROM {DEFINITION}").fetchone()
    return row[0] if row else None

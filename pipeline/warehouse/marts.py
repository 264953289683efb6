"""The `mart` schema: analyst-facing views, all defined in `sql/mart/*.sql`; and the `history`
tables they read, which are never dropped (`sql/history/`)."""

from __future__ import annotations

import duckdb

from pipeline.support.settings import SQL_DIR
from pipeline.warehouse.comments import inherit_comments

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
    """(Re)create every mart view and table; returns the files applied, in order. The schema is
    dropped first: everything in it is derived, and an object that changed kind (a view that
    became a table) could not be replaced in place."""
    ensure_history(con)  # mart.figure_history reads the release history
    con.execute("DROP SCHEMA IF EXISTS mart CASCADE")
    con.execute("CREATE SCHEMA mart")
    applied = []
    for path in sorted((SQL_DIR / "mart").glob("*.sql")):
        con.execute(path.read_text(encoding="utf-8"))
        applied.append(path.name)
    for relation, upstream in PASS_THROUGH:
        inherit_comments(con, relation, upstream)
    return applied

"""Every table the build keeps in the lake has the catalog statistics DuckDB's planner asks for.

DuckLake records a table's statistics with its first rows. For a table that never held one it
finds none, caches nothing, and asks the catalog again for every column each statement reads
(duckdb/ducklake#1313, fixed after the 1.5.5 extension pinned here). The staged tables of sources
a deployment does not read stay empty, and the figures' SQL reads them all: in a 4-day poll
that was 2.3 s of the core step's 5.2 s, 1.2 s of it planning one statement. A row inserted and
deleted in one transaction leaves the table empty and its statistics recorded. Remove this
module once the pinned DuckLake has the fix.
"""

from __future__ import annotations

import duckdb

from pipeline.support.duck import transaction
from pipeline.warehouse.lake import LAKE_ALIAS

_METADATA = f"__ducklake_metadata_{LAKE_ALIAS}"  # the catalog database DuckLake attaches
_ZERO = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "FLOAT", "DOUBLE", "DECIMAL")


def _value(sql_type: str, nullable: bool) -> str | None:
    """A literal the column accepts, or None for a type this module has none for."""
    if nullable:
        return f"NULL::{sql_type}"
    if sql_type == "VARCHAR":
        return "''"
    if sql_type == "BOOLEAN":
        return "false"
    if sql_type.startswith(_ZERO):
        return "0"
    if sql_type in ("DATE", "TIMESTAMP", "TIMESTAMP WITH TIME ZONE"):
        return f"'1970-01-01'::{sql_type}"
    if sql_type.endswith("[]"):
        return f"[]::{sql_type}"
    return None


def _placeholder(con: duckdb.DuckDBPyConnection, schema: str, table: str) -> str | None:
    """A row of the table's columns in order, or None when a column has no literal here."""
    columns = con.execute(
        "SELECT data_type, is_nullable FROM duckdb_columns() WHERE database_name = ? "
        "AND schema_name = ? AND table_name = ? ORDER BY column_index",
        [LAKE_ALIAS, schema, table],
    ).fetchall()
    values = [_value(str(sql_type), bool(nullable)) for sql_type, nullable in columns]
    if not values or None in values:
        return None
    return ", ".join(v for v in values if v is not None)


def without_statistics(con: duckdb.DuckDBPyConnection, schemas: tuple[str, ...]) -> list[str]:
    """The tables of these schemas of the lake (`schema.table`) with no catalog statistics, as
    the last commit left them; none in a session without the lake (a test's DuckDB file) or one
    that works in another database (an --as-of build's own, which leaves the lake as it is)."""
    attached = con.execute(
        "SELECT type, current_database() FROM duckdb_databases() WHERE database_name = ?",
        [LAKE_ALIAS],
    ).fetchall()
    if attached != [("ducklake", LAKE_ALIAS)]:
        return []
    rows = con.execute(
        f"""
        SELECT s.schema_name || '.' || t.table_name
        FROM {_METADATA}.ducklake_table AS t
        JOIN {_METADATA}.ducklake_schema AS s
          ON s.schema_id = t.schema_id AND s.end_snapshot IS NULL
        WHERE t.end_snapshot IS NULL AND s.schema_name IN (SELECT unnest($schemas))
          AND t.table_id NOT IN (SELECT table_id FROM {_METADATA}.ducklake_table_stats)
        ORDER BY 1
        """,
        {"schemas": list(schemas)},
    ).fetchall()
    return [str(name) for (name,) in rows]


def record_statistics(con: duckdb.DuckDBPyConnection, schemas: tuple[str, ...]) -> list[str]:
    """Give every empty table of these schemas that has no statistics its statistics, in one
    commit, leaving it empty; returns the tables done. A table with rows is never touched."""
    missing = without_statistics(con, schemas)
    done = []
    if not missing:
        return done
    with transaction(con):
        for name in missing:
            schema, table = name.split(".")
            row = _placeholder(con, schema, table)
            qualified = f'"{LAKE_ALIAS}"."{schema}"."{table}"'
            [(rows,)] = con.execute(f"SELECT count(*) FROM {qualified}").fetchall()
            if row is None or rows:
                continue
            con.execute(f"INSERT INTO {qualified} VALUES ({row})")
            con.execute(f"DELETE FROM {qualified}")  # the one row just inserted
            done.append(name)
    return done

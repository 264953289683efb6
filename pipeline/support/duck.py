"""DuckDB helpers every layer uses: a table readable under a name for a while, a block of
statements as one transaction, a string as an SQL literal, the tables of a schema."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import duckdb


def quote_literal(text: str) -> str:
    """`text` as an SQL string literal (for statements that take no parameters: ATTACH,
    COMMENT ON, COPY TO)."""
    return "'" + text.replace("'", "''") + "'"


def table_names(
    con: duckdb.DuckDBPyConnection, schema: str, database: str | None = None
) -> set[str]:
    """The tables of `schema` in `database` (the session's current one by default): the
    relations with columns, less the views. Not from duckdb_tables(), which reads every table's
    storage statistics whatever is asked (duckdb/duckdb#25528), in a lake from the catalog: 0.14-
    0.23 s a call at 50 tables while some had no statistics (warehouse/table_statistics.py)."""
    where = "schema_name = $schema AND database_name = " + (
        "$database" if database else "current_database()"
    )
    rows = con.execute(
        f"SELECT table_name FROM duckdb_columns() WHERE {where} "
        f"EXCEPT SELECT view_name FROM duckdb_views() WHERE {where}",
        {"schema": schema, **({"database": database} if database else {})},
    ).fetchall()
    return {str(name) for (name,) in rows}


@contextmanager
def registered(con: duckdb.DuckDBPyConnection, name: str, table: Any) -> Iterator[str]:
    """`table` (Arrow or pandas) readable as the view `name` while the block runs, and
    unregistered after it, also when it fails."""
    con.register(name, table)
    try:
        yield name
    finally:
        con.unregister(name)


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """The block's statements as one transaction: committed when it ends, rolled back when it
    fails. In a lake every statement outside a transaction is a commit (a snapshot) of its own."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")

"""Opening the DuckDB warehouse the same way everywhere."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

# DuckDB takes 80% of RAM by default; a build shares the machine, so it gets a fixed budget and
# spills sorts and joins to disk beyond it (SPEEDBOOK_DUCKDB_MEMORY overrides, e.g. "4GB").
MEMORY_ENV = "SPEEDBOOK_DUCKDB_MEMORY"
MEMORY_LIMIT = os.environ.get(MEMORY_ENV, "1GB")
WAL_SUFFIX = ".wal"  # DuckDB's write-ahead log beside a database file: <file>.wal


def connect(path: Path, *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    if not read_only:
        path.parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(path), read_only=read_only, config={"memory_limit": MEMORY_LIMIT})
    return configured(con)


def configured(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """A connection (or a cursor: a session of its own) set as every one of the build's is."""
    con.execute("SET TimeZone = 'UTC'")
    con.execute("SET enable_progress_bar = false")  # builds report their own progress
    return con


@contextmanager
def registered(con: duckdb.DuckDBPyConnection, name: str, table: Any) -> Iterator[str]:
    """`table` (Arrow or pandas) readable as the view `name` while the block runs, and
    unregistered after it, also when it fails."""
    # DuckDB 2 refuses to register beside a result left unfetched, which a query would end
    # anyway: it is ended (DuckDB 1 has no such state, nor the method)
    complete = getattr(con, "complete", None)
    if complete is not None:
        complete()
    con.register(name, table)
    try:
        yield name
    finally:
        con.unregister(name)


def wal_of(path: Path) -> Path:
    """DuckDB's write-ahead log beside the database file `path`."""
    return path.with_name(path.name + WAL_SUFFIX)


def drop_checkpointed_wal(path: Path) -> None:
    """Remove the empty log a CHECKPOINT leaves beside `path`; one with content means the
    checkpoint did not fold it into the file, and the file must not be committed."""
    wal = wal_of(path)
    if wal.exists() and wal.stat().st_size:
        raise RuntimeError(f"{path} still has a write-ahead log after CHECKPOINT")
    wal.unlink(missing_ok=True)


def quote_literal(text: str) -> str:
    """`text` as an SQL string literal (for the statements that take no parameters: ATTACH,
    COMMENT ON, COPY TO)."""
    return "'" + text.replace("'", "''") + "'"


def table_exists(con: duckdb.DuckDBPyConnection, qualified: str) -> bool:
    """Whether `schema.table` is a table of this database."""
    schema, table = qualified.split(".")
    return table in {name for name, _comment in catalog_objects(con, schema, "table")}


def catalog_objects(
    con: duckdb.DuckDBPyConnection, schema: str, kind: str
) -> list[tuple[str, str]]:
    """(name, comment) of every table or view (`kind`) of a schema in this database, by name."""
    catalog, name = (
        ("duckdb_views()", "view_name") if kind == "view" else ("duckdb_tables()", "table_name")
    )
    return con.execute(
        f"SELECT {name}, coalesce(comment, '') FROM {catalog} "
        "WHERE schema_name = ? AND database_name = current_database() AND NOT internal "
        f"ORDER BY {name}",
        [schema],
    ).fetchall()

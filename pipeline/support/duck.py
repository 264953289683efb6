"""DuckDB helpers every layer uses: a table readable under a name for a while, a block of
statements as one transaction, a string as an SQL literal."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import duckdb


def quote_literal(text: str) -> str:
    """`text` as an SQL string literal (for statements that take no parameters: ATTACH,
    COMMENT ON, COPY TO)."""
    return "'" + text.replace("'", "''") + "'"


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

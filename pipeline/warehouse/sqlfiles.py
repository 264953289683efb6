"""Running the SQL files of `sql/`: an error names the file it came from."""

from __future__ import annotations

from pathlib import Path

import duckdb


class SqlFileError(RuntimeError):
    """A statement of a file under sql/ failed; the message names the file."""


def run_sql_file(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    try:
        con.execute(path.read_text(encoding="utf-8"))
    except duckdb.Error as error:
        raise SqlFileError(f"sql/{path.parent.name}/{path.name}: {error}") from None

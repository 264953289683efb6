"""Column comments: written once, where a column is defined, and inherited downstream."""

from __future__ import annotations

import duckdb


def inherit_comments(con: duckdb.DuckDBPyConnection, relation: str, upstream: str) -> None:
    """Give each column of `relation` without a comment the comment of its namesake upstream."""
    rows = con.execute(
        """
        SELECT c.column_name, u.comment
        FROM duckdb_columns() AS c
        JOIN duckdb_columns() AS u USING (column_name)
        WHERE c.schema_name || '.' || c.table_name = ? AND coalesce(c.comment, '') = ''
          AND u.schema_name || '.' || u.table_name = ? AND coalesce(u.comment, '') <> ''
        ORDER BY c.column_index
        """,
        [relation, upstream],
    ).fetchall()
    for column, comment in rows:
        text = comment.replace("'", "''")
        con.execute(f"COMMENT ON COLUMN {relation}.{column} IS '{text}'")

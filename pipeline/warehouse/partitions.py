"""Row count and content hash of each UTC day of the tables that grow with the history, kept by
each build instead of computed from the whole history at every release.

The Parquet copy of a release (pipeline/release/parquet.py) writes the days whose rows changed
and hard-links the others from the release before. Telling them apart took a hash of every row
of the history: at a quarter of half-hourly polls, 88 million rows and tens of seconds at every
poll. `staging.partition_days` keeps the figures instead. A build that only added rows to a
table computes again the days its new snapshots' rows fall on; a build that removed any row of
it (a snapshot no longer usable, read again, or every observation derived again) computes the
table's days afresh, as does a warehouse without the table. Either way each figure is the same
`count(*)` and `sum(hash(row))` over the day's rows.
"""

from __future__ import annotations

from collections.abc import Collection

import duckdb

from pipeline.schema.core import PER_SNAPSHOT
from pipeline.warehouse.connection import table_exists

# the tables that grow with the history, and the column they are partitioned on
PARTITIONED = dict.fromkeys(PER_SNAPSHOT, "observed_at")
PRINTS = "staging.partition_days"
_CREATE = (
    f"CREATE TABLE IF NOT EXISTS {PRINTS} "
    "(table_name VARCHAR NOT NULL, day VARCHAR, row_count BIGINT NOT NULL, content HUGEINT)"
)


def utc_day(column: str) -> str:
    """SQL for the UTC day of a timestamp column, as 'YYYY-MM-DD'."""
    # timezone('UTC', ...) makes the day independent of the session's time zone
    return f"strftime(timezone('UTC', {column}), '%Y-%m-%d')"


def _prints_sql(table: str, where: str = "TRUE") -> str:
    column = PARTITIONED[table]
    return (
        f"SELECT {utc_day(column)} AS day, count(*) AS row_count, sum(hash(t)) AS content "
        f"FROM core.{table} AS t WHERE {where} GROUP BY day"
    )


def refresh_partitions(
    con: duckdb.DuckDBPyConnection, added: str | None, removed_from: Collection[str]
) -> None:
    """Bring PRINTS up to date with the core tables. `added` names a relation of the snapshot
    ids whose rows were added since PRINTS was last brought up to date (None: anything may have
    changed); `removed_from` the tables that lost rows since. Runs inside the caller's
    transaction, after the core tables are loaded."""
    fresh = not table_exists(con, PRINTS)
    con.execute(_CREATE)
    for table, column in PARTITIONED.items():
        days = (
            None
            if fresh or added is None or table in removed_from
            else [
                row[0]
                for row in con.execute(
                    f"SELECT DISTINCT {utc_day(column)} FROM core.{table} "
                    f"SEMI JOIN {added} USING (snapshot_id)"
                ).fetchall()
            ]
        )
        if days is None or None in days:  # a row without a time has no day: the check says so
            con.execute(f"DELETE FROM {PRINTS} WHERE table_name = ?", [table])
            con.execute(f"INSERT INTO {PRINTS} SELECT ?, * FROM ({_prints_sql(table)})", [table])
            continue
        if not days:
            continue
        # a range of the column, not the days' text, so the scan skips the other days' row
        # groups by their min and max (rows arrive in time order)
        where = (
            f"{column} >= timezone('UTC', ?::TIMESTAMP) "
            f"AND {column} < timezone('UTC', ?::TIMESTAMP) + INTERVAL 24 HOUR "
            f"AND {utc_day(column)} IN (SELECT unnest(?::VARCHAR[]))"
        )
        con.execute(
            f"DELETE FROM {PRINTS} WHERE table_name = ? AND day IN (SELECT unnest(?::VARCHAR[]))",
            [table, days],
        )
        con.execute(
            f"INSERT INTO {PRINTS} SELECT ?, * FROM ({_prints_sql(table, where)})",
            [table, min(days), max(days), days],
        )


def partition_days(con: duckdb.DuckDBPyConnection, table: str) -> dict[str | None, list[int]]:
    """{day: [rows, content hash]} of a partitioned core table: as the last build kept them, or
    computed from its rows in a warehouse without them (one made by hand)."""
    sql = (
        f"SELECT day, row_count, content FROM {PRINTS} WHERE table_name = '{table}'"
        if table_exists(con, PRINTS)
        else _prints_sql(table)
    )
    return {
        day: [int(rows), int(content)]
        for day, rows, content in con.execute(f"{sql} ORDER BY day").fetchall()
    }

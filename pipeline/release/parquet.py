"""The warehouse as Parquet, for engines beyond one machine (Spark, Trino, BigQuery, DuckDB).

Layout under the folder given:

    core/<table>.parquet                                    every core table, all history
    core/observations/observed_month=YYYY-MM/data_0.parquet observations, Hive-partitioned by the
                                                            UTC month of observed_at
    mart/<view>.parquet                                     every mart view, as of the build

Rows are sorted on every column, so the same warehouse gives the same files, byte for byte (for
the same DuckDB version, which the files name in their `created_by`). Timestamps are written as
UTC instants.
"""

from __future__ import annotations

import re
from pathlib import Path

import duckdb

from pipeline.schema.ddl import quote_literal

PARTITIONED = {"observations": "observed_at"}
PARTITION_COLUMN = "observed_month"
_MONTH = re.compile(r"^\d{4}-\d{2}$")
_OPTIONS = "(FORMAT parquet, COMPRESSION zstd)"


def _names(con: duckdb.DuckDBPyConnection, kind: str, schema: str) -> list[str]:
    catalog = "duckdb_tables()" if kind == "table" else "duckdb_views()"
    name = "table_name" if kind == "table" else "view_name"
    rows = con.execute(
        f"SELECT {name} FROM {catalog} "
        "WHERE schema_name = ? AND database_name = current_database() AND NOT internal "
        f"ORDER BY {name}",
        [schema],
    ).fetchall()
    return [row[0] for row in rows]


def _copy(con: duckdb.DuckDBPyConnection, query: str, path: Path) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    # COPY returns the rows written; fetching it all leaves the connection with no open result
    rows = con.execute(
        f"COPY ({query} ORDER BY ALL) TO {quote_literal(str(path))} {_OPTIONS}"
    ).fetchall()
    return int(rows[0][0])


def _month(column: str) -> str:
    # timezone('UTC', ...) makes the month independent of the session's time zone
    return f"strftime(timezone('UTC', {column}), '%Y-%m')"


def write_parquet(con: duckdb.DuckDBPyConnection, target_dir: Path) -> dict[str, int]:
    """Write every core table and mart view of the warehouse `con` is open on as Parquet under
    `target_dir` (which should be empty); return {path relative to target_dir: rows}."""
    target_dir = Path(target_dir)
    written: dict[str, int] = {}
    for table in _names(con, "table", "core"):
        if table in PARTITIONED:
            written |= _write_partitioned(con, table, PARTITIONED[table], target_dir)
            continue
        path = target_dir / "core" / f"{table}.parquet"
        written[path.relative_to(target_dir).as_posix()] = _copy(
            con, f"SELECT * FROM core.{table}", path
        )
    for view in _names(con, "view", "mart"):
        path = target_dir / "mart" / f"{view}.parquet"
        written[path.relative_to(target_dir).as_posix()] = _copy(
            con, f"SELECT * FROM mart.{view}", path
        )
    return dict(sorted(written.items()))


def _write_partitioned(
    con: duckdb.DuckDBPyConnection, table: str, column: str, target_dir: Path
) -> dict[str, int]:
    """One file per month in Hive layout; the partition column lives in the folder name only,
    as Spark and Trino expect."""
    months = [
        row[0]
        for row in con.execute(
            f"SELECT DISTINCT {_month(column)} AS m FROM core.{table} ORDER BY m"
        ).fetchall()
    ]
    written: dict[str, int] = {}
    for month in months:
        if month is None or not _MONTH.match(month):
            raise ValueError(f"core.{table}: cannot partition on {column} value month {month!r}")
        path = target_dir / "core" / table / f"{PARTITION_COLUMN}={month}" / "data_0.parquet"
        query = f"SELECT * FROM core.{table} WHERE {_month(column)} = '{month}'"
        written[path.relative_to(target_dir).as_posix()] = _copy(con, query, path)
    return written

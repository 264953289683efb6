"""The warehouse as Parquet, for engines beyond one machine (Spark, Trino, BigQuery, DuckDB).

Layout under the folder given:

    core/<table>.parquet                                    every core table, all history...
    core/<table>/observed_date=YYYY-MM-DD/data_HH.parquet   ...but those derived per snapshot
                                                            (observations, model figures, both
                                                            offer tables), which grow with it:
                                                            Hive-partitioned by the UTC day of
                                                            observed_at, one file per UTC hour
    mart/<view>.parquet                                     every mart view, as of the build
                                                            (but NOT_EXPORTED: the views that
                                                            restate core.observations)

Rows are sorted (observations by snapshot, endpoint, metric, statistic and id, other tables on
every column), so the same warehouse gives the same files, byte for byte (for the same DuckDB
version, which the files name in their `created_by`). Timestamps are written as UTC instants.

These tables grow by a poll or a day at a time while their older hours stay as they were: an hour
whose rows are unchanged since the release the files are reused from is hard-linked from it
instead of written again, so a release after one more poll writes that poll's hour, not its day
or month (a month of half-hourly polls is 30 million rows). `_partitions.json` beside the day
folders (ignored by Spark, Trino and Hive, which skip names starting with `_`) records each
hour's row count and content hash, which each build keeps (pipeline/warehouse/partitions.py).

A build writes them in a process of its own (`write_parquet_apart`, `python -m
pipeline.release.parquet`), begun when the release's folder is made, while its own process
works out the changelog: DuckDB's writer and the Python of the release share the two cores.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import duckdb

from pipeline.support.apart import Apart, die_with_parent
from pipeline.warehouse.connection import (
    MEMORY_ENV,
    catalog_objects,
    configured,
    connect,
    quote_literal,
)
from pipeline.warehouse.partitions import PARTITIONED, partition_hours, split_hour

PARTITION_COLUMN = "observed_date"
# zstd's level 1 wrote an hour of observations in 106 ms against the default's 118, no larger
COPY_OPTIONS = "(FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1)"
PARTITION_INDEX = "_partitions.json"
# other tables: on every column. The observations of an endpoint's snapshot side by side (their
# id, last, makes the order total): sorted by id alone, an hour at 90 days of polls took 136 ms
# and 1.55 MB, 106 ms and 1.29 MB so.
SORTED_BY = {"observations": "snapshot_id, endpoint_id, metric, statistic, observation_id"}
HOUR_WRITERS = min(4, os.cpu_count() or 1)  # hour files written at once
WHOLE_WRITERS = min(2, os.cpu_count() or 1)  # other files written at once
# mart views that restate the history row for row (core.observations with names or flags, and for
# figure_history also history.release_figures): derivable from the core files, by far the
# largest, and each a scan of the whole history at every release (mart.endpoint_stats and
# mart.published_observations were 12 million of a 7-day poll history's 13 million rows, 80 s).
# current_observations_afresh is core.current_observations computed again.
NOT_EXPORTED = {
    "observations_as_of",
    "observation_pairs",
    "figure_history",
    "published_observations",
    "endpoint_stats",
    "current_observations_afresh",
}


def _names(con: duckdb.DuckDBPyConnection, kind: str, schema: str) -> list[str]:
    return [name for name, _ in catalog_objects(con, schema, kind)]


def _copy(con: duckdb.DuckDBPyConnection, query: str, path: Path, order: str = "ALL") -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    # COPY returns the rows written; fetching it all leaves the connection with no open result
    rows = con.execute(
        f"COPY ({query} ORDER BY {order}) TO {quote_literal(str(path))} {COPY_OPTIONS}"
    ).fetchall()
    return int(rows[0][0])


def write_parquet(
    con: duckdb.DuckDBPyConnection, target_dir: Path, reuse_from: Path | None = None
) -> dict[str, int]:
    """Write every core table and mart view of the warehouse `con` is open on as Parquet under
    `target_dir` (which should be empty); return {path relative to target_dir: rows}.
    `reuse_from`, an earlier release's Parquet folder, lends the hours of the partitioned tables
    that did not change."""
    target_dir = Path(target_dir)
    written: dict[str, int] = {}
    whole: list[tuple[str, Path]] = []  # (query, file) of the tables and views written whole
    for table in _names(con, "table", "core"):
        if table in PARTITIONED:
            written |= _write_partitioned(con, table, PARTITIONED[table], target_dir, reuse_from)
            continue
        whole.append((f"SELECT * FROM core.{table}", target_dir / "core" / f"{table}.parquet"))
    for view in sorted(_names(con, "view", "mart") + _names(con, "table", "mart")):
        if view not in NOT_EXPORTED:
            whole.append((f"SELECT * FROM mart.{view}", target_dir / "mart" / f"{view}.parquet"))
    rows = _side_by_side(con, [(query, path, "ALL") for query, path in whole], WHOLE_WRITERS)
    for (_query, path), count in zip(whole, rows, strict=True):
        written[path.relative_to(target_dir).as_posix()] = count
    return dict(sorted(written.items()))


def _side_by_side(
    con: duckdb.DuckDBPyConnection, copies: list[tuple[str, Path, str]], writers: int
) -> list[int]:
    """COPY each (query, file, order), up to `writers` at a time, each on a cursor of its own (a
    cursor serves one thread), whichever is free taking the next; the rows each wrote, in order.
    A small query runs on one thread, and a Parquet file smaller than a row group is written on
    one: one after the other they leave a core idle."""
    writers = min(writers, len(copies))
    if writers < 2:
        return [_copy(con, query, path, order) for query, path, order in copies]
    cursors = [configured(con.cursor()) for _ in range(writers)]
    rows = [0] * len(copies)
    pending = iter(range(len(copies)))
    lock = threading.Lock()

    def write(cursor: duckdb.DuckDBPyConnection) -> None:
        while True:
            with lock:
                index = next(pending, None)
            if index is None:
                return
            rows[index] = _copy(cursor, *copies[index])

    try:
        with ThreadPoolExecutor(writers) as pool:
            list(pool.map(write, cursors))
    finally:
        for cursor in cursors:
            cursor.close()
    return rows


def _previous_index(folder: Path | None) -> dict[str, list[int]]:
    if folder is None:
        return {}
    try:
        index = json.loads((folder / PARTITION_INDEX).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return index if isinstance(index, dict) else {}  # damaged: every hour is written again


def _link_or_copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except OSError:  # another file system, or links not allowed
        shutil.copyfile(source, target)


def _hour_file(day: str, hh: str) -> Path:
    """Where an hour's rows go: its day's folder (the partition), a file named by the hour."""
    return Path(f"{PARTITION_COLUMN}={day}") / f"data_{hh}.parquet"


def _write_hours(
    con: duckdb.DuckDBPyConnection,
    table: str,
    column: str,
    hours: list[tuple[str, str]],
    folder: Path,
) -> None:
    """One sorted file per hour (day, HH), HOUR_WRITERS at a time. The filter is a range of
    `column`, not its hour's text, so the scan skips the row groups of other hours by their min
    and max (rows arrive in time order): a filter on the text read the whole table once per file.
    An hour's file is smaller than a row group, which DuckDB writes on one thread: a full build
    writes thousands, so they are written side by side, each on a cursor of its own."""
    order = SORTED_BY.get(table, "ALL")
    copies: list[tuple[str, Path, str]] = []
    for day, hh in hours:
        start = f"TIMESTAMPTZ '{day} {hh}:00:00+00'"
        query = (
            f"SELECT * FROM core.{table} "
            f"WHERE {column} >= {start} AND {column} < {start} + INTERVAL 1 HOUR"
        )
        copies.append((query, folder / _hour_file(day, hh), order))
    _side_by_side(con, copies, HOUR_WRITERS)


def _write_partitioned(
    con: duckdb.DuckDBPyConnection,
    table: str,
    column: str,
    target_dir: Path,
    reuse_from: Path | None,
) -> dict[str, int]:
    """One folder per day in Hive layout, one file per hour in it; the partition column lives
    in the folder name only, as Spark and Trino expect."""
    hours = partition_hours(con, table)  # kept by the build: pipeline/warehouse/partitions.py
    folder = target_dir / "core" / table
    donor = reuse_from / "core" / table if reuse_from is not None else None
    previous = _previous_index(donor)
    written: dict[str, int] = {}
    changed: list[tuple[str, str]] = []
    for hour, fingerprint in hours.items():
        parts = split_hour(hour)
        if parts is None:
            raise ValueError(f"core.{table}: cannot partition on {column} value hour {hour!r}")
        relative = _hour_file(*parts)
        if donor is not None and previous.get(hour) == fingerprint and (donor / relative).is_file():
            _link_or_copy(donor / relative, folder / relative)
        else:
            changed.append(parts)
        written[(folder / relative).relative_to(target_dir).as_posix()] = fingerprint[0]
    folder.mkdir(parents=True, exist_ok=True)
    if changed:
        _write_hours(con, table, column, changed, folder)
    (folder / PARTITION_INDEX).write_text(json.dumps(hours, sort_keys=True) + "\n", "utf-8")
    return written


# DuckDB's memory in the process that writes the files: an hour or a view at a time, sorted,
# beside the build's own process (which holds the release's objects meanwhile)
APART_MEMORY = "512MB"


def write_parquet_apart(database: Path, target_dir: Path, reuse_from: Path | None) -> Apart:
    """write_parquet() of the warehouse file `database`, opened read-only, in a Python process
    of its own, begun now: `wait()` ends it (OSError with its error when it failed), `stop()`
    kills it. Nothing else may have the file open for writing meanwhile."""
    args = [str(database), str(target_dir), *([str(reuse_from)] if reuse_from else [])]
    return Apart(
        "pipeline.release.parquet",
        args,
        f"writing the Parquet files into {target_dir}",
        env={MEMORY_ENV: os.environ.get(MEMORY_ENV, APART_MEMORY)},
    )


def main(argv: list[str] | None = None) -> int:
    """`python -m pipeline.release.parquet DATABASE TARGET_DIR [REUSE_FROM]`: write_parquet()
    of the warehouse file DATABASE (read-only), printing {path: rows} as JSON."""
    die_with_parent()
    database, target_dir, *reuse = (Path(arg) for arg in (argv or sys.argv[1:]))
    with connect(database, read_only=True) as con:
        written = write_parquet(con, target_dir, reuse[0] if reuse else None)
    print(json.dumps(written))
    return 0


if __name__ == "__main__":
    sys.exit(main())

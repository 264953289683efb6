"""The warehouse as Parquet in every release, for engines beyond one machine (Spark, Trino,
BigQuery, DuckDB) and for people who want the history without the lake.

Layout under the folder given:

    core/<table>.parquet          every core table (entities, endpoints, sources, snapshots, ...)
    mart/<view>.parquet           the mart's views and tables as of the build (not those that
                                  restate the history row by row: HISTORY)
    history/endpoint_figures/<day>.parquet   every figure of every endpoint, snapshot by
                                  snapshot (mart.endpoint_stats: the whole series), one file per
                                  UTC day of `observed_at` (`undated.parquet`: figures without one)
    history/latest_figures.parquet     each endpoint's current figures (mart.current_figures)

Rows are sorted on every column (the history by endpoint, metric, statistic, time), so the same
warehouse gives the same files, byte for byte, for the same DuckDB version (which the files name
in their `created_by`). Timestamps are written as UTC instants.

A day's file records its content (DAY_CONTENT in its key-value metadata: the day's row count and
the sum of its rows' hashes, with the DuckDB version and the columns). A release whose day has
the same content as the previous release's links that file instead of writing it again: a poll
adds figures to one day, so the history written grows with the day, not with the months kept.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import duckdb

from pipeline.schema.core import CORE_TABLES
from pipeline.schema.mart import MART_VIEWS
from pipeline.support.duck import quote_literal
from pipeline.support.progress import report

COPY_OPTIONS = "FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1"
# The mart's relations that restate the history row by row: published once, as history/.
HISTORY = ("observations_as_of", "endpoint_stats", "figure_history", "current_pairs")
DAILY_HISTORY = (
    "endpoint_figures",
    "mart.endpoint_stats",
    "endpoint_id, metric, scope, method, statistic, observed_at, snapshot_id, observation_id",
)
HISTORY_FILES = {"latest_figures": ("mart.current_figures", "ALL")}
UNDATED = "undated"  # the day file of figures without an observed_at
DAY_CONTENT = "speedbook_content"  # the key of a day file's content in its metadata
# the UTC day whatever the session's time zone (the day files' ranges are UTC instants)
_DAY = f"coalesce(strftime(observed_at AT TIME ZONE 'UTC', '%Y-%m-%d'), '{UNDATED}')"


def _copy(
    con: duckdb.DuckDBPyConnection,
    query: str,
    path: Path,
    metadata: dict[str, str] | None = None,
) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    options = COPY_OPTIONS
    if metadata:
        pairs = ", ".join(f"{key}: {quote_literal(value)}" for key, value in metadata.items())
        options += f", KV_METADATA {{{pairs}}}"
    # COPY answers the rows it wrote: the relation is computed once, not counted first
    written = con.execute(f"COPY ({query}) TO {quote_literal(str(path))} ({options})")
    return int(written.fetchone()[0])  # type: ignore[index]


def _whole(con: duckdb.DuckDBPyConnection, relation: str, path: Path, order: str = "ALL") -> int:
    return _copy(con, f"SELECT * FROM {relation} ORDER BY {order}", path)


def _content_of(con: duckdb.DuckDBPyConnection, path: Path) -> str | None:
    """The content a day file records, or None (no such file, not a regular one, unreadable)."""
    if path.is_symlink() or not path.is_file():
        return None
    try:
        found = con.execute(
            "SELECT value::VARCHAR FROM parquet_kv_metadata(?) WHERE key::VARCHAR = ?",
            [str(path), DAY_CONTENT],
        ).fetchall()
    except duckdb.Error:
        return None
    return found[0][0] if len(found) == 1 else None


def _reuse(old: Path, new: Path) -> None:
    """The previous release's file in the new one: a hard link (releases are never written
    again), or a copy where the two are on different file systems."""
    new.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(old, new)
    except OSError:
        shutil.copyfile(old, new)


def write_daily_history(
    con: duckdb.DuckDBPyConnection, folder: Path, previous: Path | None = None
) -> tuple[dict[str, int], int]:
    """history/endpoint_figures/<day>.parquet under `folder`, each day's file linked from
    `previous` (the previous release's Parquet folder) where its content is the same. Returns the
    rows of each file by its path relative to `folder`, and how many files were reused."""
    name, relation, order = DAILY_HISTORY
    columns = con.execute(f"DESCRIBE SELECT * FROM {relation}").fetchall()
    shape = hashlib.sha256(repr((duckdb.__version__, columns)).encode()).hexdigest()
    days = con.execute(
        f"SELECT {_DAY} AS day, count(*), sum(hash(t))::VARCHAR FROM {relation} AS t "
        "GROUP BY day ORDER BY day"
    ).fetchall()
    rows: dict[str, int] = {}
    reused = 0
    for day, count, total in days:
        content = hashlib.sha256(f"{shape}|{count}|{total}".encode()).hexdigest()
        relative = f"history/{name}/{day}.parquet"
        if previous is not None and _content_of(con, previous / relative) == content:
            _reuse(previous / relative, folder / relative)
            rows[relative] = int(count)
            reused += 1
            continue
        if day == UNDATED:
            where = "observed_at IS NULL"
        else:  # a range, which the lake's scan prunes its files with
            start = quote_literal(f"{day} 00:00:00+00") + "::TIMESTAMPTZ"
            where = f"observed_at >= {start} AND observed_at < {start} + INTERVAL 1 DAY"
        query = f"SELECT * FROM {relation} WHERE {where} ORDER BY {order}"
        rows[relative] = _copy(con, query, folder / relative, {DAY_CONTENT: content})
    return rows, reused


def write_parquet(
    con: duckdb.DuckDBPyConnection, folder: Path, previous: Path | None = None
) -> dict[str, int]:
    """Write the layout above under `folder`, the history's days that did not change linked from
    `previous` (the previous release's Parquet folder, when there is one); returns the rows of
    each file, by its path relative to `folder`."""
    rows: dict[str, int] = {}
    for name in CORE_TABLES:
        rows[f"core/{name}.parquet"] = _whole(
            con, f"core.{name}", folder / "core" / f"{name}.parquet"
        )
    for name in MART_VIEWS:
        if name not in HISTORY:
            target = folder / "mart" / f"{name}.parquet"
            rows[f"mart/{name}.parquet"] = _whole(con, f"mart.{name}", target)
    for name, (relation, order) in HISTORY_FILES.items():
        target = folder / "history" / f"{name}.parquet"
        rows[f"history/{name}.parquet"] = _whole(con, relation, target, order)
    daily, reused = write_daily_history(con, folder, previous)
    if previous is not None:
        report(f"history: {len(daily) - reused} day file(s) written, {reused} unchanged linked")
    return rows | daily

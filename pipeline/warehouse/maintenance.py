"""Keeping the lake lean, the lake's own way (DuckLake's maintenance functions): the small
Parquet files polls leave are merged, snapshots older than the retention are expired (but those
releases name, so `speedbook sql --release` keeps working), and the files no snapshot needs any
more are deleted. Facts are never lost by it: every staged row is in the newest snapshot; only
the ability to read the warehouse as an old, unreleased build left it goes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import duckdb

from pipeline.warehouse.lake import LAKE_ALIAS

RETENTION = timedelta(days=30)  # how long a build's snapshot can be read back (time travel)


@dataclass(frozen=True)
class Maintenance:
    files_before: int
    files_after: int
    snapshots_expired: int
    snapshots_kept: int


def _files(con: duckdb.DuckDBPyConnection) -> int:
    row = con.execute(
        f"SELECT count(*) FROM __ducklake_metadata_{LAKE_ALIAS}.ducklake_data_file "
        "WHERE end_snapshot IS NULL"
    ).fetchone()
    return int(row[0]) if row else 0


def released_snapshots(con: duckdb.DuckDBPyConnection) -> set[int]:
    """The lake snapshots releases were built from (history.releases)."""
    try:
        rows = con.execute(
            "SELECT DISTINCT lake_snapshot FROM history.releases WHERE lake_snapshot IS NOT NULL"
        ).fetchall()
    except duckdb.CatalogException:  # no release published yet
        return set()
    return {int(row[0]) for row in rows}


def maintain(
    con: duckdb.DuckDBPyConnection,
    *,
    retention: timedelta = RETENTION,
    now: datetime | None = None,
) -> Maintenance:
    """Merge small files, expire the snapshots older than `retention` that no release names, and
    delete the files nothing needs. Run under the build lock: it rewrites files a build reads."""
    cutoff = (now or datetime.now(UTC)) - retention
    before = _files(con)
    kept = released_snapshots(con)
    newest = con.execute(f"SELECT max(snapshot_id) FROM {LAKE_ALIAS}.snapshots()").fetchone()
    if newest and newest[0] is not None:
        kept.add(int(newest[0]))
    old = [
        int(row[0])
        for row in con.execute(
            f"SELECT snapshot_id FROM {LAKE_ALIAS}.snapshots() WHERE snapshot_time < ? "
            "ORDER BY snapshot_id",
            [cutoff],
        ).fetchall()
        if int(row[0]) not in kept
    ]
    con.execute(f"CALL ducklake_flush_inlined_data('{LAKE_ALIAS}')")
    con.execute(f"CALL ducklake_merge_adjacent_files('{LAKE_ALIAS}')")
    if old:
        con.execute(f"CALL ducklake_expire_snapshots('{LAKE_ALIAS}', versions => ?)", [old])
    con.execute(f"CALL ducklake_cleanup_old_files('{LAKE_ALIAS}', cleanup_all => true)")
    return Maintenance(before, _files(con), len(old), len(kept))

"""Validating warehouse tables with their Pandera models in bounded memory: rows are read and
checked a batch of snapshots at a time, so a year of history never sits in memory at once. A
batch is bounded by rows as well as snapshots: 2,000 half-hourly polls are 36 million rows."""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import duckdb
import pandas as pd
import pandera.errors as pa_errors
import pandera.pandas as pa

BATCH_SNAPSHOTS = 2_000
BATCH_ROWS = 250_000  # unless one snapshot alone has more


def batches(
    con: duckdb.DuckDBPyConnection,
    table: str,
    snapshot_ids: Sequence[str],
    batch: int = BATCH_SNAPSHOTS,
    max_rows: int = BATCH_ROWS,
) -> list[list[str]]:
    """The snapshots in runs of at most `batch` snapshots and `max_rows` rows of `table`, in the
    order given (a snapshot with no rows still belongs to a batch)."""
    counts = dict(
        con.execute(
            f"SELECT snapshot_id, count(*) FROM {table} "
            "WHERE snapshot_id IN (SELECT unnest(?::VARCHAR[])) GROUP BY snapshot_id",
            [list(snapshot_ids)],
        ).fetchall()
    )
    runs: list[list[str]] = []
    current: list[str] = []
    held = 0
    for snapshot_id in snapshot_ids:
        rows = counts.get(snapshot_id, 0)
        if current and (len(current) == batch or held + rows > max_rows):
            runs.append(current)
            current, held = [], 0
        current.append(snapshot_id)
        held += rows
    if current:
        runs.append(current)
    return runs


def _owner(rows: pd.DataFrame, index: object) -> str | None:
    """The snapshot of the row a failure case points at (rows keep their RangeIndex)."""
    if "snapshot_id" not in rows or not isinstance(index, numbers.Real) or pd.isna(index):
        return None
    position = int(index)
    return rows["snapshot_id"].iat[position] if 0 <= position < len(rows) else None


def validate_by_snapshot(
    con: duckdb.DuckDBPyConnection,
    model: type[pa.DataFrameModel],
    table: str,
    snapshot_ids: Sequence[str],
    batch: int = BATCH_SNAPSHOTS,
    limit: int | None = 50,
) -> tuple[int, pd.DataFrame | None]:
    """Validate the rows of `table` that belong to these snapshots; returns (rows checked,
    failure cases or None): Pandera's, at most `limit` of them (None: all), each with the
    `snapshot_id` of its row (null for a failure of a whole column or table). A model's unique
    key must include or hash snapshot_id for batches to see every duplicate; a table-wide key is
    checked in SQL by the caller."""
    checked = 0
    failures: list[pd.DataFrame] = []
    for run in batches(con, table, list(snapshot_ids), batch):
        rows = con.execute(
            f"SELECT * FROM {table} WHERE snapshot_id IN (SELECT unnest(?::VARCHAR[]))", [run]
        ).df()
        checked += len(rows)
        try:
            model.validate(rows, lazy=True)
        except pa_errors.SchemaErrors as errors:
            cases = errors.failure_cases if limit is None else errors.failure_cases.head(limit)
            cases = cases.assign(snapshot_id=[_owner(rows, i) for i in cases["index"]])
            failures.append(cases)
            if limit is not None and sum(len(f) for f in failures) >= limit:
                break
    return checked, pd.concat(failures, ignore_index=True) if failures else None

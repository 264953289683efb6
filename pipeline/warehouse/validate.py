"""Validating warehouse tables with their Pandera models in bounded memory: rows are read and
checked a batch of snapshots at a time, so a year of history never sits in memory at once."""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import duckdb
import pandas as pd
import pandera.errors as pa_errors
import pandera.pandas as pa

BATCH_SNAPSHOTS = 2_000


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
    key must include snapshot_id for batches to see every duplicate; a table-wide key is checked
    in SQL by the caller."""
    checked = 0
    failures: list[pd.DataFrame] = []
    ids = list(snapshot_ids)
    for start in range(0, len(ids), batch):
        rows = con.execute(
            f"SELECT * FROM {table} WHERE snapshot_id IN (SELECT unnest(?))",
            [ids[start : start + batch]],
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

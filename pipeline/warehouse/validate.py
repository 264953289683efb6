"""Validating warehouse tables with their Pandera models in bounded memory: rows are read and
checked a batch of snapshots at a time, so a year of history never sits in memory at once."""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import pandas as pd
import pandera.errors as pa_errors
import pandera.pandas as pa

BATCH_SNAPSHOTS = 2_000


def validate_by_snapshot(
    con: duckdb.DuckDBPyConnection,
    model: type[pa.DataFrameModel],
    table: str,
    snapshot_ids: Sequence[str],
    batch: int = BATCH_SNAPSHOTS,
) -> tuple[int, pd.DataFrame | None]:
    """Validate the rows of `table` that belong to these snapshots; returns (rows checked,
    failure cases or None). A model's unique key must include snapshot_id for batches to see
    every duplicate; a table-wide key is checked in SQL by the caller."""
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
            failures.append(errors.failure_cases.head(50))
            if sum(len(f) for f in failures) >= 50:
                break
    return checked, pd.concat(failures, ignore_index=True) if failures else None

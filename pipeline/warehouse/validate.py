"""Validating warehouse tables with their Pandera models in bounded memory: the rows are read in
one scan, a chunk of at most BATCH_ROWS rows at a time, so a year of history never sits in
memory at once. One query per run of snapshots read the whole table once per run: at 90 days of
half-hourly polls (78 million observations, about 350 runs) the core checks had not finished
after an hour. A model's uniqueness checks see one chunk at a time; a table's key is checked in
SQL (`duplicate_keys`), and staged rows were validated whole, one snapshot at a time, when they
were parsed."""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

import duckdb
import pandas as pd
import pandera.errors as pa_errors
import pandera.pandas as pa

BATCH_ROWS = 250_000  # the 500,000-row batches were the peak of a day of polls
_VECTOR = 2_048  # rows per DuckDB vector: fetch_df_chunk counts in vectors
# Keys counted per pass of `duplicate_keys`: at 90 days of polls, one grouped count (and before it
# one distinct count) of the 78 million observation ids ran out of DuckDB's 1 GB.
KEY_PASS_ROWS = 5_000_000


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
    batch_rows: int = BATCH_ROWS,
    limit: int | None = 50,
) -> tuple[int, pd.DataFrame | None]:
    """Validate the rows of `table` that belong to these snapshots; returns (rows checked,
    failure cases or None): Pandera's, at most `limit` of them (None: all), each with the
    `snapshot_id` of its row (null for a failure of a whole column or table)."""
    checked = 0
    failures: list[pd.DataFrame] = []
    if not snapshot_ids:
        return checked, None
    result = con.execute(
        f"SELECT * FROM {table} WHERE snapshot_id IN (SELECT unnest(?::VARCHAR[]))",
        [list(snapshot_ids)],
    )
    while not (rows := result.fetch_df_chunk(max(1, batch_rows // _VECTOR))).empty:
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


def duplicate_keys(
    con: duckdb.DuckDBPyConnection,
    table: str,
    columns: Sequence[str],
    snapshot_ids: Sequence[str] | None = None,
    pass_rows: int = KEY_PASS_ROWS,
) -> int:
    """How many values of the key `columns` occur more than once in `table` (or among the rows of
    these snapshots). Counted on the key's 64-bit hash, in as many passes as it takes to keep each
    to about `pass_rows` rows (a pass takes one range of hash values), so the grouped count's
    memory stays bounded whatever the table's size; a hash counted twice is then counted again
    on the key itself, since two keys can share a hash. The hashes counted twice stay in a
    temporary table, not in Python: a load appended twice repeats every key."""
    key = ", ".join(columns)
    scope = "snapshot_id IN (SELECT unnest(?::VARCHAR[]))" if snapshot_ids is not None else "true"
    scoped = [list(snapshot_ids)] if snapshot_ids is not None else []
    rows = con.execute(f"SELECT count(*) FROM {table} WHERE {scope}", scoped).fetchone()
    passes = max(1, math.ceil((rows[0] if rows else 0) / pass_rows))
    con.execute("CREATE OR REPLACE TEMP TABLE shared_key_hashes (h UBIGINT)")
    try:
        for number in range(passes):
            con.execute(
                f"INSERT INTO shared_key_hashes SELECT hash({key}) AS h FROM {table} "
                f"WHERE {scope} AND hash({key}) % {passes} = {number} "
                "GROUP BY h HAVING count(*) > 1",
                scoped,
            )
        if not con.execute("SELECT count(*) FROM shared_key_hashes").fetchone()[0]:  # type: ignore[index]
            return 0
        repeated = con.execute(
            f"SELECT count(*) FROM (SELECT 1 FROM {table} "
            f"WHERE {scope} AND hash({key}) IN (SELECT h FROM shared_key_hashes) "
            f"GROUP BY {key} HAVING count(*) > 1)",
            scoped,
        ).fetchone()
        return repeated[0] if repeated else 0
    finally:
        con.execute("DROP TABLE IF EXISTS shared_key_hashes")

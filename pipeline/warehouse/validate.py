"""Validating warehouse tables with their Pandera models.

`validate_rows` checks the rows in SQL first, with the model's checks as predicates
(pipeline/schema/sql_checks.py), in one scan; Pandera then reads only the snapshots with a row
that fails one, and its failure cases are what a check reports. Reading every row into pandas to
validate it again was most of a full build's checks (at 90 days of polls, 13 of the 16 minutes).

Pandera reads rows in bounded memory: in one scan, a chunk of at most BATCH_ROWS rows at a time,
so a year of history never sits in memory at once. One query per run of snapshots read the whole
table once per run: at 90 days of half-hourly polls (78 million observations, about 350 runs) the
core checks had not finished after an hour. A table's key is checked in SQL (`duplicate_keys`),
and staged rows were validated when they were parsed, a chunk of snapshots at a time."""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

import duckdb
import pandas as pd
import pandera.errors as pa_errors
import pandera.pandas as pa

from pipeline.extract.staging import observed_span
from pipeline.schema.core import unique_key
from pipeline.schema.growing import RETRIEVED_WITH_SNAPSHOT
from pipeline.schema.sql_checks import columns_match, failing_rows
from pipeline.schema.staging import FRAMES

BATCH_ROWS = 250_000  # the 500,000-row batches were the peak of a day of polls
_VECTOR = 2_048  # rows per DuckDB vector: fetch_df_chunk counts in vectors
# Keys counted per pass of `repeated_keys`. Grouping the key's text, a distinct count and then a
# grouped count of the 78 million observation ids of 90 days of polls ran out of DuckDB's 1 GB;
# grouping their 64-bit hashes, one pass over 86 million took 12 s within it (the process at
# 1.25 GB), where passes of 5 million rows took 45 s: each pass reads the whole table.
KEY_PASS_ROWS = 100_000_000


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


def snapshot_scope(
    con: duckdb.DuckDBPyConnection, table: str, snapshot_ids: Sequence[str] | None
) -> tuple[str, list[object]]:
    """The WHERE clause (and its parameters) of the rows of these snapshots; None: every row.
    In a core table of RETRIEVED_WITH_SNAPSHOT (each row carries its snapshot's retrieval time,
    checked as rows are added: appended.py) the clause also bounds `retrieved_at` by the range of
    those snapshots' retrieval times, which the ids imply: DuckDB's zone maps keep 8 bytes of a
    string, so a filter on snapshot ids alone read the id of every row (0.15-0.2 s per scan of
    20 million rows, 3 ms with the range, the new snapshots being the newest). In a staged
    frame it bounds `observed_at` by the span the snapshots' extractions recorded of their rows
    (pipeline/extract/staging.py, observed_span)."""
    if snapshot_ids is None:
        return "true", []
    ids = list(snapshot_ids)
    where = "snapshot_id IN (SELECT unnest(?::VARCHAR[]))"
    if table.startswith("staging.") and table.removeprefix("staging.") in FRAMES:
        # a staged frame: its rows of these snapshots lie in the span of observed_at their
        # extraction recorded, when it recorded one for each of them
        span = observed_span(con, ids)
        if span is None:
            return where, [ids]
        return f"observed_at BETWEEN ? AND ? AND {where}", [*span, ids]
    if not table.startswith("core.") or table.removeprefix("core.") not in RETRIEVED_WITH_SNAPSHOT:
        return where, [ids]
    low, high = con.execute(
        f"SELECT min(retrieved_at), max(retrieved_at) FROM core.snapshots WHERE {where}", [ids]
    ).fetchone() or (None, None)
    if low is None:  # none of them is in core.snapshots: neither are their rows
        return "false", []
    return f"retrieved_at BETWEEN ? AND ? AND {where}", [low, high, ids]


def table_columns(con: duckdb.DuckDBPyConnection, table: str) -> dict[str, tuple[str, bool]]:
    """`schema.table`'s columns: name -> (DuckDB type, nullable)."""
    schema, name = table.split(".")
    rows = con.execute(
        "SELECT column_name, data_type, is_nullable FROM duckdb_columns() "
        "WHERE schema_name = ? AND table_name = ? AND database_name = current_database()",
        [schema, name],
    ).fetchall()
    return {column: (sql_type, bool(nullable)) for column, sql_type, nullable in rows}


def _sql_verdict(
    con: duckdb.DuckDBPyConnection,
    model: type[pa.DataFrameModel],
    table: str,
    failing: str,
    snapshot_ids: Sequence[str] | None = None,
) -> tuple[int, Any] | None:
    """(rows of these snapshots, or of all when None; the aggregate `failing` over those of them
    that fail one of the model's checks in SQL), in one scan; None when the table's columns are
    not the model's, which only Pandera can say in its words."""
    if not columns_match(model, table_columns(con, table)):
        return None
    scope, scoped = snapshot_scope(con, table, snapshot_ids)
    found = con.execute(
        f"SELECT count(*), {failing} FILTER (WHERE {failing_rows(model)}) "
        f"FROM {table} WHERE {scope}",
        scoped,
    ).fetchone()
    return (int(found[0]), found[1]) if found else (0, None)


def failing_snapshots(
    con: duckdb.DuckDBPyConnection,
    model: type[pa.DataFrameModel],
    table: str,
    snapshot_ids: Sequence[str] | None = None,
) -> tuple[int, list[str]] | None:
    """(rows of these snapshots, or of all when None; the snapshots among them with a row that
    fails one of the model's checks in SQL), in one scan; None when the table's columns are not
    the model's."""
    found = _sql_verdict(con, model, table, "list(DISTINCT snapshot_id)", snapshot_ids)
    if found is None:
        return None
    rows, failing = found
    return rows, sorted(failing or [])


def validate_rows(
    con: duckdb.DuckDBPyConnection,
    model: type[pa.DataFrameModel],
    table: str,
    snapshot_ids: Sequence[str] | None = None,
    limit: int | None = 50,
) -> tuple[int, pd.DataFrame | None]:
    """`validate_by_snapshot` over the rows of these snapshots (every row when None), with Pandera
    reading only the snapshots whose rows fail in SQL (`failing_snapshots`): the rows checked and
    Pandera's failure cases, or None. A table whose columns are not the model's is read whole."""
    found = failing_snapshots(con, model, table, snapshot_ids)
    if found is None:
        if snapshot_ids is None:
            sql = f"SELECT DISTINCT snapshot_id FROM {table} ORDER BY 1"
            snapshot_ids = [row[0] for row in con.execute(sql).fetchall()]
        return validate_by_snapshot(con, model, table, snapshot_ids, limit=limit)
    rows, failing = found
    if not failing:
        return rows, None
    _read, failures = validate_by_snapshot(con, model, table, failing, limit=limit)
    return rows, failures


def validate_table(
    con: duckdb.DuckDBPyConnection,
    model: type[pa.DataFrameModel],
    table: str,
    limit: int | None = 50,
) -> tuple[int, pd.DataFrame | None]:
    """A table validated whole, for one without snapshots (providers, models, endpoints, ...):
    its rows and Pandera's failure cases, or None. In SQL first, the model's checks and its key;
    Pandera reads the table only when SQL finds a failure (or its columns are not the model's),
    for its failure cases. Validating each with Pandera at every build took about a second of
    one more poll."""
    found = _sql_verdict(con, model, table, "count(*)")
    if found is not None:
        rows, failing = found
        key = unique_key(model)
        if not failing and not (key and duplicate_keys(con, table, key)):
            return rows, None
    frame = con.execute(f"SELECT * FROM {table}").df()
    try:
        model.validate(frame, lazy=True)
    except pa_errors.SchemaErrors as errors:
        cases = errors.failure_cases
        return len(frame), cases if limit is None else cases.head(limit)
    return len(frame), None


def duplicate_keys(
    con: duckdb.DuckDBPyConnection,
    table: str,
    columns: Sequence[str],
    snapshot_ids: Sequence[str] | None = None,
    pass_rows: int = KEY_PASS_ROWS,
) -> int:
    """How many values of the key `columns` occur more than once in `table` (or among the rows of
    these snapshots): `repeated_keys`' count."""
    return repeated_keys(con, table, columns, snapshot_ids, pass_rows)[0]


def repeated_keys(
    con: duckdb.DuckDBPyConnection,
    table: str,
    columns: Sequence[str],
    snapshot_ids: Sequence[str] | None = None,
    pass_rows: int = KEY_PASS_ROWS,
    *,
    owners: bool = False,
) -> tuple[int, list[str]]:
    """How many values of the key `columns` occur more than once in `table` (or among the rows of
    these snapshots), and with `owners` the snapshots of the rows that share one. Counted on the
    key's 64-bit hash, in as many passes as it takes to keep each to about `pass_rows` rows (a
    pass takes one range of hash values, and reads the table), so the grouped count's memory
    stays bounded whatever the table's size; a hash counted twice is then counted again on the
    key itself, since two keys can share a hash. The hashes counted twice stay in a temporary
    table, not in Python: a load appended twice repeats every key."""
    key = ", ".join(columns)
    scope, scoped = snapshot_scope(con, table, snapshot_ids)
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
            return 0, []
        candidates = (
            f"FROM {table} WHERE {scope} AND hash({key}) IN (SELECT h FROM shared_key_hashes)"
        )
        repeated = con.execute(
            f"SELECT count(*) FROM (SELECT 1 {candidates} GROUP BY {key} HAVING count(*) > 1)",
            scoped,
        ).fetchone()
        if not owners or not repeated or not repeated[0]:
            return (repeated[0] if repeated else 0), []
        # a window groups null keys together, as GROUP BY does
        found = con.execute(
            f"SELECT DISTINCT snapshot_id FROM (SELECT snapshot_id, "
            f"count(*) OVER (PARTITION BY {key}) AS n {candidates}) WHERE n > 1 ORDER BY 1",
            scoped,
        ).fetchall()
        return repeated[0], [row[0] for row in found]
    finally:
        con.execute("DROP TABLE IF EXISTS shared_key_hashes")

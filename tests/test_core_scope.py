"""An appending build deletes the rows of the per-snapshot tables whose snapshot left its scope or
is derived again (pipeline/warehouse/core.py, _drop_rows_out_of_scope). It finds those snapshots
among the last build's scope instead of reading every row's snapshot id; it must delete exactly
what the row-by-row search deletes, and fall back to it where no scope was kept. Real DuckDB."""

from __future__ import annotations

import duckdb
import pytest

from pipeline.warehouse.core import PER_SNAPSHOT, _drop_rows_out_of_scope

# snapshot -> rows per table; s1..s4 were in the last build's scope
ROWS = {"s1": 3, "s2": 2, "s3": 4, "s4": 1}


def _warehouse(before: list[str], scope: list[str], derive: list[str]) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:")
    con.execute("CREATE SCHEMA core")
    con.execute("CREATE SCHEMA staging")
    for name in PER_SNAPSHOT:
        con.execute(f"CREATE TABLE core.{name} (snapshot_id VARCHAR, n INTEGER)")
        for snapshot, rows in ROWS.items():
            if name == "observations" or snapshot != "s4":  # s4 has observations only
                con.execute(
                    f"INSERT INTO core.{name} SELECT ?, range FROM range(?)", [snapshot, rows]
                )
    for table, ids in (
        ("derived_before", before),
        ("build_scope", scope),
        ("staging.observation_scope", derive),
    ):
        temp = "TEMP " if "." not in table else ""
        con.execute(f"CREATE {temp}TABLE {table} (snapshot_id VARCHAR)")
        con.execute(f"INSERT INTO {table} SELECT unnest(?::VARCHAR[])", [ids])
    return con


def _left(con: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    return {
        name: [
            r[0]
            for r in con.execute(
                f"SELECT DISTINCT snapshot_id FROM core.{name} ORDER BY 1"
            ).fetchall()
        ]
        for name in PER_SNAPSHOT
    }


CASES = {
    # (scope, snapshots derived this build): s5 is new; s2 left (damaged, withdrawn, past
    # --as-of); s3 is read again by a newer parser
    "only added": (["s1", "s2", "s3", "s4", "s5"], ["s5"]),
    "one left": (["s1", "s3", "s4", "s5"], ["s5"]),
    "one read again": (["s1", "s2", "s3", "s4", "s5"], ["s3", "s5"]),
    "left and read again": (["s1", "s3", "s4"], ["s3"]),
    "nothing in scope": ([], []),
}


@pytest.mark.parametrize("case", CASES)
def test_the_kept_scope_deletes_what_the_row_by_row_search_deletes(case):
    scope, derive = CASES[case]
    kept = _warehouse(list(ROWS), scope, derive)
    searched = _warehouse([], scope, derive)  # no scope kept: every row's id is read
    removed = _drop_rows_out_of_scope(kept)
    assert removed == _drop_rows_out_of_scope(searched)
    assert _left(kept) == _left(searched)
    gone = [s for s in ROWS if s not in scope or s in derive]
    assert removed["observations"] == sum(ROWS[s] for s in gone)
    assert all(s not in gone for ids in _left(kept).values() for s in ids)


def test_nothing_to_drop_deletes_nothing():
    con = _warehouse(list(ROWS), [*ROWS, "s5"], ["s5"])
    assert _drop_rows_out_of_scope(con) == dict.fromkeys(PER_SNAPSHOT, 0)
    assert _left(con)["observations"] == list(ROWS)

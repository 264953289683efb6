"""The rows a build appended, found by row id (pipeline/warehouse/appended.py): exactly the rows
inserted since the marks, in the transaction that inserts them, after deletes in it and after
deletes committed and checkpointed before, and found without reading the rows before them."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.warehouse.appended import mark_appends
from pipeline.warehouse.connection import connect

ROWS_PER_GROUP = 122_880  # DuckDB's row group


def _table(con, rows: int) -> None:
    con.execute("CREATE SCHEMA IF NOT EXISTS core")
    con.execute(
        "CREATE TABLE core.observations AS SELECT 'old/' || (i // 1000) AS snapshot_id, i AS v "
        f"FROM range({rows}) r(i)"
    )


def _added(con, relation: str) -> list[tuple]:
    return con.execute(f"SELECT snapshot_id, v FROM {relation} ORDER BY v").fetchall()


@pytest.mark.parametrize("when", ["none", "in the transaction", "committed and checkpointed"])
def test_the_rows_past_the_marks_are_those_inserted(tmp_path: Path, when: str) -> None:
    with connect(tmp_path / "w.duckdb") as con:
        _table(con, 3 * ROWS_PER_GROUP)
        if when == "committed and checkpointed":  # the tail too: row ids may be given again
            con.execute("DELETE FROM core.observations WHERE v % 7 = 0 OR v > 300000")
            con.execute("CHECKPOINT")
        con.execute("BEGIN TRANSACTION")
        if when == "in the transaction":
            con.execute("DELETE FROM core.observations WHERE v % 5 = 0 OR v > 300000")
        marks = mark_appends(con, ["observations"])
        con.execute(
            "INSERT INTO core.observations SELECT 'new/' || i, 10000000 + i FROM range(3) r(i)"
        )
        inserted = [(f"new/{i}", 10_000_000 + i) for i in range(3)]
        assert _added(con, marks.rows("observations")) == inserted
        con.execute("COMMIT")


def test_an_empty_table_is_marked_below_every_row(tmp_path: Path) -> None:
    with connect(tmp_path / "w.duckdb") as con:
        _table(con, 0)
        marks = mark_appends(con, ["observations"])
        assert marks.marks == {"observations": -1}
        con.execute("INSERT INTO core.observations VALUES ('new/0', 1)")
        assert _added(con, marks.rows("observations")) == [("new/0", 1)]


def test_only_the_last_row_groups_are_read(tmp_path: Path) -> None:
    with connect(tmp_path / "w.duckdb") as con:
        _table(con, 10 * ROWS_PER_GROUP)
        con.execute("CHECKPOINT")
        marks = mark_appends(con, ["observations"])
        con.execute("INSERT INTO core.observations VALUES ('new/0', -1)")
        con.execute("CHECKPOINT")
        plan = con.execute(
            f"EXPLAIN ANALYZE SELECT count(*) FROM {marks.rows('observations')}"
        ).fetchall()[0][1]
        assert "Row Groups Scanned: 1 / 11" in plan, plan

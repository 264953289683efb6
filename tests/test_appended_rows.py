"""The rows a build appended, found by row id (pipeline/warehouse/appended.py): exactly the rows
inserted since the marks, in the transaction that inserts them, after deletes in it and after
deletes committed and checkpointed before, and found without reading the rows before them."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.schema.growing import RETRIEVED_WITH_SNAPSHOT
from pipeline.warehouse.appended import mark_appends, wrong_retrieval_times
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


def _with_snapshots(con) -> None:
    con.execute("CREATE SCHEMA IF NOT EXISTS core")
    con.execute(
        "CREATE TABLE core.snapshots AS SELECT * FROM (VALUES "
        "('a/1', TIMESTAMPTZ '2026-11-29 00:00:00+00'), "
        "('a/2', TIMESTAMPTZ '2026-11-30 00:00:00+00')) AS v(snapshot_id, retrieved_at)"
    )
    for table in RETRIEVED_WITH_SNAPSHOT:
        con.execute(
            f"CREATE TABLE core.{table} AS SELECT snapshot_id, retrieved_at FROM core.snapshots"
        )


@pytest.mark.parametrize(
    ("snapshot", "retrieved_at"),
    [("a/2", "2026-11-29 00:00:00+00"), ("a/2", None), ("gone/1", "2026-11-30 00:00:00+00")],
)
def test_added_rows_without_their_snapshots_time_are_counted(tmp_path, snapshot, retrieved_at):
    """The checks after the load find a snapshot's rows by its retrieval time: a row added
    with another time (or none, or no snapshot) would escape them, so the load counts it."""
    with connect(tmp_path / "w.duckdb") as con:
        _with_snapshots(con)
        marks = mark_appends(con, RETRIEVED_WITH_SNAPSHOT)
        assert wrong_retrieval_times(con, marks) == {}  # the rows before the marks are not read
        con.execute(
            "INSERT INTO core.observations VALUES ('a/1', TIMESTAMPTZ '2026-11-29 00:00:00+00')"
        )
        assert wrong_retrieval_times(con, marks) == {}
        con.execute(
            "INSERT INTO core.model_figures VALUES (?, ?::TIMESTAMPTZ)", [snapshot, retrieved_at]
        )
        assert wrong_retrieval_times(con, marks) == {"model_figures": 1}


def test_a_load_that_adds_such_a_row_fails_and_keeps_the_warehouse(built, tmp_path, monkeypatch):
    """A core SQL file that took the time from elsewhere: the appending build fails with a
    clear error, and its transaction is rolled back."""
    from test_build import add_kimi_page, copy_of

    import pipeline.warehouse.core as core
    from pipeline.dagster.envelope import execute

    settings = copy_of(built, tmp_path)
    with connect(settings.database, read_only=True) as con:
        before = con.execute("SELECT count(*) FROM core.observations").fetchone()
    add_kimi_page(settings)
    original = core.wrong_retrieval_times
    monkeypatch.setattr(
        core,
        "wrong_retrieval_times",
        lambda con, marks: original(con, marks) | {"observations": 7},
    )
    outcome = execute(settings)
    assert not outcome.success
    assert any("without their snapshot's retrieved_at" in f for f in outcome.failures)
    with connect(settings.database, read_only=True) as con:
        assert con.execute("SELECT count(*) FROM core.observations").fetchone() == before

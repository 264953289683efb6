"""The rows of some snapshots (pipeline/warehouse/validate.py: snapshot_scope): in the tables whose
rows carry their snapshot's retrieval time, bounded by it too, so that a check of the rows a build
appended reads the last row groups, not the snapshot id of every row."""

from __future__ import annotations

from pathlib import Path

import duckdb

from pipeline.schema.growing import RETRIEVED_WITH_SNAPSHOT
from pipeline.warehouse.connection import connect
from pipeline.warehouse.validate import snapshot_scope

BOUNDED = [f"core.{name}" for name in RETRIEVED_WITH_SNAPSHOT]


def test_the_tables_bounded_by_retrieval_carry_their_snapshots_time(built) -> None:
    with duckdb.connect(str(built.database), read_only=True) as con:
        for table in BOUNDED:
            rows, other = con.execute(
                f"SELECT count(*), count(*) FILTER (WHERE t.retrieved_at IS DISTINCT FROM "
                f"s.retrieved_at) FROM {table} AS t LEFT JOIN core.snapshots AS s "
                "USING (snapshot_id)"
            ).fetchone()
            assert rows > 0 and other == 0, table


def test_the_scope_holds_the_rows_of_its_snapshots_and_no_other(built) -> None:
    with duckdb.connect(str(built.database), read_only=True) as con:
        for table in (*BOUNDED, "core.endpoint_offers"):
            ids = [
                row[0]
                for row in con.execute(
                    f"SELECT DISTINCT snapshot_id FROM {table} ORDER BY 1 LIMIT 3"
                ).fetchall()
            ]
            for chosen in (ids, ids[-1:], [*ids[:1], "nowhere/20260101T000000Z-x.html"]):
                where, params = snapshot_scope(con, table, chosen)
                scoped = con.execute(f"SELECT count(*) FROM {table} WHERE {where}", params)
                found = scoped.fetchone()
                plain = con.execute(
                    f"SELECT count(*) FROM {table} WHERE snapshot_id IN (SELECT unnest(?))",
                    [chosen],
                ).fetchone()
                assert found == plain != (0,), (table, chosen)
            where, params = snapshot_scope(con, table, ["nowhere/20260101T000000Z-x.html"])
            nowhere = con.execute(f"SELECT count(*) FROM {table} WHERE {where}", params)
            assert nowhere.fetchone() == (0,)
            assert snapshot_scope(con, table, None) == ("true", [])


def test_the_rows_of_the_newest_snapshot_are_read_from_the_last_row_groups(tmp_path: Path) -> None:
    with connect(tmp_path / "w.duckdb") as con:
        con.execute("CREATE SCHEMA core")
        con.execute(
            "CREATE TABLE core.snapshots AS "
            "SELECT 's/' || lpad(i::VARCHAR, 6, '0') AS snapshot_id, "
            "TIMESTAMPTZ '2026-01-01 00:00:00+00' + to_seconds(i * 1800) AS retrieved_at "
            "FROM range(1000) r(i)"
        )
        con.execute(  # 1,000 rows per snapshot, in the order builds append them
            "CREATE TABLE core.observations AS SELECT s.snapshot_id, s.retrieved_at, r.i AS v "
            "FROM core.snapshots AS s, range(1000) r(i) ORDER BY s.snapshot_id, r.i"
        )
        con.execute("CHECKPOINT")
        where, params = snapshot_scope(con, "core.observations", ["s/000999"])
        found = con.execute(f"SELECT count(*) FROM core.observations WHERE {where}", params)
        assert found.fetchone() == (1000,)
        plan = con.execute(
            f"EXPLAIN ANALYZE SELECT count(*) FROM core.observations WHERE {where}", params
        ).fetchall()[0][1]
        assert "Row Groups Scanned: 1 / 9" in plan, plan


def test_source_health_counts_the_newest_snapshots_observations(built) -> None:
    """mart.source_health joins the observations on their snapshot's retrieval time too."""
    with duckdb.connect(str(built.database), read_only=True) as con:
        con.execute("SET TimeZone = 'UTC'")
        rows = con.execute(
            "SELECT h.source_id, h.observations, (SELECT count(*) FROM core.observations AS o "
            "WHERE o.snapshot_id = h.latest_snapshot_id) FROM mart.source_health AS h"
        ).fetchall()
    assert rows and all(kept == counted for _source, kept, counted in rows), rows
    assert sum(kept for _source, kept, _counted in rows) > 0

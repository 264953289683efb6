"""The span of observed_at each extraction records of its staged rows (pipeline/extract/staging.py):
it covers every staged row of its snapshot, so the checks of staged frames can read a snapshot's
rows by that range (a zone map DuckDB keeps) and find all of them; a snapshot without a span is
read by id alone."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime

import duckdb
import pyarrow as pa
import pytest

from pipeline.extract.staging import _observed_spans, observed_span
from pipeline.schema.core import unique_key
from pipeline.schema.staging import FRAMES
from pipeline.warehouse.connection import connect
from pipeline.warehouse.validate import repeated_keys, snapshot_scope

T1, T2, T3 = (datetime(2026, 4, 2, h, tzinfo=UTC) for h in (8, 9, 10))


def _frame(rows: list[tuple[str, datetime | None]]) -> pa.Table:
    return pa.table(
        {
            "snapshot_id": pa.array([sid for sid, _ in rows], pa.string()),
            "observed_at": pa.array([at for _, at in rows], pa.timestamp("us", tz="UTC")),
        }
    )


def test_a_snapshot_s_span_covers_its_rows_in_every_frame() -> None:
    spans = _observed_spans(
        {
            "a": _frame([("s/1", T2), ("s/1", T1), ("s/2", T3)]),
            "b": _frame([("s/1", T3), ("s/3", T1), ("s/3", None)]),
            "c": _frame([]),
        }
    )
    assert spans == {"s/1": (T1, T3), "s/2": (T3, T3), "s/3": None}  # a null: by id alone


def test_a_span_of_nanosecond_times_covers_them_as_duckdb_keeps_them() -> None:
    """Staged frames hold nanoseconds; DuckDB keeps microseconds, cutting the rest, and so do
    the spans, as plain datetimes."""
    base = pa.scalar(T1, pa.timestamp("ns", tz="UTC")).value
    frame = pa.table(
        {
            "snapshot_id": ["s/1", "s/1"],
            "observed_at": pa.array([base + 1_999, base + 7_000_999], pa.timestamp("ns", tz="UTC")),
        }
    )
    low, high = _observed_spans({"a": frame})["s/1"]  # type: ignore[misc]
    assert (type(low), type(high)) == (datetime, datetime)
    assert (low, high) == (T1.replace(microsecond=1), T1.replace(microsecond=7_000))
    with duckdb.connect() as con:
        kept = con.execute("SELECT min(observed_at), max(observed_at) FROM frame").fetchone()
    assert kept == (low, high)


@pytest.fixture
def warehouse(built, tmp_path) -> duckdb.DuckDBPyConnection:
    path = tmp_path / "w.duckdb"
    shutil.copyfile(built.warehouse / "speedbook.duckdb", path)
    with connect(path) as con:
        yield con


def _staged_frames(con: duckdb.DuckDBPyConnection) -> list[str]:
    return [
        name
        for (name,) in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'staging' "
            "AND database_name = current_database()"
        ).fetchall()
        if name in FRAMES
    ]


def test_every_extraction_of_the_bundled_corpus_spans_its_staged_rows(warehouse) -> None:
    rows = " UNION ALL ".join(
        f"SELECT snapshot_id, observed_at FROM staging.{name}" for name in _staged_frames(warehouse)
    )
    outside = warehouse.execute(
        f"SELECT count(*), count(DISTINCT r.snapshot_id) FROM ({rows}) AS r "
        "JOIN staging.extractions AS e USING (snapshot_id) "
        "WHERE r.observed_at NOT BETWEEN e.observed_from AND e.observed_to "
        "OR e.observed_from IS NULL"
    ).fetchone()
    assert outside == (0, 0)
    # every snapshot with staged rows has its span (the bundled corpus's 50), none without rows
    with_rows = warehouse.execute(f"SELECT count(DISTINCT snapshot_id) FROM ({rows})").fetchone()
    spanned = warehouse.execute(
        "SELECT count(*) FROM staging.extractions WHERE observed_from IS NOT NULL"
    ).fetchone()
    assert spanned == with_rows and spanned[0] > 40


def test_a_staged_frame_is_read_in_the_span_and_by_id_alone_without_one(warehouse) -> None:
    table = "staging.aa_endpoints"
    ids = [
        sid
        for (sid,) in warehouse.execute(
            f"SELECT DISTINCT snapshot_id FROM {table} ORDER BY 1 LIMIT 2"
        ).fetchall()
    ]
    where, params = snapshot_scope(warehouse, table, ids)
    assert where.startswith("observed_at BETWEEN ? AND ?") and params[-1] == ids
    spanned = warehouse.execute(f"SELECT count(*) FROM {table} WHERE {where}", params).fetchone()
    # a row repeated in a snapshot is found through the span as through the ids
    key = unique_key(FRAMES["aa_endpoints"])
    warehouse.execute(
        f"INSERT INTO {table} SELECT * FROM {table} WHERE snapshot_id = ? LIMIT 1", [ids[0]]
    )
    assert repeated_keys(warehouse, table, key, ids, owners=True) == (1, [ids[0]])
    # an extraction recorded before spans were kept: its snapshots are read by id alone
    warehouse.execute(
        "UPDATE staging.extractions SET observed_from = NULL WHERE snapshot_id = ?", [ids[1]]
    )
    assert observed_span(warehouse, ids) is None
    where, params = snapshot_scope(warehouse, table, ids)
    assert where.startswith("snapshot_id IN") and params == [ids]
    by_id = warehouse.execute(f"SELECT count(*) FROM {table} WHERE {where}", params).fetchone()
    assert by_id[0] == spanned[0] + 1  # the repeated row, and the same rows otherwise
    assert repeated_keys(warehouse, table, key, ids, owners=True) == (1, [ids[0]])
    assert observed_span(warehouse, [*ids, "no-such/snapshot"]) is None  # no record: by id


def test_an_older_cache_without_spans_is_read_by_id_alone(tmp_path) -> None:
    """Records of a build before spans were kept, opened as a read-only reader opens them (no
    ALTER has added the columns): no span, and a staged frame's scope is its snapshot ids."""
    with connect(tmp_path / "old.duckdb") as con:
        con.execute("CREATE SCHEMA staging")
        con.execute(
            "CREATE TABLE staging.extractions (snapshot_id VARCHAR PRIMARY KEY, status VARCHAR)"
        )
        con.execute("INSERT INTO staging.extractions VALUES ('aa/1', 'ok')")
    with connect(tmp_path / "old.duckdb", read_only=True) as con:
        assert observed_span(con, ["aa/1"]) is None
        assert snapshot_scope(con, "staging.aa_endpoints", ["aa/1"]) == (
            "snapshot_id IN (SELECT unnest(?::VARCHAR[]))",
            [["aa/1"]],
        )
    with connect(tmp_path / "none.duckdb") as con:  # no extraction records at all
        assert observed_span(con, ["aa/1"]) is None

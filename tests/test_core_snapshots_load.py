"""core.snapshots kept in step with the store's listing (pipeline/warehouse/core.py,
`_load_snapshots`): a build inserts the records the table lacks, replaces those it holds with
other values and deletes those no longer listed, and the table then equals one loaded afresh.
Real DuckDB and a real snapshot store."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import duckdb
import pytest

from pipeline.raw.snapshots import SnapshotMeta, SnapshotStore
from pipeline.sources.registry import load_registry
from pipeline.support.settings import BUNDLED_METADATA
from pipeline.warehouse.connection import configured
from pipeline.warehouse.core import _load_snapshots, ensure_core

SOURCE = load_registry(BUNDLED_METADATA / "sources.toml")["models-dev"]
TABLE = "SELECT * FROM core.snapshots ORDER BY snapshot_id"


def _stored(store: SnapshotStore, day: int) -> SnapshotMeta:
    return store.add(
        SOURCE.id,
        b'{"day": %d}' % day,
        url=SOURCE.url,
        retrieved_at=datetime(2026, 11, day, 6, 30, tzinfo=UTC),
        content_type="application/json",
        obtained_by="manual",
        extension="json",
    ).meta


def _connection() -> duckdb.DuckDBPyConnection:
    con = configured(duckdb.connect(":memory:"))
    ensure_core(con)
    return con


def _afresh(snapshots: list[SnapshotMeta]) -> list[tuple]:
    con = _connection()
    _load_snapshots(con, snapshots)
    return con.execute(TABLE).fetchall()


@pytest.fixture
def store(tmp_path):
    return SnapshotStore(tmp_path / "raw")


def test_a_build_inserts_only_what_is_new_and_deletes_what_is_gone(store):
    first, second, third = (_stored(store, day) for day in (1, 2, 3))
    con = _connection()
    assert _load_snapshots(con, [first, second]) == 2
    assert _load_snapshots(con, [first, second]) == 0  # nothing new: nothing written
    assert _load_snapshots(con, [second, third]) == 1  # first gone (withdrawn), third new
    assert con.execute(TABLE).fetchall() == _afresh([second, third])
    assert _load_snapshots(con, []) == 0
    assert con.execute("SELECT count(*) FROM core.snapshots").fetchall() == [(0,)]


@pytest.mark.parametrize(
    "edit",
    [
        {"note": "checked by hand"},
        {"sha256": "0" * 64},
        {"size": 99},
        {"retrieved_at": "2026-11-01T06:31:00Z"},
        {
            "reconstructed_from": {
                "title": "a page",
                "url": "https://example.org/",
                "snapshot": None,
            }
        },
    ],
)
def test_a_record_with_other_values_is_loaded_again(store, edit):
    kept, edited = _stored(store, 1), _stored(store, 2)
    con = _connection()
    _load_snapshots(con, [kept, edited])
    changed = dataclasses.replace(edited, **edit)
    assert _load_snapshots(con, [kept, changed]) == 1
    assert con.execute(TABLE).fetchall() == _afresh([kept, changed])
    assert _load_snapshots(con, [kept, changed]) == 0  # what it now holds is what is listed


def test_a_record_that_breaks_the_schema_is_refused_and_nothing_changes(store):
    good = _stored(store, 1)
    con = _connection()
    _load_snapshots(con, [good])
    before = con.execute(TABLE).fetchall()
    broken = dataclasses.replace(_stored(store, 2), size=-1)
    con.execute("BEGIN TRANSACTION")
    with pytest.raises(Exception, match="size_bytes"):
        _load_snapshots(con, [good, broken])
    con.execute("ROLLBACK")  # build_core's transaction: the warehouse keeps the last build
    assert con.execute(TABLE).fetchall() == before

"""The core SQL that derives a row from its own snapshot runs a batch of snapshots at a time
(BATCHED_SQL): the tables come out the same however the snapshots are batched, and a batch stays
within its bytes unless one snapshot alone is larger."""

from __future__ import annotations

import duckdb
import pytest
from conftest import build_into

import pipeline.warehouse.core as core
from pipeline.schema.growing import PER_SNAPSHOT
from pipeline.support.settings import SQL_DIR
from pipeline.warehouse.connection import connect


def test_every_batched_file_exists_and_reads_its_batch():
    for name in core.BATCHED_SQL:
        assert "derive_batch" in (SQL_DIR / "core" / name).read_text(encoding="utf-8")
    others = set(p.name for p in (SQL_DIR / "core").glob("*.sql")) - set(core.BATCHED_SQL)
    for name in others:
        assert "derive_batch" not in (SQL_DIR / "core" / name).read_text(encoding="utf-8"), name


def test_a_snapshot_per_batch_derives_what_one_batch_derives(built, tmp_path, monkeypatch):
    monkeypatch.setattr(core, "DERIVE_BATCH_BYTES", 1)  # every snapshot a batch of its own
    batched = build_into(tmp_path)
    with connect(batched.database, read_only=True) as con:
        con.execute(f"ATTACH '{built.database}' AS whole (READ_ONLY)")
        for table in (*PER_SNAPSHOT, "endpoints", "context_figures"):
            (rows,) = con.execute(f"SELECT count(*) FROM core.{table}").fetchone()
            (differ,) = con.execute(
                f"SELECT count(*) FROM ((FROM core.{table} EXCEPT ALL FROM whole.core.{table}) "
                f"UNION ALL (FROM whole.core.{table} EXCEPT ALL FROM core.{table}))"
            ).fetchone()
            assert differ == 0, table
            assert rows > 0 or table == "catalogue_offers", table


@pytest.fixture
def scope():
    with duckdb.connect() as con:
        con.execute("CREATE SCHEMA core")
        con.execute("CREATE SCHEMA staging")
        con.execute("CREATE TABLE core.snapshots (snapshot_id VARCHAR, size_bytes BIGINT)")
        con.execute("CREATE TABLE staging.observation_scope (snapshot_id VARCHAR)")
        yield con


def test_batches_keep_to_their_bytes_in_id_order(scope, monkeypatch):
    monkeypatch.setattr(core, "DERIVE_BATCH_BYTES", 100)
    sizes = {"a/3": 60, "a/1": 30, "a/2": 30, "b/1": 250, "b/2": 10, "c/9": 5}
    scope.executemany("INSERT INTO core.snapshots VALUES (?, ?)", list(sizes.items()))
    scope.executemany(
        "INSERT INTO staging.observation_scope VALUES (?)", [[s] for s in sizes if s != "c/9"]
    )
    assert core._derive_batches(scope) == [["a/1", "a/2"], ["a/3"], ["b/1"], ["b/2"]]


def test_nothing_in_scope_is_one_empty_batch(scope):
    assert core._derive_batches(scope) == [[]]

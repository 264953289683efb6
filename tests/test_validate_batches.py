"""Core validation in bounded memory: batches of snapshots bounded by rows as well (2,000
half-hourly polls are 36 million rows; a batch of them took 10 GB)."""

import duckdb
import pandera.pandas as pa
import pytest

from pipeline.warehouse.validate import batches, validate_by_snapshot


class Figure(pa.DataFrameModel):
    snapshot_id: str
    value: float = pa.Field(ge=0)


@pytest.fixture
def con():
    with duckdb.connect() as con:
        con.execute("CREATE TABLE t (snapshot_id VARCHAR, value DOUBLE)")
        # s0..s9 with 10 rows each, one large snapshot of 100 rows, and one without rows
        con.execute(
            "INSERT INTO t SELECT 's' || (i // 10), i FROM range(100) AS r(i) "
            "UNION ALL SELECT 'big', i FROM range(100) AS r(i)"
        )
        yield con


def test_batches_are_bounded_by_rows_and_snapshots_in_order(con):
    ids = [f"s{n}" for n in range(10)] + ["big", "empty"]
    runs = batches(con, "t", ids, batch=4, max_rows=25)
    assert [r for run in runs for r in run] == ids
    assert runs[:5] == [["s0", "s1"], ["s2", "s3"], ["s4", "s5"], ["s6", "s7"], ["s8", "s9"]]
    assert runs[5:] == [["big"], ["empty"]]  # too large alone: a batch of its own
    assert batches(con, "t", ids, batch=4, max_rows=10_000)[0] == ["s0", "s1", "s2", "s3"]
    assert batches(con, "t", [], batch=4) == []


def test_a_bad_row_in_a_later_batch_is_found_and_named(con):
    con.execute("UPDATE t SET value = -1 WHERE snapshot_id = 's8' AND value = 85")
    ids = [f"s{n}" for n in range(10)] + ["big"]
    checked, failures = validate_by_snapshot(con, Figure, "t", ids, batch=3)
    assert checked == 200
    assert failures is not None and list(failures["snapshot_id"]) == ["s8"]


def test_every_per_snapshot_table_declares_a_key_the_batches_check():
    """Keys of tables derived per snapshot are checked a batch of whole snapshots at a time,
    so each model must declare one (the offers' keys name their snapshot)."""
    from pipeline.schema.core import CORE_TABLES, PER_SNAPSHOT, unique_key

    keys = {name: unique_key(CORE_TABLES[name]) for name in PER_SNAPSHOT}
    assert keys == {
        "observations": ("observation_id",),
        "model_figures": ("figure_id",),
        "endpoint_offers": ("snapshot_id", "catalogue_model_id", "endpoint_tag"),
        "catalogue_offers": ("snapshot_id", "catalogue_provider_id", "catalogue_model_id"),
    }


def test_a_repeated_key_within_a_batch_is_a_failure_of_its_snapshot():
    class Keyed(pa.DataFrameModel):
        snapshot_id: str
        tag: str

        class Config:
            unique = ["snapshot_id", "tag"]  # noqa: RUF012 (Pandera reads a list)

    with duckdb.connect() as con:
        con.execute(
            "CREATE TABLE k AS SELECT 's' || (i // 4) AS snapshot_id, 't' || (i % 4) AS tag "
            "FROM range(40) AS r(i)"
        )
        checked, failures = validate_by_snapshot(
            con, Keyed, "k", [f"s{n}" for n in range(10)], batch=3
        )
        assert checked == 40 and failures is None
        con.execute("INSERT INTO k VALUES ('s7', 't2')")
        checked, failures = validate_by_snapshot(
            con, Keyed, "k", [f"s{n}" for n in range(10)], batch=3
        )
    assert checked == 41
    assert failures is not None and set(failures["snapshot_id"]) == {"s7"}

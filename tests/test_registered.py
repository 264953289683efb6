"""`registered()` (pipeline/warehouse/connection.py): an Arrow table readable under a name for
one block, gone after it even when its statement fails, and registered beside a result left
unfetched. Real DuckDB."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest

from pipeline.support.duck import registered

TABLE = pa.table({"snapshot_id": ["a/1", "b/2"]})


def _names(con: duckdb.DuckDBPyConnection) -> set[str]:
    return {row[0] for row in con.execute("SELECT view_name FROM duckdb_views()").fetchall()}


def test_the_table_is_read_in_the_block_and_gone_after_it():
    con = duckdb.connect()
    with registered(con, "ids", TABLE) as name:
        assert con.execute(f"SELECT count(*) FROM {name}").fetchall() == [(2,)]
    assert "ids" not in _names(con)


def test_a_failed_statement_leaves_no_registration():
    con = duckdb.connect()
    with pytest.raises(duckdb.Error), registered(con, "ids", TABLE):
        con.execute("SELECT no_such_column FROM ids").fetchall()
    assert "ids" not in _names(con)


def test_a_result_left_unfetched_does_not_block_it():
    con = duckdb.connect()
    con.execute("SELECT * FROM range(10)")  # rows never fetched
    with registered(con, "ids", TABLE):
        assert con.execute("SELECT count(*) FROM ids").fetchall() == [(2,)]

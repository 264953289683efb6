"""The core tables are checked where they live (pipeline/warehouse/validate.py): a table that
passes its model's checks as SQL is not fetched, and one that fails them is read by Pandera,
whose failure cases name the column and the value, whether the SQL found a bad row, a key held
twice or columns other than the model's."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from pipeline.schema.core import CORE_TABLES
from pipeline.support.duck import quote_literal
from pipeline.support.settings import Settings
from pipeline.warehouse.connection import connect
from pipeline.warehouse.validate import validate_table

pytestmark = pytest.mark.e2e


@pytest.fixture
def core(built: Settings, tmp_path: Path) -> duckdb.DuckDBPyConnection:
    """The built lake's core.sources and core.snapshots, copied into a DuckDB file of the
    test's own (the tests change them)."""
    path = tmp_path / "w.duckdb"
    with connect(built, read_only=True) as lake:
        lake.execute(f"ATTACH {quote_literal(str(path))} AS copied")
        lake.execute("CREATE SCHEMA copied.core")
        for table in ("sources", "snapshots"):
            lake.execute(f"CREATE TABLE copied.core.{table} AS FROM core.{table}")
        lake.execute("DETACH copied")
    con = duckdb.connect(str(path))
    con.execute("SET TimeZone = 'UTC'")
    return con


def failures_of(con: duckdb.DuckDBPyConnection, table: str) -> tuple[int, list[tuple]]:
    rows, failures = validate_table(con, CORE_TABLES[table], f"core.{table}")
    found = [] if failures is None else [(f.column, f.check) for f in failures.itertuples()]
    return rows, found


def test_good_tables_pass_and_a_bad_row_is_named(core):
    (sources,) = core.execute("SELECT count(*) FROM core.sources").fetchone()
    assert failures_of(core, "sources") == (sources, [])
    core.execute("UPDATE core.sources SET url = 'ftp://example' WHERE rowid = 0")
    assert failures_of(core, "sources") == (sources, [("url", "str_startswith('http')")])


def test_a_key_held_twice_is_named(core):
    core.execute("INSERT INTO core.snapshots SELECT * FROM core.snapshots LIMIT 1")
    rows, found = failures_of(core, "snapshots")
    assert rows > 1 and ("snapshot_id", "field_uniqueness") in found


def test_columns_other_than_the_model_s_are_left_to_pandera(core):
    """A table whose columns are not the model's (a column gone): SQL cannot vouch for it."""
    core.execute("ALTER TABLE core.sources DROP COLUMN license")
    rows, failures = validate_table(core, CORE_TABLES["sources"], "core.sources")
    assert rows > 0 and failures is not None
    assert failures.to_dict("records")[0]["failure_case"] == "license"

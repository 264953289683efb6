"""Staged rows are counted from the extraction records (what each parse staged), not by reading the
staged history, and the count is the table's."""

from collections.abc import Iterator

import duckdb
import pytest
from conftest import lake_at

from pipeline.schema.staging import FRAMES
from pipeline.support.settings import Settings
from pipeline.warehouse.connection import connect
from pipeline.warehouse.staging import staged_rows


@pytest.fixture
def staging(built: Settings, tmp_path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A lake of the test's own (one test changes records) with the built lake's staged rows and
    extraction records: the shared build is never written."""
    with connect(built, read_only=True) as source:
        tables = {
            name: source.execute(f"SELECT * FROM staging.{name}").fetch_arrow_table()
            for name in (*FRAMES, "extractions")
        }
    with lake_at(tmp_path) as con:
        con.execute("CREATE SCHEMA staging")
        for name, table in tables.items():
            con.register("staged", table)
            con.execute(f"CREATE TABLE staging.{name} AS SELECT * FROM staged")
            con.unregister("staged")
        yield con


def counted(con: duckdb.DuckDBPyConnection, frame: str, ids: list[str]) -> int:
    sql = f"SELECT count(*) FROM staging.{frame} WHERE snapshot_id IN (SELECT unnest(?))"
    return con.execute(sql, [ids]).fetchone()[0]


def test_the_records_count_what_the_table_holds(staging):
    ids = [r[0] for r in staging.execute("SELECT snapshot_id FROM staging.extractions").fetchall()]
    some = ids[::3]
    frames = [f for f in FRAMES if counted(staging, f, ids)]
    assert len(frames) >= 5  # the bundled corpus stages most frames
    for frame in FRAMES:
        assert staged_rows(staging, frame, ids) == counted(staging, frame, ids), frame
        assert staged_rows(staging, frame, some) == counted(staging, frame, some), frame
    assert staged_rows(staging, frames[0], []) == 0


def test_a_record_without_counts_has_its_rows_counted_in_the_table(staging):
    frame = "aa_endpoints"
    ids = [r[0] for r in staging.execute("SELECT snapshot_id FROM staging.extractions").fetchall()]
    expected = counted(staging, frame, ids)
    assert expected > 0
    staging.execute(
        "UPDATE staging.extractions SET row_counts = NULL WHERE snapshot_id IN "
        f"(SELECT DISTINCT snapshot_id FROM staging.{frame} LIMIT 2)"
    )
    assert staged_rows(staging, frame, ids) == expected


def test_a_result_left_unfetched_does_not_stop_the_count(staging):
    """The ids are registered from Arrow (`registered_ids`), which DuckDB 2 refuses beside a
    result left unfetched: the count ends it first, as any query would."""
    ids = [r[0] for r in staging.execute("SELECT snapshot_id FROM staging.extractions").fetchall()]
    staging.execute("SELECT snapshot_id FROM staging.extractions")  # rows never fetched
    assert staged_rows(staging, "aa_endpoints", ids) == counted(staging, "aa_endpoints", ids) > 0

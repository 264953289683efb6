"""The per-hour row counts and content hashes of the tables that grow with the history are kept
by each build (a release used to hash every row of the history to find the hours that changed):
always equal to the same figures computed from the rows, computed again only for the hours a
build's new snapshots touch, and afresh when a build removed rows."""

from datetime import UTC, datetime

import duckdb
import pytest
from test_build import add_kimi_page, copy_of

from pipeline.dagster.envelope import execute
from pipeline.raw.snapshots import SnapshotStore
from pipeline.warehouse.partitions import PARTITIONED, PRINTS, partition_hours


def kept(settings) -> dict[str, dict]:
    with duckdb.connect(str(settings.database), read_only=True) as con:
        return {table: partition_hours(con, table) for table in PARTITIONED}


def from_rows(settings) -> dict[str, dict]:
    """The same figures computed here from the rows (independently of the module's SQL)."""
    with duckdb.connect(str(settings.database), read_only=True) as con:
        return {
            table: {
                hour: [rows, int(content)]
                for hour, rows, content in con.execute(
                    "SELECT strftime(timezone('UTC', observed_at), '%Y-%m-%dT%H') AS h, count(*), "
                    f"sum(hash(t)) FROM core.{table} AS t GROUP BY h ORDER BY h"
                ).fetchall()
            }
            for table in PARTITIONED
        }


def mark_an_hour(settings, table: str) -> str:
    """Overwrite the kept hash of a table's oldest hour: it stays only if no build computes
    that hour again."""
    with duckdb.connect(str(settings.database)) as con:
        hour = con.execute(
            f"SELECT min(hour) FROM {PRINTS} WHERE table_name = ?", [table]
        ).fetchone()[0]
        con.execute(
            f"UPDATE {PRINTS} SET content = 42 WHERE table_name = ? AND hour = ?", [table, hour]
        )
    return hour


def test_a_build_keeps_the_figures_of_its_rows(built):
    figures = kept(built)
    assert figures == from_rows(built)
    assert figures["observations"] and figures["catalogue_offers"]


def test_one_more_page_computes_only_the_hours_it_touches(built, tmp_path):
    settings = copy_of(built, tmp_path)
    hour = mark_an_hour(settings, "observations")
    assert hour < "2026-11-29"
    add_kimi_page(settings)
    assert execute(settings).success
    figures, truth = kept(settings), from_rows(settings)
    assert figures["observations"][hour][1] == 42  # not computed again
    figures["observations"][hour] = truth["observations"][hour]
    assert figures == truth  # the new page's hour included


@pytest.mark.parametrize("table", ["observations", "catalogue_offers"])
def test_a_build_that_removes_rows_computes_the_table_afresh(built, tmp_path, table):
    """A withdrawn snapshot's rows leave its table: every hour of it is computed again. (A
    catalogue snapshot has offers but no observations; withdrawing it also changes the labels
    there are, so that build derives everything again.)"""
    settings = copy_of(built, tmp_path)
    mark_an_hour(settings, table)
    source = {"observations": "aa-kimi-k2-6", "catalogue_offers": "models-dev"}[table]
    store = SnapshotStore(settings.raw_dir)
    newest = max(store.list(source), key=lambda meta: meta.retrieved_at)
    store.withdraw(newest, "test", datetime(2026, 11, 30, tzinfo=UTC))
    before = from_rows(built)[table]
    assert execute(settings).success
    figures, truth = kept(settings), from_rows(settings)
    assert figures == truth
    assert truth[table] != before


def test_a_warehouse_without_the_kept_figures_computes_them(built, tmp_path):
    """Dropped by hand (or a warehouse of an older build): the release computes them from the
    rows, and the next build keeps them again, equal to those rows."""
    settings = copy_of(built, tmp_path)
    with duckdb.connect(str(settings.database)) as con:
        con.execute(f"DROP TABLE {PRINTS}")
    assert kept(settings) == from_rows(settings)  # computed, no table to read
    add_kimi_page(settings)
    assert execute(settings).success
    with duckdb.connect(str(settings.database), read_only=True) as con:
        stored = con.execute(f"SELECT count(*) FROM {PRINTS}").fetchone()[0]
    assert stored > 0 and kept(settings) == from_rows(settings)

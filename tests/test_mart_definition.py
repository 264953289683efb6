"""The mart is defined by the files of sql/mart, applied in order by every build inside the core's
own transaction (pipeline/warehouse/core.py), and checked there before anything commits: one
headline per provider, a blocking check on the mart."""

import shutil
from pathlib import Path

import dagster as dg
import duckdb
import pytest
from conftest import BUNDLED_RAW, UP_TO_CORE, failures, materialize
from mart_warehouse import Warehouse, observation, rows

import pipeline.warehouse.core as core
from pipeline.schema.mart import MART_VIEWS
from pipeline.support.settings import Settings
from pipeline.warehouse.connection import connect
from pipeline.warehouse.marts import MART_SQL, apply_marts


def mart_state(con: duckdb.DuckDBPyConnection) -> tuple[list, list, list]:
    headlines = con.execute("SELECT * FROM mart.provider_headline ORDER BY ALL").fetchall()
    comments = con.execute(
        "SELECT table_name, column_name, comment FROM duckdb_columns() "
        "WHERE schema_name = 'mart' ORDER BY ALL"
    ).fetchall()
    views = con.execute(
        "SELECT view_name, sql FROM duckdb_views() WHERE schema_name = 'mart' ORDER BY ALL"
    ).fetchall()
    return headlines, comments, views


def test_every_mart_file_is_applied_in_order_and_again_gives_the_same_mart(tmp_path: Path):
    con = Warehouse(
        tmp_path / "w.duckdb",
        [observation("bench-a", 300), observation("bench-b", 900, model="small", days_ago=1)],
    ).build()
    before = mart_state(con)
    assert before[0] and before[2]  # a headline, and views
    assert apply_marts(con) == sorted(p.name for p in MART_SQL.glob("*.sql"))
    assert mart_state(con) == before
    # the tables follow the core: a figure deleted from it (and so from the measured figures'
    # current ones, pipeline/warehouse/measured.py) leaves the current figures
    for table in ("core.observations", "core.current_measured"):
        con.execute(f"DELETE FROM {table} WHERE source_id = 'bench-b'")
    apply_marts(con)
    assert rows(con, "SELECT source_id FROM mart.current_figures") == [{"source_id": "bench-a"}]
    comment = con.execute(
        "SELECT comment FROM duckdb_tables() WHERE schema_name = 'mart' "
        "AND table_name = 'current_figures'"
    ).fetchone()[0]
    assert comment == MART_VIEWS["current_figures"].summary  # pipeline/schema/mart.py


def test_a_mart_view_the_files_now_make_a_table_becomes_one(tmp_path: Path):
    """A lake an earlier version built holds mart.endpoint_offers as a view; CREATE OR REPLACE
    TABLE cannot replace a view, so the next build drops it first, and the table it computes
    has the view's rows."""
    con = Warehouse(tmp_path / "w.duckdb", [observation("bench-a", 300)]).build()
    offers = rows(con, "SELECT * FROM mart.endpoint_offers ORDER BY ALL")
    con.execute("DROP TABLE mart.endpoint_offers")
    con.execute("CREATE VIEW mart.endpoint_offers AS SELECT 1 AS left_by_an_older_build")
    apply_marts(con)
    kind = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'mart' "
        "AND table_name = 'endpoint_offers'"
    ).fetchone()[0]
    assert kind == 1
    assert rows(con, "SELECT * FROM mart.endpoint_offers ORDER BY ALL") == offers
    apply_marts(con)  # and again, a table over a table
    assert rows(con, "SELECT * FROM mart.endpoint_offers ORDER BY ALL") == offers


def test_an_endpoints_offer_is_its_newest_listing_then_newest_snapshot_then_first_tag(
    tmp_path: Path,
):
    """mart.endpoint_offers takes, per endpoint, the listing observed last, then of the newest
    snapshot, then with the first tag (a text before its own extensions): the window's order,
    as one aggregate. Each winner taken away, the next in that order wins."""
    con = Warehouse(tmp_path / "w.duckdb", [observation("bench-a", 300)]).build()
    # (observed day, snapshot, tag), in the order the rule ranks them
    ranked = [
        (2, "bench-a/2", "a"),
        (2, "bench-a/2", "a/fp8"),
        (2, "bench-a/2", "c"),
        (2, "bench-a/0", "b"),
        (1, "bench-a/1", "z"),
    ]
    for day, snapshot, tag in reversed(ranked):
        con.execute(
            "INSERT INTO core.endpoint_offers BY NAME SELECT 'p/m/unknown/standard/-' AS "
            "endpoint_id, 'p' AS provider_id, 'm' AS model_id, 'unknown' AS precision, "
            "'standard' AS service_tier, 'm' AS catalogue_model_id, ? AS endpoint_tag, "
            "TIMESTAMPTZ '2026-11-01 00:00:00+00' + to_days(?) AS observed_at, "
            "'exact' AS observed_at_bound, TIMESTAMPTZ '2026-11-03 00:00:00+00' AS retrieved_at, "
            "? AS snapshot_id, 'bench-a' AS source_id, 'T1' AS tier",
            [tag, day, snapshot],
        )
    for day, snapshot, tag in ranked:
        apply_marts(con)
        chosen = rows(con, "SELECT snapshot_id, endpoint_tag FROM mart.endpoint_offers")
        assert chosen == [{"snapshot_id": snapshot, "endpoint_tag": tag}], (day, snapshot, tag)
        con.execute("DELETE FROM core.endpoint_offers WHERE endpoint_tag = ?", [tag])


def core_sources(settings: Settings) -> int:
    with connect(settings, read_only=True) as con:
        return con.execute("SELECT count(*) FROM core.sources").fetchone()[0]


@pytest.mark.e2e  # a build up to the core and mart, twice
@pytest.mark.parametrize("twice", [False, True])
def test_a_provider_with_two_headlines_fails_the_mart_check(tmp_path, monkeypatch, twice):
    """`one_headline_per_provider` counts the headlines the build made: one provider's headline
    shown twice fails it (blocking) and nothing commits; the view as built passes it."""
    shutil.copytree(BUNDLED_RAW, tmp_path / "warehouse" / "raw")
    settings = Settings.resolve(warehouse=tmp_path / "warehouse", exports=tmp_path / "exports")

    def applied(con: duckdb.DuckDBPyConnection) -> list[str]:
        files = apply_marts(con)
        if twice:  # the view's rows, with the first provider's row repeated
            con.execute(
                "CREATE OR REPLACE TABLE mart.headlines_once AS FROM mart.provider_headline"
            )
            con.execute(
                "CREATE OR REPLACE VIEW mart.provider_headline AS FROM mart.headlines_once "
                "UNION ALL (FROM mart.headlines_once ORDER BY provider_id LIMIT 1)"
            )
        return files

    monkeypatch.setattr(core, "apply_marts", applied)
    result = materialize(settings, UP_TO_CORE)
    check = "mart_views.one_headline_per_provider"
    assert (check in failures(result)) is twice, failures(result)
    materialized = {e.asset_key for e in result.get_asset_materialization_events() if e.asset_key}
    assert (dg.AssetKey("mart_views") in materialized) is not twice
    assert (core_sources(settings) == 0) is twice  # a failed check commits nothing

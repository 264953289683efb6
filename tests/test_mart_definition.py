"""The mart views and macros are created again only when their definition changes; the mart
table (the current figures) is computed by every build. On a built warehouse."""

import shutil

import dagster as dg
import duckdb
import pytest
from test_build import add_kimi_page, copy_of

import pipeline.warehouse.marts as marts
from pipeline.dagster.envelope import execute
from pipeline.dagster.runner import dagster_instance
from pipeline.warehouse.marts import MART_SQL, apply_marts

TABLE_FILE = "11_current_figures_table.sql"


@pytest.fixture
def con(built, tmp_path):
    path = tmp_path / "speedbook.duckdb"
    shutil.copyfile(built.database, path)
    with duckdb.connect(str(path)) as con:
        con.execute("SET TimeZone = 'UTC'")
        yield con


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


def test_a_build_with_the_same_definition_computes_only_the_table(con):
    before = mart_state(con)
    assert apply_marts(con) == [TABLE_FILE]
    assert mart_state(con) == before
    figures = con.execute("SELECT count(*) FROM mart.current_figures").fetchone()[0]
    assert figures > 0
    # what the build keeps changes: the table follows it, the views stay
    con.execute(
        "DELETE FROM core.current_observations WHERE endpoint_id IN "
        "(SELECT endpoint_id FROM core.current_observations LIMIT 1)"
    )
    assert apply_marts(con) == [TABLE_FILE]
    assert con.execute("SELECT count(*) FROM mart.current_figures").fetchone()[0] < figures
    comment = con.execute(
        "SELECT comment FROM duckdb_columns() WHERE schema_name = 'mart' "
        "AND table_name = 'current_figures' AND column_name = 'value'"
    ).fetchone()[0]
    assert comment  # inherited again by the new table


def test_a_changed_view_file_creates_every_view_again(con, tmp_path, monkeypatch):
    changed = tmp_path / "mart"
    shutil.copytree(MART_SQL, changed)
    comments = changed / "31_view_comments.sql"
    comments.write_text(
        comments.read_text(encoding="utf-8")
        + "\nCOMMENT ON VIEW mart.leaderboard IS 'a new description';\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(marts, "MART_SQL", changed)
    applied = apply_marts(con)
    assert applied == sorted(p.name for p in changed.glob("*.sql"))
    assert con.execute(
        "SELECT comment FROM duckdb_views() WHERE schema_name = 'mart' "
        "AND view_name = 'leaderboard'"
    ).fetchone() == ("a new description",)
    assert apply_marts(con) == [TABLE_FILE]  # and kept from then on


def test_a_view_dropped_by_hand_is_created_again(con):
    before = mart_state(con)
    con.execute("DROP VIEW mart.leaderboard")
    assert len(apply_marts(con)) > 1
    assert mart_state(con) == before


def test_a_changed_core_comment_reaches_the_views_that_inherit_it(con):
    con.execute("COMMENT ON COLUMN core.observations.quote IS 'the words, as written'")
    assert len(apply_marts(con)) > 1
    assert con.execute(
        "SELECT comment FROM duckdb_columns() WHERE schema_name = 'mart' "
        "AND table_name = 'published_observations' AND column_name = 'quote'"
    ).fetchone() == ("the words, as written",)


def test_a_damaged_definition_record_creates_every_view_again(con):
    before = mart_state(con)
    con.execute(f"DELETE FROM {marts.DEFINITION}")
    assert len(apply_marts(con)) > 1
    assert mart_state(con) == before
    con.execute(f"DROP TABLE {marts.DEFINITION}")
    assert len(apply_marts(con)) > 1
    assert apply_marts(con) == [TABLE_FILE]


def test_every_mart_file_is_a_definition_but_the_table():
    data = [p.name for p in MART_SQL.glob("*.sql") if p.name.endswith(marts.DATA_SUFFIX)]
    assert data == [TABLE_FILE]
    text = (MART_SQL / TABLE_FILE).read_text(encoding="utf-8")
    assert "CREATE OR REPLACE TABLE mart.current_figures" in text


def test_a_second_build_keeps_the_views_and_computes_the_table(built, tmp_path):
    """Through a whole build: one more page, and the mart step applies the table file alone."""
    settings = copy_of(built, tmp_path)
    add_kimi_page(settings)
    assert execute(settings).success
    with dagster_instance(settings) as instance:
        event = instance.get_latest_materialization_event(dg.AssetKey("mart_views"))
    metadata = event.asset_materialization.metadata
    assert metadata["sql_applied"].value == TABLE_FILE


@pytest.mark.parametrize("twice", [False, True])
def test_a_provider_with_two_headlines_fails_the_mart_check(built, tmp_path, monkeypatch, twice):
    """`one_headline_per_provider` counts the headlines the step read: one provider's headline
    shown twice fails it (blocking), the view as built passes it."""
    from conftest import failures, materialize

    import pipeline.dagster.assets.core as assets

    settings = copy_of(built, tmp_path)

    def applied(con: duckdb.DuckDBPyConnection) -> list[str]:
        files = apply_marts(con)
        if twice:  # the view's rows, with the first provider's row repeated
            con.execute("CREATE OR REPLACE TABLE staging.headlines AS FROM mart.provider_headline")
            con.execute(
                "CREATE OR REPLACE VIEW mart.provider_headline AS FROM staging.headlines "
                "UNION ALL (FROM staging.headlines ORDER BY provider_id LIMIT 1)"
            )
        return files

    monkeypatch.setattr(assets, "apply_marts", applied)
    result = materialize(settings, "key:mart_views")
    check = "mart_views.one_headline_per_provider"
    assert (check in failures(result)) is twice, failures(result)

"""sql/DATA_DICTIONARY.md is generated from the warehouse's comments and must be up to date."""

import duckdb

from pipeline.support.settings import DICTIONARY_PATH
from pipeline.warehouse.dictionary import current_dictionary, render_dictionary
from pipeline.warehouse.marts import PASS_THROUGH


def test_the_committed_dictionary_is_up_to_date():
    committed = DICTIONARY_PATH.read_text(encoding="utf-8") if DICTIONARY_PATH.exists() else ""
    assert committed == current_dictionary(), (
        "sql/DATA_DICTIONARY.md is out of date: run `speedbook dictionary` and commit it"
    )


def test_a_built_warehouse_gives_the_same_dictionary(built):
    # the command renders from an empty in-memory schema; a real build must say the same
    with duckdb.connect(str(built.database), read_only=True) as con:
        assert render_dictionary(con) == current_dictionary()


def test_every_view_and_table_an_analyst_reads_is_described():
    text = current_dictionary()
    for name in (
        "mart.leaderboard",
        "mart.provider_headline",
        "mart.peak_vs_live",
        "mart.platform_models",
        "mart.disagreements",
        "mart.source_health",
        "core.observations",
        "core.fetch_outcomes",
    ):
        assert f"\n### {name}\n" in text
    assert "(no comment)" not in text
    assert "| `peak_to_live_ratio` | DOUBLE | claim_value / live_value" in text
    assert "&lt;source_id&gt;/&lt;file&gt;" in text  # not swallowed as an HTML tag


def test_check_reports_an_outdated_file_and_writing_fixes_it(cli, tmp_path):
    path = tmp_path / "DATA_DICTIONARY.md"
    path.write_text("# stale\n")
    result = cli("dictionary", "--check", "--output", str(path))
    assert result.status == 1
    assert "out of date: run `speedbook dictionary`" in result.out
    assert path.read_text() == "# stale\n"  # --check writes nothing
    assert cli("dictionary", "--output", str(path)).status == 0
    assert path.read_text() == current_dictionary()
    result = cli("dictionary", "--check", "--output", str(path))
    assert (result.status, result.out.strip()) == (0, f"{path} is up to date")
    assert cli("dictionary", "--output", str(path)).out.strip() == f"{path} unchanged"


def test_passed_through_columns_say_what_their_source_says(built):
    with duckdb.connect(str(built.database), read_only=True) as con:
        for relation, upstream in PASS_THROUGH:
            pairs = con.execute(
                "SELECT c.column_name, c.comment, u.comment FROM duckdb_columns() AS c "
                "JOIN duckdb_columns() AS u USING (column_name) "
                "WHERE c.schema_name || '.' || c.table_name = ? "
                "AND u.schema_name || '.' || u.table_name = ?",
                [relation, upstream],
            ).fetchall()
            # the observation columns are all passed through (a model figure has fewer)
            assert len(pairs) >= (15 if relation == "mart.model_figures" else 19), relation
            for column, comment, source in pairs:
                assert comment and comment == source, f"{relation}.{column}"

"""docs/data-dictionary.md describes every relation of the built warehouse, from the code's one
description of each column, and must be up to date."""

import pytest

from pipeline.support.settings import DICTIONARY_PATH
from pipeline.warehouse.connection import connect
from pipeline.warehouse.dictionary import described_but_absent, render_dictionary, undescribed

pytestmark = pytest.mark.e2e


def test_the_committed_dictionary_is_the_built_warehouses(built):
    with connect(built, read_only=True) as con:
        rendered = render_dictionary(con)
    committed = DICTIONARY_PATH.read_text(encoding="utf-8") if DICTIONARY_PATH.exists() else ""
    assert committed == rendered, (
        "docs/data-dictionary.md is out of date: run `speedbook build` and `speedbook "
        "dictionary`, and commit it"
    )


def test_every_column_an_analyst_reads_is_described(built):
    with connect(built, read_only=True) as con:
        assert undescribed(con) == []
        assert described_but_absent(con) == []  # no description outlives its column
        text = render_dictionary(con)
    for name in (
        "mart.leaderboard",
        "mart.provider_headline",
        "mart.peak_vs_live",
        "mart.platform_models",
        "mart.disagreements",
        "mart.source_health",
        "core.observations",
        "core.fetch_outcomes",
        "staging.openrouter_endpoints",
    ):
        assert f"\n### {name}\n" in text
    assert "(no description)" not in text
    assert "| `peak_to_live_ratio` | DOUBLE | claim_value / live_value" in text
    assert "&lt;source_id&gt;/&lt;file&gt;" in text  # not swallowed as an HTML tag


def test_check_reports_an_outdated_file_and_writing_fixes_it(built, cli, tmp_path):
    path = tmp_path / "data-dictionary.md"
    path.write_text("# stale\n")
    location = ("--warehouse", str(built.warehouse))
    result = cli("dictionary", "--check", "--output", str(path), *location)
    assert result.status == 1
    assert "out of date: run `speedbook dictionary`" in result.out
    assert path.read_text() == "# stale\n"  # --check writes nothing
    assert cli("dictionary", "--output", str(path), *location).status == 0
    assert cli("dictionary", "--check", "--output", str(path), *location).status == 0


def test_no_warehouse_is_one_line_naming_the_build(cli, tmp_path):
    result = cli("dictionary", "--check", "--warehouse", str(tmp_path / "none"))
    assert result.status == 2
    assert "run `speedbook build` first" in result.err

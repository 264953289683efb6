"""A warehouse built by older code: its staging tables are brought to today's models, keeping the
cached rows when a nullable column was only added, and re-reading the snapshots otherwise."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from conftest import lake_at

from pipeline.schema.ddl import (
    columns,
    comment_statement,
    create_table,
    evolution,
    sync_tables,
)
from pipeline.schema.staging import FRAMES
from pipeline.warehouse.staging import ensure_staging

FRAME = "catalogue_entries"
SAMPLE = {"VARCHAR": "'x'", "DOUBLE": "1", "BIGINT": "1", "BOOLEAN": "false"}


def _insert_row(con: duckdb.DuckDBPyConnection, present: list[tuple[str, str]]) -> None:
    """One cached row with a value in every column `present` (name, DuckDB type)."""
    names = ", ".join(name for name, _ in present)
    values = ", ".join(SAMPLE.get(sql_type, "now()") for _, sql_type in present)
    con.execute(f"INSERT INTO staging.{FRAME} ({names}) VALUES ({values})")


def _old_table(con: duckdb.DuckDBPyConnection, drop: str, retype: str | None = None) -> None:
    """staging.catalogue_entries as older code made it: without column `drop` (and with column
    `retype` as VARCHAR), holding one cached row, whose extraction is recorded."""
    ensure_staging(con)
    con.execute(f"DROP TABLE staging.{FRAME}")
    kept = [c for c in columns(FRAMES[FRAME]) if c[0] != drop]
    parts = [
        f"{n} {'VARCHAR' if n == retype else t}{'' if nullable else ' NOT NULL'}"
        for n, t, nullable, _ in kept
    ]
    con.execute(f"CREATE TABLE staging.{FRAME} ({', '.join(parts)})")
    _insert_row(con, [(n, "VARCHAR" if n == retype else t) for n, t, _, _ in kept])
    con.execute(
        "INSERT INTO staging.extractions (snapshot_id, source_id, format, parser_version, "
        "sha256, file_size, file_mtime_ns, status, error, row_counts, extracted_at, file_ctime_ns) "
        "VALUES ('cloudflare-workers-ai/a.json', "
        "'cloudflare-workers-ai', 'cloudflare_models', '4', 'h', 1, 1, 'ok', NULL, '{}', now(), 1)"
    )


def _state(con: duckdb.DuckDBPyConnection) -> tuple[int, int, list[str]]:
    rows = con.execute(f"SELECT count(*) FROM staging.{FRAME}").fetchone()[0]
    extractions = con.execute("SELECT count(*) FROM staging.extractions").fetchone()[0]
    names = [
        r[0]
        for r in con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE schema_name = 'staging' "
            f"AND table_name = '{FRAME}' ORDER BY column_index"
        ).fetchall()
    ]
    return rows, extractions, names


@pytest.fixture
def con(tmp_path: Path) -> duckdb.DuckDBPyConnection:
    with lake_at(tmp_path / "w") as connection:
        yield connection


def test_a_new_nullable_column_is_added_and_the_cached_rows_stay(con) -> None:
    _old_table(con, drop="price_cached_input_usd_per_mtok")
    ensure_staging(con)
    rows, extractions, names = _state(con)
    assert (rows, extractions) == (1, 1)
    assert "price_cached_input_usd_per_mtok" in names


def test_a_retyped_column_rebuilds_the_table_and_forgets_its_extractions(con) -> None:
    _old_table(con, drop="price_cached_input_usd_per_mtok", retype="beta")
    ensure_staging(con)
    rows, extractions, names = _state(con)
    assert (rows, extractions) == (0, 0)  # the snapshot is extracted again by the next build
    assert names == [c[0] for c in columns(FRAMES[FRAME])]


@pytest.mark.e2e
def test_a_table_that_matches_its_model_is_left_alone(con) -> None:
    ensure_staging(con)
    _insert_row(con, [(n, t) for n, t, _, _ in columns(FRAMES[FRAME])])
    ensure_staging(con)
    assert _state(con)[0] == 1
    for name, model in FRAMES.items():  # every model's DDL reads back as itself
        con.execute(f"DROP TABLE IF EXISTS evolve_probe; {create_table(model, 'evolve_probe')}")
        found = {
            column: (sql_type, bool(nullable))
            for column, sql_type, nullable in con.execute(
                "SELECT column_name, data_type, is_nullable FROM duckdb_columns() "
                "WHERE table_name = 'evolve_probe'"
            ).fetchall()
        }
        assert evolution(model, "evolve_probe", found) == [], name


def test_a_new_not_null_column_cannot_be_added_in_place() -> None:
    model = FRAMES[FRAME]
    existing = {n: (t, nullable) for n, t, nullable, _ in columns(model) if n != "snapshot_id"}
    assert evolution(model, "t", existing) is None


def test_core_tables_of_an_older_build_are_brought_to_their_models(con) -> None:
    """A core table of older code (a renamed column) is rebuilt to its model; the build's state
    is left as it was (observations are a view over the staged facts: nothing to derive again)."""
    from pipeline.warehouse.core import ensure_core

    ensure_core(con)
    con.execute("INSERT INTO core.build_state VALUES (NULL, now())")
    con.execute("ALTER TABLE core.sources RENAME COLUMN max_age_minutes TO max_age_days")
    ensure_core(con)  # core.sources is refilled by every build: rebuilding it loses nothing
    names = {
        name
        for (name,) in con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE schema_name = 'core' "
            "AND table_name = 'sources'"
        ).fetchall()
    }
    assert "max_age_minutes" in names and "max_age_days" not in names
    assert con.execute("SELECT count(*) FROM core.build_state").fetchone()[0] == 1


class _Recording:
    """A connection that records the statements it is given."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con, self.statements = con, []

    def execute(self, statement: str, *args):
        self.statements.append(statement)
        return self.con.execute(statement, *args)


@pytest.mark.e2e
def test_comments_are_written_only_where_they_differ(tmp_path: Path) -> None:
    with lake_at(tmp_path / "w") as con:
        con.execute("CREATE SCHEMA staging")
        first = _Recording(con)
        sync_tables(first, "staging", FRAMES)  # type: ignore[arg-type]
        assert sum(s.startswith("COMMENT ON") for s in first.statements) > len(FRAMES)
        again = _Recording(con)
        sync_tables(again, "staging", FRAMES)  # type: ignore[arg-type]
        assert [s for s in again.statements if s.startswith("COMMENT ON")] == []
        column, description = next(
            (name, text) for name, _t, _n, text in columns(FRAMES[FRAME]) if text
        )
        con.execute(f"COMMENT ON COLUMN staging.{FRAME}.{column} IS 'edited by hand'")
        mended = _Recording(con)
        sync_tables(mended, "staging", FRAMES)  # type: ignore[arg-type]
        assert [s for s in mended.statements if s.startswith("COMMENT ON")] == [
            comment_statement(f"staging.{FRAME}", column, description)
        ]

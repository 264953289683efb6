"""A database that is mostly free space (a build that derived everything again) is written afresh
at commit: smaller, with the same tables, views, macros, comments and rows in the same order."""

from pathlib import Path

import duckdb
import pytest

from pipeline.warehouse.compaction import compact, free_share
from pipeline.warehouse.swap import WorkingCopy

CATALOG = {
    "tables": "SELECT schema_name, table_name, comment FROM duckdb_tables() ORDER BY ALL",
    "columns": "SELECT table_name, column_name, data_type, comment FROM duckdb_columns() "
    "WHERE NOT internal ORDER BY ALL",
    "views": "SELECT schema_name, view_name, comment, sql FROM duckdb_views() WHERE NOT internal "
    "ORDER BY ALL",
    "macros": "SELECT schema_name, function_name, macro_definition FROM duckdb_functions() "
    "WHERE NOT internal AND function_type LIKE '%macro' ORDER BY ALL",
    "constraints": "SELECT table_name, constraint_type, constraint_text FROM duckdb_constraints() "
    "ORDER BY ALL",
}


def warehouse(path: Path, kept: int) -> Path:
    """A small warehouse of 400,000 history rows of which `kept` stay, checkpointed."""
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE SCHEMA core")
        con.execute(
            "CREATE TABLE core.history (id BIGINT PRIMARY KEY, label VARCHAR, seen TIMESTAMPTZ)"
        )
        con.execute("COMMENT ON TABLE core.history IS 'every row'")
        con.execute("COMMENT ON COLUMN core.history.label IS 'a label''s text'")
        con.execute(
            "INSERT INTO core.history SELECT range, md5(range::VARCHAR), "
            "TIMESTAMPTZ '2026-01-01 00:00:00+00' + range * INTERVAL 1 SECOND FROM range(400000)"
        )
        con.execute("CREATE MACRO core.doubled(x) AS 2 * x")
        con.execute("CREATE VIEW core.recent AS SELECT core.doubled(id) AS d FROM core.history")
        con.execute("COMMENT ON VIEW core.recent IS 'doubled ids'")
        con.execute("CHECKPOINT")
        con.execute("DELETE FROM core.history WHERE id >= ?", [kept])
        con.execute("CHECKPOINT")
    return path


def state(path: Path) -> dict[str, list[tuple]]:
    with duckdb.connect(str(path), read_only=True) as con:
        found = {name: con.execute(sql).fetchall() for name, sql in CATALOG.items()}
        found["rows"] = con.execute("SELECT * FROM core.history").fetchall()  # in stored order
        found["view"] = con.execute("SELECT sum(d) FROM core.recent").fetchall()
    return found


def test_a_database_mostly_free_is_written_afresh_the_same(tmp_path):
    path = warehouse(tmp_path / "w.duckdb", kept=20_000)
    assert free_share(path) > 0.5
    before, size = state(path), path.stat().st_size
    assert compact(path)
    assert path.stat().st_size < size / 2
    assert free_share(path) < 0.25
    assert state(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.duckdb"]  # nothing left beside it


def test_a_database_with_little_free_space_is_left_as_it_is(tmp_path):
    path = warehouse(tmp_path / "w.duckdb", kept=390_000)
    assert free_share(path) < 0.25
    inode, size = path.stat().st_ino, path.stat().st_size
    assert not compact(path)
    assert (path.stat().st_ino, path.stat().st_size) == (inode, size)


def test_a_failed_rewrite_leaves_the_database_and_nothing_beside_it(tmp_path, monkeypatch):
    path = warehouse(tmp_path / "w.duckdb", kept=20_000)
    before = state(path)
    (tmp_path / "w-compact.duckdb").write_bytes(b"left by a killed build")  # replaced, not read
    real = duckdb.DuckDBPyConnection.execute

    def failing(con, sql, *args):
        if sql.startswith("COPY FROM DATABASE"):
            raise duckdb.IOException("No space left on device")
        return real(con, sql, *args)

    monkeypatch.setattr(duckdb.DuckDBPyConnection, "execute", failing)
    with pytest.raises(duckdb.IOException, match="No space left"):
        compact(path)
    monkeypatch.undo()
    assert state(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.duckdb"]


def test_the_commit_compacts_and_says_so(tmp_path):
    target = tmp_path / "speedbook.duckdb"
    working = warehouse(tmp_path / ".build-run.duckdb", kept=20_000)
    before = state(working)
    copy = WorkingCopy(working, target)
    copy.commit()
    assert copy.compacted and "written afresh" in copy.summary()
    assert state(target) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["speedbook.duckdb"]

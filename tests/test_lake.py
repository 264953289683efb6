"""The warehouse is a DuckLake: its extension is a signed binary loaded offline; a build commits
its core and mart in one transaction, so a reader in another process sees the last completed
build while one runs, and a build killed in its transaction leaves the lake as it was."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
from conftest import UP_TO_CORE, failures, materialize

from pipeline.support.faults import PAUSE_ENV
from pipeline.support.settings import Settings
from pipeline.warehouse import extensions
from pipeline.warehouse.connection import connect, lake_of, session
from pipeline.warehouse.lake import LakeError, LakeLocation

pytestmark = pytest.mark.e2e

READ = "SELECT data_date, (SELECT count(*) FROM core.endpoints) FROM core.build_state"


def test_the_lake_extension_loads_offline_from_its_package_and_is_signed(tmp_path: Path):
    con = session()
    # the session refuses unsigned binaries: a binary it loaded carries DuckDB's signature
    assert con.execute("SELECT current_setting('allow_unsigned_extensions')").fetchone() == (False,)
    binary = extensions.packaged_binary(extensions.LAKE)
    assert binary is not None and binary.is_file(), "duckdb-extension-ducklake is installed"
    extensions.load(con, extensions.LAKE)
    loaded = con.execute(
        "SELECT loaded FROM duckdb_extensions() WHERE extension_name = 'ducklake'"
    ).fetchone()
    assert loaded == (True,)


def test_an_unsigned_binary_is_refused(tmp_path: Path):
    fake = tmp_path / "ducklake.duckdb_extension"
    fake.write_bytes(b"\x7fELF" + b"\0" * 4096)
    con = session()
    with pytest.raises(duckdb.Error):
        con.execute(f"LOAD '{fake}'")


def test_a_catalog_that_is_not_one_of_the_three_kinds_is_refused_in_words(tmp_path: Path):
    for catalog in ("mysql:db", "catalog.sqlite", "sqlite:", ""):
        with pytest.raises(LakeError, match="sqlite:<file>, duckdb:<file>, postgres:"):
            LakeLocation.parse(catalog, "lake", base=tmp_path)


def test_relative_locations_are_taken_from_the_warehouse(tmp_path: Path):
    lake = LakeLocation.parse("sqlite:catalog.sqlite", "lake", base=tmp_path)
    assert lake.target == str(tmp_path / "catalog.sqlite")
    assert lake.data_path == f"{tmp_path / 'lake'}/"
    remote = LakeLocation.parse("postgres:dbname=x host=h user=u", "s3://b/p", base=tmp_path)
    assert (remote.kind, remote.data_path, remote.local) == ("postgres", "s3://b/p/", False)
    assert "user=u" not in remote.describe()  # a connection string stays out of messages


def _reader(settings: Settings, out: Path) -> subprocess.Popen:
    """A process that reads the build state in a loop and logs each distinct answer."""
    script = f"""
import sys, time
from pipeline.support.settings import Settings
from pipeline.warehouse.connection import connect
settings = Settings.resolve(warehouse={str(settings.warehouse)!r})
seen = None
with open({str(out)!r}, "a") as log:
    while True:
        con = connect(settings, read_only=True)
        row = con.execute({READ!r}).fetchone()
        con.close()
        if row != seen:
            print(repr(row), file=log, flush=True)
            seen = row
        time.sleep(0.05)
"""
    return subprocess.Popen([sys.executable, "-c", script], env=dict(os.environ))


def _build_paused(settings: Settings, marker: Path) -> subprocess.Popen:
    env = dict(os.environ, **{PAUSE_ENV: f"core-transaction:{marker}"})
    return subprocess.Popen(
        [sys.executable, "-m", "pipeline.cli", "build", "--force"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _wait_for(path: Path, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.1)


@pytest.fixture(params=["embedded", "postgresql+s3"])
def lake_settings(
    request: pytest.FixtureRequest, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> Settings:
    """The embedded lake, or one whose catalog is in PostgreSQL and whose data is on S3 (the
    session's servers): readers and a killed build behave alike on both."""
    if request.param == "embedded":
        return settings
    database = request.getfixturevalue("postgres_database")
    bucket = request.getfixturevalue("s3_bucket")
    request.getfixturevalue("s3_env")
    monkeypatch.setenv("SPEEDBOOK_CATALOG", f"postgres:{database}")
    monkeypatch.setenv("SPEEDBOOK_LAKE_DATA", f"s3://{bucket.name}/lake")
    return Settings.resolve()


def test_readers_see_the_last_completed_build_and_a_killed_build_leaves_it(
    lake_settings: Settings, tmp_path: Path
):
    settings = lake_settings
    result = materialize(settings, UP_TO_CORE)
    assert result.success, failures(result)
    with connect(settings, read_only=True) as con:
        before = con.execute(READ).fetchone()
    assert before is not None and before[1] > 0
    log = tmp_path / "reader.log"
    reader = _reader(settings, log)
    marker = tmp_path / "paused"
    build = _build_paused(settings, marker)
    try:
        _wait_for(marker)  # the build deleted the core tables in its transaction, and sleeps
        _wait_for(log)
        time.sleep(1.0)  # the reader keeps reading meanwhile
        assert reader.poll() is None, "the reader failed while a build held its transaction"
        with connect(settings, read_only=True) as con:
            assert con.execute(READ).fetchone() == before
        os.kill(int(marker.read_text()), signal.SIGKILL)
        build.wait(timeout=60)
    finally:
        build.kill()
        reader.kill()
        reader.wait()
    answers = log.read_text().splitlines()
    assert answers == [repr(before)], "a reader saw a half-built warehouse"
    with connect(settings, read_only=True) as con:
        assert con.execute(READ).fetchone() == before  # the killed build changed nothing
    again = materialize(settings, UP_TO_CORE)  # and the next build runs as usual
    assert again.success, failures(again)


def test_the_lake_is_where_the_settings_say(settings: Settings, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("SPEEDBOOK_CATALOG", "duckdb:elsewhere.ducklake")
    moved = Settings.resolve()
    assert lake_of(moved).target == str(moved.warehouse / "elsewhere.ducklake")
    result = materialize(moved, UP_TO_CORE)
    assert result.success, failures(result)
    assert (moved.warehouse / "elsewhere.ducklake").is_file()
    assert not (moved.warehouse / "catalog.sqlite").exists()


def test_the_sqlite_catalog_keeps_a_write_ahead_log_and_commits_beside_a_reader(
    settings: Settings,
):
    """In SQLite's default rollback journal a reader's shared lock can make the build's commit
    fail with "database is locked" (the benchmark's four readers failed whole builds so); in
    write-ahead-log mode readers and commits never lock each other out."""
    import sqlite3

    with connect(settings) as con:
        con.execute("CREATE TABLE main.probe AS SELECT 1 AS i")
    reader = sqlite3.connect(settings.warehouse / "catalog.sqlite", timeout=0)
    try:
        reader.execute("BEGIN")
        assert reader.execute("SELECT count(*) FROM ducklake_snapshot").fetchone()[0] >= 1
        with connect(settings) as con:
            con.execute("INSERT INTO main.probe VALUES (2)")  # commits while the reader reads
            assert con.execute("SELECT sum(i) FROM main.probe").fetchone() == (3,)
    finally:
        reader.close()
    assert sqlite3.connect(settings.warehouse / "catalog.sqlite").execute(
        "PRAGMA journal_mode"
    ).fetchone() == ("wal",)


def test_the_history_schema_is_applied_once_and_again_only_when_it_changes(settings: Settings):
    """Each COMMENT in sql/history/ is a catalog change in a lake: a build that applied the file
    every time made forty lake snapshots and spent seconds on them."""
    from pipeline.support.duck import transaction
    from pipeline.warehouse.lake import lake_snapshot
    from pipeline.warehouse.marts import ensure_history

    with connect(settings) as con:
        with transaction(con):
            ensure_history(con)
        first = lake_snapshot(con)
        with transaction(con):
            ensure_history(con)
        assert lake_snapshot(con) == first  # nothing differs: nothing applied, no snapshot
        con.execute("COMMENT ON TABLE history.releases IS 'an older description'")
        edited = lake_snapshot(con)
        with transaction(con):
            ensure_history(con)
        assert lake_snapshot(con) == edited + 1  # the file applied again, in one snapshot
        (comment,) = con.execute(
            "SELECT comment FROM duckdb_tables() WHERE schema_name = 'history' "
            "AND table_name = 'releases' AND database_name = current_database()"
        ).fetchone()
    assert comment.startswith("One row per published release")


def test_the_tables_of_a_schema_are_those_duckdb_tables_lists(settings: Settings):
    """support.duck.table_names reads the lake's tables without duckdb_tables() (which queries
    the catalog for every table's statistics): the same names, no view, no temp table, no other
    schema's table."""
    from pipeline.support.duck import table_names
    from pipeline.warehouse.lake import LAKE_ALIAS

    with connect(settings) as con:
        con.execute("CREATE SCHEMA one; CREATE SCHEMA other")
        con.execute("CREATE TABLE one.a (x INTEGER); CREATE TABLE one.b AS SELECT 1 AS y")
        con.execute("CREATE VIEW one.v AS SELECT 1 AS z; CREATE TABLE other.c (x INTEGER)")
        con.execute("CREATE TEMP TABLE t (x INTEGER)")
        listed = con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'one' "
            "AND database_name = current_database()"
        ).fetchall()
        assert table_names(con, "one") == {name for (name,) in listed} == {"a", "b"}
        assert table_names(con, "one", LAKE_ALIAS) == {"a", "b"}
        assert table_names(con, "other") == {"c"} and table_names(con, "none") == set()


def test_empty_tables_get_their_catalog_statistics_and_stay_empty(settings: Settings):
    """warehouse/table_statistics.py: a lake table that never held a row has no catalog statistics,
    which DuckLake 1.5.5 asks the catalog for again at every statement that reads it (0.07-0.15 s
    of planning each); a row inserted and deleted in one commit records them."""
    from pipeline.warehouse.lake import LAKE_ALIAS, lake_snapshot
    from pipeline.warehouse.table_statistics import record_statistics, without_statistics

    with connect(settings) as con:
        con.execute("CREATE SCHEMA staging; CREATE SCHEMA other")
        con.execute(
            "CREATE TABLE staging.empty (a VARCHAR NOT NULL, b BIGINT NOT NULL, "
            "c TIMESTAMPTZ NOT NULL, d VARCHAR[] NOT NULL, e DOUBLE, f BOOLEAN NOT NULL)"
        )
        con.execute("CREATE TABLE staging.held AS SELECT 1 AS x")
        con.execute("CREATE TABLE staging.odd (m MAP(VARCHAR, INTEGER) NOT NULL)")
        con.execute("CREATE TABLE other.empty (a VARCHAR)")
        assert without_statistics(con, ("staging",)) == ["staging.empty", "staging.odd"]
        before = lake_snapshot(con)
        assert record_statistics(con, ("staging",)) == ["staging.empty"]  # no literal for a map
        assert lake_snapshot(con) == before + 1  # one commit
        counts = con.execute(
            "SELECT (SELECT count(*) FROM staging.empty), (SELECT count(*) FROM staging.held)"
        ).fetchone()
        assert counts == (0, 1)
        assert without_statistics(con, ("staging",)) == ["staging.odd"]
        assert without_statistics(con, ("other",)) == ["other.empty"]  # only the schemas named
        assert record_statistics(con, ("staging",)) == []
        con.execute("ATTACH ':memory:' AS elsewhere; USE elsewhere")
        assert without_statistics(con, ("other",)) == []  # an --as-of build's own database
        con.execute(f"USE {LAKE_ALIAS}")
        assert without_statistics(con, ("other",)) == ["other.empty"]
    with duckdb.connect() as plain:  # no lake: nothing to do
        assert without_statistics(plain, ("main",)) == []

"""The warehouse a build replaced is kept and becomes the next build's working copy, updated block
by block: the copy is byte for byte the warehouse whatever the spare held, writes only what
differs, and never writes a file somebody else can see (a reader of the old warehouse, a second
name of the warehouse itself). Real DuckDB files and, for readers, real processes."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest

from pipeline.support.settings import Settings
from pipeline.warehouse.spare import SPARE_DATABASE, refresh
from pipeline.warehouse.swap import working_copy

BLOCK = 64 * 1024


def _bytes(path: Path) -> bytes:
    return path.read_bytes()


def _database(path: Path, rows: int) -> None:
    con = duckdb.connect(str(path))
    con.execute(
        "CREATE OR REPLACE TABLE t AS SELECT range AS i, md5(range::VARCHAR) AS h FROM range(?)",
        [rows],
    )
    con.close()


def _append(path: Path, rows: int) -> None:
    con = duckdb.connect(str(path))
    con.execute("INSERT INTO t SELECT range AS i, 'new' AS h FROM range(?)", [rows])
    con.close()


def _count(path: Path) -> int:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute("SELECT count(*) FROM t").fetchone()[0]
    finally:
        con.close()


def test_a_spare_is_made_the_source_writing_only_the_blocks_that_differ(tmp_path):
    source, spare, out = tmp_path / "source", tmp_path / "spare", tmp_path / "out"
    data = bytearray(os.urandom(10 * BLOCK + 123))
    source.write_bytes(data)
    data[3 * BLOCK + 7] ^= 0xFF  # one byte differs in the fourth block
    spare.write_bytes(data)
    assert refresh(spare, out, source, block=BLOCK) == BLOCK
    assert _bytes(out) == _bytes(source)
    assert not spare.exists()  # it became the copy


@pytest.mark.parametrize("size", [0, 3 * BLOCK, 10 * BLOCK + 123, 13 * BLOCK + 5])
def test_a_spare_of_any_size_ends_as_the_source(tmp_path, size):
    source, spare, out = tmp_path / "source", tmp_path / "spare", tmp_path / "out"
    source.write_bytes(os.urandom(10 * BLOCK + 123))
    spare.write_bytes(os.urandom(size))
    written = refresh(spare, out, source, block=BLOCK)
    assert _bytes(out) == _bytes(source)
    assert written == source.stat().st_size  # random bytes: every block differs


def test_no_spare_means_a_full_copy(tmp_path):
    source = tmp_path / "source"
    source.write_bytes(b"x" * 100)
    assert refresh(tmp_path / "missing", tmp_path / "out", source) is None
    assert not (tmp_path / "out").exists()


def test_a_spare_that_is_another_name_of_the_warehouse_is_never_written(tmp_path):
    """A swap stopped between keeping the spare and the rename leaves the spare a second name of
    the warehouse: writing it would write the warehouse."""
    source, out = tmp_path / "source", tmp_path / "out"
    source.write_bytes(b"the warehouse" * 1000)
    spare = tmp_path / "spare"
    os.link(source, spare)
    before = _bytes(source)
    assert refresh(spare, out, source) is None
    assert _bytes(source) == before
    assert not out.exists() and not spare.exists()
    assert source.stat().st_nlink == 1


def test_a_spare_that_is_not_a_file_is_not_used(tmp_path):
    source, spare, out = tmp_path / "source", tmp_path / "spare", tmp_path / "out"
    source.write_bytes(b"abc")
    spare.symlink_to(source)
    assert refresh(spare, out, source) is None
    assert _bytes(source) == b"abc" and not out.exists()


READER = """
import pathlib, sys, time, duckdb
path, ready, go = sys.argv[1:4]
con = duckdb.connect(path, read_only=True)
first = con.execute("SELECT count(*), sum(i) FROM t").fetchone()
pathlib.Path(ready).write_text("ready")
while not pathlib.Path(go).exists():
    time.sleep(0.05)
print(first == con.execute("SELECT count(*), sum(i) FROM t").fetchone(), first[0])
"""


def _wait_for(path: Path, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while not path.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the reader did not start"
        time.sleep(0.05)


def _settings(tmp_path: Path) -> Settings:
    warehouse = tmp_path / "warehouse"
    warehouse.mkdir()
    return Settings(registry=tmp_path / "sources.toml", warehouse=warehouse, exports=tmp_path / "x")


def _build(settings: Settings, run_id: str, rows: int) -> int:
    """One build that appends `rows` rows; what making its copy wrote."""
    with working_copy(settings, None, run_id) as working:
        _append(working.path, rows)
        working.commit()
    return working.copy_written_bytes


def test_successive_builds_reuse_the_replaced_warehouse(tmp_path):
    settings = _settings(tmp_path)
    _database(settings.database, 2_000_000)
    size = settings.database.stat().st_size
    first = _build(settings, "one", 10)
    assert first == size  # no spare yet: copied whole
    spare = settings.warehouse / SPARE_DATABASE
    assert spare.is_file() and spare.stat().st_nlink == 1
    second = _build(settings, "two", 10)
    assert 0 < second < size / 4  # the appended rows and DuckDB's headers, not the table
    assert _count(settings.database) == 2_000_020
    # what the spare held before this build is what the warehouse held: builds stack
    _build(settings, "three", 5)
    assert _count(settings.database) == 2_000_025
    assert _count(spare) == 2_000_020


def test_a_reader_of_the_replaced_warehouse_keeps_its_file_and_the_build_copies_whole(tmp_path):
    settings = _settings(tmp_path)
    _database(settings.database, 1_000_000)
    _build(settings, "one", 10)
    ready, go = tmp_path / "ready", tmp_path / "go"
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(settings.database), str(ready), str(go)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_for(ready, reader)
        _build(settings, "two", 10)  # the reader's file is now the spare
        size = settings.database.stat().st_size
        assert _build(settings, "three", 10) == size  # ...so this build copies whole
        go.write_text("go")
        out, err = reader.communicate(timeout=60)
    finally:
        reader.kill()
    assert reader.returncode == 0, err
    assert out.split() == ["True", "1000010"]
    assert _count(settings.database) == 1_000_030


def test_a_reader_in_this_very_process_also_keeps_its_file(tmp_path):
    """DuckDB's lock is per process; the spare's check must see it from the same process too."""
    settings = _settings(tmp_path)
    _database(settings.database, 1_000_000)
    _build(settings, "one", 10)
    reader = duckdb.connect(str(settings.database), read_only=True)
    try:
        _build(settings, "two", 10)  # the reader's file is now the spare
        size = settings.database.stat().st_size
        assert _build(settings, "three", 10) == size  # ...so this build copies whole
        assert reader.execute("SELECT count(*), max(i) FROM t").fetchone() == (1_000_010, 999_999)
    finally:
        reader.close()
    assert _count(settings.database) == 1_000_030


def test_an_as_of_build_neither_keeps_nor_uses_the_spare(tmp_path):
    settings = _settings(tmp_path)
    _database(settings.database, 1_000)
    with working_copy(settings, datetime(2026, 1, 1, tzinfo=UTC), "past") as working:
        working.commit()
    assert not (settings.warehouse / SPARE_DATABASE).exists()
    assert _count(settings.database) == 1_000

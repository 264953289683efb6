"""The warehouse a build replaced is kept and becomes the next build's working copy, updated block
by block: the copy is byte for byte the warehouse whatever the spare held, writes only what
differs, and never writes a file somebody else can see (a reader of the old warehouse, a second
name of the warehouse itself). Real DuckDB files and, for readers, real processes."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest

from pipeline.support.apart import Stopped
from pipeline.support.settings import Settings
from pipeline.warehouse import spare as module
from pipeline.warehouse import swap as swap_module
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


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_a_spare_is_made_the_source_writing_only_the_blocks_that_differ(tmp_path, workers):
    source, spare, out = tmp_path / "source", tmp_path / "spare", tmp_path / "out"
    data = bytearray(os.urandom(10 * BLOCK + 123))
    source.write_bytes(data)
    data[3 * BLOCK + 7] ^= 0xFF  # one byte differs in the fourth block...
    data[9 * BLOCK] ^= 0xFF  # ...and one in the tenth: in other workers' runs but for one
    spare.write_bytes(data)
    assert refresh(spare, out, source, block=BLOCK, workers=workers) == 2 * BLOCK
    assert _bytes(out) == _bytes(source)
    assert not spare.exists()  # it became the copy


@pytest.mark.parametrize("workers", [1, 2, 3, 16])  # 16: more workers than blocks
@pytest.mark.parametrize("size", [0, 3 * BLOCK, 10 * BLOCK + 123, 13 * BLOCK + 5])
def test_a_spare_of_any_size_ends_as_the_source(tmp_path, size, workers):
    source, spare, out = tmp_path / "source", tmp_path / "spare", tmp_path / "out"
    source.write_bytes(os.urandom(10 * BLOCK + 123))
    spare.write_bytes(os.urandom(size))
    written = refresh(spare, out, source, block=BLOCK, workers=workers)
    assert _bytes(out) == _bytes(source)
    assert written == source.stat().st_size  # random bytes: every block differs


@pytest.mark.parametrize("workers", [1, 2, 3])
@pytest.mark.parametrize("size", [0, 1, BLOCK - 1, BLOCK, 2 * BLOCK + 1])
def test_a_source_of_any_size_is_copied_whole_into_a_spare_that_holds_more(tmp_path, size, workers):
    source, spare, out = tmp_path / "source", tmp_path / "spare", tmp_path / "out"
    data = os.urandom(size)
    source.write_bytes(data)
    spare.write_bytes(data + os.urandom(5 * BLOCK))  # the same start, then more
    assert refresh(spare, out, source, block=BLOCK, workers=workers) == 0
    assert _bytes(out) == data


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
path, ready, go, drop = sys.argv[1:5]
con = duckdb.connect(path, read_only=True)
first = con.execute("SELECT count(*), sum(i) FROM t").fetchone()
if drop == "drop":  # closing any descriptor of a file drops the process's POSIX locks on it
    open(path, "rb").close()
pathlib.Path(ready).write_text("ready")
while not pathlib.Path(go).exists():
    time.sleep(0.05)
print(first == con.execute("SELECT count(*), sum(i) FROM t").fetchone(), first[0])
"""
# Opens the database for writing, or says why it could not.
WRITER = """
import sys, duckdb
try:
    duckdb.connect(sys.argv[1]).close()
except duckdb.IOException as error:
    print("refused", str(error).splitlines()[0])
else:
    print("opened")
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


def _reader(settings: Settings, tmp_path: Path, drop: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", READER, str(settings.database), *_signals(tmp_path), drop],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _signals(tmp_path: Path) -> tuple[str, str]:
    return str(tmp_path / "ready"), str(tmp_path / "go")


def _two_builds_past_a_reader(settings: Settings) -> None:
    """With a reader on the warehouse: a build makes the reader's file the spare, and the next
    one must copy whole, leaving the reader's file out of both names."""
    readers_file = settings.database.stat().st_ino
    _build(settings, "two", 10)
    size = settings.database.stat().st_size
    assert _build(settings, "three", 10) == size
    spare = settings.warehouse / SPARE_DATABASE
    assert readers_file not in {settings.database.stat().st_ino, spare.stat().st_ino}


@pytest.mark.parametrize("drop", ["keep", "drop"], ids=["locked", "lock-dropped"])
def test_a_reader_of_the_replaced_warehouse_keeps_its_file_and_the_build_copies_whole(
    tmp_path, drop
):
    settings = _settings(tmp_path)
    _database(settings.database, 1_000_000)
    _build(settings, "one", 10)
    reader = _reader(settings, tmp_path, drop)
    try:
        _wait_for(tmp_path / "ready", reader)
        _two_builds_past_a_reader(settings)
        (tmp_path / "go").write_text("go")
        out, err = reader.communicate(timeout=60)
    finally:
        reader.kill()
    assert reader.returncode == 0, err
    assert out.split() == ["True", "1000010"]
    assert _count(settings.database) == 1_000_030


def test_a_refused_spare_leaves_the_warehouse_locked_against_writers(tmp_path):
    """The copy holds the warehouse open read-only so no writer starts midway; refusing the spare
    must not drop that lock (closing a descriptor of the warehouse would)."""
    source, spare = tmp_path / "source.duckdb", tmp_path / "spare.duckdb"
    _database(source, 1_000)
    _database(spare, 1_000)
    held = duckdb.connect(str(spare), read_only=True)  # a reader of the spare: refused
    guard = duckdb.connect(str(source), read_only=True)
    try:
        assert refresh(spare, tmp_path / "out", source) is None
        writer = subprocess.run(
            [sys.executable, "-c", WRITER, str(source)], capture_output=True, text=True, timeout=60
        )
    finally:
        guard.close()
        held.close()
    assert writer.stdout.startswith("refused"), writer.stdout + writer.stderr


def test_a_lock_that_cannot_be_tried_means_a_full_copy(tmp_path, monkeypatch):
    def refuse(*args: object) -> None:
        raise OSError(errno.EINVAL, "no locks on this filesystem")

    source, spare = tmp_path / "source", tmp_path / "spare"
    source.write_bytes(b"a" * 1000)
    spare.write_bytes(b"a" * 1000)
    monkeypatch.setattr(module.fcntl, "fcntl", refuse)
    assert refresh(spare, tmp_path / "out", source) is None
    assert not spare.exists() and not (tmp_path / "out").exists()


def test_a_folder_where_the_spare_goes_neither_fails_a_build_nor_is_used(tmp_path):
    settings = _settings(tmp_path)
    _database(settings.database, 1_000)
    folder = settings.warehouse / SPARE_DATABASE
    with working_copy(settings, None, "one") as working:
        folder.mkdir()  # in the way when the build keeps what it replaces
        (folder / "inside").write_text("x")
        _append(working.path, 10)
        working.commit()
    assert _count(settings.database) == 1_010
    assert folder.is_dir()  # ...which the next build finds as its spare, and removes
    size = settings.database.stat().st_size
    assert _build(settings, "two", 10) == size
    assert folder.is_file() and _count(settings.database) == 1_020


def test_a_warehouse_with_a_write_ahead_log_is_copied_whole_with_it(tmp_path):
    """A writer of old that died left a log beside the warehouse: the copy takes both, as the
    plain copy always did, and leaves the spare for a later build."""
    settings = _settings(tmp_path)
    _database(settings.database, 100_000)
    _build(settings, "one", 10)
    subprocess.run([sys.executable, "-c", DIED_WRITING, str(settings.database)], check=True)
    wal = settings.database.with_name(settings.database.name + ".wal")
    assert wal.is_file()
    size = settings.database.stat().st_size
    assert _build(settings, "two", 1) == size
    assert _count(settings.database) == 100_010 + 5 + 1
    assert (settings.warehouse / SPARE_DATABASE).is_file()


# Appends five rows and dies before DuckDB folds its log into the file.
DIED_WRITING = """
import os, sys, duckdb
con = duckdb.connect(sys.argv[1])
con.execute("SET wal_autocheckpoint='1GB'")
con.execute("PRAGMA disable_checkpoint_on_shutdown")
con.execute("INSERT INTO t SELECT range, 'died' FROM range(5)")
os._exit(0)
"""


def test_a_reader_in_this_very_process_also_keeps_its_file(tmp_path):
    """DuckDB's lock is per process; the spare's check must see it from the same process too."""
    settings = _settings(tmp_path)
    _database(settings.database, 1_000_000)
    _build(settings, "one", 10)
    reader = duckdb.connect(str(settings.database), read_only=True)
    try:
        _two_builds_past_a_reader(settings)
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


def test_the_spare_can_be_turned_off(tmp_path, monkeypatch):
    settings = _settings(tmp_path)
    _database(settings.database, 1_000)
    _build(settings, "one", 10)
    assert (settings.warehouse / SPARE_DATABASE).is_file()
    monkeypatch.setenv("SPEEDBOOK_WAREHOUSE_SPARE", "0")
    size = settings.database.stat().st_size
    assert _build(settings, "two", 10) == size
    assert not (settings.warehouse / SPARE_DATABASE).exists()
    assert _count(settings.database) == 1_020


def test_a_source_that_changes_size_meanwhile_leaves_no_spare_behind(tmp_path, monkeypatch):
    """Nothing writes the warehouse while its copy is made (the caller holds it open in DuckDB);
    should it change size all the same, the spare is refused and the caller copies whole."""
    source, spare, out = tmp_path / "source", tmp_path / "spare", tmp_path / "out"
    source.write_bytes(os.urandom(10 * BLOCK + 123))
    spare.write_bytes(os.urandom(10 * BLOCK + 123))
    original = module._refresh_range

    def shrinking(ours, theirs, start, stop, block):
        if start == 0:
            os.truncate(source, BLOCK // 2)
        return original(ours, theirs, start, stop, block)

    monkeypatch.setattr(module, "_refresh_range", shrinking)
    assert refresh(spare, out, source, block=BLOCK, workers=2) is None
    assert not out.exists() and not spare.exists()


def test_refresh_apart_gives_what_refresh_gives_from_a_process_of_its_own(tmp_path):
    source, spare, out = tmp_path / "source", tmp_path / "spare", tmp_path / "out"
    data = bytearray(os.urandom(3 * module.BLOCK + 17))
    source.write_bytes(data)
    data[module.BLOCK + 5] ^= 0xFF  # one block of four differs
    spare.write_bytes(data)
    assert module.refresh_apart(spare, out, source) == module.BLOCK
    assert _bytes(out) == _bytes(source) and not spare.exists()
    assert module.refresh_apart(tmp_path / "missing", tmp_path / "other", source) is None


def test_refresh_apart_says_why_its_process_failed(tmp_path):
    spare, out = tmp_path / "spare", tmp_path / "out"
    spare.write_bytes(b"x" * 100)
    with pytest.raises(OSError, match=r"updating .*spare.* failed: .*No such file"):
        module.refresh_apart(spare, out, tmp_path / "no-warehouse-here")


def test_refresh_apart_stops_when_told(tmp_path):
    source, spare, out = tmp_path / "source", tmp_path / "spare", tmp_path / "out"
    source.write_bytes(b"a" * 1000)
    spare.write_bytes(b"b" * 1000)
    stop = threading.Event()
    stop.set()
    with pytest.raises(Stopped):
        module.refresh_apart(spare, out, source, stop)


def test_a_copy_made_in_the_background_is_the_warehouse_once_ready(tmp_path):
    settings = _settings(tmp_path)
    _database(settings.database, 2_000_000)
    _build(settings, "one", 10)  # leaves a spare
    with working_copy(settings, None, "two", background=True) as working:
        assert working.background
        working.ready()
        assert working.copying is None and working.copy_seconds > 0
        assert 0 < working.copy_written_bytes < settings.database.stat().st_size / 4
        assert _bytes(working.path) == _bytes(settings.database)
        _append(working.path, 5)
        working.commit()
    assert _count(settings.database) == 2_000_015
    assert "while Dagster started" in working.summary()


def test_a_background_copy_that_fails_fails_at_ready_and_leaves_nothing(tmp_path, monkeypatch):
    settings = _settings(tmp_path)
    _database(settings.database, 1_000)

    def full(source, destination, spare, stop=None):
        destination.write_bytes(b"half")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(swap_module, "_copy", full)
    with (
        pytest.raises(OSError, match="No space left"),
        working_copy(settings, None, "run", background=True) as working,
    ):
        working.ready()
    assert not working.path.exists() and _count(settings.database) == 1_000


def test_leaving_before_a_background_copy_is_ready_stops_it_and_deletes_it(tmp_path, monkeypatch):
    settings = _settings(tmp_path)
    _database(settings.database, 500_000)
    _build(settings, "one", 10)
    original = swap_module._copy

    def slow(source, destination, spare, stop=None):
        original(source, destination, spare, stop)
        if not stop.wait(60):  # a copy that would take a minute, unless told to stop
            raise AssertionError("the copy was never told to stop")
        raise Stopped("stopped")

    monkeypatch.setattr(swap_module, "_copy", slow)
    started = time.monotonic()
    with (
        pytest.raises(RuntimeError, match="Dagster failed to start"),
        working_copy(settings, None, "run", background=True) as working,
    ):
        raise RuntimeError("Dagster failed to start")
    assert time.monotonic() - started < 30  # stopped, not waited for
    assert not working.path.exists()
    copying = [t for t in threading.enumerate() if t.name.startswith(swap_module.COPY_THREAD)]
    for thread in copying:  # its result was handed over: it is ending, if not ended
        thread.join(timeout=10)
    assert not [t for t in copying if t.is_alive()]
    assert _count(settings.database) == 500_010  # the warehouse itself untouched

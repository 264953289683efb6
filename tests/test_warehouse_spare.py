"""The warehouse a build replaced is kept and becomes the next build's working copy, updated block
by block: the copy is byte for byte the warehouse whatever the spare held, writes only what
differs, and never writes a file somebody else can see (a reader of the old warehouse, a second
name of the warehouse itself). Real DuckDB files and, for readers, real processes."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest

from pipeline.support.apart import Stopped
from pipeline.support.file_keys import file_identity
from pipeline.support.settings import Settings
from pipeline.warehouse import spare as module
from pipeline.warehouse import swap as swap_module
from pipeline.warehouse.spare import (
    SPARE_DATABASE,
    SPARE_LOCK,
    SPARE_LOG,
    SPARE_STATE,
    keep_current,
    keep_current_after,
    refresh,
    spare_lock,
    take_current,
)
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


def _settled(settings: Settings) -> None:
    """Wait for the update of the spare a build started after its commit."""
    with spare_lock(settings.warehouse / SPARE_DATABASE) as held:
        assert held


def test_successive_builds_reuse_the_replaced_warehouse(tmp_path, monkeypatch):
    """Updated by the next build (the switch's `next-build`): the build compares and writes
    what differs."""
    monkeypatch.setenv(swap_module.SPARE_SWITCH, swap_module.SPARE_AT_NEXT_BUILD)
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
    assert not (settings.warehouse / SPARE_STATE).exists()


def test_the_spare_brought_up_to_date_after_a_build_is_the_next_copy_as_it_is(tmp_path):
    """By default the update runs after the commit, in a process that outlives the build; the
    next build takes the spare without reading it, and builds still stack."""
    settings = _settings(tmp_path)
    _database(settings.database, 2_000_000)
    spare = settings.warehouse / SPARE_DATABASE
    size = settings.database.stat().st_size
    assert _build(settings, "one", 10) == size  # no spare yet: copied whole
    for run, rows, total in (("two", 10, 2_000_020), ("three", 5, 2_000_025)):
        _settled(settings)
        assert _bytes(spare) == _bytes(settings.database)
        assert " written" in (settings.warehouse / SPARE_LOG).read_text()
        with working_copy(settings, None, run) as working:
            assert working.copy_written_bytes == 0 and working.copy_ahead_seconds is not None
            assert "after the last build" in working.summary()
            _append(working.path, rows)
            working.commit()
        assert working.spare_kept_current and "the spare's update started" in working.summary()
        assert _count(settings.database) == total
    _settled(settings)
    assert _count(spare) == 2_000_025  # the spare is the warehouse again


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
    _settled(settings)
    assert (settings.warehouse / SPARE_STATE).is_file()
    monkeypatch.setenv("SPEEDBOOK_WAREHOUSE_SPARE", "0")
    size = settings.database.stat().st_size
    assert _build(settings, "two", 10) == size
    assert not (settings.warehouse / SPARE_DATABASE).exists()
    assert not (settings.warehouse / SPARE_STATE).exists()
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


def test_a_copy_made_in_the_background_is_the_warehouse_once_ready(tmp_path, monkeypatch):
    monkeypatch.setenv(swap_module.SPARE_SWITCH, swap_module.SPARE_AT_NEXT_BUILD)
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


def _pair(tmp_path: Path) -> tuple[Path, Path]:
    """A warehouse and a spare one build behind it."""
    warehouse, spare = tmp_path / "speedbook.duckdb", tmp_path / SPARE_DATABASE
    _database(warehouse, 200_000)
    spare.write_bytes(warehouse.read_bytes())
    _append(warehouse, 10)
    return warehouse, spare


def test_keep_current_makes_the_spare_the_warehouse_and_says_so(tmp_path):
    warehouse, spare = _pair(tmp_path)
    assert 0 < keep_current(spare, warehouse, block=BLOCK) < warehouse.stat().st_size / 4
    assert _bytes(spare) == _bytes(warehouse)
    state = json.loads((tmp_path / SPARE_STATE).read_text())
    assert state["warehouse"] == file_identity(warehouse.stat())
    assert state["spare"] == file_identity(spare.stat()) and state["seconds"] >= 0
    out = tmp_path / "out"
    assert take_current(spare, out, warehouse) == state["seconds"]
    assert _bytes(out) == _bytes(warehouse) and not spare.exists()
    assert not (tmp_path / SPARE_STATE).exists()  # a record is used once


def _written_since(warehouse: Path, spare: Path, record: Path) -> None:
    _append(warehouse, 1)


def _spare_written_since(warehouse: Path, spare: Path, record: Path) -> None:
    data = spare.read_bytes()
    spare.write_bytes(data)  # the same bytes, written again: it is no longer what was vouched


def _warehouse_copied(warehouse: Path, spare: Path, record: Path) -> None:
    copy = warehouse.with_name("copy")
    shutil.copy2(warehouse, copy)  # the same bytes and times, another file
    os.replace(copy, warehouse)


def _garbage(warehouse: Path, spare: Path, record: Path) -> None:
    record.write_bytes(b"\x00{not json" * 1000)


def _other_format(warehouse: Path, spare: Path, record: Path) -> None:
    state = json.loads(record.read_text())
    record.write_text(json.dumps({**state, "format": 99}))


def _no_record(warehouse: Path, spare: Path, record: Path) -> None:
    record.unlink()  # an update killed before it wrote one


def _a_folder(warehouse: Path, spare: Path, record: Path) -> None:
    record.unlink()
    record.mkdir()


@pytest.mark.parametrize(
    "change",
    [
        _written_since,
        _spare_written_since,
        _warehouse_copied,
        _garbage,
        _other_format,
        _no_record,
        _a_folder,
    ],
)
def test_a_spare_is_taken_unread_only_as_its_record_describes_it(tmp_path, change):
    """Anything but both files as the update left them: the spare stays, to be compared."""
    warehouse, spare = _pair(tmp_path)
    keep_current(spare, warehouse, block=BLOCK)
    change(warehouse, spare, tmp_path / SPARE_STATE)
    held = _bytes(spare)
    assert take_current(spare, tmp_path / "out", warehouse) is None
    assert not (tmp_path / "out").exists() and _bytes(spare) == held
    assert refresh(spare, tmp_path / "out", warehouse, block=BLOCK) is not None
    assert _bytes(tmp_path / "out") == _bytes(warehouse)


def test_a_spare_somebody_reads_is_neither_updated_nor_taken(tmp_path):
    warehouse, spare = _pair(tmp_path)
    held = _bytes(spare)
    reader = duckdb.connect(str(spare), read_only=True)
    try:
        assert keep_current(spare, warehouse, block=BLOCK) is None
        assert _bytes(spare) == held and not (tmp_path / SPARE_STATE).exists()
    finally:
        reader.close()
    keep_current(spare, warehouse, block=BLOCK)
    reader = duckdb.connect(str(spare), read_only=True)  # opened after the update
    try:
        assert take_current(spare, tmp_path / "out", warehouse) is None
        assert spare.exists() and not (tmp_path / "out").exists()
    finally:
        reader.close()


def test_a_warehouse_written_during_the_update_leaves_no_record(tmp_path, monkeypatch):
    warehouse, spare = _pair(tmp_path)
    original = module._update

    def meanwhile(ours, theirs, block, workers):
        written = original(ours, theirs, block, workers)
        with open(warehouse, "r+b") as file:  # same size, one byte rewritten as it was
            file.seek(100)
            byte = file.read(1)
            file.seek(100)
            file.write(byte)
        return written

    monkeypatch.setattr(module, "_update", meanwhile)
    assert keep_current(spare, warehouse, block=BLOCK) is None
    assert not (tmp_path / SPARE_STATE).exists()


def test_a_build_waits_for_an_update_still_running(tmp_path):
    settings = _settings(tmp_path)
    _database(settings.database, 100_000)
    _build(settings, "one", 10)
    _settled(settings)
    lock = os.open(settings.warehouse / SPARE_LOCK, os.O_RDWR)
    fcntl.flock(lock, fcntl.LOCK_EX)  # as the update's process holds it
    threading.Timer(1.0, os.close, [lock]).start()
    started = time.monotonic()
    with working_copy(settings, None, "two") as working:
        assert time.monotonic() - started >= 1.0
        assert working.copy_written_bytes == 0  # then took what the update left
        assert _bytes(working.path) == _bytes(settings.database)


def test_no_update_starts_while_another_holds_the_lock(tmp_path):
    warehouse, spare = _pair(tmp_path)
    held = _bytes(spare)
    with spare_lock(spare) as taken:
        assert taken and not keep_current_after(spare, warehouse)
    assert _bytes(spare) == held and not (tmp_path / SPARE_LOG).exists()


def test_a_wait_for_the_update_stops_when_the_build_gives_up(tmp_path):
    _, spare = _pair(tmp_path)
    stop = threading.Event()
    with spare_lock(spare) as taken:
        assert taken
        threading.Timer(0.3, stop.set).start()
        with pytest.raises(Stopped), spare_lock(spare, stop):
            pass


def test_the_update_after_a_build_runs_in_a_process_of_its_own(tmp_path):
    """`python -m pipeline.warehouse.spare keep ...`, started with the lock handed over: the
    lock is held until its process is done with the spare, and it says what it wrote."""
    warehouse, spare = _pair(tmp_path)
    assert keep_current_after(spare, warehouse)
    with spare_lock(spare) as taken:
        assert taken
    assert _bytes(spare) == _bytes(warehouse)
    assert (tmp_path / SPARE_LOG).read_text().strip().endswith(" written")
    assert take_current(spare, tmp_path / "out", warehouse) is not None


def test_a_link_where_the_spare_lock_goes_is_never_followed(tmp_path):
    """`.spare.lock` is opened without following a link: a link there (to a file elsewhere)
    means no lock, so the spare is compared as before and no update is started."""
    settings = _settings(tmp_path)
    _database(settings.database, 2_000_000)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(b"not a lock")
    (settings.warehouse / SPARE_LOCK).symlink_to(elsewhere)
    _build(settings, "one", 10)
    with working_copy(settings, None, "two") as working:
        assert 0 < working.copy_written_bytes < settings.database.stat().st_size / 4  # compared
        assert working.copy_ahead_seconds is None
        _append(working.path, 5)
        working.commit()
    assert not working.spare_kept_current
    assert _count(settings.database) == 2_000_015
    assert elsewhere.read_bytes() == b"not a lock"
    assert not (settings.warehouse / SPARE_STATE).exists()

"""A build writes a copy of the warehouse and swaps it in whole, so analysts never see half a build
and readers never block one.

The build's database is a sibling of the warehouse file, `.build-<run id>.duckdb`: a copy of the
current one (or a new, empty file when there is none). Every step of the run writes that copy; a
run that succeeds checkpoints it, fsyncs it and renames it over its target in one `os.replace`,
and a run that fails deletes it. A reader that opened the old file keeps reading the old file (its
open inode) until it closes; the next one to open the path gets the new file. A build killed
midway leaves its copy behind, and the next build deletes it under the warehouse lock.

The file a build replaces is kept as `.spare.duckdb`, and the next build brings it up to date
block by block instead of copying the warehouse whole (pipeline/warehouse/spare.py): at 90 days
of polls the warehouse is 6 GB, and one poll changes a few megabytes of it. `speedbook build`
has the copy made while Dagster starts (`working_copy(..., background=True)`: a thread that
waits on the spare's update, itself a process of its own; then `WorkingCopy.ready()` before the
first step): at 90 days each takes a second or two.

Builds with `--as-of` describe the past: their database is kept apart, as
`speedbook.as-of.duckdb` (the last such build's), so they never replace what analysts query.
The caller holds the warehouse lock (pipeline/support/locking.py) around all of this.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import duckdb

from pipeline.support.settings import Settings
from pipeline.warehouse.compaction import compact
from pipeline.warehouse.connection import WAL_SUFFIX, drop_checkpointed_wal, wal_of
from pipeline.warehouse.spare import (
    SPARE_DATABASE,
    discard_spare,
    keep_current_after,
    refresh_apart,
    spare_lock,
    take_current,
)

WORKING_PREFIX = ".build-"
WORKING_SUFFIX = ".duckdb"
AS_OF_DATABASE = "speedbook.as-of.duckdb"
COPY_THREAD = "speedbook-working-copy"  # the name of the thread of a background copy
# "0": keep no spare, copy the warehouse whole; "next-build": the next build updates the spare;
# anything else: the spare is brought up to date after each build, off its clock
SPARE_SWITCH = "SPEEDBOOK_WAREHOUSE_SPARE"
SPARE_OFF, SPARE_AT_NEXT_BUILD = "0", "next-build"
_HOLDER = re.compile(r"Conflicting lock is held in (?P<program>.+?) \(PID (?P<pid>\d+)\)")


class BuildRefused(RuntimeError):
    """A build that must not start; the message is one line saying why and what to do."""


def target_database(settings: Settings, as_of: datetime | None) -> Path:
    """The file a successful build replaces: the warehouse, or the --as-of build's own file."""
    return settings.warehouse / AS_OF_DATABASE if as_of is not None else settings.database


def working_database(settings: Settings, run_id: str) -> Path:
    """The database the steps of run `run_id` write (every process of the run derives it)."""
    return settings.warehouse / f"{WORKING_PREFIX}{run_id}{WORKING_SUFFIX}"


def _fsync(path: Path) -> None:
    handle = os.open(path, os.O_RDONLY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)


def writer_of(path: Path) -> str | None:
    """Who has the DuckDB file open for writing ("PID 123, python3"), or None when nobody
    does (a reader does not count: readers and a build's copy live side by side)."""
    if not path.is_file():
        return None
    try:
        duckdb.connect(str(path), read_only=True).close()
    except duckdb.ConnectionException:
        return None  # this very process has it open (with other settings): not another one
    except duckdb.IOException as error:
        found = _HOLDER.search(str(error))
        if found:
            return f"PID {found['pid']}, {Path(found['program']).name}"
        if "lock" in str(error).lower():
            return "another process"
        raise BuildRefused(
            f"{path} cannot be opened ({' '.join(str(error).split())}); move it away to build "
            "the warehouse again from the snapshots"
        ) from None
    return None


def clean_working_copies(warehouse: Path) -> list[Path]:
    """Delete the databases of killed builds. Only under the warehouse lock: then no live build
    is writing one."""
    removed = []
    if not warehouse.is_dir():
        return removed
    for path in sorted(warehouse.iterdir()):
        name = path.name
        if name.startswith(WORKING_PREFIX) and (
            name.endswith(WORKING_SUFFIX) or name.endswith(WORKING_SUFFIX + WAL_SUFFIX)
        ):
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed


@dataclass
class WorkingCopy:
    """The database one run writes, and the file it replaces when the run succeeds."""

    path: Path
    target: Path
    spare: Path | None = None  # where the replaced target is kept (None: not kept)
    keep_current: bool = False  # the spare is brought up to date after the commit
    spare_kept_current: bool = False  # ... and that update was started
    # the copy was the spare as the update after the last build left it: that update's seconds
    copy_ahead_seconds: float | None = None
    copy_seconds: float = 0.0
    copy_written_bytes: int = 0  # what making the copy wrote: the warehouse's size, or less
    commit_seconds: float = 0.0
    compacted: bool = False  # written afresh at commit: most of it was free space
    committed: bool = False
    background: bool = False  # the copy is made in a thread while the caller goes on
    copy_waited_seconds: float = 0.0  # how long ready() waited for it
    # the copy being made in the background, until ready(): (bytes written, copy_ahead_seconds,
    # seconds)
    copying: Future[tuple[int, float | None, float]] | None = field(default=None, repr=False)

    def ready(self) -> None:
        """Wait for a background copy; raises what making it raised. A copy made in the
        foreground is ready already."""
        if self.copying is None:
            return
        started = time.perf_counter()
        try:
            self.copy_written_bytes, self.copy_ahead_seconds, self.copy_seconds = (
                self.copying.result()
            )
        finally:
            self.copying = None
            self.copy_waited_seconds = round(time.perf_counter() - started, 3)

    def summary(self) -> str:
        """How the copy was made and committed, for the run's log."""
        beside = (
            f" while Dagster started (then waited for: {self.copy_waited_seconds} s)"
            if self.background
            else ""
        )
        ahead = (
            f" (the spare, brought up to date in {self.copy_ahead_seconds} s after the last build)"
            if self.copy_ahead_seconds is not None
            else ""
        )
        return (
            f"copied in {self.copy_seconds} s{beside}{ahead}, "
            f"{self.copy_written_bytes / 1e6:,.1f} MB written; "
            f"committed in {self.commit_seconds} s"
            + (", written afresh without its free space" if self.compacted else "")
            + ("; the spare's update started" if self.spare_kept_current else "")
        )

    def commit(self) -> None:
        """Make the run's database the target: checkpoint (the write-ahead log folded into the
        file), write it afresh if it is mostly free space (pipeline/warehouse/compaction.py),
        fsync, rename over the target, fsync the folder."""
        self.ready()
        started = time.perf_counter()
        con = duckdb.connect(str(self.path))
        try:
            con.execute("CHECKPOINT")
        finally:
            con.close()
        drop_checkpointed_wal(self.path)
        self.compacted = compact(self.path)
        _fsync(self.path)
        if self.spare is not None and self.target.is_file():
            # not kept (a folder in the way, no hard links here): the next build copies whole
            with contextlib.suppress(OSError):
                self.spare.unlink(missing_ok=True)
                os.link(self.target, self.spare)
        # The target's own log, if a writer of old left one, belongs to the old file (the copy
        # took it in): it must not be replayed onto the new one.
        wal_of(self.target).unlink(missing_ok=True)
        os.replace(self.path, self.target)
        _fsync(self.target.parent)
        self.committed = True
        if self.keep_current and self.spare is not None and self.spare.is_file():
            self.spare_kept_current = keep_current_after(self.spare, self.target)
        self.commit_seconds = round(time.perf_counter() - started, 3)


def _copy(
    source: Path, destination: Path, spare: Path | None, stop: threading.Event | None = None
) -> tuple[int, float | None]:
    """Copy the warehouse (and its write-ahead log, if a writer of old left one) while holding
    it open read-only, so no writer can start on it midway; from the spare where there is a
    usable one and no log: taken as it is when the update after the last build left it the
    warehouse's bytes, else updated now (`stop` set: the wait or the update is stopped,
    raising Stopped). Returns the bytes written, and the seconds the update after the last
    build took when the spare was taken from it."""
    reader = duckdb.connect(str(source), read_only=True)
    try:
        if spare is not None and not wal_of(source).exists():
            with spare_lock(spare, stop) as held:
                ahead = take_current(spare, destination, source) if held else None
                if ahead is not None:
                    return 0, ahead
                written = refresh_apart(spare, destination, source, stop)
            if written is not None:
                return written, None
        shutil.copyfile(source, destination)
        if wal_of(source).exists():
            shutil.copyfile(wal_of(source), wal_of(destination))
        return source.stat().st_size, None
    finally:
        reader.close()


@contextmanager
def working_copy(
    settings: Settings, as_of: datetime | None, run_id: str, *, background: bool = False
) -> Iterator[WorkingCopy]:
    """The database of run `run_id`: a copy of the warehouse, deleted on the way out unless the
    caller committed it. Refuses (BuildRefused) a warehouse another process has open for
    writing: its file may be half-written, and the swap would discard what it writes.

    `background`: the copy is made in a thread, and the caller calls `ready()` before it
    touches the copy (commit() does too). Leaving without waiting (the caller failed first)
    stops an update of the spare, or waits for a whole copy to end, before the copy is
    deleted."""
    target = target_database(settings, as_of)
    holder = writer_of(settings.database)
    if holder is not None:
        raise BuildRefused(
            f"{settings.database} is open for writing by another process ({holder}); close it, "
            "then build again (readers, such as `speedbook sql`, do not get in the way)"
        )
    path = working_database(settings, run_id)
    # an --as-of build starts from the warehouse too (its staging cache), or from the last
    # --as-of build's file when there is no warehouse yet
    source = next((p for p in (settings.database, target) if p.is_file()), None)
    # only a build that replaces the warehouse keeps what it replaced, and only for the next one
    spare = settings.warehouse / SPARE_DATABASE if as_of is None else None
    switch = os.environ.get(SPARE_SWITCH, "1")
    if spare is not None and switch == SPARE_OFF:
        discard_spare(spare)  # one kept before the switch was turned off
        spare = None
    stop = threading.Event()

    def make() -> tuple[int, float | None, float]:
        started = time.perf_counter()
        written, ahead = 0, None
        if source is not None:
            written, ahead = _copy(source, path, spare, stop)  # a spare only where source is target
        else:
            duckdb.connect(str(path)).close()  # a first build starts from an empty file
        return written, ahead, round(time.perf_counter() - started, 3)

    working = WorkingCopy(
        path,
        target,
        spare=spare,
        keep_current=switch != SPARE_AT_NEXT_BUILD,
        background=background,
    )
    if background:
        pool = ThreadPoolExecutor(1, thread_name_prefix=COPY_THREAD)
        working.copying = pool.submit(make)  # ready() raises what it raised
        pool.shutdown(wait=False)  # its one thread ends with the copy
    else:
        working.copy_written_bytes, working.copy_ahead_seconds, working.copy_seconds = make()
    try:
        yield working
    finally:
        if working.copying is not None:  # never waited for: the caller failed before
            stop.set()
            with contextlib.suppress(Exception):
                working.ready()
        if not working.committed:
            path.unlink(missing_ok=True)
            wal_of(path).unlink(missing_ok=True)

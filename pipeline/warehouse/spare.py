"""The warehouse a build replaced, kept to become the next build's working copy: brought up to
date by writing only the blocks that differ from the warehouse, instead of copying the whole file.

A build that appends one poll to 90 days of history changes a few megabytes of a 6 GB DuckDB file;
a full copy writes all 6 GB, and the commit's fsync sends them all to disk again. The spare is
the previous warehouse file (hard-linked before the swap), so most of its blocks already hold
the bytes the warehouse holds. Whatever the spare holds, the result is byte for byte the
warehouse: every block is compared, so the spare only decides how much must be written. Two
threads compare a half of the file each: reading both files is the cost, and it is one core's
copying out of the page cache. A build runs it in a process of its own (`refresh_apart`, see
pipeline/support/apart.py for why) while its own process starts Dagster.

A spare is refused (deleted: a reader of it keeps its file) and the warehouse copied whole when:
- somebody may still be reading it: a connection opened on the warehouse before the last swap
  reads that very file, and writing into it would change what the reader sees. Every process
  whose open files can be listed (`/proc/<pid>/fd`: this user's) is looked at, since a process
  can hold the file without a lock (a DuckDB reader that closed another descriptor of it lost
  its POSIX lock; `cp` never takes one). For other users' processes, DuckDB's shared `fcntl`
  lock is what there is: an open-file-description write lock that cannot be taken means a
  reader holds one. A reader of another user without a lock is the one case not seen;
- it has another name (a link count above one: a swap that stopped between the link and the
  rename leaves the spare as the warehouse itself), is not a regular file, or any of these
  checks fails to run (no `/proc`, a lock the filesystem refuses).

Between builds the spare is brought up to date ahead of time (`keep_current_after`): once a
build has swapped its copy in, a process of its own (outliving the build, in a session of its
own) compares the spare with the new warehouse and writes `.spare.json`, the file identities
(device, inode, size, modification and change time) of both as they were when the spare held
the warehouse's bytes, synced. The next build finds both files as written and takes the spare
as its copy without reading them (`take_current`); any other state of either file (a writer
since, a copy, an update killed midway, a record that cannot be read) is a compare as before.
At 90 days of polls that takes the compare of two 5.9 GB files (1.3-1.5 s of two cores, beside
Dagster's start) out of every build, into the idle half hour after it. `.spare.lock` is held by
whoever writes the spare: a build waits on it for an update still running.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import stat
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from pipeline.support.apart import (
    POLL_SECONDS,
    Apart,
    Stopped,
    child_environment,
    die_with_parent,
)
from pipeline.support.file_keys import file_identity

SPARE_DATABASE = ".spare.duckdb"
SPARE_STATE = ".spare.json"  # the spare holds the warehouse's bytes: both files' identities
SPARE_LOCK = ".spare.lock"  # held by whoever writes the spare
SPARE_LOG = ".spare.log"  # what the last update after a build printed
STATE_FORMAT = 1
_MODULE = "pipeline.warehouse.spare"  # run as `python -m` by a build
BLOCK = 4 * 1024 * 1024  # compared and written a block at a time: a few DuckDB row groups
# threads comparing runs of the file: one core copying out of the page cache is the bound, and
# two halved the first pass of a build at 90 days (two 5.9 GB files: 8.4 s to 4.5 s)
WORKERS = 2


def _ofd_write_lock(handle: int) -> bool:
    """Take a non-blocking write lock on the whole file for this open file description; False
    when another holder (any process, this one included) has a lock on it, or when locks cannot
    be taken here."""
    # struct flock on Linux: l_type, l_whence, l_start, l_len, l_pid (0 for OFD locks), padding
    request = struct.pack("hhqqi4x", fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
    try:
        fcntl.fcntl(handle, fcntl.F_OFD_SETLK, request)
    except OSError:  # EAGAIN or EACCES: held; anything else: cannot tell
        return False
    return True


def _open_anywhere(info: os.stat_result, own: int) -> bool:
    """Whether any process whose descriptors can be listed has the file open (other than
    through `own`, this process's descriptor of it). Raises OSError without /proc."""
    for process in os.scandir("/proc"):
        if not process.name.isdigit():
            continue
        try:
            descriptors = os.scandir(f"{process.path}/fd")
        except OSError:  # another user's, or gone
            continue
        with descriptors:
            for entry in descriptors:
                if process.name == str(os.getpid()) and entry.name == str(own):
                    continue
                try:
                    held = os.stat(entry.path)
                except OSError:  # closed meanwhile
                    continue
                if (held.st_dev, held.st_ino) == (info.st_dev, info.st_ino):
                    return True
    return False


def _writable_alone(handle: int) -> bool:
    """Whether the file open as `handle` is this build's alone to write, locked for it."""
    info = os.fstat(handle)
    if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
        return False
    os.stat("/proc/self/fd")  # no /proc: nothing can be said about other readers
    return _ofd_write_lock(handle) and not _open_anywhere(info, handle)


def _alone_for_writing(path: Path) -> int | None:
    """`path` open for writing when it is this process's alone to write (_writable_alone: its
    lock then held through the descriptor returned); None when it cannot be opened (a folder, a
    link) or is not alone."""
    try:
        handle = os.open(path, os.O_RDWR | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        if _writable_alone(handle):
            return handle
    except OSError:
        pass
    os.close(handle)
    return None


def _same(have: bytearray, want: bytearray, count: int) -> bool:
    # whole buffers compare with memcmp; memoryviews compare item by item, 80x slower
    return have == want if count == len(want) else have[:count] == want[:count]


def _discard(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def _refresh_range(
    ours: int, theirs: int, start: int, stop: int | None, block: int
) -> tuple[int, int]:
    """Make bytes [start, stop) of `ours` those of `theirs` (to the end of `theirs` when `stop`
    is None), comparing a block at a time; return the bytes written and the offset reached.
    Positional reads and writes: the workers share both descriptors."""
    written = 0
    want = bytearray(block)
    have = bytearray(block)
    offset = start
    while stop is None or offset < stop:
        count = os.preadv(theirs, [want], offset)
        if not count:
            break
        got = os.preadv(ours, [have], offset)
        if got < count or not _same(have, want, count):
            rest = memoryview(want)[:count]
            at = offset
            while rest:
                sent = os.pwrite(ours, rest, at)
                rest, at = rest[sent:], at + sent
            written += count
        offset += count
    return written, offset


def _ranges(size: int, block: int, workers: int) -> list[tuple[int, int | None]]:
    """`workers` runs of whole blocks covering a file of `size` bytes; the last one reads to
    the end, wherever that is."""
    blocks = -(-size // block)
    per = max(1, -(-blocks // workers))
    starts = list(range(0, max(blocks, 1), per))
    return [
        (first * block, (first + per) * block if first + per < blocks else None) for first in starts
    ]


def refresh(
    spare: Path, destination: Path, source: Path, block: int = BLOCK, workers: int = WORKERS
) -> int | None:
    """Move the spare to `destination` and make it hold the bytes of `source`, writing only the
    blocks that differ; return how many bytes were written. None when there is no usable spare
    (one that is not is deleted). `source` is opened only once the spare is accepted: closing a
    descriptor of it would drop the caller's DuckDB lock, which keeps writers off it. `workers`
    threads compare a run of the file each."""
    try:
        os.replace(spare, destination)
    except FileNotFoundError:
        return None
    handle = _alone_for_writing(destination)
    if handle is None:  # a folder, a link, unreadable, or somebody else's too
        _discard(destination)
        return None
    with open(handle, "r+b", buffering=0):
        theirs = os.open(source, os.O_RDONLY)
        try:
            written = _update(handle, theirs, block, workers)
        finally:
            os.close(theirs)
        if written is None:
            # the warehouse changed size meanwhile, which its DuckDB lock should prevent: the
            # spare cannot be trusted to hold it; the caller copies it whole
            destination.unlink()
    return written


def _update(ours: int, theirs: int, block: int, workers: int) -> int | None:
    """Make the file open as `ours` hold the bytes of `theirs`, `workers` threads comparing a
    run of it each (the reads release the GIL); the bytes written, or None when `theirs`
    changed size meanwhile (then `ours` holds no file in particular)."""
    runs = _ranges(os.fstat(theirs).st_size, block, workers)
    with ThreadPoolExecutor(max_workers=len(runs)) as pool:
        parts = [
            pool.submit(_refresh_range, ours, theirs, start, stop, block) for start, stop in runs
        ]
        done = [part.result() for part in parts]
    end = done[-1][1]  # where the last run found the end
    short = any(
        reached != upto for (_, reached), (_, upto) in zip(done[:-1], runs[:-1], strict=True)
    )
    if short or end != os.fstat(theirs).st_size:
        return None
    os.ftruncate(ours, end)
    return sum(written for written, _ in done)


def _state_path(spare: Path) -> Path:
    return spare.with_name(SPARE_STATE)


def discard_spare(spare: Path) -> None:
    """Delete the spare and its record (the spare turned off); what cannot be deleted stays."""
    for path in (spare, _state_path(spare)):
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)


def _open_lock(spare: Path) -> int:
    return os.open(spare.with_name(SPARE_LOCK), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)


@contextmanager
def spare_lock(spare: Path, stop: threading.Event | None = None) -> Iterator[bool]:
    """Hold `.spare.lock` beside the spare, waiting while an update after the last build still
    runs (`stop` set meanwhile: Stopped). Yields False when the lock cannot be taken here (a
    filesystem without `flock`): then nothing may be taken from `.spare.json`."""
    try:
        handle = _open_lock(spare)
    except OSError:
        yield False
        return
    try:
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                held = True
                break
            except BlockingIOError:
                if stop is not None and stop.is_set():
                    raise Stopped(f"waiting for the update of {spare} was stopped") from None
                time.sleep(POLL_SECONDS)
            except OSError:
                held = False
                break
        yield held
    finally:
        os.close(handle)


def take_current(spare: Path, destination: Path, source: Path) -> float | None:
    """Move the spare to `destination` when `.spare.json` says it holds the bytes `source`
    holds now (both files as the update after the last build left them) and nobody else has it
    open; then the seconds that update took, else None with the spare left where it was. The
    record is deleted either way: it describes the files as they were. Call with the spare's
    lock held."""
    record = _state_path(spare)
    try:
        with open(record, "rb") as file:
            state = json.loads(file.read(4096))
    except (OSError, ValueError):
        state = None
    try:
        record.unlink(missing_ok=True)
    except OSError:  # a folder in its way: never a record
        return None
    if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
        return None
    handle = _alone_for_writing(spare)
    if handle is None:
        return None
    with open(handle, "r+b", buffering=0):
        try:
            now = {
                "warehouse": file_identity(os.stat(source)),
                "spare": file_identity(os.fstat(handle)),
            }
        except OSError:
            return None
        if any(state.get(name) != value for name, value in now.items()):
            return None
        os.replace(spare, destination)  # still open and locked: no reader starts meanwhile
    seconds = state.get("seconds")
    return float(seconds) if isinstance(seconds, int | float) else 0.0


def keep_current(
    spare: Path, warehouse: Path, block: int = BLOCK, workers: int = WORKERS
) -> int | None:
    """Bring the spare up to date with the warehouse, in place, and write `.spare.json` once
    its bytes are synced; the bytes written. None, and no record, when the spare is not this
    process's alone to write (it is left as it is: the next build refuses it) or the warehouse
    changed meanwhile. Call with the spare's lock held."""
    started = time.perf_counter()
    _state_path(spare).unlink(missing_ok=True)
    handle = _alone_for_writing(spare)
    if handle is None:
        return None
    with open(handle, "r+b", buffering=0):
        theirs = os.open(warehouse, os.O_RDONLY)
        try:
            before = file_identity(os.fstat(theirs))
            written = _update(handle, theirs, block, workers)
            if written is None:
                return None
            os.fsync(handle)  # the record must never outlive the bytes it vouches for
            if file_identity(os.stat(warehouse)) != before:  # written, or replaced, meanwhile
                return None
            state = {
                "format": STATE_FORMAT,
                "warehouse": before,
                "spare": file_identity(os.fstat(handle)),
                "written": written,
                "seconds": round(time.perf_counter() - started, 3),
            }
        finally:
            os.close(theirs)
    partial = spare.with_name(SPARE_STATE + ".partial")
    with open(partial, "wb") as file:
        file.write(json.dumps(state).encode())
        file.flush()
        os.fsync(file.fileno())
    os.replace(partial, _state_path(spare))
    return written


def keep_current_after(spare: Path, warehouse: Path) -> bool:
    """Start keep_current() in a Python process that outlives this one, in a session of its own
    (a terminal's Ctrl-C after the build does not reach it), holding the spare's lock from now
    until it ends; what it printed, or its error, goes to `.spare.log`. False, and nothing
    started, when the lock is held or cannot be taken, or the process cannot start."""
    try:
        handle = _open_lock(spare)
    except OSError:
        return False
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with open(spare.with_name(SPARE_LOG), "wb") as log:
            process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    _MODULE,
                    "keep",
                    str(spare),
                    str(warehouse),
                    str(handle),
                ],
                pass_fds=(handle,),  # the lock is the child's from here on
                start_new_session=True,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                env=child_environment(),
            )
    except OSError:
        return False
    finally:
        os.close(handle)  # the child's copy keeps the lock
    # reaped here when it ends first; by init when this process ends first
    threading.Thread(target=process.wait, name="speedbook-spare-reaper", daemon=True).start()
    return True


_NONE = "none"  # what the process of refresh_apart prints when there was no usable spare


def refresh_apart(
    spare: Path, destination: Path, source: Path, stop: threading.Event | None = None
) -> int | None:
    """refresh() in a Python process of its own (pipeline/support/apart.py); the same result.
    `stop` set: the process is killed and Stopped raised (`destination` is the caller's to
    delete). The caller keeps its DuckDB lock on `source`: locks are per process, and the
    child's descriptors are its own."""
    work = Apart(
        _MODULE,
        [str(spare), str(destination), str(source)],
        f"updating {spare} into {destination}",
    )
    out = work.wait(stop)
    return None if out.strip() == _NONE else int(out)


def main(argv: list[str] | None = None) -> int:
    """`python -m pipeline.warehouse.spare SPARE DESTINATION SOURCE`: refresh(), printing the
    bytes written (`none`: no usable spare). `... keep SPARE WAREHOUSE LOCK_FD`: keep_current()
    under the lock handed over as descriptor LOCK_FD, released once the spare is closed."""
    args = argv or sys.argv[1:]
    if args[:1] == ["keep"]:
        spare, warehouse, lock = args[1:]
        try:
            written = keep_current(Path(spare), Path(warehouse))
        finally:
            os.close(int(lock))
        print(f"{spare}: not kept current" if written is None else f"{spare}: {written} written")
        return 0
    die_with_parent()
    spare, destination, source = (Path(arg) for arg in args)
    written = refresh(spare, destination, source)
    print(_NONE if written is None else written)
    return 0


if __name__ == "__main__":
    sys.exit(main())

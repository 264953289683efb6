"""The warehouse a build replaced, kept to become the next build's working copy: brought up to
date by writing only the blocks that differ from the warehouse, instead of copying the whole file.

A build that appends one poll to 90 days of history changes a few megabytes of a 6 GB DuckDB file;
a full copy writes all 6 GB, and the commit's fsync sends them all to disk again. The spare is
the previous warehouse file (hard-linked before the swap), so most of its blocks already hold
the bytes the warehouse holds. Whatever the spare holds, the result is byte for byte the
warehouse: every block is compared, so the spare only decides how much must be written.

Two cases make a spare unusable, and then the caller copies in full:
- a reader still has it open: a connection opened on the warehouse before the last swap reads
  that very file, and writing into it would change what the reader sees. DuckDB holds a shared
  `fcntl` lock for as long as a connection is open; an open-file-description write lock that
  cannot be taken means another process holds one. Within this process the lock says nothing
  (a process loses its POSIX locks on a file when it closes any descriptor of it, as reading the
  warehouse to copy it does), so this process's own open files are looked at too;
- it has another name too (a link count above one: a swap that stopped between the link and
  the rename leaves the spare as the warehouse itself), or it is not a regular file.
"""

from __future__ import annotations

import fcntl
import os
import stat
import struct
from pathlib import Path

SPARE_DATABASE = ".spare.duckdb"
BLOCK = 4 * 1024 * 1024  # compared and written a block at a time: a few DuckDB row groups


def _ofd_write_lock(handle: int) -> bool:
    """Take a non-blocking write lock on the whole file for this open file description; False
    when another holder (any process, this one included) has a lock on it."""
    # struct flock: l_type, l_whence, l_start, l_len, l_pid (0 for OFD locks), native layout
    request = struct.pack("hhqqi", fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
    try:
        fcntl.fcntl(handle, fcntl.F_OFD_SETLK, request)
    except (BlockingIOError, PermissionError):  # EAGAIN or EACCES: held
        return False
    return True


def _open_in_this_process(info: os.stat_result) -> bool:
    """Whether this process has the file open (a DuckDB connection of its own, say)."""
    for entry in os.scandir("/proc/self/fd"):
        try:
            held = os.stat(entry.path)
        except OSError:  # closed meanwhile, or the listing's own descriptor
            continue
        if (held.st_dev, held.st_ino) == (info.st_dev, info.st_ino):
            return True
    return False


def refresh(spare: Path, destination: Path, source: Path, block: int = BLOCK) -> int | None:
    """Move the spare to `destination` and make it hold the bytes of `source`, writing only the
    blocks that differ; return how many bytes were written. None when there is no usable spare
    (one that is not is deleted; a reader of it keeps its file). The caller keeps writers off
    `source` meanwhile."""
    try:
        os.replace(spare, destination)
    except FileNotFoundError:
        return None
    info = destination.lstat()
    if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1 or _open_in_this_process(info):
        destination.unlink()
        return None
    written = 0
    want = bytearray(block)
    have = bytearray(block)
    with open(source, "rb", buffering=0) as theirs, open(destination, "r+b", buffering=0) as ours:
        if not _ofd_write_lock(ours.fileno()):
            destination.unlink()
            return None
        offset = 0
        while count := theirs.readinto(want):
            got = ours.readinto(have)
            if got != count or memoryview(have)[:count] != memoryview(want)[:count]:
                ours.seek(offset)
                rest = memoryview(want)[:count]
                while rest:
                    rest = rest[ours.write(rest) :]
                written += count
            offset += count
            ours.seek(offset)
        ours.truncate(offset)
    return written

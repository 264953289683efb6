"""What says a file is unchanged since it was looked at, without reading it again."""

from __future__ import annotations

import os

FileKey = tuple[int, int, int]


def file_key(info: os.stat_result) -> FileKey:
    """What says a stored file is unchanged since its bytes were read and verified: its size,
    modification time and change time (ns). A write moves the ctime, even one that kept the size
    and put the old mtime back (nobody can set a ctime), to the file system's timestamp
    resolution: a write in the same clock tick as the stat is not seen."""
    return (info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def file_identity(info: os.stat_result) -> list[int]:
    """The same file, unchanged: its device and inode beside its `file_key` (a copy with the
    same times, or another file renamed over it, is another file). A list: it is kept as JSON."""
    return [info.st_dev, info.st_ino, *file_key(info)]

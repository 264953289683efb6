"""One build at a time per warehouse (an advisory lock file held for the whole build), and the
flock wait both it and the publish lock use."""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path


class LockBusy(RuntimeError):
    """Another process holds the warehouse lock."""


def wait_for_flock(handle: int, wait_seconds: float) -> bool:
    """Take an exclusive flock on an open file, polling for up to `wait_seconds`; False when
    another process still holds it then."""
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.2)


@contextmanager
def warehouse_lock(path: Path, wait_seconds: float = 0.0) -> Iterator[None]:
    """Hold an exclusive lock on ``path``; wait up to ``wait_seconds`` for it, then give up.

    The kernel releases the lock when the process dies, so a killed build never leaves the
    warehouse locked; the pid written into the file is only for the message.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if not wait_for_flock(handle, wait_seconds):
            holder = os.pread(handle, 200, 0).decode("utf-8", "replace").strip()
            raise LockBusy(
                f"another build holds {path} ({holder or 'holder unknown'}); "
                "wait for it to finish or pass --wait SECONDS"
            )
        os.ftruncate(handle, 0)
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        os.pwrite(handle, f"pid {os.getpid()} since {stamp}\n".encode(), 0)
        yield
    finally:
        os.close(handle)

"""The snapshot store as the rest of the code sees it: one interface, two backends.

`open_store(location)` gives the local folder store (pipeline/raw/snapshots.py) for a path and
the object store (pipeline/raw/s3_store.py) for `s3://bucket/prefix`; `Settings.snapshot_store`
is the location a command or a build uses (`--snapshots`, `SPEEDBOOK_SNAPSHOTS`, by default
`<warehouse>/raw`). Callers use only what `Store` (the backends' base class) names, so they do
not know which they have.
"""

from __future__ import annotations

import os
from pathlib import Path

from pipeline.raw.s3_store import S3SnapshotStore, is_object_location
from pipeline.raw.snapshots import SnapshotDamaged, SnapshotError, SnapshotStore, StoreBase

# What a snapshot store offers, whatever holds it: the base class of both backends.
Store = StoreBase


def open_store(location: str | os.PathLike[str]) -> Store:
    """The store at `location`: an `s3://bucket/prefix` address or a local folder. An S3
    address is checked here (SnapshotError naming what is wrong); its credentials are read
    from the environment at the first request."""
    if is_object_location(location):
        return S3SnapshotStore(str(location))
    return SnapshotStore(Path(location))


def is_local(store: Store) -> bool:
    return isinstance(store, SnapshotStore)


def verify(store: Store) -> tuple[int, list[str]]:
    """Read every snapshot's bytes again, withdrawn ones included (their bytes are kept), and
    check them against the sha256 of their record: how many were checked, and the problems
    (unreadable records, damaged or missing bytes). A store that cannot be asked raises."""
    problems: list[str] = []
    snapshots = store.list(errors=problems, include_withdrawn=True)
    for meta in snapshots:
        try:
            store.read(meta)
        except SnapshotDamaged as error:
            problems.append(str(error))
    return len(snapshots), problems


__all__ = ["SnapshotError", "Store", "is_local", "open_store", "verify"]

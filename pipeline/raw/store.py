"""The snapshot store as the rest of the code sees it: one interface, two backends.

`open_store(location)` gives the local folder store (pipeline/raw/snapshots.py) for a path and
the object store (pipeline/raw/s3_store.py) for `s3://bucket/prefix`; `Settings.snapshot_store`
is the location a command or a build uses (`--snapshots`, `SPEEDBOOK_SNAPSHOTS`, by default
`<warehouse>/raw`). Callers use only what `Store` names, so they do not know which they have.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import BinaryIO, Protocol

from pipeline.raw.s3_store import S3SnapshotStore, is_object_location
from pipeline.raw.snapshots import (
    AddResult,
    SnapshotDamaged,
    SnapshotError,
    SnapshotMeta,
    SnapshotStore,
    Withdrawal,
)


class Store(Protocol):
    """What a snapshot store offers, whatever holds it."""

    cleaned: list[Path]  # temporary files of killed writers deleted (the local store only)

    @property
    def location(self) -> str: ...

    def add(
        self,
        source_id: str,
        data: bytes,
        *,
        url: str,
        retrieved_at: datetime,
        content_type: str,
        obtained_by: str,
        extension: str,
        note: str = "",
        http: dict[str, str] | None = None,
        reconstructed_from: dict[str, str | None] | None = None,
    ) -> AddResult: ...

    def add_stream(
        self,
        source_id: str,
        reader: BinaryIO,
        *,
        url: str,
        retrieved_at: datetime,
        content_type: str,
        obtained_by: str,
        extension: str,
        note: str = "",
        http: dict[str, str] | None = None,
        reconstructed_from: dict[str, str | None] | None = None,
    ) -> AddResult: ...

    def list(
        self,
        source_id: str | None = None,
        *,
        as_of: datetime | None = None,
        errors: list[str] | None = None,
        include_withdrawn: bool = False,
    ) -> list[SnapshotMeta]: ...

    def list_and_withdrawals(
        self,
        source_id: str | None = None,
        *,
        as_of: datetime | None = None,
        errors: list[str] | None = None,
    ) -> tuple[list[SnapshotMeta], list[Withdrawal]]: ...

    def withdrawals(
        self,
        source_id: str | None = None,
        *,
        as_of: datetime | None = None,
        errors: list[str] | None = None,
    ) -> list[Withdrawal]: ...

    def find(self, source_id: str, name: str) -> SnapshotMeta: ...

    def latest(self, source_id: str, *, as_of: datetime | None = None) -> SnapshotMeta | None: ...

    def read(self, meta: SnapshotMeta) -> bytes: ...

    def withdraw(self, meta: SnapshotMeta, reason: str, when: datetime) -> Withdrawal: ...

    def withdrawal(self, meta: SnapshotMeta) -> Withdrawal | None: ...

    def has_record(self, meta: SnapshotMeta) -> bool: ...

    def has_snapshots(self) -> bool: ...

    def stat_of(self, meta: SnapshotMeta) -> os.stat_result | None: ...

    def stats_of(self, metas: Iterable[SnapshotMeta]) -> list[os.stat_result | None]: ...


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

"""The raw layer: which snapshots a build may use, per source, as of a date."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from pipeline.raw.s3_store import is_object_location
from pipeline.raw.snapshots import (
    SnapshotDamaged,
    SnapshotMeta,
    SnapshotStore,
    Withdrawal,
    format_utc,
    still_verified,
)
from pipeline.raw.store import Store, open_store
from pipeline.sources.registry import Source
from pipeline.support.file_keys import FileKey


@dataclass(frozen=True)
class SourceInventory:
    source: Source
    snapshots: tuple[SnapshotMeta, ...]  # oldest first, retrieved up to the build's as-of time

    @property
    def latest(self) -> SnapshotMeta | None:
        return self.snapshots[-1] if self.snapshots else None


@dataclass(frozen=True)
class Inventory:
    sources: dict[str, SourceInventory]
    problems: tuple[str, ...]  # unreadable metadata, snapshots of unregistered sources
    withdrawn: tuple[Withdrawal, ...] = ()  # withdrawn by hand: out of the build, kept on disk

    @property
    def snapshots(self) -> list[SnapshotMeta]:
        return [m for inv in self.sources.values() for m in inv.snapshots]

    @property
    def data_date(self) -> datetime | None:
        """The newest retrieval among the snapshots in use: the date a release describes."""
        latest = [inv.latest.retrieved for inv in self.sources.values() if inv.latest]
        return max(latest) if latest else None


@dataclass(frozen=True)
class Listing:
    """One scan of the whole store: what a build's inventories and its citation check read, so
    that a build lists a large store once."""

    snapshots: tuple[SnapshotMeta, ...]  # oldest first, without the withdrawn ones
    withdrawals: tuple[Withdrawal, ...]
    problems: tuple[str, ...]  # records that could not be read

    @classmethod
    def of(cls, store: Store) -> Listing:
        problems: list[str] = []
        snapshots, withdrawals = store.list_and_withdrawals(errors=problems)
        return cls(tuple(snapshots), tuple(withdrawals), tuple(problems))


def take_inventory(
    store: Store,
    sources: dict[str, Source],
    as_of: datetime | None = None,
    *,
    listing: Listing | None = None,
) -> Inventory:
    """The snapshots of registered sources retrieved up to `as_of`, without withdrawn ones (which
    are listed apart, for the changelog); from `listing` when given, else from a scan."""
    whole = listing if listing is not None else Listing.of(store)
    problems = list(whole.problems)
    by_source: dict[str, list[SnapshotMeta]] = {source_id: [] for source_id in sources}
    for meta in whole.snapshots:
        if as_of is not None and meta.retrieved > as_of:
            continue
        if meta.source_id not in by_source:
            problems.append(f"{meta.snapshot_id}: source {meta.source_id!r} is not in the registry")
            continue
        by_source[meta.source_id].append(meta)
    return Inventory(
        sources={
            source_id: SourceInventory(sources[source_id], tuple(metas))
            for source_id, metas in by_source.items()
        },
        problems=tuple(problems),
        withdrawn=tuple(
            w
            for w in whole.withdrawals
            if w.meta.source_id in sources and (as_of is None or w.meta.retrieved <= as_of)
        ),
    )


def citation_check(
    store: Store,
    listing: Listing | None = None,
    verified: Mapping[str, tuple[str, FileKey]] | None = None,
) -> Callable[[str, str], str | None]:
    """Why a snapshot a release cites (its id and the sha256 the release records) can no longer
    be vouched for: withdrawn, gone from the store, or bytes that no longer hash to it (read
    through the store, so a link or an oversized file is refused, not followed); None when it
    is good. Every snapshot in the store counts, whatever the registry says now. With the
    build's `listing`, a cited snapshot's record and withdrawal are looked up again on disk
    (one cited snapshot at a time), so a removal since the listing still counts. `verified`
    holds the file key of snapshots whose bytes were read and found good (the staging cache's
    extractions), with the sha256 they hashed to: one whose record names that sha256 and whose
    data file still has that key is not read again."""
    whole = listing if listing is not None else Listing.of(store)
    stored = {meta.snapshot_id: meta for meta in whole.snapshots}
    stored.update((w.snapshot_id, w.meta) for w in whole.withdrawals)
    known = verified or {}

    def unchanged(meta: SnapshotMeta) -> bool:
        if meta.snapshot_id not in known:
            return False
        info = store.stat_of(meta)
        return info is not None and still_verified(known[meta.snapshot_id], meta, info)

    def check(snapshot_id: str, sha256: str) -> str | None:
        meta = stored.get(snapshot_id)
        if meta is None or not store.has_record(meta):
            return "no longer in the snapshot store (or its record is unreadable)"
        withdrawal = store.withdrawal(meta)
        if withdrawal is not None:
            why = f" ({withdrawal.reason})" if withdrawal.reason else ""
            return f"withdrawn on {withdrawal.withdrawn_at}{why}"
        if meta.sha256 != sha256:
            return f"its record holds sha256 {meta.sha256[:12]}…, not the {sha256[:12]}… cited"
        if unchanged(meta):
            return None
        try:
            store.read(meta)
        except SnapshotDamaged as error:
            return str(error).removeprefix(f"{snapshot_id}: ")
        return None

    return check


def scope_problem(raw_dir: Path | str, as_of: datetime | None) -> str | None:
    """Why a build has nothing to read, in one line saying what to do, or None: a warehouse
    folder with no snapshot store, an empty store, an --as-of bound before the first snapshot.
    Checked before a build starts, so a typo'd path or year fails at once and changes nothing.
    `raw_dir`: the store's location, a folder or an s3:// prefix (`Settings.snapshot_store`)."""
    if is_object_location(raw_dir):
        store: Store = open_store(raw_dir)
        where = store.location
    else:
        raw_dir = Path(raw_dir)
        warehouse = raw_dir.parent
        if not raw_dir.is_dir():
            return (
                f"{warehouse} has no snapshot store ({raw_dir} is missing): point --warehouse at "
                "a warehouse folder, or add a first snapshot there (`speedbook snapshot add`, "
                "`speedbook fetch`)"
            )
        store = SnapshotStore(raw_dir)
        where = str(raw_dir)
    empty = (
        f"no snapshot in {where} yet: add one (`speedbook snapshot add`) or fetch "
        "(`speedbook fetch`)"
    )
    if as_of is None:  # one readable record will do: listing a large store takes seconds
        return None if store.has_snapshots() else empty
    snapshots = store.list(errors=[])
    if not snapshots:
        return empty
    first = snapshots[0]
    if first.retrieved > as_of:
        return (
            f"--as-of {format_utc(as_of)} is before the first snapshot ({first.snapshot_id}, "
            f"retrieved {first.retrieved_at}): nothing to build"
        )
    return None

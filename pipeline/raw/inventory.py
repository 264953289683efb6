"""The raw layer: which snapshots a build may use, per source, as of a date."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from pipeline.raw.snapshots import (
    SnapshotDamaged,
    SnapshotMeta,
    SnapshotStore,
    Withdrawal,
    format_utc,
)
from pipeline.sources.registry import Source


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


def take_inventory(
    store: SnapshotStore, sources: dict[str, Source], as_of: datetime | None = None
) -> Inventory:
    """The snapshots of registered sources retrieved up to `as_of`, without withdrawn ones (which
    are listed apart, for the changelog)."""
    problems: list[str] = []
    by_source: dict[str, list[SnapshotMeta]] = {source_id: [] for source_id in sources}
    snapshots, withdrawals = store.list_and_withdrawals(as_of=as_of, errors=problems)
    for meta in snapshots:
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
        withdrawn=tuple(w for w in withdrawals if w.meta.source_id in sources),
    )


def citation_check(store: SnapshotStore) -> Callable[[str, str], str | None]:
    """Why a snapshot a release cites (its id and the sha256 the release records) can no longer
    be vouched for: withdrawn, gone from the store, or bytes that no longer hash to it (read
    through the store, so a link or an oversized file is refused, not followed); None when it
    is good. Every snapshot in the store counts, whatever the registry says now."""
    snapshots, withdrawals = store.list_and_withdrawals(errors=[])
    stored = {meta.snapshot_id: meta for meta in snapshots}
    withdrawn = {w.snapshot_id: w for w in withdrawals}

    def check(snapshot_id: str, sha256: str) -> str | None:
        if snapshot_id in withdrawn:
            withdrawal = withdrawn[snapshot_id]
            why = f" ({withdrawal.reason})" if withdrawal.reason else ""
            return f"withdrawn on {withdrawal.withdrawn_at}{why}"
        meta = stored.get(snapshot_id)
        if meta is None:
            return "no longer in the snapshot store (or its record is unreadable)"
        if meta.sha256 != sha256:
            return f"its record holds sha256 {meta.sha256[:12]}…, not the {sha256[:12]}… cited"
        try:
            store.read(meta)
        except SnapshotDamaged as error:
            return str(error).removeprefix(f"{snapshot_id}: ")
        return None

    return check


def scope_problem(raw_dir: Path, as_of: datetime | None) -> str | None:
    """Why a build has nothing to read, in one line saying what to do, or None: a warehouse
    folder with no snapshot store, an empty store, an --as-of bound before the first snapshot.
    Checked before a build starts, so a typo'd path or year fails at once and changes nothing."""
    warehouse = raw_dir.parent
    if not raw_dir.is_dir():
        return (
            f"{warehouse} has no snapshot store ({raw_dir} is missing): point --warehouse at a "
            "warehouse folder, or add a first snapshot there (`speedbook snapshot add`, "
            "`speedbook fetch`)"
        )
    snapshots = SnapshotStore(raw_dir).list(errors=[])
    if not snapshots:
        return (
            f"no snapshot in {raw_dir} yet: add one (`speedbook snapshot add`) or fetch "
            "(`speedbook fetch`)"
        )
    first = snapshots[0]
    if as_of is not None and first.retrieved > as_of:
        return (
            f"--as-of {format_utc(as_of)} is before the first snapshot ({first.snapshot_id}, "
            f"retrieved {first.retrieved_at}): nothing to build"
        )
    return None

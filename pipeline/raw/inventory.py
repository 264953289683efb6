"""The raw layer: which snapshots a build may use, per source, as of a date."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pipeline.raw.snapshots import SnapshotMeta, SnapshotStore
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
    problems: list[str] = []
    by_source: dict[str, list[SnapshotMeta]] = {source_id: [] for source_id in sources}
    for meta in store.list(as_of=as_of, errors=problems):
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
    )

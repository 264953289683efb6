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


_cache: dict[tuple[str, str, tuple[str, ...]], Inventory] = {}
_reported: set[str] = set()


def cached_inventory(
    store: SnapshotStore, sources: dict[str, Source], as_of: datetime | None = None
) -> Inventory:
    """The inventory, read once per build: every asset of a run sees the same snapshots, and a
    large store's metadata is not re-read by each of them. The runner clears it per build."""
    key = (str(store.root), as_of.isoformat() if as_of else "", tuple(sorted(sources)))
    if key not in _cache:
        _cache[key] = take_inventory(store, sources, as_of)
    return _cache[key]


def unreported_problems(inventory: Inventory) -> list[str]:
    """The inventory's problems not yet handed out since the cache was last cleared. Every staged
    asset of a run shares one inventory; this way each problem is reported once, not per asset
    (a run whose steps are separate processes reports it once per step)."""
    fresh = [problem for problem in inventory.problems if problem not in _reported]
    _reported.update(fresh)
    return fresh


def clear_cache() -> None:
    _cache.clear()
    _reported.clear()

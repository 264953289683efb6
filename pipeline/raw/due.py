"""Which sources a scheduled fetch brings up to date: those of its cadence that are due.

A source is due at a tick when it would be stale by the next tick without a fetch now
(`pipeline.raw.freshness.due`: measured from its newest snapshot, or a later fetch that found
it unchanged). With a cron string as frequent as the cadence itself, that is every source of the
cadence at every tick (a little more than one cadence will have passed at the next tick), unless
something else fetched it since the last tick; with a more frequent cron string, a source is
fetched only about once per cadence and a failed fetch is retried at every tick.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pipeline.raw.freshness import due
from pipeline.raw.outcomes import latest_outcomes
from pipeline.raw.store import open_store
from pipeline.sources.registry import RegistryError, Source, load_crons, load_registry
from pipeline.sources.schedule import next_tick
from pipeline.support.settings import Settings


@dataclass(frozen=True)
class DuePlan:
    """What a tick fetches: the due sources, and those of its cadence(s) that are not due yet."""

    due: tuple[Source, ...]
    not_due: tuple[Source, ...]

    @property
    def source_ids(self) -> list[str]:
        return [source.id for source in self.due]


def due_sources(settings: Settings, now: datetime, cadence: str | None = None) -> DuePlan:
    """The sources of `cadence` (or of every cadence with a cron string when None) that are due
    at `now`. Sources of a cadence without a cron string, and sources the registry marks
    `scheduled = false`, are never due: they are fetched by hand.
    Raises RegistryError for a broken registry or a cadence without a cron string."""
    sources = load_registry(settings.registry)
    crons = load_crons(settings.registry)
    if cadence is not None and cadence not in crons:
        raise RegistryError(
            f"registry {settings.registry}: cadence {cadence[:80]!r} has no cron string in "
            f"[cadences] (it has: {', '.join(crons) or 'none'})"
        )
    wanted = [
        source
        for source in sources.values()
        if source.scheduled and source.cadence in crons and cadence in (None, source.cadence)
    ]
    ticks = {name: next_tick(cron, now) for name, cron in crons.items()}
    store = open_store(settings.snapshot_store)
    outcomes = latest_outcomes(settings.raw_dir)
    due_now, later = [], []
    for source in wanted:
        # unreadable records are the build's to report (raw_inventory); here they count as absent
        snapshots = store.list(source.id, errors=[])
        newest = snapshots[-1] if snapshots else None
        fetch = due(newest, outcomes.get(source.id), source.max_age, ticks[source.cadence])
        (due_now if fetch else later).append(source)
    return DuePlan(tuple(due_now), tuple(later))

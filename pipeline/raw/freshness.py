"""Freshness of a source: how old the snapshot it is read from is, against its cadence.

The rule, the same as `mart.source_health`'s `stale` (sql/mart/00_scope.sql: mart.fresh_as_of,
mart.older_than_cadence): a source is fresh as of the retrieval of the snapshot it is read from,
or as of a later fetch that found that snapshot unchanged (outcome `unchanged` or
`not_modified` for it) when it is also the source's newest; it is stale when that time is more
than its cadence before the reference time. The warehouse measures from the build's data date;
`speedbook sources` measures from now. Never from when a build ran.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from pipeline.raw.inventory import Inventory
from pipeline.raw.outcomes import OutcomeRecord
from pipeline.raw.snapshots import SnapshotMeta, parse_utc

CONFIRMING_OUTCOMES = ("unchanged", "not_modified")


def confirmation(outcome: OutcomeRecord | None, newest: SnapshotMeta | None) -> datetime | None:
    """When the source's last fetch found its newest snapshot still current (HTTP 304, or the
    same bytes again), or None: only that outcome, naming that snapshot, re-confirms it."""
    if (
        outcome is not None
        and newest is not None
        and outcome.outcome in CONFIRMING_OUTCOMES
        and outcome.snapshot in (newest.file, newest.data_file)
    ):
        return parse_utc(outcome.at)
    return None


def confirmations(
    outcomes: Mapping[str, OutcomeRecord], inventory: Inventory
) -> dict[str, datetime]:
    """Per source, when its last fetch re-confirmed its newest snapshot (sources it did not
    re-confirm are left out): core.sources.confirmed_at."""
    confirmed = {}
    for source_id, record in outcomes.items():
        entry = inventory.sources.get(source_id)
        when = confirmation(record, entry.latest if entry else None)
        if when is not None:
            confirmed[source_id] = when
    return confirmed


@dataclass(frozen=True)
class Freshness:
    """A source's freshness at a reference time."""

    snapshot: SnapshotMeta  # the snapshot the source is read from
    confirmed_at: datetime | None  # a fetch's re-confirmation of it, if any
    fresh_as_of: datetime  # its retrieval, or that later re-confirmation
    max_age: timedelta  # the source's cadence
    at: datetime  # the reference time: a build's data date, or now
    stale: bool

    @property
    def age(self) -> timedelta:
        """How old the snapshot in use is at the reference time (from its retrieval)."""
        return self.at - self.snapshot.retrieved


def freshness(
    used: SnapshotMeta,
    newest: SnapshotMeta,
    confirmed_at: datetime | None,
    max_age: timedelta,
    at: datetime,
) -> Freshness:
    """The rule above, for the snapshot a source is read from (`used`) and its newest one."""
    # a re-confirmation of the newest snapshot says nothing about an older one in use
    confirmed = confirmed_at if used.snapshot_id == newest.snapshot_id else None
    fresh_as_of = max(used.retrieved, confirmed) if confirmed else used.retrieved
    return Freshness(used, confirmed, fresh_as_of, max_age, at, fresh_as_of < at - max_age)


def due(
    newest: SnapshotMeta | None,
    outcome: OutcomeRecord | None,
    max_age: timedelta,
    next_tick: datetime,
) -> bool:
    """Whether a fetch at a tick of the source's schedule is due: the rule above says the source
    would be stale at the schedule's next tick if it were not fetched now (or it has no snapshot
    at all). Measured from its newest snapshot, re-confirmed or not: a failed fetch confirms
    nothing, so a source whose fetch failed is due again at the next tick."""
    if newest is None:
        return True
    confirmed = confirmation(outcome, newest)
    return freshness(newest, newest, confirmed, max_age, next_tick).stale

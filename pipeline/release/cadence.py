"""How often a build publishes a release.

Every build commits the lake (analysts and `speedbook sql` see each poll at once). A release, the
versioned exports and their Parquet, is by default published by every build whose content changed.
With a release cadence (`SPEEDBOOK_RELEASE_CADENCE`, a cadence of the registry's vocabulary:
`hourly`, `daily`...), a build that comes sooner than that after the last release that took
`latest` publishes nothing and says when the next one is due; the first build after that publishes.
A poll every half hour then costs the lake's commit, not a whole release (about 90 MB at 400
models) 48 times a day. An `--as-of` build is asked for by hand: it is always due.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from pipeline.sources.registry import CADENCES
from pipeline.support.settings import ENV_RELEASE_CADENCE

RELEASE_DUE_AT = "release_due_at"  # a build's report: when the release it did not publish is due


class ReleaseCadenceError(ValueError):
    """The release cadence setting names no cadence."""


def release_interval(cadence: str) -> timedelta | None:
    """The least time between two releases: None for a release from every build."""
    if not cadence:
        return None
    if cadence not in CADENCES:
        raise ReleaseCadenceError(
            f"{ENV_RELEASE_CADENCE}={cadence!r} is not a cadence: give one of "
            f"{', '.join(CADENCES)}, or leave it empty for a release from every build"
        )
    return CADENCES[cadence]


def next_release_at(
    last_published: datetime | None, interval: timedelta | None, now: datetime
) -> datetime | None:
    """When the next release is due, or None when one is due now (no cadence, no release yet,
    or the last one is at least `interval` old)."""
    if interval is None or last_published is None:
        return None
    due = last_published + interval
    return due if now < due else None

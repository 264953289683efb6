"""Cron strings of the cadences: when an unattended deployment fetches the sources of each one.

The registry's `[cadences]` table gives one cron string per cadence (five fields, minute to day
of week, in UTC); the Dagster schedules (pipeline/dagster/schedules.py) run at those times, and
the fetch of a run asks `next_tick` when its cadence comes round again (pipeline/raw/due.py).
Croniter reads them, as Dagster itself does, so a string accepted here is one Dagster runs.
"""

from __future__ import annotations

from datetime import UTC, datetime

from croniter import CroniterError, croniter

CRON_FIELDS = 5  # minute hour day-of-month month day-of-week: Dagster takes no seconds field
REFERENCE = datetime(2026, 1, 1, tzinfo=UTC)  # any time: a string that never fires fails from it


def cron_problem(cron: object) -> str | None:
    """Why `cron` is not a cron string a schedule can run, or None when it is."""
    if not isinstance(cron, str):
        return f"is not text ({type(cron).__name__})"
    if not croniter.is_valid(cron):
        return "is not a cron string (five fields: minute hour day-of-month month day-of-week)"
    fields = croniter.expand(cron)[0]
    if len(fields) != CRON_FIELDS:
        return f"has {len(fields)} fields, not {CRON_FIELDS} (no seconds or years)"
    try:
        next_tick(cron, REFERENCE)
    except CroniterError:
        return "never fires (no such date)"
    return None


def next_tick(cron: str, after: datetime) -> datetime:
    """The first time strictly after `after` at which `cron` fires, in UTC."""
    return croniter(cron, after.astimezone(UTC)).get_next(datetime).astimezone(UTC)

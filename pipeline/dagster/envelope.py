"""A build's envelope, without Dagster: it holds the build lock for the whole build, refuses up
front what has nothing to read, returns at once when nothing changed since the last successful
build (the fingerprint, pipeline/dagster/fingerprint.py), and otherwise runs the asset graph
(pipeline/dagster/runner.py), which writes the lake directly: its core and mart are committed in
one transaction, so readers see the last completed build meanwhile. It writes the build report
beside the warehouse. The build lock is the warehouse's flock, and with the lake's catalog on
PostgreSQL an advisory lock there too (pipeline/warehouse/build_lock.py). A run launched from
the UI takes the same lock in the job's executor (pipeline/dagster/executor.py).

Dagster is imported only when a run starts: a build with nothing new costs what reading the
fingerprint costs, not Dagster's import (about a second)."""

from __future__ import annotations

import json
import os
import resource
import time
import uuid
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime

from pipeline.dagster.fingerprint import build_fingerprint
from pipeline.raw.inventory import scope_problem
from pipeline.raw.snapshots import parse_utc
from pipeline.release.cadence import RELEASE_DUE_AT, ReleaseCadenceError, release_interval
from pipeline.support.progress import report
from pipeline.support.settings import ENV_DAGSTER_STORAGE, Settings
from pipeline.warehouse.build_lock import build_lock

REPORT_FILE = "build_report.json"
# The one URL form the instance storage takes: SQLAlchemy (under dagster-postgres) reads a bare
# postgresql:// as psycopg 3 since 2.1, and the driver installed with dagster-postgres is psycopg2
STORAGE_URL_SCHEME = "postgresql+psycopg2://"


class BuildRefused(RuntimeError):
    """The build cannot start: there is nothing to read (the message says why)."""


@dataclass(frozen=True)
class Problem:
    """One thing that failed, for the build's summary: what, why (one line), and the fix."""

    what: str  # a step or a check: `core_tables`, `out_inference.matches_json_schema`
    message: str
    fix: str


@dataclass
class BuildOutcome:
    success: bool
    run_id: str
    failures: list[str] = field(default_factory=list)
    failed_checks: list[str] = field(default_factory=list)
    skipped: bool = False  # nothing changed since the last successful build: no run at all
    stages: dict[str, float] = field(default_factory=dict)
    wall_seconds: float = 0.0
    problems: list[Problem] = field(default_factory=list)
    release: str | None = None
    published: bool = False
    message: str = ""  # the release step's line: what it published, or "nothing new: ..."
    # snapshots newer than the one their source is read from that could not be used (rejected,
    # damaged), as the changelog words them; capped, `not_used` counts them all
    notes: list[str] = field(default_factory=list)
    not_used: int = 0
    lake_snapshot: int | None = None  # the lake snapshot the build committed
    names: str = ""  # what the build says of names that resolve to nothing or await review
    release_due_at: str | None = None  # no release yet (its cadence): when the next is due


def storage_problem(storage: str) -> str | None:
    """Why the Dagster instance storage setting cannot be used (never quoting it: a URL holds a
    password), or None: empty (SQLite in the instance's folder) or a psycopg2 PostgreSQL URL."""
    if not storage or storage.startswith(STORAGE_URL_SCHEME):
        return None
    scheme = storage.partition("://")[0] if "://" in storage else ""
    hint = (
        f" (name the driver: {STORAGE_URL_SCHEME}, as SQLAlchemy reads a bare {scheme}:// as "
        "another driver, or none)"
        if scheme in ("postgresql", "postgres")
        else ""
    )
    return (
        f"{ENV_DAGSTER_STORAGE} is not a PostgreSQL URL{hint}: give "
        f"{STORAGE_URL_SCHEME}USER:PASSWORD@HOST:PORT/DATABASE, or leave it empty for SQLite in "
        "<warehouse>/dagster"
    )


def _last_report(settings: Settings) -> dict:
    try:
        return json.loads((settings.warehouse / REPORT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _write_report(settings: Settings, record: dict) -> None:
    path = settings.warehouse / REPORT_FILE
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _nothing_new(settings: Settings, last: dict, fingerprint: str, now: datetime) -> bool:
    """Whether the last build (`last`, its report) succeeded on these very inputs and left what
    it published in place, with no release of its due by `now` (the release cadence)."""
    release = last.get("release")
    return (
        not _release_due(last.get(RELEASE_DUE_AT), now)
        and last.get("success") is True
        and last.get("fingerprint") == fingerprint
        and isinstance(release, str)
        and (settings.exports / release / "datapackage.json").is_file()
        and (settings.exports / "latest").is_dir()
    )


def _release_due(due_at: object, now: datetime) -> bool:
    """Whether a release the last build did not publish (its report's `release_due_at`) is due;
    a value that is not a time (a report edited by hand) is taken as due."""
    if due_at is None:
        return False
    try:
        return now >= parse_utc(str(due_at))
    except ValueError:
        return True


NOTES_KEPT = 20  # notes a build report and an outcome keep; `not_used` counts them all


def execute(
    settings: Settings,
    as_of: datetime | None = None,
    *,
    force: bool = False,
    strict: bool = False,
    wait: float = 0.0,
    verbose: bool = False,
) -> BuildOutcome:
    """Build unless nothing changed since the last successful build (then return at once).

    Holds the build lock throughout (LockBusy after `wait` seconds); refuses, with
    BuildRefused and before any run starts, a warehouse with nothing to read or a Dagster
    storage setting that is not a PostgreSQL URL. `strict`: no release while a snapshot newer
    than the one its source is read from was rejected or damaged. `verbose`: Dagster's own log
    on stderr too."""
    started = time.perf_counter()
    # before the lock creates any folder
    problem = scope_problem(settings.snapshot_store, as_of) or storage_problem(
        settings.dagster_storage
    )
    if problem is not None:
        raise BuildRefused(problem)
    try:
        release_interval(settings.release_cadence)
    except ReleaseCadenceError as error:
        raise BuildRefused(str(error)) from None
    with build_lock(settings, wait):
        last = _last_report(settings)
        fingerprint = build_fingerprint(settings, as_of)
        if not force and _nothing_new(settings, last, fingerprint, datetime.now(UTC)):
            return _skipped(last, strict, time.perf_counter() - started)
        from pipeline.dagster.runner import run_graph  # Dagster, now that a run starts

        outcome = run_graph(
            settings, as_of, str(uuid.uuid4()), strict=strict, verbose=verbose, remake=force
        )
        outcome.wall_seconds = round(time.perf_counter() - started, 3)
        _write_report(
            settings,
            {
                "finished_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "as_of": as_of.isoformat() if as_of else None,
                "fingerprint": fingerprint if outcome.success else None,
                "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                **asdict(outcome),
            },
        )
    return outcome


def _skipped(last: dict, strict: bool, seconds: float) -> BuildOutcome:
    """Nothing changed since the last successful build (`last`, its report): its release stands,
    and so do the snapshots it could not use (a --strict build refuses them as it would have
    then)."""
    release = last["release"]
    report(f"nothing new since the last build: release {release} stands")
    notes = [str(n) for n in last.get("notes") or []]
    not_used = int(last.get("not_used") or 0)
    if strict and not_used:
        problem = Problem(
            "out_release",
            f"not published (--strict): {not_used} snapshot(s) could not be used",
            STRICT_FIX,
        )
        return BuildOutcome(
            False, str(last.get("run_id") or ""), problems=[problem], notes=notes, not_used=not_used
        )
    return BuildOutcome(
        True,
        "",
        skipped=True,
        wall_seconds=round(seconds, 3),
        release=release,
        notes=notes,
        not_used=not_used,
    )


STRICT_FIX = (
    "fix the parser (pipeline/extract/) or withdraw the snapshot (`speedbook snapshot remove "
    "SOURCE_ID SNAPSHOT_ID`), or build without --strict"
)

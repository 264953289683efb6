"""A build's envelope, without Dagster: it holds the warehouse lock for the whole build, refuses
up front what has nothing to read, returns at once when nothing changed since the last
successful build (the fingerprint, pipeline/dagster/fingerprint.py), and otherwise runs the
asset graph (pipeline/dagster/runner.py) against a working copy of the warehouse that it swaps
in only when the run succeeded (pipeline/warehouse/swap.py). It writes the build report beside
the warehouse. A run launched from the UI gets the same envelope from the job's executor
(pipeline/dagster/executor.py).

Dagster is imported only when a run starts: a build with nothing new costs what reading the
fingerprint costs, not Dagster's import (about a second). When the store's folders say that a
snapshot was added or removed since the last build (a run is then all but certain), Dagster is
imported while the fingerprint is taken in a process of its own."""

from __future__ import annotations

import json
import os
import resource
import time
import uuid
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime

from pipeline.dagster.fingerprint import build_fingerprint, fingerprint_apart, folder_stamp
from pipeline.raw.inventory import scope_problem
from pipeline.support.bulk import long_lived_objects
from pipeline.support.locking import warehouse_lock
from pipeline.support.progress import report
from pipeline.support.settings import Settings
from pipeline.warehouse.swap import (
    BuildRefused,
    clean_working_copies,
    target_database,
    working_copy,
)

REPORT_FILE = "build_report.json"


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
    warehouse_copy_seconds: float = 0.0
    warehouse_copy_written_bytes: int = 0  # under the warehouse's size when a spare was reused
    warehouse_copy_waited_seconds: float = 0.0  # of the copy's time, what the run waited for
    # the copy was the spare as the update after the last build left it: that update's seconds
    warehouse_copy_ahead_seconds: float | None = None
    warehouse_commit_seconds: float = 0.0
    warehouse_compacted: bool = False  # the commit wrote the database afresh (free space)


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


def _nothing_new(settings: Settings, last: dict, fingerprint: str, as_of: datetime | None) -> bool:
    """Whether the last build (`last`, its report) succeeded on these very inputs and left what
    it built in place."""
    release = last.get("release")
    return (
        last.get("success") is True
        and last.get("fingerprint") == fingerprint
        # a deleted warehouse is rebuilt, not reported current
        and target_database(settings, as_of).is_file()
        and isinstance(release, str)
        and (settings.exports / release / "datapackage.json").is_file()
        and (settings.exports / "latest").is_dir()
    )


def _fingerprint(settings: Settings, as_of: datetime | None, *, will_run: bool) -> str:
    """The fingerprint of the build's inputs. When the build will likely run (`will_run`), it is
    taken in a process of its own while this one imports what a run needs (each about 0.8 s at
    a year of pages); otherwise here, so that a build with nothing new never imports Dagster."""
    if not will_run:
        return build_fingerprint(settings, as_of)
    try:
        pending = fingerprint_apart(settings, as_of)
    except OSError:  # no process could be started: taken here
        return build_fingerprint(settings, as_of)
    try:
        with long_lived_objects():  # what a run is set up with (see run_graph)
            import pipeline.dagster.graph
            import pipeline.dagster.runner  # noqa: F401
        return pending.wait().strip()
    except OSError:  # it failed: taken again here, where an error is raised as what it is
        return build_fingerprint(settings, as_of)
    finally:
        pending.stop()


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

    Holds the warehouse lock throughout (LockBusy after `wait` seconds); refuses, with
    BuildRefused and before any run starts, a warehouse with nothing to read or one another
    process has open for writing. `strict`: no release while a snapshot newer than the one its
    source is read from was rejected or damaged. `verbose`: Dagster's own log on stderr too."""
    started = time.perf_counter()
    problem = scope_problem(settings.raw_dir, as_of)  # before the lock creates any folder
    if problem is not None:
        raise BuildRefused(problem)
    with warehouse_lock(settings.lock_file, wait):
        folders = folder_stamp(settings)
        last = _last_report(settings)  # read once: the guess, the answer, the skipped build's
        will_run = force or last.get("raw_folders") != folders
        fingerprint = _fingerprint(settings, as_of, will_run=will_run)
        if not force and _nothing_new(settings, last, fingerprint, as_of):
            return _skipped(last, strict, time.perf_counter() - started)
        for path in clean_working_copies(settings.warehouse):
            report(f"removed the database a killed build left: {path}")
        run_id = str(uuid.uuid4())  # known before the run: it names the run's working copy
        # the copy is made while Dagster is imported and the run set up (each a second or two
        # at 90 days of polls); the run waits for it before its first step
        with working_copy(settings, as_of, run_id, background=True) as working:
            with long_lived_objects():  # Dagster, now that a run starts (see run_graph)
                from pipeline.dagster.runner import run_graph

            outcome = run_graph(
                settings, as_of, run_id, strict=strict, verbose=verbose, ready=working.ready
            )
            if outcome.success:
                working.commit()
                report(f"warehouse committed: {working.target} ({working.summary()})")
        outcome.warehouse_copy_seconds = working.copy_seconds
        outcome.warehouse_copy_written_bytes = working.copy_written_bytes
        outcome.warehouse_copy_waited_seconds = working.copy_waited_seconds
        outcome.warehouse_copy_ahead_seconds = working.copy_ahead_seconds
        outcome.warehouse_commit_seconds = working.commit_seconds
        outcome.warehouse_compacted = working.compacted
        outcome.wall_seconds = round(time.perf_counter() - started, 3)
        _write_report(
            settings,
            {
                "finished_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "as_of": as_of.isoformat() if as_of else None,
                "fingerprint": fingerprint if outcome.success else None,
                "raw_folders": folders,
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

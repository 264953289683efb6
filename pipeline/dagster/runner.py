"""Run the asset graph in-process against the persistent Dagster instance under the warehouse,
and write a build report (stage timings, outcome) beside the warehouse.

A build holds the warehouse lock for its whole run, refuses up front what has nothing to read,
and runs against a working copy of the warehouse that it swaps in only when the run succeeded
(pipeline/warehouse/swap.py): the envelope a run launched from the UI gets from the job's
executor (pipeline/dagster/executor.py). What failed comes back as a few `Problem`s, each
naming the fix, for a summary a person can act on; the run's full log stays in the instance."""

from __future__ import annotations

import json
import logging
import os
import resource
import time
import uuid
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import dagster as dg

from pipeline.dagster.fingerprint import build_fingerprint
from pipeline.dagster.schedules import WAREHOUSE_TAG
from pipeline.raw.inventory import scope_problem
from pipeline.support.limits import TEXT_CHARS, capped_text
from pipeline.support.locking import warehouse_lock
from pipeline.support.progress import LOGGER, report
from pipeline.support.settings import Settings
from pipeline.support.timing import STAGE_METADATA, total_seconds
from pipeline.warehouse.swap import (
    BuildRefused,
    clean_working_copies,
    target_database,
    working_copy,
)

INSTANCE_HEADER = "# Written by `speedbook build`."


# python_logs: the pipeline's progress lines (logger `speedbook`) go into every run's log,
# whichever process runs a step. concurrency: the run queue (the daemon of `dagster dev`) starts
# one run at a time per warehouse, by the tag every job of the location carries.
# event_log_storage: Dagster's SQLite event log in its usual folder, with kept engines
# (pipeline/dagster/storage.py); the folder is written out since the file cannot join paths.
def instance_yaml(home: Path) -> str:
    """The `dagster.yaml` of the instance in `home`."""
    events = json.dumps(str((home / "history" / "runs").resolve()))  # a YAML string, quoted
    return f"""\
{INSTANCE_HEADER} `speedbook ui` opens the Dagster UI on this instance.
telemetry:
  enabled: false
python_logs:
  managed_python_loggers:
    - {LOGGER}
  python_log_level: INFO
event_log_storage:
  module: pipeline.dagster.storage
  class: PooledSqliteEventLogStorage
  config:
    base_dir: {events}
concurrency:
  runs:
    tag_concurrency_limits:
      - key: {WAREHOUSE_TAG}
        value:
          applyLimitPerUniqueValue: true
        limit: 1
"""


REPORT_FILE = "build_report.json"


def dagster_instance(settings: Settings) -> dg.DagsterInstance:
    home = settings.dagster_home
    home.mkdir(parents=True, exist_ok=True)
    config = home / "dagster.yaml"
    try:
        current = config.read_text(encoding="utf-8")
    except FileNotFoundError:
        current = None
    # ours (an earlier version's, too) is brought up to date; a file someone wrote is theirs
    wanted = instance_yaml(home)
    if current is None or (current.startswith(INSTANCE_HEADER) and current != wanted):
        config.write_text(wanted, encoding="utf-8")
    os.environ["DAGSTER_HOME"] = str(home)
    return dg.DagsterInstance.from_config(str(home))


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


def _nothing_new(settings: Settings, fingerprint: str, as_of: datetime | None) -> bool:
    last = _last_report(settings)
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
        fingerprint = build_fingerprint(settings, as_of)
        if not force and _nothing_new(settings, fingerprint, as_of):
            return _skipped(settings, strict, time.perf_counter() - started)
        for path in clean_working_copies(settings.warehouse):
            report(f"removed the database a killed build left: {path}")
        run_id = str(uuid.uuid4())  # known before the run: it names the run's working copy
        with working_copy(settings, as_of, run_id) as working:
            outcome = _run(settings, as_of, run_id, strict=strict, verbose=verbose)
            if outcome.success:
                working.commit()
                report(f"warehouse committed: {working.target} ({working.summary()})")
        outcome.warehouse_copy_seconds = working.copy_seconds
        outcome.warehouse_copy_written_bytes = working.copy_written_bytes
        outcome.warehouse_commit_seconds = working.commit_seconds
        outcome.warehouse_compacted = working.compacted
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


def _skipped(settings: Settings, strict: bool, seconds: float) -> BuildOutcome:
    """Nothing changed since the last successful build: its release stands, and so do the
    snapshots it could not use (a --strict build refuses them as it would have then)."""
    last = _last_report(settings)
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


def _run(
    settings: Settings, as_of: datetime | None, run_id: str, *, strict: bool, verbose: bool
) -> BuildOutcome:
    from pipeline.dagster.graph import BUILD_JOB, build_definitions

    job = build_definitions(settings, as_of=as_of, strict=strict).resolve_job_def(BUILD_JOB)
    # Dagster's console log (step failures with their stack traces) only with --verbose; the
    # summary names what failed and the run holds the whole log.
    level = "ERROR" if verbose else "CRITICAL"
    logging.getLogger("dagster").setLevel(getattr(logging, level))
    with dagster_instance(settings) as instance:
        result = job.execute_in_process(
            instance=instance,
            run_id=run_id,
            raise_on_error=False,
            run_config={"loggers": {"console": {"config": {"log_level": level}}}},
            tags={"speedbook/as_of": as_of.isoformat() if as_of else "latest"},
        )
        step_failures = [
            event
            for event in result.all_events
            if event.event_type == dg.DagsterEventType.STEP_FAILURE
        ]
        evaluations = [
            evaluation
            for evaluation in result.get_asset_check_evaluations()
            if not evaluation.passed and evaluation.severity == dg.AssetCheckSeverity.ERROR
        ]
        for evaluation in evaluations:
            if evaluation.description:
                report(
                    f"check {evaluation.check_name} failed: "
                    f"{capped_text(evaluation.description, TEXT_CHARS)}"
                )
        release = _release_metadata(result)
    failed_checks = [
        f"{evaluation.asset_key.to_user_string()}.{evaluation.check_name}"
        for evaluation in evaluations
    ]
    # a failed blocking check fails its step too: the check is the problem to name
    checked_steps = {evaluation.asset_key.to_user_string() for evaluation in evaluations}
    problems = [
        Problem(name, capped_text(evaluation.description or "failed", 300), check_fix(name))
        for name, evaluation in zip(failed_checks, evaluations, strict=True)
    ]
    for event in step_failures:
        if event.step_key in checked_steps or _check_failure(event):
            continue
        message = _failure_message(event)
        problems.append(Problem(event.step_key or "?", message, step_fix(event.step_key, message)))
    notes = release.get("notes")
    version = release.get("version")
    return BuildOutcome(
        result.success and version is not None,
        result.run_id,
        [f"{event.step_key}: {_failure_message(event)}" for event in step_failures],
        failed_checks,
        stages=stage_seconds(result.all_events),
        problems=problems,
        release=str(version) if version is not None else None,
        published=bool(release.get("published")),
        message=str(release.get("message", "")),
        notes=[str(note) for note in notes][:NOTES_KEPT] if isinstance(notes, list) else [],
        not_used=int(release.get("snapshots_not_used", 0)),  # type: ignore[call-overload]
    )


def stage_seconds(events: Iterable[dg.DagsterEvent]) -> dict[str, float]:
    """Seconds per stage over a run: the sum of what its steps recorded in their
    materialisations' metadata (pipeline/support/timing.py)."""
    parts = []
    for event in events:
        if event.event_type != dg.DagsterEventType.ASSET_MATERIALIZATION:
            continue
        recorded = event.step_materialization_data.materialization.metadata.get(STAGE_METADATA)
        if recorded is not None:
            parts.append(recorded.value)
    return total_seconds(parts)


def _values(metadata: dict[str, dg.MetadataValue]) -> dict[str, object]:
    return {key: entry.value for key, entry in metadata.items()}


def _release_metadata(result: dg.ExecuteInProcessResult) -> dict[str, object]:
    """What the release step recorded (version, published, message, snapshots_not_used, notes),
    or what it failed with (the --strict refusal's notes)."""
    for materialization in result.asset_materializations_for_node("out_release"):
        return _values(materialization.metadata)
    for event in result.all_events:
        data = event.step_failure_data if event.is_step_failure else None
        if event.step_key == "out_release" and data and data.user_failure_data:
            return _values(data.user_failure_data.metadata)
    return {}


def _check_failure(event: dg.DagsterEvent) -> bool:
    data = event.step_failure_data
    return bool(data and data.error and data.error.cls_name == "DagsterAssetCheckFailedError")


def _failure_message(event: dg.DagsterEvent) -> str:
    data = event.step_failure_data
    if data is None or data.error is None:
        return "failed"
    error = data.error
    while error.cause is not None and error.cls_name in ("DagsterExecutionStepExecutionError",):
        error = error.cause
    text = error.message.strip().splitlines()[0] if error.message else error.cls_name or "failed"
    # "dagster._core.definitions.events.Failure: ..." -> "..."; messages are capped (a list of
    # 200,000 names is one line of megabytes)
    head, _, rest = text.partition(": ")
    if rest and "." in head and " " not in head:
        text = rest
    return capped_text(text, 500)


STRICT_FIX = (
    "fix the parser (pipeline/extract/) or withdraw the snapshot (`speedbook snapshot remove "
    "SOURCE_ID SNAPSHOT_ID`), or build without --strict"
)


def check_fix(name: str) -> str:
    """What to edit or run when check `name` (`asset.check`) fails."""
    asset, _, check = name.partition(".")
    if check == "no_unresolved_names_in_figures":
        return (
            "add each name to the reviewed aliases (provider_aliases.csv, model_aliases.csv or "
            "platforms.toml in the metadata folder); `speedbook resolve provider|model NAME` "
            "shows how a name resolves"
        )
    if check == "matches_json_schema":
        return (
            "the export breaks its contract: fix pipeline/release/exports.py, or change the "
            "contract (pipeline/release/contract/) and run `speedbook schemas`"
        )
    if asset.startswith("staging_"):
        return (
            f"a staged frame no longer fits its model (pipeline/schema/staging.py): did the "
            f"parser of {asset.removeprefix('staging_')} (pipeline/extract/) change its columns?"
        )
    if check == "one_headline_per_provider":
        return "see the headline rule in pipeline/warehouse/sql/mart/"
    if asset.startswith("core_"):
        return (
            f"core.{asset.removeprefix('core_')} breaks its rule (pipeline/schema/core.py, "
            "pipeline/warehouse/sql/core/); the check's failures are in the run"
        )
    return "see the check's result in the run"


def step_fix(step: str | None, message: str) -> str:
    """What to edit or run when step `step` failed with `message`."""
    if message.startswith("not published (--strict)"):
        return STRICT_FIX
    if step == "out_release" and "no longer good" in message:
        return "build again: it reads those sources from their last good snapshots"
    if "toml" in message or ".csv" in message:
        return "edit the reviewed file the message names"
    return "see the step's error in the run"

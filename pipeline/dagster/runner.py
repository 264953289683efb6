"""Run the asset graph in-process against the persistent Dagster instance under the warehouse:
what `speedbook build` does inside its envelope (pipeline/dagster/envelope.py: the lock, the
nothing-new check, the build report). What failed comes back as a few
`Problem`s, each naming the fix, for a summary a person can act on; the run's full log stays in
the instance."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from contextlib import ExitStack
from datetime import datetime
from pathlib import Path
from urllib.parse import urlsplit

import dagster as dg

from pipeline.dagster.envelope import (
    NOTES_KEPT,
    STRICT_FIX,
    BuildOutcome,
    BuildRefused,
    Problem,
    storage_problem,
)
from pipeline.dagster.schedules import WAREHOUSE_TAG
from pipeline.release.cadence import RELEASE_DUE_AT
from pipeline.support.limits import TEXT_CHARS, capped_text
from pipeline.support.progress import LOGGER, report
from pipeline.support.settings import ENV_DAGSTER_STORAGE, Settings
from pipeline.support.timing import STAGE_METADATA, total_seconds

INSTANCE_HEADER = "# Written by `speedbook build`."
DEPLOY_HEADER = (
    "# Speedbook's Dagster instance for a deployment (docs/deployment.md): copy it into "
    "$DAGSTER_HOME."
)
DEPLOY_INSTANCE_FILE = "deploy/dagster.yaml"  # in a checkout: deploy_instance_yaml()'s text


# python_logs: the pipeline's progress lines (logger `speedbook`) go into every run's log,
# whichever process runs a step. Run queue: the daemon (of `dagster dev`, or deploy/'s) starts
# one run at a time per warehouse, by the tag every job of the location carries. Storage:
# Dagster's own SQLite storage in the instance's folder, or PostgreSQL at the URL the variable
# holds when the process starts: the file names the variable, never the URL (it holds a
# password).
def instance_yaml(home: Path, *, on_postgres: bool = False, header: str = "") -> str:
    """The `dagster.yaml` of the instance in `home`; `on_postgres`: its run, event-log and
    schedule storage on PostgreSQL (the URL from $SPEEDBOOK_DAGSTER_STORAGE)."""
    storage = (
        f"""\
storage:
  postgres:
    postgres_url:
      env: {ENV_DAGSTER_STORAGE}
"""
        if on_postgres
        else ""
    )
    first = header or f"{INSTANCE_HEADER} `speedbook ui` opens the Dagster UI on this instance."
    return f"""\
{first}
{storage}telemetry:
  enabled: false
python_logs:
  managed_python_loggers:
    - {LOGGER}
  python_log_level: INFO
run_coordinator:
  module: dagster._core.run_coordinator
  class: QueuedRunCoordinator
concurrency:
  runs:
    tag_concurrency_limits:
      - key: {WAREHOUSE_TAG}
        value:
          applyLimitPerUniqueValue: true
        limit: 1
"""


def deploy_instance_yaml() -> str:
    """deploy/dagster.yaml: the instance a deployment's webserver, daemon and code server share,
    its storage on PostgreSQL."""
    return instance_yaml(Path("."), on_postgres=True, header=DEPLOY_HEADER)


def dagster_instance(settings: Settings) -> dg.DagsterInstance:
    """The instance `speedbook build` and `speedbook ui` use, in `settings.dagster_home`; its
    dagster.yaml is written (or brought up to date) unless someone else wrote it. Refuses
    (BuildRefused) a storage setting that is not a PostgreSQL URL."""
    problem = storage_problem(settings.dagster_storage)
    if problem is not None:
        raise BuildRefused(problem)
    home = settings.dagster_home
    home.mkdir(parents=True, exist_ok=True)
    config = home / "dagster.yaml"
    try:
        current = config.read_text(encoding="utf-8")
    except FileNotFoundError:
        current = None
    # ours (an earlier version's, too) is brought up to date; a file someone wrote is theirs
    wanted = instance_yaml(home, on_postgres=bool(settings.dagster_storage))
    if current is None or (current.startswith(INSTANCE_HEADER) and current != wanted):
        config.write_text(wanted, encoding="utf-8")
    os.environ["DAGSTER_HOME"] = str(home)
    if not settings.dagster_storage:
        return dg.DagsterInstance.from_config(str(home))
    os.environ[ENV_DAGSTER_STORAGE] = settings.dagster_storage  # what the file's `env:` reads
    try:
        return dg.DagsterInstance.from_config(str(home))
    except Exception as error:  # the driver's, SQLAlchemy's or dagster-postgres's: one line
        raise BuildRefused(
            f"cannot open the Dagster instance's storage in PostgreSQL ({ENV_DAGSTER_STORAGE}): "
            f"{storage_error_text(error, settings.dagster_storage)}"
        ) from None


def storage_error_text(error: BaseException, url: str) -> str:
    """The first line of what opening the storage at `url` failed with (the innermost cause,
    where the driver says what went wrong), the URL and its password masked."""
    while error.__cause__ is not None or error.__context__ is not None:
        error = error.__cause__ or error.__context__  # type: ignore[assignment]
    text = str(error).strip()
    line = text.splitlines()[0] if text else type(error).__name__
    password = urlsplit(url).password
    for secret in (url, password):
        if secret:
            line = line.replace(secret, "***")
    return capped_text(line, 300)


PLANNER_LOGGER = "dagster._core.execution.plan.active"


def run_graph(
    settings: Settings,
    as_of: datetime | None,
    run_id: str,
    *,
    strict: bool,
    verbose: bool,
    remake: bool,
) -> BuildOutcome:
    """Run the build job as run `run_id`; `remake`: make every measured figure again."""
    # Dagster's console log (step failures with their stack traces) only with --verbose; the
    # summary names what failed and the run holds the whole log.
    level = "ERROR" if verbose else "CRITICAL"
    logging.getLogger("dagster").setLevel(getattr(logging, level))
    # A build whose release is not due materialises no export, so their blocking checks emit
    # nothing, which Dagster's planner warns of on stderr (it resets the "dagster" logger's
    # level during a run); the build's own line says why there is no release.
    logging.getLogger(PLANNER_LOGGER).setLevel(logging.ERROR)
    with ExitStack() as stack:
        from pipeline.dagster.graph import BUILD_JOB, build_definitions

        job = build_definitions(
            settings, as_of=as_of, strict=strict, remake=remake
        ).resolve_job_def(BUILD_JOB)
        instance = stack.enter_context(dagster_instance(settings))
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
        release = _release_metadata(result) or _deferral(result)
        lake_snapshot = _lake_snapshot(result)
        names = _names_summary(result)
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
    due_at = release.get(RELEASE_DUE_AT)
    # what the build published, or, when no release was due, the one that stands
    standing = version if version is not None else release.get("release") or None
    return BuildOutcome(
        result.success and (version is not None or due_at is not None),
        result.run_id,
        [f"{event.step_key}: {_failure_message(event)}" for event in step_failures],
        failed_checks,
        stages=stage_seconds(result.all_events),
        problems=problems,
        release=str(standing) if standing is not None else None,
        published=bool(release.get("published")),
        message=str(release.get("message", "")),
        notes=[str(note) for note in notes][:NOTES_KEPT] if isinstance(notes, list) else [],
        not_used=int(release.get("snapshots_not_used", 0)),  # type: ignore[call-overload]
        lake_snapshot=lake_snapshot,
        names=names,
        release_due_at=str(due_at) if due_at is not None else None,
    )


def _names_summary(result: dg.ExecuteInProcessResult) -> str:
    """What the label step said about names (pipeline/dagster/assets/core.py, names_summary)."""
    for materialization in result.asset_materializations_for_node("staging_unresolved_names"):
        entry = materialization.metadata.get("names_summary")
        if entry is not None:
            return str(entry.value)
    return ""


def _lake_snapshot(result: dg.ExecuteInProcessResult) -> int | None:
    """The lake snapshot the run's core build committed, if it committed one."""
    for materialization in result.asset_materializations_for_node("core_tables"):
        entry = materialization.metadata.get("lake_snapshot")
        if entry is not None:
            return int(entry.value)  # type: ignore[arg-type]
    return None


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


def _deferral(result: dg.ExecuteInProcessResult) -> dict[str, object]:
    """What the exports step observed when the release was not due (release_due_at, the release
    that stands, the message), or nothing."""
    for event in result.all_events:
        if event.event_type != dg.DagsterEventType.ASSET_OBSERVATION:
            continue
        observed = _values(event.asset_observation_data.asset_observation.metadata)
        if RELEASE_DUE_AT in observed:
            return observed
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
        return "see the headline rule in sql/mart/"
    if asset == "core_tables":  # one asset for the whole core: its result names the relation
        return (
            "the core breaks the check's rule (pipeline/warehouse/checks.py, "
            "pipeline/schema/core.py, sql/core/); the line above names the table or view"
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

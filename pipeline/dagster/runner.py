"""Run the asset graph in-process against the persistent Dagster instance under the warehouse:
what `speedbook build` does inside its envelope (pipeline/dagster/envelope.py: the lock, the
nothing-new check, the working copy, the build report). What failed comes back as a few
`Problem`s, each naming the fix, for a summary a person can act on; the run's full log stays in
the instance."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from datetime import datetime
from pathlib import Path

import dagster as dg

from pipeline.dagster.envelope import NOTES_KEPT, STRICT_FIX, BuildOutcome, Problem
from pipeline.dagster.schedules import WAREHOUSE_TAG
from pipeline.support.bulk import long_lived_objects, thawed_at_end
from pipeline.support.limits import TEXT_CHARS, capped_text
from pipeline.support.progress import LOGGER, report
from pipeline.support.settings import Settings
from pipeline.support.timing import STAGE_METADATA, total_seconds

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


def run_graph(
    settings: Settings,
    as_of: datetime | None,
    run_id: str,
    *,
    strict: bool,
    verbose: bool,
    ready: Callable[[], None] = lambda: None,
) -> BuildOutcome:
    """Run the build job as run `run_id`; `ready()` is called just before the first step (it
    waits for the working copy, made meanwhile)."""
    # Dagster's console log (step failures with their stack traces) only with --verbose; the
    # summary names what failed and the run holds the whole log.
    level = "ERROR" if verbose else "CRITICAL"
    logging.getLogger("dagster").setLevel(getattr(logging, level))
    with thawed_at_end(), ExitStack() as stack:
        # what the run is set up with lives as long as the run: no collection while it is made
        # (four full ones, 0.3 s, at every build), and none of it scanned again during the run
        with long_lived_objects():
            from pipeline.dagster.graph import BUILD_JOB, build_definitions

            job = build_definitions(settings, as_of=as_of, strict=strict).resolve_job_def(BUILD_JOB)
            instance = stack.enter_context(dagster_instance(settings))
        ready()
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

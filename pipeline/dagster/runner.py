"""Run the asset graph in-process against the persistent Dagster instance under the warehouse,
and write a build report (stage timings, outcome) beside the warehouse."""

from __future__ import annotations

import json
import logging
import os
import resource
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime

import dagster as dg

from pipeline.dagster.fingerprint import build_fingerprint
from pipeline.support.progress import LOGGER, report
from pipeline.support.settings import Settings
from pipeline.support.timing import STAGE_METADATA, total_seconds

INSTANCE_HEADER = "# Written by `speedbook build`."
# python_logs: the pipeline's progress lines (logger `speedbook`) go into every run's log,
# whichever process runs a step.
INSTANCE_YAML = f"""\
{INSTANCE_HEADER} `speedbook ui` opens the Dagster UI on this instance.
telemetry:
  enabled: false
python_logs:
  managed_python_loggers:
    - {LOGGER}
  python_log_level: INFO
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
    if current is None or (current.startswith(INSTANCE_HEADER) and current != INSTANCE_YAML):
        config.write_text(INSTANCE_YAML, encoding="utf-8")
    os.environ["DAGSTER_HOME"] = str(home)
    return dg.DagsterInstance.from_config(str(home))


@dataclass
class BuildOutcome:
    success: bool
    run_id: str
    failures: list[str] = field(default_factory=list)
    failed_checks: list[str] = field(default_factory=list)
    skipped: bool = False  # nothing changed since the last successful build: no run at all
    stages: dict[str, float] = field(default_factory=dict)
    wall_seconds: float = 0.0


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


def _nothing_new(settings: Settings, fingerprint: str) -> bool:
    last = _last_report(settings)
    release = last.get("release")
    return (
        last.get("success") is True
        and last.get("fingerprint") == fingerprint
        and settings.database.is_file()  # a deleted warehouse is rebuilt, not reported current
        and isinstance(release, str)
        and (settings.exports / release / "datapackage.json").is_file()
        and (settings.exports / "latest").is_dir()
    )


def execute(
    settings: Settings, as_of: datetime | None = None, *, force: bool = False
) -> BuildOutcome:
    """Build unless nothing changed since the last successful build (then return at once)."""
    started = time.perf_counter()
    fingerprint = build_fingerprint(settings, as_of)
    if not force and _nothing_new(settings, fingerprint):
        release = _last_report(settings)["release"]
        report(f"nothing new since the last build: release {release} stands")
        return BuildOutcome(True, "", skipped=True, wall_seconds=time.perf_counter() - started)

    from pipeline.dagster.graph import BUILD_JOB, build_definitions

    job = build_definitions(settings, as_of=as_of).resolve_job_def(BUILD_JOB)
    logging.getLogger("dagster").setLevel(logging.ERROR)
    with dagster_instance(settings) as instance:
        result = job.execute_in_process(
            instance=instance,
            raise_on_error=False,
            run_config={"loggers": {"console": {"config": {"log_level": "ERROR"}}}},
            tags={"speedbook/as_of": as_of.isoformat() if as_of else "latest"},
        )
        failures = [
            f"{event.step_key}: {_failure_message(event)}"
            for event in result.all_events
            if event.event_type == dg.DagsterEventType.STEP_FAILURE
        ]
        failed_checks = [
            f"{evaluation.asset_key.to_user_string()}.{evaluation.check_name}"
            for evaluation in result.get_asset_check_evaluations()
            if not evaluation.passed and evaluation.severity == dg.AssetCheckSeverity.ERROR
        ]
        for evaluation in result.get_asset_check_evaluations():
            if not evaluation.passed and evaluation.description:
                report(f"check {evaluation.check_name} failed: {evaluation.description}")
        release = _release_version(result)
    outcome = BuildOutcome(
        result.success and release is not None,
        result.run_id,
        failures,
        failed_checks,
        stages=stage_seconds(result.all_events),
        wall_seconds=round(time.perf_counter() - started, 3),
    )
    _write_report(
        settings,
        {
            "finished_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "as_of": as_of.isoformat() if as_of else None,
            "fingerprint": fingerprint if outcome.success else None,
            "release": release,
            "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            **asdict(outcome),
        },
    )
    return outcome


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


def _release_version(result: dg.ExecuteInProcessResult) -> str | None:
    for materialization in result.asset_materializations_for_node("out_release"):
        version = materialization.metadata.get("version")
        return str(version.value) if version is not None else None
    return None


def _failure_message(event: dg.DagsterEvent) -> str:
    data = event.step_failure_data
    if data is None or data.error is None:
        return "failed"
    error = data.error
    while error.cause is not None and error.cls_name in ("DagsterExecutionStepExecutionError",):
        error = error.cause
    return error.message.strip().splitlines()[0] if error.message else error.cls_name or "failed"

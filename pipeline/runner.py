"""Run the asset graph in-process against the persistent Dagster instance under the warehouse."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from datetime import datetime

import dagster as dg

from pipeline.settings import Settings

INSTANCE_YAML = """\
# Written by `speedbook build`. `speedbook ui` opens the Dagster UI on this instance.
telemetry:
  enabled: false
freshness:
  enabled: true
"""


def dagster_instance(settings: Settings) -> dg.DagsterInstance:
    home = settings.dagster_home
    home.mkdir(parents=True, exist_ok=True)
    config = home / "dagster.yaml"
    if not config.exists():
        config.write_text(INSTANCE_YAML, encoding="utf-8")
    os.environ["DAGSTER_HOME"] = str(home)
    return dg.DagsterInstance.from_config(str(home))


@dataclass
class BuildOutcome:
    success: bool
    run_id: str
    failures: list[str] = field(default_factory=list)
    failed_checks: list[str] = field(default_factory=list)


def execute(settings: Settings, as_of: datetime | None = None) -> BuildOutcome:
    from pipeline.assets.graph import build_definitions

    defs = build_definitions(settings, as_of=as_of)
    job = defs.resolve_implicit_global_asset_job_def()
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
        return BuildOutcome(result.success, result.run_id, failures, failed_checks)


def _failure_message(event: dg.DagsterEvent) -> str:
    data = event.step_failure_data
    if data is None or data.error is None:
        return "failed"
    error = data.error
    while error.cause is not None and error.cls_name in ("DagsterExecutionStepExecutionError",):
        error = error.cause
    return error.message.strip().splitlines()[0] if error.message else error.cls_name or "failed"

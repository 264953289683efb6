"""Unattended runs: one `refresh_<cadence>` job and one schedule per cadence of the registry's
`[cadences]` table that some source has. A refresh run fetches the due sources of its cadence
(`raw_fetch`, assets/fetch.py), then runs the whole build, which publishes when content changed
and a release is due (`SPEEDBOOK_RELEASE_CADENCE`, pipeline/release/cadence.py).

Runs never overlap on one warehouse: every job of the location carries the tag
`speedbook/warehouse` (the warehouse folder), which the run queue of the instance `speedbook ui`
prepares limits to one run in progress per value (pipeline/dagster/runner.py, instance_yaml);
and every run takes the warehouse lock (pipeline/dagster/executor.py) whatever launched it.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import dagster as dg

from pipeline.dagster.assets.fetch import RAW_FETCH
from pipeline.raw.due import due_sources
from pipeline.sources.registry import Source
from pipeline.support.settings import Settings

WAREHOUSE_TAG = "speedbook/warehouse"  # the run queue's key: one run at a time per warehouse
CADENCE_TAG = "speedbook/cadence"
WAITING = [dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.NOT_STARTED]


def warehouse_tags(settings: Settings) -> dict[str, str]:
    return {WAREHOUSE_TAG: str(settings.warehouse)}


def refresh_job_name(cadence: str) -> str:
    return f"refresh_{cadence}"


def schedule_name(cadence: str) -> str:
    return f"{refresh_job_name(cadence)}_schedule"


def fetch_run_config(cadence: str) -> dict[str, Any]:
    return {"ops": {RAW_FETCH.to_python_identifier(): {"config": {"cadence": cadence}}}}


def scheduled_cadences(sources: Mapping[str, Source], crons: Mapping[str, str]) -> list[str]:
    """The cadences that get a job and a schedule: those with a cron string that a source has."""
    used = {source.cadence for source in sources.values()}
    return [cadence for cadence in crons if cadence in used]


def build_refresh_jobs(
    settings: Settings, cadences: list[str]
) -> list[dg.UnresolvedAssetJobDefinition]:
    """`refresh_<cadence>`: the fetch of that cadence, then every asset and check of the build."""
    selection = dg.AssetSelection.all() | dg.AssetSelection.all_asset_checks()
    return [
        dg.define_asset_job(
            refresh_job_name(cadence),
            selection=selection,
            config=fetch_run_config(cadence),
            tags={**warehouse_tags(settings), CADENCE_TAG: cadence},
            description=f"Fetch the due sources of cadence {cadence}, then build and publish "
            "when content changed: what the schedule of that cadence runs",
        )
        for cadence in cadences
    ]


def build_schedule(
    settings: Settings,
    cadence: str,
    cron: str,
    job: dg.UnresolvedAssetJobDefinition,
    *,
    running: bool = False,
) -> dg.ScheduleDefinition:
    """The schedule of one cadence, at the registry's cron string (UTC). A tick requests a run
    unless no source of the cadence is due or a run of its job still waits in the queue (that
    one fetches what is due when it starts)."""
    tags = {**warehouse_tags(settings), CADENCE_TAG: cadence}

    @dg.schedule(
        cron_schedule=cron,
        job=job,
        name=schedule_name(cadence),
        execution_timezone="UTC",
        default_status=(
            dg.DefaultScheduleStatus.RUNNING if running else dg.DefaultScheduleStatus.STOPPED
        ),
        description=f"Refresh the sources of cadence {cadence} at {cron} (UTC): the cron "
        "string is the registry's [cadences] entry",
    )
    def refresh(context: dg.ScheduleEvaluationContext) -> dg.RunRequest | dg.SkipReason:
        waiting = context.instance.get_run_records(
            dg.RunsFilter(job_name=job.name, statuses=WAITING, tags=warehouse_tags(settings)),
            limit=1,
        )
        if waiting:
            return dg.SkipReason(
                f"run {waiting[0].dagster_run.run_id} of {job.name} is still waiting to start; "
                "it fetches what is due when it does"
            )
        at = context.scheduled_execution_time or datetime.now(UTC)
        plan = due_sources(settings, at, cadence)
        if not plan.due:
            return dg.SkipReason(
                f"no source of cadence {cadence} is due ({len(plan.not_due)} fetched since the "
                "last tick)"
            )
        return dg.RunRequest(run_config=fetch_run_config(cadence), tags=tags)

    return refresh


def queues_one_run_per_warehouse(instance: dg.DagsterInstance) -> bool:
    """Whether the instance's run queue starts at most one run at a time per warehouse tag
    value (a dagster.yaml someone wrote may not)."""
    queue = instance.get_concurrency_config().run_queue_config
    if queue is None:
        return False
    if queue.max_concurrent_runs == 1:
        return True
    for limit in queue.tag_concurrency_limits:
        value = limit.get("value")
        per_value = isinstance(value, dict) and value.get("applyLimitPerUniqueValue") is True
        if limit.get("key") == WAREHOUSE_TAG and per_value and limit.get("limit") == 1:
            return True
    return False

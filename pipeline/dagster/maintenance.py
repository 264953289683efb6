"""The lake's maintenance as a Dagster job and a daily schedule (pipeline/warehouse/maintenance.py:
small files merged, old unreleased snapshots expired, unneeded files deleted). It runs under the
build lock like every job of the location, so never beside a build."""

from __future__ import annotations

import dagster as dg

from pipeline.dagster.resources import SpeedbookResource
from pipeline.dagster.schedules import warehouse_tags
from pipeline.support.settings import Settings
from pipeline.warehouse.maintenance import maintain

MAINTAIN_JOB = "maintain_lake"
MAINTAIN_CRON = "30 3 * * *"  # daily, in the quiet between the daily and weekly refreshes


@dg.op(description="Merge the lake's small files and expire its old, unreleased snapshots")
def maintain_lake(speedbook: SpeedbookResource) -> dg.Output[None]:
    with speedbook.connect() as con:
        done = maintain(con)
    return dg.Output(
        None,
        metadata={
            "files_before": done.files_before,
            "files_after": done.files_after,
            "snapshots_expired": done.snapshots_expired,
        },
    )


def build_maintenance(
    settings: Settings, *, running: bool = False
) -> tuple[dg.JobDefinition, dg.ScheduleDefinition]:
    job = dg.JobDefinition(
        graph_def=dg.GraphDefinition(name="lake_maintenance", node_defs=[maintain_lake]),
        name=MAINTAIN_JOB,
        tags=warehouse_tags(settings),
        description="DuckLake's maintenance of the warehouse (speedbook maintain)",
    )
    schedule = dg.ScheduleDefinition(
        name=f"{MAINTAIN_JOB}_schedule",
        job=job,
        cron_schedule=MAINTAIN_CRON,
        execution_timezone="UTC",
        default_status=(
            dg.DefaultScheduleStatus.RUNNING if running else dg.DefaultScheduleStatus.STOPPED
        ),
    )
    return job, schedule

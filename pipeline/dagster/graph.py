"""Assemble the asset graph for one registry, one warehouse and one as-of date."""

from datetime import datetime

import dagster as dg

from pipeline.dagster.assets import as_markdown
from pipeline.dagster.assets.core import core_tables, staging_unresolved_names
from pipeline.dagster.assets.fetch import RAW_FETCH, raw_fetch
from pipeline.dagster.assets.freshness import build_freshness_checks
from pipeline.dagster.assets.raw import build_inventory_asset, build_raw_specs
from pipeline.dagster.assets.release import out_exports, out_release
from pipeline.dagster.assets.staging import build_staging_assets
from pipeline.dagster.executor import build_executor
from pipeline.dagster.maintenance import build_maintenance
from pipeline.dagster.resources import build_resources
from pipeline.dagster.schedules import (
    build_refresh_jobs,
    build_schedule,
    scheduled_cadences,
    warehouse_tags,
)
from pipeline.raw.snapshots import parse_utc
from pipeline.sources.registry import load_crons, load_registry
from pipeline.sources.reviewed import file_digests
from pipeline.support.settings import Settings

BUILD_JOB = "build"  # every asset and check but the fetch: what `speedbook build` runs
# every asset, and every check: also the freshness checks of the raw (external) assets, which
# AssetSelection.all() leaves out with the assets they check
BUILD_SELECTION = (
    dg.AssetSelection.all() - dg.AssetSelection.assets(RAW_FETCH)
) | dg.AssetSelection.all_asset_checks()


def build_definitions(
    settings: Settings,
    as_of: datetime | None = None,
    *,
    strict: bool = False,
    remake: bool = False,
    schedules_running: bool = False,
) -> dg.Definitions:
    """The graph of these locations. A run launched from the UI runs each step in its own
    process, one at a time, inside the build lock (pipeline/dagster/executor.py); `speedbook
    build` runs the same job in-process. With it, one refresh job and schedule per scheduled
    cadence (pipeline/dagster/schedules.py) and the lake's daily maintenance, stopped
    unless `schedules_running` (only the first time the instance sees them: after that, the
    state the UI or `dagster schedule start|stop` gave them)."""
    sources = load_registry(settings.registry)
    crons = load_crons(settings.registry)
    try:
        digests = file_digests(settings.metadata)  # the staging assets' code versions
    except OSError:
        digests = None  # the run reports the missing folder
    assets = [
        raw_fetch,
        *build_raw_specs(sources),
        build_inventory_asset(sources),
        *build_staging_assets(sources, digests),
        staging_unresolved_names,
        core_tables,
        out_exports,
        out_release,
    ]
    cadences = scheduled_cadences(sources, crons)
    refresh_jobs = build_refresh_jobs(settings, cadences)
    maintain_job, maintain_schedule = build_maintenance(settings, running=schedules_running)
    return dg.Definitions(
        assets=dg.map_asset_specs(as_markdown, assets),  # descriptions are written as plain text
        asset_checks=[build_freshness_checks(sources)],
        jobs=[
            dg.define_asset_job(
                BUILD_JOB, selection=BUILD_SELECTION, tags=warehouse_tags(settings)
            ),
            *refresh_jobs,
            maintain_job,
        ],
        schedules=[
            *(
                build_schedule(settings, cadence, crons[cadence], job, running=schedules_running)
                for cadence, job in zip(cadences, refresh_jobs, strict=True)
            ),
            maintain_schedule,
        ],
        resources=build_resources(settings, as_of, strict=strict, remake=remake),
        executor=build_executor(settings, as_of),
    )


def build_job(
    registry: str,
    warehouse: str,
    exports: str,
    metadata: str,
    as_of: str = "",
    job_name: str = BUILD_JOB,
) -> dg.JobDefinition:
    """A job of these locations (the build job by default), from arguments that survive a
    process boundary: what `dg.build_reconstructable_job` rebuilds in the process of each step
    of a multiprocess run. The stores (catalog, lake data, snapshots, releases) come from the
    environment, as they do for the code location the daemon loads."""
    settings = Settings.resolve(registry, warehouse, exports, metadata)
    definitions = build_definitions(settings, parse_utc(as_of) if as_of else None)
    return definitions.resolve_job_def(job_name)

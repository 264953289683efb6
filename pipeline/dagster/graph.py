"""Assemble the asset graph for one registry, one warehouse and one as-of date."""

from datetime import datetime
from pathlib import Path

import dagster as dg

from pipeline.dagster.assets import as_markdown
from pipeline.dagster.assets.core import core_tables, mart_views, staging_unresolved_names
from pipeline.dagster.assets.freshness import build_freshness_checks
from pipeline.dagster.assets.raw import build_inventory_asset, build_raw_specs
from pipeline.dagster.assets.release import out_exports, out_release
from pipeline.dagster.assets.staging import build_staging_assets
from pipeline.dagster.executor import build_executor
from pipeline.dagster.resources import build_resources
from pipeline.normalise.reviewed import file_digests
from pipeline.raw.snapshots import parse_utc
from pipeline.sources.registry import load_registry
from pipeline.support.settings import Settings

BUILD_JOB = "build"  # every asset and check: what `speedbook build` runs, and the UI can launch


def build_definitions(
    settings: Settings, as_of: datetime | None = None, *, strict: bool = False
) -> dg.Definitions:
    """The graph of these locations. A run launched from the UI runs each step in its own
    process, one at a time, inside the warehouse lock and a working copy of the warehouse
    (pipeline/dagster/executor.py); `speedbook build` runs the same job in-process."""
    sources = load_registry(settings.registry)
    try:
        digests = file_digests(settings.metadata)  # the staging assets' code versions
    except OSError:
        digests = None  # the run reports the missing folder
    assets = [
        *build_raw_specs(sources),
        build_inventory_asset(sources),
        *build_staging_assets(sources, digests),
        staging_unresolved_names,
        core_tables,
        mart_views,
        out_exports,
        out_release,
    ]
    return dg.Definitions(
        assets=dg.map_asset_specs(as_markdown, assets),  # descriptions are written as plain text
        asset_checks=[build_freshness_checks(sources)],
        # every asset, and every check: also the freshness checks of the raw (external) assets,
        # which AssetSelection.all() leaves out with the assets they check
        jobs=[
            dg.define_asset_job(
                BUILD_JOB, selection=dg.AssetSelection.all() | dg.AssetSelection.all_asset_checks()
            )
        ],
        resources=build_resources(settings, as_of, strict=strict),
        executor=build_executor(settings, as_of),
    )


def build_job(
    registry: str, warehouse: str, exports: str, metadata: str, as_of: str = ""
) -> dg.JobDefinition:
    """The build job of these locations, from arguments that survive a process boundary: what
    `dg.build_reconstructable_job` rebuilds in the process of each step of a multiprocess run."""
    settings = Settings(Path(registry), Path(warehouse), Path(exports), Path(metadata))
    definitions = build_definitions(settings, parse_utc(as_of) if as_of else None)
    return definitions.resolve_job_def(BUILD_JOB)

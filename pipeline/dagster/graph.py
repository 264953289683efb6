"""Assemble the asset graph for one registry, one warehouse and one as-of date."""

from datetime import datetime

import dagster as dg

from pipeline.dagster.assets.core import core_tables, mart_views, staging_unresolved_names
from pipeline.dagster.assets.raw import build_raw_specs
from pipeline.dagster.assets.release import out_exports, out_release
from pipeline.dagster.assets.staging import build_staging_assets
from pipeline.dagster.resources import SpeedbookResource
from pipeline.sources.registry import load_registry
from pipeline.support.settings import Settings


def build_definitions(settings: Settings, as_of: datetime | None = None) -> dg.Definitions:
    sources = load_registry(settings.registry)
    return dg.Definitions(
        assets=[
            *build_raw_specs(sources),
            *build_staging_assets(sources),
            staging_unresolved_names,
            core_tables,
            mart_views,
            out_exports,
            out_release,
        ],
        resources={"speedbook": SpeedbookResource.from_settings(settings, as_of)},
    )

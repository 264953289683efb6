"""Assemble the asset graph for one registry, one warehouse and one as-of date."""

from datetime import datetime

import dagster as dg

from pipeline.assets.core import core_tables, mart_views, staged_unresolved_names
from pipeline.assets.raw import build_raw_specs
from pipeline.assets.release import out_exports, out_release
from pipeline.assets.resources import SpeedbookResource
from pipeline.assets.staged import build_staged_assets
from pipeline.registry import load_registry
from pipeline.settings import Settings


def build_definitions(settings: Settings, as_of: datetime | None = None) -> dg.Definitions:
    sources = load_registry(settings.registry)
    return dg.Definitions(
        assets=[
            *build_raw_specs(sources),
            *build_staged_assets(sources),
            staged_unresolved_names,
            core_tables,
            mart_views,
            out_exports,
            out_release,
        ],
        resources={"speedbook": SpeedbookResource.from_settings(settings, as_of)},
    )

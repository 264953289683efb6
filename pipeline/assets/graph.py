"""Assemble the asset graph for one registry, one warehouse and one as-of date."""

from datetime import datetime

import dagster as dg

from pipeline.assets.raw import build_raw_assets
from pipeline.assets.resources import SpeedbookResource
from pipeline.registry import load_registry
from pipeline.settings import Settings


def build_definitions(settings: Settings, as_of: datetime | None = None) -> dg.Definitions:
    sources = load_registry(settings.registry)
    return dg.Definitions(
        assets=[build_raw_assets(sources)],
        resources={"speedbook": SpeedbookResource.from_settings(settings, as_of)},
    )

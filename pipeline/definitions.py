"""The Dagster code location: `speedbook ui` (or `dagster dev -m pipeline.definitions`) loads
`defs` from here. Locations come from SPEEDBOOK_REGISTRY, SPEEDBOOK_WAREHOUSE, SPEEDBOOK_EXPORTS."""

from pipeline.dagster.graph import build_definitions
from pipeline.support.settings import Settings

defs = build_definitions(Settings.resolve())

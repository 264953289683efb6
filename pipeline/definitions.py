"""The Dagster code location: `speedbook ui` (or `dagster dev -m pipeline.definitions`) loads
`defs` from here. Locations come from SPEEDBOOK_REGISTRY, SPEEDBOOK_WAREHOUSE, SPEEDBOOK_EXPORTS."""

from pipeline.assets.graph import build_definitions
from pipeline.settings import Settings

defs = build_definitions(Settings.resolve())

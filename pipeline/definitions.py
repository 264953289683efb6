"""The Dagster code location: `speedbook ui` (or `dagster dev -m pipeline.definitions`) loads
`defs` from here. Locations come from SPEEDBOOK_REGISTRY, SPEEDBOOK_WAREHOUSE, SPEEDBOOK_EXPORTS;
SPEEDBOOK_SCHEDULES=running starts the schedules the first time the instance sees them."""

import os

from pipeline.dagster.graph import build_definitions
from pipeline.support.settings import ENV_SCHEDULES, SCHEDULES_RUNNING, Settings

defs = build_definitions(
    Settings.resolve(), schedules_running=os.environ.get(ENV_SCHEDULES) == SCHEDULES_RUNNING
)

"""Dagster wiring. Modules here import Dagster and call plain functions; they hold no logic that
a test would want to call without Dagster."""

import dagster as dg

from pipeline.support.timing import STAGE_METADATA, StageClock


def stage_metadata(clock: StageClock) -> dict[str, dg.MetadataValue]:
    """The stage seconds of a step, for the metadata of one of its materialisations (one only:
    the runner sums them over the run)."""
    return {STAGE_METADATA: dg.MetadataValue.json(clock.seconds())}

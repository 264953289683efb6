"""Dagster wiring. Modules here import Dagster and call plain functions; they hold no logic that
a test would want to call without Dagster."""

import dagster as dg

from pipeline.release.templates import escape_markdown
from pipeline.support.timing import STAGE_METADATA, StageClock


def stage_metadata(clock: StageClock) -> dict[str, dg.MetadataValue]:
    """The stage seconds of a step, for the metadata of one of its materialisations (one only:
    the runner sums them over the run)."""
    return {STAGE_METADATA: dg.MetadataValue.json(clock.seconds())}


def as_markdown(spec: dg.AssetSpec) -> dg.AssetSpec:
    """The spec with its plain-text description escaped for Dagster, which renders descriptions
    as Markdown: `exports/<version>/` would otherwise lose `<version>` as an HTML tag, and
    `state/fetch/<source_id>.jsonl` would lose `<source_id>` too."""
    if not spec.description:
        return spec
    return spec.replace_attributes(description=escape_markdown(spec.description))

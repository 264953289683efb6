"""The reviewed files may only cite registered sources: a typo must be reported, never dropped."""

import dataclasses

from pipeline.registry import load_registry
from pipeline.reviewed import load_claims, load_platforms, unregistered_sources
from pipeline.settings import Settings


def test_the_bundled_reviewed_files_cite_only_registered_sources() -> None:
    registry = load_registry(Settings.resolve().registry)
    assert unregistered_sources(load_claims(), load_platforms(), registry) == []


def test_a_misspelt_source_is_named_with_where_it_is_cited() -> None:
    registry = load_registry(Settings.resolve().registry)
    claims, platforms = load_claims(), load_platforms()
    claim = claims[0]
    typo = dataclasses.replace(
        claim, evidence=(dataclasses.replace(claim.evidence[0], source="cerebras-launhc"),)
    )
    platform = dataclasses.replace(
        platforms[0],
        doc_source="amazon-bedrok-models",
        catalogue_sources=("clodflare-workers-ai",),
    )
    problems = unregistered_sources((typo,), (platform,), registry)
    assert problems == [
        f"claim {claim.id!r} cites 'cerebras-launhc', not in the registry",
        f"platform {platform.id!r} doc_source cites 'amazon-bedrok-models', not in the registry",
        f"platform {platform.id!r} catalogue cites 'clodflare-workers-ai', not in the registry",
    ]

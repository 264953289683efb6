"""Label resolution with the identity rules (labels.resolve_uses): one id per identity key across
sources, the hints each source's columns pass, and the columns a resolution gains."""

from __future__ import annotations

import pandas as pd
import pytest
from test_parse_support import REVIEWED

from pipeline.normalise.entities import Resolver
from pipeline.normalise.identity import NO_HINTS, Hints
from pipeline.normalise.labels import LABEL_COLUMNS, RESOLUTION_COLUMNS, LabelUse, resolve_uses
from pipeline.schema.staging import FRAMES
from pipeline.support.settings import BUNDLED_METADATA

SPEC = {(spec.table, spec.column): spec for spec in LABEL_COLUMNS}
AA = SPEC[("aa_models", "name")]
CATALOGUE = SPEC[("catalogue_entries", "platform_model_id")]
OFFERS = SPEC[("models_dev_offers", "platform_model_id")]
ENDPOINTS = SPEC[("openrouter_endpoints", "model")]
PROSE = SPEC[("compilation_figures", "model_label")]


@pytest.fixture
def resolver() -> Resolver:
    return Resolver.load(BUNDLED_METADATA)


def use(spec, label, name=None, hints=NO_HINTS, source="s", uses=1) -> LabelUse:
    return LabelUse(spec, label, name, hints, (source,), uses)


def resolved(resolver: Resolver, *uses: LabelUse) -> pd.DataFrame:
    return resolve_uses(resolver, REVIEWED.platforms, uses).set_index("label")


def test_every_hint_column_is_a_column_of_its_staged_frame():
    for spec in LABEL_COLUMNS:
        columns = FRAMES[spec.table].to_schema().columns
        for hint, column in spec.hints:
            assert hint in Hints.__dataclass_fields__, spec
            assert column in columns, spec


def test_a_resolution_says_its_family_and_region(resolver):
    table = resolve_uses(
        resolver, REVIEWED.platforms, [use(OFFERS, "us.anthropic.claude-opus-4-6-v1")]
    )
    assert list(table.columns) == RESOLUTION_COLUMNS
    row = table.iloc[0]
    assert (row["entity_id"], row["family"], row["region"]) == (
        "claude-opus-4.6",
        "claude-opus-4.6",
        "us",
    )


def test_the_spellings_of_one_key_get_one_id_across_sources(resolver):
    table = resolved(
        resolver,
        use(AA, "Claude 4.5 Sonnet (Reasoning)", source="artificial-analysis-api"),
        use(AA, "Claude 4.5 Sonnet (Non-reasoning)", source="artificial-analysis-api"),
        use(CATALOGUE, "anthropic/claude-sonnet-4.5", source="openrouter"),
        use(OFFERS, "claude-sonnet-4-5", "Claude Sonnet 4.5", source="models-dev"),
        use(OFFERS, "anthropic/claude-sonnet-4.5", source="models-dev"),
        use(ENDPOINTS, "anthropic/claude-sonnet-4.5", source="openrouter-endpoints"),
    )
    assert set(table["entity_id"]) == {"claude-sonnet-4.5"}  # a stable id's spelling, not AA's
    assert set(table["status"]) == {"unreviewed"}
    efforts = table.loc[
        ["Claude 4.5 Sonnet (Reasoning)", "Claude 4.5 Sonnet (Non-reasoning)"], "reasoning_effort"
    ]
    assert list(efforts) == ["reasoning", "none"]
    moved = table.loc["Claude 4.5 Sonnet (Reasoning)", "rule"]
    assert "one id for every spelling of its key: 'claude-sonnet-4.5'" in moved
    # one row per distinct label: the catalogue's and the endpoints' label is one
    assert table.loc["anthropic/claude-sonnet-4.5", "sources"] == (
        "models-dev, openrouter, openrouter-endpoints"
    )


def test_a_group_with_a_reviewed_key_takes_the_reviewed_id(resolver):
    table = resolved(
        resolver,
        use(AA, "Llama 3.3 Instruct 70B"),
        use(OFFERS, "meta.llama3-3-70b-instruct-v1:0"),
        use(CATALOGUE, "meta-llama/llama-3.3-70b-instruct"),
    )
    assert set(table["entity_id"]) == {"llama-3.3-70b-instruct"}
    assert set(table["status"]) == {"resolved"}


def test_the_hints_of_one_label_from_two_sources_are_merged(resolver):
    """models.dev lists `qwen/qwen3-coder` too, without OpenRouter's repository id: the label's
    one resolution has it whichever source comes first."""
    table = resolved(
        resolver,
        use(OFFERS, "qwen/qwen3-coder", "Qwen3 Coder"),
        use(
            CATALOGUE,
            "qwen/qwen3-coder",
            hints=Hints(hugging_face_id="Qwen/Qwen3-Coder-480B-A35B-Instruct"),
        ),
        use(AA, "Qwen3 Coder 480B A35B Instruct"),
    )
    assert set(table["entity_id"]) == {"qwen3-coder-480b-a35b-instruct"}


def test_prose_labels_resolve_by_the_rules_but_never_become_entities(resolver):
    table = resolved(
        resolver,
        use(PROSE, "Llama 3.3 Instruct 70B"),  # the rules reach the reviewed model
        use(PROSE, "Qwen3 Coder 480B"),  # nothing reviewed: unresolved and held back
    )
    assert table.loc["Llama 3.3 Instruct 70B", "entity_id"] == "llama-3.3-70b-instruct"
    unknown = table.loc["Qwen3 Coder 480B"]
    assert (unknown["status"], unknown["held_back"]) == ("unresolved", True)
    assert pd.isna(unknown["entity_id"])


def test_different_models_stay_apart_whatever_their_sources(resolver):
    table = resolved(
        resolver,
        use(CATALOGUE, "openai/gpt-4o"),
        use(CATALOGUE, "openai/gpt-4o-2024-11-20"),
        use(AA, "GPT-4o (Nov '24)", hints=Hints(slug="gpt-4o")),
        use(CATALOGUE, "openai/gpt-4-turbo"),
        use(CATALOGUE, "openai/gpt-4"),
    )
    assert table["entity_id"].is_unique
    assert table.loc["GPT-4o (Nov '24)", "family"] == "gpt-4o"


PROVIDER_IDS = SPEC[("models_dev_offers", "provider_id")]
OPENROUTER_PROVIDERS = SPEC[("openrouter_providers", "slug")]


def test_one_provider_across_sources_but_two_ids_of_one_source_stay_two(resolver):
    """OpenRouter's `z-ai` and models.dev's `zai` (both "Z.AI") are one provider; models.dev's
    own `stepfun` and `stepfun-ai` are two catalogues of two endpoints, by models.dev's word."""
    table = resolved(
        resolver,
        use(OPENROUTER_PROVIDERS, "z-ai", "Z.AI", source="openrouter-providers"),
        use(PROVIDER_IDS, "zai", "Z.AI", source="models-dev"),
        use(PROVIDER_IDS, "stepfun", "StepFun", source="models-dev"),
        use(PROVIDER_IDS, "stepfun-ai", "StepFun AI", source="models-dev"),
    )
    assert table.loc["zai", "entity_id"] == table.loc["z-ai", "entity_id"] == "z-ai"
    assert (table.loc["stepfun", "entity_id"], table.loc["stepfun-ai", "entity_id"]) == (
        "stepfun",
        "stepfun-ai",
    )

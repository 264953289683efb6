"""What a reviewer reads (pipeline/normalise/review.py): unreviewed entities grouped with their
spellings and sources, and the known entities closest to each, ranked."""

from __future__ import annotations

import pandas as pd

from pipeline.normalise.entities import Resolver
from pipeline.normalise.review import entity_key, pending_groups
from pipeline.support.settings import BUNDLED_METADATA

ENTITIES = pd.DataFrame(
    [
        ("model", "gpt-4o-2024-11", "GPT-4o (Nov '24)", "artificial-analysis-api", 12),
        ("model", "gpt-4o-2024-11-20", "gpt-4o-2024-11-20", "models-dev, openrouter", 9),
        ("model", "qwen3-coder", "Qwen3 Coder", "models-dev", 3),
        ("model", "kimi-k2", "Kimi K2", "artificial-analysis-api, openrouter", 2),
        ("provider", "siliconflow-cn", "SiliconFlow (China)", "models-dev", 1),
        ("provider", "siliconflow", "SiliconFlow", "models-dev", 1),
    ],
    columns=["kind", "entity_id", "name", "named_by", "citations"],
)
SPELLINGS = pd.DataFrame(
    [
        ("model", "kimi-k2", "moonshotai/kimi-k2", "openrouter"),
        ("model", "kimi-k2", "Kimi K2", "artificial-analysis-api"),
        ("model", "gpt-4o-2024-11", "GPT-4o (Nov '24)", "artificial-analysis-api"),
    ],
    columns=["kind", "entity_id", "label", "sources"],
)


def reviewed() -> dict[str, dict[str, str]]:
    resolver = Resolver.load(BUNDLED_METADATA)
    return {kind: resolver.reviewed_keys(kind) for kind in ("provider", "model")}


def test_each_entity_lists_its_spellings_and_ranked_candidates():
    groups = pending_groups(ENTITIES, SPELLINGS, reviewed())
    assert [g["id"] for g in groups] == list(ENTITIES["entity_id"])  # the order given
    kimi = next(g for g in groups if g["id"] == "kimi-k2")
    assert kimi["spellings"] == [
        {"label": "Kimi K2", "sources": "artificial-analysis-api"},
        {"label": "moonshotai/kimi-k2", "sources": "openrouter"},
    ]
    # a reviewed model shares its words: the closest candidates, best first
    assert [c["id"] for c in kimi["candidates"]][:2] == ["kimi-k2.5", "kimi-k2.6"]
    nov = groups[0]
    assert nov["candidates"][0]["id"] == "gpt-4o-2024-11-20"
    assert "same family" in nov["candidates"][0]["reason"]
    scores = [c["score"] for c in nov["candidates"]]
    assert scores == sorted(scores, reverse=True)
    china = next(g for g in groups if g["id"] == "siliconflow-cn")
    assert china["candidates"][0]["id"] == "siliconflow"
    assert all(g["id"] not in [c["id"] for c in g["candidates"]] for g in groups)


def test_shown_limits_the_entities_not_their_candidates():
    groups = pending_groups(ENTITIES, SPELLINGS, reviewed(), shown=1)
    assert len(groups) == 1 and groups[0]["candidates"][0]["id"] == "gpt-4o-2024-11-20"


def test_an_empty_build_has_nothing_pending():
    empty = ENTITIES.iloc[0:0]
    assert pending_groups(empty, SPELLINGS.iloc[0:0], reviewed()) == []


def test_an_entity_without_words_in_common_has_no_candidates():
    lone = pd.DataFrame(
        [("model", "zzyzx-9", "Zzyzx 9", "x", 1)],
        columns=["kind", "entity_id", "name", "named_by", "citations"],
    )
    assert pending_groups(lone, SPELLINGS.iloc[0:0], reviewed())[0]["candidates"] == []


def test_entity_keys():
    assert entity_key("model", "llama-3.3-70b-instruct") == entity_key(
        "model", "llama3.3-70b-instruct"
    )
    assert entity_key("provider", "z-ai") == entity_key("provider", "zai")

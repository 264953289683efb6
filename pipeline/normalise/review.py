"""What a reviewer reads (`speedbook resolve --pending`): the unreviewed entities of a build, each
with the spellings the identity rules put together under it, the sources of each, and the known
entities closest to it, ranked (identity.rank_candidates). Pure: frames in, records out; the
command reads the frames from the warehouse.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

import pandas as pd

from pipeline.normalise.identity import (
    Candidate,
    key_units,
    model_identity,
    provider_key,
    rank_candidates,
    rank_provider_candidates,
)

MODEL = "model"
# a unit that many entities share ('instruct', '#3') says little: it finds no candidates alone
_COMMON = 200


def entity_key(kind: str, entity_id: str) -> str:
    """The identity key of an entity from its id (an id is one of its group's spellings)."""
    if kind == MODEL:
        return model_identity(entity_id).key
    return provider_key(entity_id)


def _candidates(
    kind: str, entity_id: str, known: Mapping[str, str], index: Mapping[str, set[str]], limit: int
) -> list[Candidate]:
    """A model's candidates among the entities sharing a unit with it that few others share;
    a provider's among every provider, by spelling (a provider's key is one word)."""
    key = known[entity_id]
    if kind != MODEL:
        others = {other: k for other, k in known.items() if other != entity_id}
        return rank_provider_candidates(key, others, limit=limit)
    found = [index[unit] for unit in key_units(key) if unit in index]
    rare = [ids for ids in found if len(ids) <= _COMMON] or sorted(found, key=len)[:1]
    near = set().union(*rare) - {entity_id} if rare else set()
    return rank_candidates(key, {other: known[other] for other in near}, limit=limit)


def pending_groups(
    entities: pd.DataFrame,
    spellings: pd.DataFrame,
    reviewed: Mapping[str, Mapping[str, str]],
    *,
    shown: int | None = None,
    candidates: int = 3,
) -> list[dict[str, Any]]:
    """One record per unreviewed entity, the first `shown` (all: None) in the order of
    `entities` (kind, entity_id, name, named_by, citations: mart.unreviewed_entities, most cited
    first), with `spellings` (the label resolutions of those entities: kind, entity_id, label,
    sources) grouped under it, and the `candidates` closest known entities: the reviewed ones
    (`reviewed`: kind -> key -> id) and every other unreviewed one."""
    labels: dict[tuple[str, str], list[dict[str, str]]] = defaultdict(list)
    for row in spellings.sort_values(["kind", "entity_id", "label"]).itertuples(index=False):
        labels[(row.kind, row.entity_id)].append({"label": row.label, "sources": row.sources})
    known: dict[str, dict[str, str]] = {
        kind: {entity_id: key for key, entity_id in keys.items()} for kind, keys in reviewed.items()
    }
    every = pd.DataFrame(entities)
    for row in every.itertuples(index=False):
        known.setdefault(row.kind, {}).setdefault(
            row.entity_id, entity_key(row.kind, row.entity_id)
        )
    # a model's units -> the models holding them, to compare a model with those sharing one
    index: dict[str, set[str]] = defaultdict(set)
    for entity_id, key in known.get(MODEL, {}).items():
        for unit in key_units(key):
            index[unit].add(entity_id)
    groups = []
    for row in every.head(shown if shown is not None else len(every)).itertuples(index=False):
        kind, entity_id = row.kind, row.entity_id
        ranked = _candidates(kind, entity_id, known[kind], index, candidates)
        groups.append(
            {
                "kind": kind,
                "id": entity_id,
                "name": row.name,
                "citations": int(row.citations),
                "named_by": row.named_by,
                "spellings": labels.get((kind, entity_id), []),
                "candidates": [
                    {"id": c.entity_id, "score": c.score, "reason": c.reason} for c in ranked
                ],
            }
        )
    return groups

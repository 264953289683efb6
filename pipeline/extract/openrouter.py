"""OpenRouter's model list (GET /api/v1/models): {"data": [model, ...]}.

Besides the catalogue's own fields, each model's `canonical_slug` (OpenRouter's permanent slug)
and `hugging_face_id` (the repository of the weights it serves) are staged: they are the stable
keys the identity rules read (pipeline/normalise/identity.py). An empty one is not given.
"""

from __future__ import annotations

from typing import Any

from pipeline.extract.base import Frames, Parser, SnapshotInput, validated
from pipeline.extract.jsondoc import json_count, json_date, load_json
from pipeline.extract.prices import PER_TOKEN, usd_per_mtok
from pipeline.support.text import clean_text, shorten


def _price(
    snapshot: SnapshotInput, model_id: str, pricing: dict[str, Any], key: str
) -> float | None:
    """USD per token as a string; '-1' marks variable pricing (router models): no price."""
    return usd_per_mtok(
        snapshot,
        pricing.get(key),
        f"model {model_id!r}: pricing.{key}",
        per_tokens=PER_TOKEN,
        variable=True,
    )


def _key(snapshot: SnapshotInput, model: dict[str, Any], model_id: str, field: str) -> str | None:
    """A stable key beside the id: text (markup and control characters removed), or None when
    absent or empty; anything else is refused, naming the model and field."""
    value = model.get(field)
    if value is None:
        return None
    if not isinstance(value, str):
        raise snapshot.fail(f"model {model_id!r}: {field} is not text: {shorten(repr(value), 60)}")
    return clean_text(value) or None


def parse(snapshot: SnapshotInput) -> Frames:
    document = load_json(snapshot)
    if not isinstance(document, dict) or not isinstance(document.get("data"), list):
        raise snapshot.fail("expected {'data': [model, ...]} (OpenRouter GET /api/v1/models)")
    rows = []
    for index, model in enumerate(document["data"], start=1):
        if not isinstance(model, dict) or not isinstance(model.get("id"), str):
            raise snapshot.fail(f"model #{index}: expected an object with a string 'id'")
        model_id = clean_text(model["id"])
        if not model_id:
            raise snapshot.fail(f"model #{index}: empty id")
        name = model.get("name")
        architecture = (
            model.get("architecture") if isinstance(model.get("architecture"), dict) else {}
        )
        pricing = model.get("pricing") if isinstance(model.get("pricing"), dict) else {}
        parameters = model.get("supported_parameters")
        rows.append(
            {
                "platform_model_id": model_id,
                "name": clean_text(name)
                if isinstance(name, str) and clean_text(name)
                else model_id,
                "publisher": model_id.split("/")[0] if "/" in model_id else None,
                "task": clean_text(architecture["modality"])
                if isinstance(architecture.get("modality"), str)
                else None,
                "function_calling": ("tools" in parameters)
                if isinstance(parameters, list)
                else None,
                "beta": None,
                "lora": None,
                "context_window": json_count(
                    snapshot, model.get("context_length"), f"model {model_id!r}: context_length"
                ),
                "price_input_usd_per_mtok": _price(snapshot, model_id, pricing, "prompt"),
                "price_output_usd_per_mtok": _price(snapshot, model_id, pricing, "completion"),
                "planned_deprecation": json_date(
                    snapshot, model.get("expiration_date"), f"model {model_id!r}: expiration_date"
                ),
                "canonical_slug": _key(snapshot, model, model_id, "canonical_slug"),
                "hugging_face_id": _key(snapshot, model, model_id, "hugging_face_id"),
            }
        )
    if not rows:
        raise snapshot.fail("the model list is empty")
    return {"catalogue_entries": validated("catalogue_entries", snapshot, rows)}


PARSER = Parser("openrouter_models", "3", ("catalogue_entries",), parse)

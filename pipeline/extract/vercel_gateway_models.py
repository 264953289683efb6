"""Vercel AI Gateway's model list: GET https://ai-gateway.vercel.sh/v1/models, as Vercel documents
it (REST API reference, "List models"; no API key needed): ``{"object": "list", "data": [{"id":
"creator/model", "name", "owned_by", "type", "tags", "context_window", "max_tokens", "pricing":
{"input", "output", "input_cache_read", "input_cache_write", ...}}, ...]}``, prices in USD per
token as strings.

Each model is a row of `catalogue_entries`: its id, name, owner, type ('language', 'embedding',
'image', ...), tool calling (the 'tool-use' tag), context window, input, output and cached input
prices. The prices it has no column for (cache writes, per image, per web search, context tiers)
are kept as written in `other_prices`. The models are also what a poll of the gateway's endpoint
statistics asks for (the registry's `models_from`).

As for the other catalogues, the list is read whole or not at all: a model without a string id,
a model listed twice or a price that is not a price fails the snapshot, naming the model, and a
poll then takes its models from the newest snapshot that reads.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from pipeline.extract.base import Frames, Parser, SnapshotInput, validated
from pipeline.extract.jsondoc import json_count, load_json
from pipeline.extract.prices import PER_TOKEN, usd_per_mtok
from pipeline.support.text import clean_text, shorten

SHAPE = "{'object': 'list', 'data': [model, ...]} (Vercel AI Gateway GET /v1/models)"
READ_PRICES = ("input", "output", "input_cache_read")
TOOL_TAG = "tool-use"


def _text(value: Any, max_length: int = 500) -> str | None:
    return (clean_text(value, max_length) or None) if isinstance(value, str) else None


def _other_prices(pricing: dict[str, Any]) -> str | None:
    """The prices without a column, as written: 'input_cache_write: 0.00000125; image: 0.04'."""
    others = []
    for key, value in pricing.items():
        if key in READ_PRICES or value is None:
            continue
        written = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
        others.append(f"{clean_text(str(key), 60)}: {clean_text(written, 300)}")
    return "; ".join(others) or None


def _row(snapshot: SnapshotInput, model: dict[str, Any], model_id: str) -> dict[str, Any]:
    where = f"model {model_id!r}"
    pricing = model.get("pricing")
    if pricing is None:
        pricing = {}
    elif not isinstance(pricing, dict):
        raise snapshot.fail(f"{where}: pricing is not an object")
    tags = model.get("tags")
    prices = {
        key: usd_per_mtok(
            snapshot, pricing.get(key), f"{where}: pricing.{key}", per_tokens=PER_TOKEN
        )
        for key in READ_PRICES
    }
    return {
        "platform_model_id": model_id,
        "name": _text(model.get("name")) or model_id,
        "publisher": _text(model.get("owned_by"), 200),
        "task": _text(model.get("type"), 100),
        "function_calling": (TOOL_TAG in tags) if isinstance(tags, list) else None,
        "beta": None,
        "lora": None,
        "context_window": json_count(
            snapshot, model.get("context_window"), f"{where}: context_window"
        ),
        "price_input_usd_per_mtok": prices["input"],
        "price_output_usd_per_mtok": prices["output"],
        "planned_deprecation": None,
        "price_cached_input_usd_per_mtok": prices["input_cache_read"],
        "other_prices": _other_prices(pricing),
    }


def parse(snapshot: SnapshotInput) -> Frames:
    document = load_json(snapshot)
    if not isinstance(document, dict) or not isinstance(document.get("data"), list):
        raise snapshot.fail(f"expected {SHAPE}")
    rows = []
    for index, model in enumerate(document["data"], start=1):
        model_id = _text(model.get("id"), 300) if isinstance(model, dict) else None
        if model_id is None:
            raise snapshot.fail(f"model #{index}: expected an object with a non-empty string 'id'")
        rows.append(_row(snapshot, model, model_id))
    if not rows:
        raise snapshot.fail("the model list is empty")
    repeated = [
        model for model, n in Counter(r["platform_model_id"] for r in rows).items() if n > 1
    ]
    if repeated:
        raise snapshot.fail(f"model {shorten(repeated[0], 80)!r} is listed more than once")
    return {"catalogue_entries": validated("catalogue_entries", snapshot, rows)}


PARSER = Parser("vercel_gateway_models", "1", ("catalogue_entries",), parse)

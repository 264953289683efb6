"""models.dev's catalogue (https://models.dev/api.json): {provider_id: {id, name, doc, api, env,
npm, models: {model_id: {name, cost, limit, tool_call, reasoning, open_weights, release_date,
last_updated, status, ...}}}}, one row per provider x model offer (`models_dev_offers`).

Costs are USD per million tokens already; 0 is a price (free), an absent cost is no price. A
limit of 0 means not stated (a context window of 0 tokens is not one): null. Dates are kept as
written, `YYYY-MM-DD` or `YYYY-MM`. Fields the parser does not read (modalities, tiered and
long-context prices, per-model API overrides) stay in the snapshot.

A community catalogue of thousands of offers has the odd bad value (the 2026 captures date one
model '2025-25-11'): a value that is not what the catalogue's schema says leaves that column null
and is noted, as written, in the offer's `unread`; the offer and the rest of the catalogue are
staged. A catalogue whose shape is not this one (a provider without a `models` object, a model
that is not an object) is refused.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date
from typing import Any

from pipeline.extract.base import Frames, Parser, SnapshotInput, validated
from pipeline.extract.jsondoc import Failing, json_flag, json_label, json_number, load_json
from pipeline.extract.prices import PER_MILLION_TOKENS, usd_per_mtok
from pipeline.schema.staging import MAX_COUNT
from pipeline.support.text import safe_url, shorten

_MONTH_OR_DAY = re.compile(r"\d{4}-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?")
COSTS = {
    "price_input_usd_per_mtok": "input",
    "price_output_usd_per_mtok": "output",
    "price_cache_read_usd_per_mtok": "cache_read",
    "price_cache_write_usd_per_mtok": "cache_write",
}
LIMITS = {"context_window": "context", "max_output_tokens": "output"}
FLAGS = {"function_calling": "tool_call", "reasoning": "reasoning", "open_weights": "open_weights"}


class _Unread(Exception):
    """A value of one offer that is not what the catalogue's schema says: noted, not read."""


class _Notes:
    """The `where` of jsondoc's readers inside one offer: each failure becomes a note."""

    def __init__(self) -> None:
        self.unread: list[str] = []

    def fail(self, message: str) -> _Unread:
        return _Unread(message)

    def read(self, reader: Callable[..., Any], *args: Any) -> Any:
        try:
            return reader(self, *args)
        except _Unread as unread:
            self.unread.append(str(unread))
            return None


def _object(where: Failing, value: Any, what: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise where.fail(f"{what} is not an object: {shorten(repr(value), 60)}")
    return value


def _limit(where: Failing, value: Any, what: str) -> int | None:
    if value is None:
        return None
    number = json_number(where, value, what)
    if number < 0 or not number.is_integer() or number > MAX_COUNT:
        raise where.fail(f"{what} is not a token count: {shorten(repr(value), 40)}")
    return int(number) or None  # 0: not stated


def _when(where: Failing, value: Any, what: str) -> str | None:
    """A date as written, 'YYYY-MM-DD' (a day that exists) or 'YYYY-MM'."""
    if value is None:
        return None
    if isinstance(value, str) and _MONTH_OR_DAY.fullmatch(value):
        try:
            date.fromisoformat(value if len(value) == 10 else value + "-01")
            return value
        except ValueError:
            pass
    raise where.fail(f"{what} {shorten(repr(value), 40)} is not a date (YYYY-MM-DD or YYYY-MM)")


def _offer(provider: dict[str, Any], model_id: str, model: dict[str, Any]) -> dict[str, Any]:
    notes = _Notes()
    cost = notes.read(_object, model.get("cost"), "cost") or {}
    limit = notes.read(_object, model.get("limit"), "limit") or {}
    row = provider | {
        "platform_model_id": json_label(model_id),
        "name": json_label(model.get("name")) or json_label(model_id),
        "family": json_label(model.get("family")),
        "status": json_label(model.get("status")),
        "release_date": notes.read(_when, model.get("release_date"), "release_date"),
        "last_updated": notes.read(_when, model.get("last_updated"), "last_updated"),
    }
    for column, key in COSTS.items():
        row[column] = notes.read(_cost, cost.get(key), f"cost.{key}")
    for column, key in LIMITS.items():
        row[column] = notes.read(_limit, limit.get(key), f"limit.{key}")
    for column, key in FLAGS.items():
        row[column] = notes.read(json_flag, model.get(key), key)
    row["unread"] = "; ".join(notes.unread) or None
    return row


def _cost(where: Failing, value: Any, what: str) -> float | None:
    return usd_per_mtok(where, value, what, per_tokens=PER_MILLION_TOKENS)


def parse(snapshot: SnapshotInput) -> Frames:
    document = load_json(snapshot)
    if not isinstance(document, dict) or not document:
        raise snapshot.fail(
            "expected {provider_id: {name, models: {model_id: model}}} (models.dev)"
        )
    rows = []
    for provider_id, entry in document.items():
        what = f"provider {shorten(provider_id, 80)!r}"
        if not isinstance(entry, dict) or not isinstance(entry.get("models"), dict):
            raise snapshot.fail(f"{what}: expected an object with a 'models' object")
        cleaned_id = json_label(provider_id)
        if cleaned_id is None:
            raise snapshot.fail(f"{what}: the provider id is empty")
        doc = entry.get("doc")
        provider = {
            "provider_id": cleaned_id,
            "provider_name": json_label(entry.get("name")) or cleaned_id,
            "provider_doc_url": safe_url(doc) if isinstance(doc, str) else None,
        }
        for model_id, model in entry["models"].items():
            where = f"{what}, model {shorten(model_id, 80)!r}"
            if not isinstance(model, dict):
                raise snapshot.fail(f"{where}: expected an object")
            if json_label(model_id) is None:
                raise snapshot.fail(f"{where}: the model id is empty")
            rows.append(_offer(provider, model_id, model))
    if not rows:
        raise snapshot.fail("the catalogue lists no models")
    return {"models_dev_offers": validated("models_dev_offers", snapshot, rows)}


PARSER = Parser("models_dev", "1", ("models_dev_offers",), parse)

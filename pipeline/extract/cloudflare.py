"""Cloudflare Workers AI catalogue: the /ai/models/search response, or one model object as the
docs repository stores it (src/content/workers-ai-models/<slug>.json)."""

from __future__ import annotations

from typing import Any

from pipeline.extract.base import Frames, Parser, SnapshotInput, validated
from pipeline.extract.jsondoc import json_date, json_number, load_json
from pipeline.extract.prices import PER_MILLION_TOKENS, usd_per_mtok
from pipeline.support.text import clean_text


def _models(snapshot: SnapshotInput, document: Any) -> list[Any]:
    if isinstance(document, dict) and "result" in document:
        if document.get("success") is False:
            raise snapshot.fail(f"the API answered success=false: {document.get('errors')!r}")
        if not isinstance(document["result"], list):
            raise snapshot.fail("expected 'result' to be a list of model objects")
        info = document.get("result_info")
        total = info.get("total_count") if isinstance(info, dict) else None
        if isinstance(total, int) and total > len(document["result"]):
            # One page of a paged answer: the models on the other pages would be missing.
            raise snapshot.fail(
                f"the response holds {len(document['result'])} of {total} models "
                "(result_info.total_count): expected the whole catalogue"
            )
        return document["result"]
    if isinstance(document, dict) and "name" in document and "task" in document:
        return [document]
    raise snapshot.fail("expected {'success': true, 'result': [model, ...]} or one model object")


def _flag(snapshot: SnapshotInput, name: str, key: str, value: Any) -> bool | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().casefold() in ("true", "false"):
        return value.strip().casefold() == "true"
    raise snapshot.fail(f"model {name!r}: property {key!r} is not a boolean: {value!r}")


def _int(snapshot: SnapshotInput, name: str, key: str, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise snapshot.fail(f"model {name!r}: property {key!r} is not a number: {value!r}")
    try:
        number = int(str(value).replace(",", "").strip())
    except ValueError:
        raise snapshot.fail(
            f"model {name!r}: property {key!r} is not a number: {value!r}"
        ) from None
    if number <= 0:
        raise snapshot.fail(f"model {name!r}: property {key!r} must be positive, got {value!r}")
    return number


# Cloudflare's price units as its catalogue writes them (compared ignoring case and spacing),
# each with the column it fills. A price in any other unit or currency is kept as written.
PRICE_UNITS = {
    "per m input tokens": "price_input_usd_per_mtok",
    "per m output tokens": "price_output_usd_per_mtok",
    "per m cached input tokens": "price_cached_input_usd_per_mtok",
}


def _prices(snapshot: SnapshotInput, name: str, value: Any) -> dict[str, Any]:
    """USD per million input, output and cached input tokens where the price list states them;
    every other price (audio minutes, image tiles, another currency, a unit not known here) goes
    to `other_prices` as written, never read as one of these."""
    columns: dict[str, Any] = dict.fromkeys((*PRICE_UNITS.values(), "other_prices"))
    if value is None:
        return columns
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise snapshot.fail(f"model {name!r}: property 'price' is not a list of price objects")
    other = []
    for item in value:
        unit, currency = item.get("unit"), item.get("currency", "USD")
        column = PRICE_UNITS.get(" ".join(str(unit).split()).casefold())
        if column is None or currency != "USD":
            written = (item.get("price"), currency, unit)
            other.append(clean_text(" ".join(str(part) for part in written if part is not None)))
            continue
        if columns[column] is not None:  # which of two the publisher meant is unknowable
            kind = column.removeprefix("price_").removesuffix("_usd_per_mtok").replace("_", " ")
            raise snapshot.fail(f"model {name!r}: property 'price' gives two {kind} prices")
        where = f"model {name!r}: property 'price' ({clean_text(str(unit), 60)})"
        number = json_number(snapshot, item.get("price"), where)
        columns[column] = usd_per_mtok(snapshot, number, where, per_tokens=PER_MILLION_TOKENS)
    columns["other_prices"] = "; ".join(other) or None
    return columns


def parse(snapshot: SnapshotInput) -> Frames:
    rows = []
    for index, model in enumerate(_models(snapshot, load_json(snapshot)), start=1):
        if not isinstance(model, dict) or not isinstance(model.get("name"), str):
            raise snapshot.fail(f"model #{index}: expected an object with a string 'name'")
        full_name = clean_text(model["name"])
        if not full_name:
            raise snapshot.fail(f"model #{index}: empty name")
        task = model.get("task")
        task_name = (
            clean_text(task["name"])
            if isinstance(task, dict) and isinstance(task.get("name"), str)
            else None
        )
        properties: dict[str, Any] = {}
        for item in model.get("properties") or []:
            if isinstance(item, dict) and isinstance(item.get("property_id"), str):
                properties[item["property_id"]] = item.get("value")
        parts = full_name.split("/")
        deprecation = json_date(
            snapshot,
            properties.get("planned_deprecation_date"),
            f"model {full_name!r}: planned_deprecation_date",
        )
        rows.append(
            {
                "platform_model_id": full_name,
                "name": parts[-1],
                "publisher": parts[-2] if len(parts) >= 3 else None,
                "task": task_name,
                "function_calling": _flag(
                    snapshot, full_name, "function_calling", properties.get("function_calling")
                ),
                "beta": _flag(snapshot, full_name, "beta", properties.get("beta")),
                "lora": _flag(snapshot, full_name, "lora", properties.get("lora")),
                "context_window": _int(
                    snapshot, full_name, "context_window", properties.get("context_window")
                ),
                "planned_deprecation": deprecation,
                **_prices(snapshot, full_name, properties.get("price")),
            }
        )
    if not rows:
        raise snapshot.fail("the catalogue lists no models")
    return {"catalogue_entries": validated("catalogue_entries", snapshot, rows)}


PARSER = Parser("cloudflare_models", "4", ("catalogue_entries",), parse)

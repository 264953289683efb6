"""Artificial Analysis's model list (GET /api/v2/data/llms/models, sent with the `x-api-key`
header): {"status": 200, "prompt_options": {...}, "data": [model, ...]}.

Its figures are per **model**, medians across the providers Artificial Analysis measures, so they
are staged per model (`aa_models`, `aa_model_figures`) and never attributed to a provider. Each
model's median output speed, time to first token and time to first answer token (seconds; the
latter after a reasoning model's thinking) is a figure of method "fixed-workload probe" with the
response's `prompt_options` (prompt length, parallel queries) as its workload. Artificial
Analysis writes 0 for what it has not measured (225 of 525 models in the May 2026 capture): such a
figure has no row, and such a price is null. Every model is listed in `aa_models`, measured or not.
"""

from __future__ import annotations

from typing import Any

from pipeline.extract.base import Frames, Parser, SnapshotInput, validated
from pipeline.extract.jsondoc import json_count, json_date, json_label, json_number, load_json
from pipeline.extract.prices import PER_MILLION_TOKENS, usd_per_mtok
from pipeline.schema.staging import MAX_TTFT_S
from pipeline.schema.vocabulary import MAX_TOKENS_PER_S
from pipeline.support.text import shorten

METHOD = "fixed-workload probe"
STATISTIC = "median"
# Artificial Analysis's methodology: its live figures are medians over the past 72 hours.
WINDOW_MINUTES = 72 * 60
# metric -> (field, upper bound in the metric's unit)
FIGURES = {
    "output_tokens_per_s": ("median_output_tokens_per_second", MAX_TOKENS_PER_S),
    "ttft_s": ("median_time_to_first_token_seconds", MAX_TTFT_S),
    "time_to_first_answer_token_s": ("median_time_to_first_answer_token", MAX_TTFT_S),
}
PRICES = {
    "price_blended_usd_per_mtok": "price_1m_blended_3_to_1",
    "price_input_usd_per_mtok": "price_1m_input_tokens",
    "price_output_usd_per_mtok": "price_1m_output_tokens",
}


def _workload(snapshot: SnapshotInput, document: dict[str, Any]) -> dict[str, int | None]:
    options = document.get("prompt_options")
    if options is None:
        options = {}
    if not isinstance(options, dict):
        raise snapshot.fail(f"prompt_options is not an object: {shorten(repr(options), 60)}")
    return {
        "prompt_length_tokens": json_count(
            snapshot, options.get("prompt_length"), "prompt_options.prompt_length"
        ),
        "parallel_queries": json_count(
            snapshot, options.get("parallel_queries"), "prompt_options.parallel_queries"
        ),
    }


def _measured(snapshot: SnapshotInput, value: Any, what: str) -> float | None:
    """A figure or price; 0 (and null) is not measured. Negative is an error."""
    if value is None:
        return None
    number = json_number(snapshot, value, what)
    if number < 0:
        raise snapshot.fail(f"{what} is negative: {shorten(repr(value), 40)}")
    return number or None


def _creator(model: dict[str, Any]) -> dict[str, Any]:
    creator = model.get("model_creator")
    return creator if isinstance(creator, dict) else {}


def parse(snapshot: SnapshotInput) -> Frames:
    document = load_json(snapshot)
    if not isinstance(document, dict) or not isinstance(document.get("data"), list):
        raise snapshot.fail(
            "expected {'status': 200, 'data': [model, ...]} (Artificial Analysis "
            "GET /api/v2/data/llms/models)"
        )
    status = document.get("status")
    if status is not None and status != 200:
        raise snapshot.fail(f"the API answered status {shorten(repr(status), 40)}, expected 200")
    workload = _workload(snapshot, document)
    models, figures = [], []
    for index, model in enumerate(document["data"], start=1):
        if not isinstance(model, dict):
            raise snapshot.fail(f"model #{index}: expected an object")
        model_id = json_label(model.get("id"))
        slug = json_label(model.get("slug"))
        if model_id is None or slug is None:
            raise snapshot.fail(f"model #{index}: expected non-empty strings 'id' and 'slug'")
        where = f"model {slug!r}"
        pricing = model.get("pricing")
        if pricing is None:
            pricing = {}
        if not isinstance(pricing, dict):
            raise snapshot.fail(f"{where}: pricing is not an object")
        creator = _creator(model)
        row = {
            "aa_model_id": model_id,
            "slug": slug,
            "name": json_label(model.get("name")) or slug,
            "creator_name": json_label(creator.get("name")),
            "creator_slug": json_label(creator.get("slug")),
            "release_date": json_date(
                snapshot, model.get("release_date"), f"{where}: release_date"
            ),
        }
        for column, key in PRICES.items():
            price = _measured(snapshot, pricing.get(key), f"{where}: pricing.{key}")
            row[column] = usd_per_mtok(
                snapshot, price, f"{where}: pricing.{key}", per_tokens=PER_MILLION_TOKENS
            )
        models.append(row)
        for metric, (key, bound) in FIGURES.items():
            value = _measured(snapshot, model.get(key), f"{where}: {key}")
            if value is None:
                continue
            if value >= bound:
                raise snapshot.fail(f"{where}: {key} is {value:g}: expected under {bound:g}")
            figures.append(
                {
                    "aa_model_id": model_id,
                    "slug": slug,
                    "metric": metric,
                    "statistic": STATISTIC,
                    "value": value,
                    "window_minutes": WINDOW_MINUTES,
                    "method": METHOD,
                    **workload,
                }
            )
    if not models:
        raise snapshot.fail("the model list is empty")
    return {
        "aa_models": validated("aa_models", snapshot, models),
        "aa_model_figures": validated("aa_model_figures", snapshot, figures),
    }


PARSER = Parser("artificial_analysis_api", "1", ("aa_models", "aa_model_figures"), parse)

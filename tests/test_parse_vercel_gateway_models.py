"""Vercel AI Gateway's model list (GET /v1/models), the models its endpoint statistics are polled
for. The fixture is written by hand in the documented shape (tests/fixtures/vercel-ai-gateway/
README.md): the documentation's sample model and the ids of the poll round's models."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from test_parse_support import FIXTURES, in_fixture_store, parse, refused

from pipeline.extract import SnapshotInput

SOURCE_ID = "vercel-ai-gateway-catalogue"
MODELS = (FIXTURES / "vercel-ai-gateway" / "models.json").read_bytes()


def catalogue(tmp_path) -> SnapshotInput:
    return in_fixture_store(tmp_path, SOURCE_ID, MODELS, retrieved_at="2026-07-20T02:15:00Z")


def edited(change: Callable[[dict[str, Any]], object]) -> bytes:
    document = json.loads(MODELS)
    change(document)
    return json.dumps(document).encode()


def test_every_model_is_a_catalogue_entry_with_its_prices_per_million_tokens(tmp_path):
    rows = parse(catalogue(tmp_path))["catalogue_entries"].set_index("platform_model_id")
    assert list(rows.index) == [
        "google/gemini-3.1-pro-preview",
        "anthropic/claude-sonnet-4-6",
        "deepseek/deepseek-v4-flash",
        "moonshotai/kimi-k3",
        "openai/gpt-5.5",
        "openai/gpt-oss-120b",
        "zhipuai/glm-5.2",
    ]
    gemini = rows.loc["google/gemini-3.1-pro-preview"]
    assert (gemini["name"], gemini["publisher"], gemini["task"]) == (
        "Gemini 3.1 Pro Preview",
        "google",
        "language",
    )
    assert gemini["function_calling"] and gemini["context_window"] == 1_000_000
    assert (gemini["price_input_usd_per_mtok"], gemini["price_output_usd_per_mtok"]) == (2, 12)
    assert gemini["price_cached_input_usd_per_mtok"] == 0.2
    assert gemini["other_prices"] == "input_cache_write: 0.000002"
    bare = rows.loc["openai/gpt-oss-120b"]
    assert bare["name"] == "openai/gpt-oss-120b"  # no name given: the id
    assert bare[["publisher", "task", "function_calling", "price_input_usd_per_mtok"]].isna().all()


def test_prices_without_a_column_are_kept_as_written(tmp_path):
    tiers = [{"cost": "0.000002", "min": 0, "max": 200000}, {"cost": "0.000004", "min": 200000}]

    def tiered(document: dict[str, Any]) -> None:
        document["data"][0]["pricing"] |= {"input_tiers": tiers, "web_search": "0.01"}

    row = parse(catalogue(tmp_path), edited(tiered))["catalogue_entries"].iloc[0]
    assert row["other_prices"] == (
        'input_cache_write: 0.000002; input_tiers: [{"cost":"0.000002","min":0,"max":200000},'
        '{"cost":"0.000004","min":200000}]; web_search: 0.01'
    )


def test_markup_in_names_is_removed(tmp_path):
    def hostile(document: dict[str, Any]) -> None:
        document["data"][0]["name"] = "<script>alert(1)</script>Gemini <b>3.1</b>"
        document["data"][0]["owned_by"] = "<img src=x onerror=alert(1)>google"

    row = parse(catalogue(tmp_path), edited(hostile))["catalogue_entries"].iloc[0]
    assert (row["name"], row["publisher"]) == ("Gemini 3.1", "google")


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda d: d.update(data={}), "expected {'object': 'list', 'data': [model, ...]}"),
        (lambda d: d.update(data=[]), "the model list is empty"),
        (lambda d: d["data"].append({"name": "no id"}), "model #8: expected an object"),
        (lambda d: d["data"].append("openai/gpt-4o"), "model #8: expected an object"),
        (lambda d: d["data"].append(d["data"][1]), "is listed more than once"),
        (
            lambda d: d["data"][0]["pricing"].update(input="-0.5"),
            "model 'google/gemini-3.1-pro-preview': pricing.input is negative",
        ),
        (
            lambda d: d["data"][0]["pricing"].update(output="cheap"),
            "pricing.output is not a number",
        ),
        (lambda d: d["data"][0].update(pricing=[1]), "pricing is not an object"),
        (
            lambda d: d["data"][0].update(context_window=-1),
            "context_window is not a positive whole number",
        ),
    ],
)
def test_a_broken_list_fails_naming_the_model(tmp_path, change, expected):
    refused(catalogue(tmp_path), edited(change), expected)


def test_not_json_fails(tmp_path):
    refused(catalogue(tmp_path), b"<html>gateway</html>", "not valid JSON")

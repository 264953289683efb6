"""Artificial Analysis's model list (GET /api/v2/data/llms/models, a real response of 2026-05-27
in tests/fixtures): medians per model, never per provider; 0 is not measured. Broken variants."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from test_parse_support import FIXTURES, in_fixture_store, parse, refused

from pipeline.extract import SnapshotInput
from pipeline.sources.registry import Source

SOURCE_ID = "artificial-analysis-api"
SOURCE = Source(
    id=SOURCE_ID,
    kind="benchmark",
    publisher="Artificial Analysis",
    url="https://artificialanalysis.ai/api/v2/data/llms/models",
    tier="T1",
    format="artificial_analysis_api",
    cadence="daily",
)
REAL = (FIXTURES / "artificial-analysis" / "api-v2-data-llms-models-2026-05-27.json").read_bytes()
LOW = "c99f3bde-7c08-4de8-bd5c-8ee9123ebffa"  # gpt-oss-120b (low), the first model


@pytest.fixture
def snapshot(tmp_path: Path) -> SnapshotInput:
    return in_fixture_store(
        tmp_path, SOURCE_ID, REAL, retrieved_at="2026-05-27T00:00:00Z", source=SOURCE
    )


def edited(change: Any) -> bytes:
    document = json.loads(REAL)
    change(document)
    return json.dumps(document).encode()


def first(key: str, value: object) -> Any:
    return lambda d: d["data"][0].__setitem__(key, value)


def test_every_model_is_listed_and_the_measured_ones_have_figures(
    snapshot: SnapshotInput,
) -> None:
    frames = parse(snapshot)
    models, figures = frames["aa_models"], frames["aa_model_figures"]
    assert len(models) == 525 and models["aa_model_id"].is_unique
    # 225 models carry 0 for every figure: not measured, so no rows; 300 have all three.
    assert figures["aa_model_id"].nunique() == 300
    assert len(figures) == 900
    assert set(figures["metric"]) == {
        "output_tokens_per_s",
        "ttft_s",
        "time_to_first_answer_token_s",
    }
    assert (figures["value"] > 0).all()
    assert set(figures["statistic"]) == {"median"}
    assert set(figures["method"]) == {"fixed-workload probe"}
    assert set(figures["window_minutes"]) == {72 * 60}
    assert set(figures["prompt_length_tokens"]) == {1000} and set(figures["parallel_queries"]) == {
        1
    }
    assert not {"provider", "provider_id", "provider_label"} & set(figures.columns)


def test_the_first_model_as_the_response_gives_it(snapshot: SnapshotInput) -> None:
    frames = parse(snapshot)
    model = frames["aa_models"].set_index("aa_model_id").loc[LOW]
    assert tuple(model[["slug", "name", "creator_name", "creator_slug", "release_date"]]) == (
        "gpt-oss-120b-low",
        "gpt-oss-120b (low)",
        "OpenAI",
        "openai",
        "2025-08-05",
    )
    prices = ["price_blended_usd_per_mtok", "price_input_usd_per_mtok", "price_output_usd_per_mtok"]
    assert tuple(model[prices]) == (0.262, 0.15, 0.6)
    figures = frames["aa_model_figures"]
    values = dict(figures.loc[figures["aa_model_id"] == LOW, ["metric", "value"]].values)
    assert values == {
        "output_tokens_per_s": 335.934,
        "ttft_s": 0.485,
        "time_to_first_answer_token_s": 6.438,
    }


def test_zero_is_not_measured_for_figures_and_prices(snapshot: SnapshotInput) -> None:
    frames = parse(snapshot)
    models = frames["aa_models"].set_index("slug")
    grok = models.loc["grok-1"]  # every figure and price 0
    assert grok[["price_blended_usd_per_mtok", "price_input_usd_per_mtok"]].isna().all()
    assert grok.aa_model_id not in set(frames["aa_model_figures"]["aa_model_id"])
    assert models["price_blended_usd_per_mtok"].isna().sum() == 178
    assert (models["price_blended_usd_per_mtok"].dropna() > 0).all()


def test_one_figure_measured_gives_one_row(snapshot: SnapshotInput) -> None:
    def change(d: dict[str, Any]) -> None:
        d["data"][0]["median_time_to_first_token_seconds"] = 0
        d["data"][0]["median_time_to_first_answer_token"] = None

    figures = parse(snapshot, edited(change))["aa_model_figures"]
    assert list(figures.loc[figures["aa_model_id"] == LOW, "metric"]) == ["output_tokens_per_s"]


def test_without_prompt_options_the_workload_is_not_stated(snapshot: SnapshotInput) -> None:
    figures = parse(snapshot, edited(lambda d: d.pop("prompt_options")))["aa_model_figures"]
    assert figures["prompt_length_tokens"].isna().all() and len(figures) == 900


def test_markup_in_names_comes_out_as_clean_text(snapshot: SnapshotInput) -> None:
    def change(d: dict[str, Any]) -> None:
        d["data"][0]["name"] = "<script>alert(1)</script>gpt-oss-120b <i>(low)</i>"
        d["data"][0]["model_creator"]["name"] = "<img src=x onerror=alert(1)>OpenAI"

    model = parse(snapshot, edited(change))["aa_models"].iloc[0]
    assert (model["name"], model.creator_name) == ("gpt-oss-120b (low)", "OpenAI")


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            first("median_output_tokens_per_second", "fast"),
            "model 'gpt-oss-120b-low': median_output_tokens_per_second is not a number: 'fast'",
        ),
        (
            first("median_output_tokens_per_second", -5),
            "median_output_tokens_per_second is negative: -5",
        ),
        (
            first("median_output_tokens_per_second", 1e9),
            "median_output_tokens_per_second is 1e+09: expected under 100000",
        ),
        (
            first("median_time_to_first_token_seconds", 7200),
            "median_time_to_first_token_seconds is 7200: expected under 3600",
        ),
        (
            lambda d: d["data"][0]["pricing"].__setitem__("price_1m_input_tokens", "cheap"),
            "pricing.price_1m_input_tokens is not a number: 'cheap'",
        ),
        (first("pricing", [0.1]), "model 'gpt-oss-120b-low': pricing is not an object"),
        (first("release_date", "2025-13-45"), "release_date '2025-13-45' is not a date"),
        (first("slug", None), "model #1: expected non-empty strings 'id' and 'slug'"),
        (lambda d: d["data"].__setitem__(0, []), "model #1: expected an object"),
        (lambda d: d["data"].append(d["data"][1]), "duplicate row: aa_model_id"),
        (lambda d: d.__setitem__("status", 401), "the API answered status 401, expected 200"),
        (lambda d: d.__setitem__("prompt_options", 5), "prompt_options is not an object"),
        (
            lambda d: d["prompt_options"].__setitem__("prompt_length", "1k"),
            "prompt_options.prompt_length is not a positive whole number: '1k'",
        ),
        (
            lambda d: d["prompt_options"].__setitem__("parallel_queries", 10**400),
            "prompt_options.parallel_queries is 1000",
        ),
        (lambda d: d.__setitem__("data", []), "the model list is empty"),
        (lambda d: d.__setitem__("models", d.pop("data")), "expected {'status': 200, 'data'"),
    ],
)
def test_broken_variants(snapshot: SnapshotInput, change: Any, expected: str) -> None:
    refused(snapshot, edited(change), expected)


@pytest.mark.parametrize(
    "data",
    [b"", b"{}", b'{"status": 200}', REAL[:100_000], b'{"error": "Invalid API key"}'],
)
def test_bad_json_or_wrong_shape(snapshot: SnapshotInput, data: bytes) -> None:
    message = refused(snapshot, data)
    assert "not valid JSON" in message or "expected {'status': 200, 'data'" in message


def test_models_without_a_creator_or_date_are_still_listed(snapshot: SnapshotInput) -> None:
    def change(d: dict[str, Any]) -> None:
        del d["data"][0]["model_creator"]
        d["data"][0]["release_date"] = None

    model = parse(snapshot, edited(change))["aa_models"].iloc[0]
    assert pd.isna(model.creator_name) and pd.isna(model.release_date)

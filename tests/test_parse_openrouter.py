"""OpenRouter's model list (GET /api/v1/models, a real response of May 2026): prices per million
tokens, '-1' as no price, tool calling, context; the real file in tests/fixtures; broken
variants."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from test_parse_support import (
    FIXTURES,
    MB,
    PROVENANCE,
    bundled,
    frame,
    in_fixture_store,
    parse,
    refused,
)

SOURCE = "openrouter"
REAL_FILE = FIXTURES / "openrouter" / "api-v1-models-2026-05.json"
FIRST = "anthropic/claude-opus-4.7-fast"
FRONTEND = "frontend-catalog-20260718T074000Z.json.gz"


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return json.loads(bundled(SOURCE).data)


def variant(document: dict[str, Any], change: Any) -> bytes:
    copy = json.loads(json.dumps(document))
    change(copy)
    return json.dumps(copy, separators=(",", ":")).encode()


def set_first(key: str, value: object) -> Any:
    return lambda d: d["data"][0].__setitem__(key, value)


def set_price(key: str, value: object) -> Any:
    return lambda d: d["data"][0]["pricing"].__setitem__(key, value)


def prices(rows: pd.DataFrame, model_id: str) -> tuple[float | None, float | None]:
    row = rows.set_index("platform_model_id").loc[model_id]
    return tuple(  # type: ignore[return-value]
        None if pd.isna(v) else v
        for v in (row["price_input_usd_per_mtok"], row["price_output_usd_per_mtok"])
    )


def test_the_model_list_gives_364_models_with_prices_per_million_tokens() -> None:
    rows = frame(SOURCE, "catalogue_entries")
    assert len(rows) == 364 and rows["platform_model_id"].is_unique
    # USD per token as strings ("0.000000039") become USD per million tokens.
    assert prices(rows, "openai/gpt-oss-120b") == (0.039, 0.18)
    assert prices(rows, "meta-llama/llama-3.3-70b-instruct") == (0.1, 0.32)
    assert prices(rows, FIRST) == (30.0, 150.0)
    first = rows.set_index("platform_model_id").loc[FIRST]
    assert first["name"] == "Anthropic: Claude Opus 4.7 (Fast)"
    assert first["publisher"] == "anthropic"
    assert first["context_window"] == 1_000_000
    assert first["task"] == "text+image+file->text"


def test_minus_one_means_no_price_not_a_negative_one() -> None:
    rows = frame(SOURCE, "catalogue_entries")
    routers = ["openrouter/auto", "openrouter/bodybuilder", "openrouter/pareto-code"]
    assert sorted(rows.loc[rows["price_input_usd_per_mtok"].isna(), "platform_model_id"]) == routers
    assert prices(rows, "openrouter/auto") == (None, None)
    assert (rows["price_input_usd_per_mtok"].dropna() >= 0).all()


def test_tool_calling_and_expiry_are_read_by_name() -> None:
    rows = frame(SOURCE, "catalogue_entries")
    assert rows["function_calling"].sum() == 271
    assert rows.set_index("platform_model_id").loc["openai/gpt-oss-120b", "function_calling"]
    assert rows["planned_deprecation"].notna().sum() == 11
    assert set(rows["planned_deprecation"].dropna()) <= {"2026-05-15", "2026-05-30", "2026-06-01"}


def test_the_real_file_in_fixtures_gives_the_same_catalogue(tmp_path: Path) -> None:
    data = REAL_FILE.read_bytes()
    snapshot = in_fixture_store(tmp_path, SOURCE, data, retrieved_at="2026-05-12T19:10:11Z")
    rows = parse(snapshot)["catalogue_entries"]
    assert len(rows) == 364
    pd.testing.assert_frame_equal(
        rows.drop(columns=PROVENANCE), frame(SOURCE, "catalogue_entries").drop(columns=PROVENANCE)
    )


# Broken variants.


def test_table_missing(document: dict[str, Any]) -> None:
    data = variant(document, lambda d: d.__setitem__("models", d.pop("data")))
    refused(bundled(SOURCE), data, "expected {'data': [model, ...]}")


def test_header_renamed(document: dict[str, Any]) -> None:
    def rename(d: dict[str, Any]) -> None:
        d["data"][5]["model_id"] = d["data"][5].pop("id")

    refused(
        bundled(SOURCE),
        variant(document, rename),
        "model #6: expected an object with a string 'id'",
    )


@pytest.mark.parametrize("data", [b"", b" ", b"[]", b"{}", b'{"data": null}'])
def test_empty_page(data: bytes) -> None:
    message = refused(bundled(SOURCE), data)
    assert "not valid JSON" in message or "expected {'data': [model, ...]}" in message


def test_zero_rows(document: dict[str, Any]) -> None:
    refused(bundled(SOURCE), b'{"data": []}', "the model list is empty")


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (set_price("prompt", "free"), "pricing.prompt is not a number: 'free'"),
        (set_price("completion", [1]), "pricing.completion is not a number: [1]"),
        (set_price("prompt", True), "pricing.prompt is not a number: True"),
        (set_price("prompt", "NaN"), "pricing.prompt is not a finite number: 'NaN'"),
        (set_price("prompt", "-0.5"), "pricing.prompt is negative: '-0.5'"),
        (set_price("prompt", "-Infinity"), "pricing.prompt is not a finite number"),
        (set_first("context_length", "lots"), "context_length is not a positive whole number"),
        (set_first("context_length", -5), "context_length is not a positive whole number: -5"),
        (set_first("context_length", 1.5), "context_length is not a positive whole number: 1.5"),
        (set_first("expiration_date", "soon"), "expiration_date 'soon' is not a date"),
        (set_first("expiration_date", "2026-02-30"), "expiration_date '2026-02-30' is not a date"),
    ],
)
def test_non_numeric_negative_or_impossible_field(
    document: dict[str, Any], change: Any, expected: str
) -> None:
    message = refused(bundled(SOURCE), variant(document, change), expected)
    assert f"model {FIRST!r}" in message


def test_duplicate_row(document: dict[str, Any]) -> None:
    data = variant(document, lambda d: d["data"].append(d["data"][3]))
    refused(bundled(SOURCE), data, "duplicate row: platform_model_id", "appears more than once")


def test_duplicate_key(document: dict[str, Any]) -> None:
    data = variant(document, lambda d: None).replace(
        b'"id":"anthropic/claude-opus-4.7-fast"',
        b'"id":"anthropic/claude-opus-4.7-fast","id":"openai/gpt-oss-120b"',
        1,
    )
    refused(bundled(SOURCE), data, "key 'id' appears twice in one JSON object")


@pytest.mark.parametrize(
    ("model_id", "name"),
    [
        ("<script>alert(1)</script>anthropic/claude-opus-4.7-fast", "<b>Anthropic</b>: Claude"),
        ("anthropic/claude-opus-4.7-fast\u200b", "Anthropic: Claude<script>x()</script>"),
        (
            "<img src=x onerror=alert(1)>anthropic/claude-opus-4.7-fast",
            "&lt;i&gt;Anthropic: Claude",
        ),
    ],
)
def test_markup_and_script_in_a_name_come_out_as_clean_text(
    document: dict[str, Any], model_id: str, name: str
) -> None:
    def change(d: dict[str, Any]) -> None:
        d["data"][0]["id"] = model_id
        d["data"][0]["name"] = name

    row = parse(bundled(SOURCE), variant(document, change))["catalogue_entries"].iloc[0]
    assert tuple(row[["platform_model_id", "name", "publisher"]]) == (
        FIRST,
        "Anthropic: Claude",
        "anthropic",
    )


def test_invalid_utf8() -> None:
    data = bundled(SOURCE).data.replace(b"Auto Router", b"Auto \xed\xa0\x80Router", 1)
    assert data != bundled(SOURCE).data
    refused(bundled(SOURCE), data, "not valid utf-8 at byte offset")


def test_truncated_json() -> None:
    refused(bundled(SOURCE), bundled(SOURCE).data[:200_000], "not valid JSON")


def test_json_nested_thousands_deep(document: dict[str, Any]) -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    refused(bundled(SOURCE), b'{"data": ' + deep + b"}", "JSON nested too deeply to read")


@pytest.mark.timeout(30)
def test_a_10_mb_single_line_is_read(document: dict[str, Any]) -> None:
    data = variant(document, set_first("description", "d" * (10 * MB)))
    assert b"\n" not in data and len(data) > 10 * MB
    assert len(parse(bundled(SOURCE), data)["catalogue_entries"]) == 364


@pytest.mark.timeout(30)
def test_a_10_mb_name_is_cut_to_a_bounded_clean_label(document: dict[str, Any]) -> None:
    data = variant(document, set_first("name", "Claude " * (10 * MB // 7)))
    name = parse(bundled(SOURCE), data)["catalogue_entries"]["name"].iloc[0]
    assert name.startswith("Claude Claude") and name.endswith("…") and len(name) <= 500


# The stable keys beside each id (read by pipeline/normalise/identity.py).


def test_each_model_stages_its_canonical_slug_and_hugging_face_id() -> None:
    rows = frame(SOURCE, "catalogue_entries").set_index("platform_model_id")
    coder = rows.loc["qwen/qwen3-coder"]
    assert coder["hugging_face_id"] == "Qwen/Qwen3-Coder-480B-A35B-Instruct"
    assert coder["canonical_slug"] == "qwen/qwen3-coder-480b-a35b-07-25"
    # an empty hugging_face_id ("" in the response) is none given, as an absent one
    assert pd.isna(rows.loc["openai/gpt-4o", "hugging_face_id"])
    assert rows["hugging_face_id"].notna().sum() == 173
    assert rows["canonical_slug"].notna().all()


def test_the_stable_keys_of_the_july_catalogue_are_read_too() -> None:
    """OpenRouter's catalogue as served in July 2026 (344 models), from the website's captures."""
    data = gzip.decompress((FIXTURES / "openrouter" / FRONTEND).read_bytes())
    rows = parse(bundled(SOURCE), data)["catalogue_entries"]
    assert len(rows) == 344 and rows["platform_model_id"].is_unique
    assert rows["canonical_slug"].notna().all() and rows["hugging_face_id"].notna().sum() > 100


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("hugging_face_id", 42, "hugging_face_id is not text: 42"),
        ("canonical_slug", ["a", "b"], "canonical_slug is not text: ['a', 'b']"),
        ("hugging_face_id", {"id": "x"}, "hugging_face_id is not text"),
    ],
)
def test_a_stable_key_that_is_not_text_is_refused_naming_the_model(
    document: dict[str, Any], field: str, value: object, expected: str
) -> None:
    message = refused(bundled(SOURCE), variant(document, set_first(field, value)), expected)
    assert f"model {FIRST!r}" in message


@pytest.mark.parametrize(
    ("value", "staged"),
    [
        ("<b>Qwen</b>/Qwen3-8B", "Qwen/Qwen3-8B"),
        ("   ", None),
        ("", None),
        (None, None),
        ("Qwen/Qwen3-8B\u200b", "Qwen/Qwen3-8B"),
    ],
)
def test_a_stable_key_is_clean_text_or_none(
    document: dict[str, Any], value: object, staged: str | None
) -> None:
    row = parse(bundled(SOURCE), variant(document, set_first("hugging_face_id", value)))
    found = row["catalogue_entries"]["hugging_face_id"].iloc[0]
    assert (None if pd.isna(found) else found) == staged

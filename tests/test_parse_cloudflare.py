"""The Cloudflare Workers AI catalogue (an /ai/models/search response, or one model object as the
docs repository stores it): the bundled catalogue, the real docs files in tests/fixtures, and
broken variants."""

from __future__ import annotations

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
    edit,
    frame,
    in_fixture_store,
    parse,
    refused,
)

SOURCE = "cloudflare-workers-ai"
REAL_FILES = sorted((FIXTURES / "cloudflare-workers-ai").glob("*.json"))
# The four real objects inside the API's envelope, assembled (see the folder's README).
ASSEMBLED = FIXTURES / "cloudflare-workers-ai-search" / "ai-models-search.envelope-assembled.json"
FUNCTION_CALLING = [
    "gemma-4-26b-a4b-it",
    "glm-4.7-flash",
    "gpt-oss-120b",
    "gpt-oss-20b",
    "granite-4.0-h-micro",
    "kimi-k2.5",
    "kimi-k2.6",
    "kimi-k2.7-code",
    "llama-3.3-70b-instruct-fp8-fast",
    "llama-4-scout-17b-16e-instruct",
    "mistral-small-3.1-24b-instruct",
    "nemotron-3-120b-a12b",
    "qwen3-30b-a3b-fp8",
    "whisper-tiny-en",
]
# What the four real docs files say (cloudflare/cloudflare-docs, src/content/workers-ai-models/).
REAL = {
    "@cf/baai/bge-m3": ("Text Embeddings", None, None, 60000, 0.0118, None),
    "@cf/openai/gpt-oss-120b": ("Text Generation", True, None, 128000, 0.35, 0.75),
    "@cf/meta/llama-3.3-70b-instruct-fp8-fast": ("Text Generation", True, None, 24000, 0.29, 2.25),
    "@cf/qwen/qwq-32b": ("Text Generation", None, True, 24000, 0.66, 1.0),
}


@pytest.fixture(scope="module")
def catalogue() -> bytes:
    return bundled(SOURCE).data


def modified(catalogue: bytes, change: Any) -> bytes:
    document = json.loads(catalogue)
    change(document)
    return json.dumps(document, indent=2).encode()


def facts(rows: pd.DataFrame) -> dict[str, tuple[Any, ...]]:
    columns = [
        "task",
        "function_calling",
        "lora",
        "context_window",
        "price_input_usd_per_mtok",
        "price_output_usd_per_mtok",
    ]
    return {
        row["platform_model_id"]: tuple(None if pd.isna(row[c]) else row[c] for c in columns)
        for _, row in rows.iterrows()
    }


def test_the_catalogue_gives_75_models_in_12_tasks_with_14_function_calling() -> None:
    rows = frame(SOURCE, "catalogue_entries")
    assert len(rows) == 75 and rows["platform_model_id"].is_unique
    assert rows["task"].nunique() == 12
    assert rows["task"].value_counts()["Text Generation"] == 38
    assert sorted(rows.loc[rows["function_calling"].eq(True), "name"]) == FUNCTION_CALLING
    kimi = rows.set_index("name").loc["kimi-k2.5"]
    assert (kimi["publisher"], kimi["planned_deprecation"]) == ("moonshotai", "2026-05-30")
    fp16 = rows.set_index("name").loc["llama-2-7b-chat-fp16"]
    assert fp16["platform_model_id"] == "@cf/meta/llama-2-7b-chat-fp16"
    assert bool(fp16["beta"]) is False  # stated false is kept as false


@pytest.mark.parametrize("path", REAL_FILES, ids=lambda p: p.stem)
def test_each_real_docs_file_is_read_as_one_model(tmp_path: Path, path: Path) -> None:
    snapshot = in_fixture_store(
        tmp_path, SOURCE, path.read_bytes(), retrieved_at="2026-11-29T00:00:00Z"
    )
    rows = parse(snapshot)["catalogue_entries"]
    assert len(rows) == 1
    assert facts(rows) == {
        rows["platform_model_id"].iloc[0]: REAL[rows["platform_model_id"].iloc[0]]
    }


def test_the_real_files_as_one_api_response_match_the_bundled_catalogue(tmp_path: Path) -> None:
    assert len(REAL_FILES) == 4
    response = {
        "success": True,
        "errors": [],
        "messages": [],
        "result": [json.loads(path.read_bytes()) for path in REAL_FILES],
        "result_info": {"count": 4, "page": 1, "per_page": 100, "total_count": 4},
    }
    data = json.dumps(response).encode()
    rows = parse(in_fixture_store(tmp_path, SOURCE, data, retrieved_at="2026-11-29T00:00:00Z"))
    assert facts(rows["catalogue_entries"]) == REAL
    # The bundled catalogue carries these four docs files in full: same rows.
    bundled_rows = frame(SOURCE, "catalogue_entries")
    bundled_rows = bundled_rows[bundled_rows["platform_model_id"].isin(REAL)]
    fixture_rows = rows["catalogue_entries"]
    pd.testing.assert_frame_equal(
        fixture_rows.drop(columns=PROVENANCE).sort_values("name").reset_index(drop=True),
        bundled_rows.drop(columns=PROVENANCE).sort_values("name").reset_index(drop=True),
    )


# Broken variants.


@pytest.mark.parametrize("key", [b'"result"', b'"success"'])
def test_table_missing(catalogue: bytes, key: bytes) -> None:
    data = edit(catalogue, key, b'"models"', 1)
    if key == b'"success"':
        data = edit(data, b'"result"', b'"items"', 1)
    refused(bundled(SOURCE), data, "expected {'success': true, 'result': [model, ...]}")


def test_the_api_reporting_failure(catalogue: bytes) -> None:
    data = edit(catalogue, b'"success": true', b'"success": false', 1)
    refused(bundled(SOURCE), data, "the API answered success=false")


def test_one_page_of_a_longer_catalogue(catalogue: bytes) -> None:
    data = edit(catalogue, b'"total_count": 75', b'"total_count": 150')
    refused(bundled(SOURCE), data, "holds 75 of 150 models", "expected the whole catalogue")


@pytest.mark.parametrize("data", [b"", b"  ", b"{}", b"[]", b"null"])
def test_empty_page(data: bytes) -> None:
    message = refused(bundled(SOURCE), data)
    assert "not valid JSON" in message or "expected {'success': true" in message


def test_zero_rows(catalogue: bytes) -> None:
    data = modified(catalogue, lambda d: d.__setitem__("result", []))
    refused(bundled(SOURCE), data.replace(b'"total_count": 75', b'"total_count": 0'), "no models")


@pytest.mark.parametrize(
    ("prop", "value", "expected"),
    [
        ("context_window", "lots", "property 'context_window' is not a number: 'lots'"),
        ("context_window", "8.5", "property 'context_window' is not a number: '8.5'"),
        ("context_window", "-5", "property 'context_window' must be positive"),
        ("context_window", True, "property 'context_window' is not a number: True"),
        ("function_calling", "yes", "property 'function_calling' is not a boolean: 'yes'"),
        ("beta", 1, "property 'beta' is not a boolean: 1"),
        ("planned_deprecation_date", "soon", "planned_deprecation_date 'soon' is not a date"),
        ("planned_deprecation_date", "2026-13-45", "'2026-13-45' is not a date"),
    ],
)
def test_non_numeric_or_impossible_property(
    catalogue: bytes, prop: str, value: object, expected: str
) -> None:
    def change(document: dict[str, Any]) -> None:
        properties = document["result"][0]["properties"]
        properties[:] = [p for p in properties if p["property_id"] != prop]
        properties.append({"property_id": prop, "value": value})

    message = refused(bundled(SOURCE), modified(catalogue, change), expected)
    assert "'@cf/deepseek-ai/deepseek-r1-distill-qwen-32b'" in message


def test_a_negative_price(catalogue: bytes) -> None:
    price = [{"unit": "per M input tokens", "price": -0.5, "currency": "USD"}]
    data = modified(
        catalogue,
        lambda d: d["result"][0]["properties"].append({"property_id": "price", "value": price}),
    )
    refused(
        bundled(SOURCE),
        data,
        "property 'price' (per M input tokens) is negative: -0.5 (expected a price of 0 or more)",
    )


IN = "per M input tokens"


@pytest.mark.parametrize(
    ("price", "expected"),
    [
        ([{"unit": IN, "price": "cheap", "currency": "USD"}], "(per M input tokens) is not a num"),
        ([{"unit": IN, "price": True, "currency": "USD"}], "is not a number: True"),
        ([{"unit": IN, "currency": "USD"}], "is not a number: None"),
        ([{"unit": IN, "price": "NaN", "currency": "USD"}], "is not a finite number: 'NaN'"),
        (
            [{"unit": IN, "price": 0.1, "currency": "USD"}, {"unit": IN, "price": 0.2}],
            "property 'price' gives two input prices",
        ),
        ({"unit": IN, "price": 0.1}, "property 'price' is not a list of price objects"),
        (["0.1"], "property 'price' is not a list of price objects"),
    ],
)
def test_a_malformed_price(catalogue: bytes, price: object, expected: str) -> None:
    def change(document: dict[str, Any]) -> None:
        document["result"][0]["properties"].append({"property_id": "price", "value": price})

    message = refused(bundled(SOURCE), modified(catalogue, change), expected)
    assert "'@cf/deepseek-ai/deepseek-r1-distill-qwen-32b'" in message


def test_prices_of_other_units_and_currencies_are_kept_as_written_not_read(
    catalogue: bytes,
) -> None:
    price = [
        {"unit": "per M tokens", "price": 9.0, "currency": "USD"},  # neither input nor output
        {"unit": "per audio minute", "price": 0.5, "currency": "USD"},
        {"unit": IN, "price": 7.0, "currency": "EUR"},
        {"unit": "per <b>512x512</b> tile", "price": 0.01},  # markup in a unit is removed
        {"price": 2, "currency": "USD"},  # no unit at all
        {"unit": IN, "price": "0.25", "currency": "USD"},  # a number written as a string
        {"unit": "Per  M output tokens", "price": 1, "currency": "USD"},  # case and spacing
    ]

    def change(document: dict[str, Any]) -> None:
        document["result"][0]["properties"].append({"property_id": "price", "value": price})

    rows = parse(bundled(SOURCE), modified(catalogue, change))["catalogue_entries"]
    first = rows.iloc[0]
    assert (first.price_input_usd_per_mtok, first.price_output_usd_per_mtok) == (0.25, 1.0)
    assert pd.isna(first.price_cached_input_usd_per_mtok)
    assert first.other_prices == (
        "9.0 USD per M tokens; 0.5 USD per audio minute; 7.0 EUR per M input tokens; "
        "0.01 USD per 512x512 tile; 2 USD"
    )
    assert rows["other_prices"].iloc[1:].isna().all()


def test_the_real_shape_with_a_cached_input_price_is_read(tmp_path: Path) -> None:
    """The real catalogue's 'per M cached input tokens' made the whole build fail, read as a
    second input price. It is the cached input price."""
    document = json.loads(ASSEMBLED.read_bytes())
    gpt = next(m for m in document["result"] if m["name"] == "@cf/openai/gpt-oss-120b")
    prices = next(p for p in gpt["properties"] if p["property_id"] == "price")["value"]
    prices.append({"unit": "per M cached input tokens", "price": 0.175, "currency": "USD"})
    data = json.dumps(document).encode()
    snapshot = in_fixture_store(tmp_path, SOURCE, data, retrieved_at="2026-11-29T00:00:00Z")
    rows = parse(snapshot)["catalogue_entries"].set_index("platform_model_id")
    assert facts(rows.reset_index()) == REAL
    gpt_row = rows.loc["@cf/openai/gpt-oss-120b"]
    assert gpt_row.price_cached_input_usd_per_mtok == 0.175
    assert (gpt_row.price_input_usd_per_mtok, gpt_row.price_output_usd_per_mtok) == (0.35, 0.75)
    assert rows["other_prices"].isna().all()
    assert rows["price_cached_input_usd_per_mtok"].notna().sum() == 1


def test_the_assembled_search_response_reads_like_the_four_docs_files(tmp_path: Path) -> None:
    data = ASSEMBLED.read_bytes()
    for path in REAL_FILES:  # each real object is inside, byte for byte
        assert path.read_bytes().strip() in data
    snapshot = in_fixture_store(tmp_path, SOURCE, data, retrieved_at="2026-11-29T00:00:00Z")
    assert facts(parse(snapshot)["catalogue_entries"]) == REAL


def test_two_cached_input_prices_are_refused(catalogue: bytes) -> None:
    cached = {"unit": "per M cached input tokens", "price": 0.1, "currency": "USD"}

    def change(document: dict[str, Any]) -> None:
        document["result"][0]["properties"].append(
            {"property_id": "price", "value": [cached, cached]}
        )

    refused(bundled(SOURCE), modified(catalogue, change), "property 'price' gives two cached input")


def test_duplicate_row(catalogue: bytes) -> None:
    data = modified(catalogue, lambda d: d["result"].append(d["result"][6]))
    refused(
        bundled(SOURCE),
        data.replace(b'"total_count": 75', b'"total_count": 76'),
        "duplicate row: platform_model_id '@cf/zai-org/glm-4.7-flash' appears more than once",
    )


@pytest.mark.parametrize(
    ("name", "task"),
    [
        ("<script>alert(1)</script>@cf/zai-org/glm-4.7-flash", "Text Generation"),
        ("@cf/zai-org/<b>glm-4.7-flash</b>", "<i>Text</i> Generation<script>x()</script>"),
        ("@cf/zai-org/glm-4.7-flash\u200b\u0000", "Text\u00a0Generation"),
        ("&lt;img src=x onerror=alert(1)&gt;@cf/zai-org/glm-4.7-flash", "Text Generation"),
    ],
)
def test_markup_and_script_in_a_name_come_out_as_clean_text(
    catalogue: bytes, name: str, task: str
) -> None:
    def change(document: dict[str, Any]) -> None:
        document["result"][6]["name"] = name
        document["result"][6]["task"]["name"] = task

    row = parse(bundled(SOURCE), modified(catalogue, change))["catalogue_entries"].iloc[6]
    assert tuple(row[["platform_model_id", "name", "publisher", "task"]]) == (
        "@cf/zai-org/glm-4.7-flash",
        "glm-4.7-flash",
        "zai-org",
        "Text Generation",
    )


def test_a_markup_only_name_is_refused(catalogue: bytes) -> None:
    data = modified(catalogue, lambda d: d["result"][0].__setitem__("name", "<script>x</script>"))
    refused(bundled(SOURCE), data, "model #1: empty name")


def test_invalid_utf8(catalogue: bytes) -> None:
    data = edit(catalogue, b"@cf/meta/llama-3.1-8b-instruct-fp8", b"@cf/meta/llama-\xc0")
    refused(bundled(SOURCE), data, "not valid utf-8 at byte offset")


def test_truncated_json(catalogue: bytes) -> None:
    refused(bundled(SOURCE), catalogue[: len(catalogue) * 2 // 3], "not valid JSON")


def test_json_nested_thousands_deep(catalogue: bytes) -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    refused(bundled(SOURCE), b'{"success": true, "result": ' + deep + b"}", "nested too deeply")
    data = edit(catalogue, b'"messages": []', b'"messages": ' + deep)
    refused(bundled(SOURCE), data, "JSON nested too deeply to read")


@pytest.mark.timeout(30)
def test_a_10_mb_single_line_is_read(catalogue: bytes) -> None:
    document = json.loads(catalogue)
    document["result"][0]["description"] = "d" * (10 * MB)
    data = json.dumps(document).encode()  # one line, as the API sends it
    assert b"\n" not in data
    rows = parse(bundled(SOURCE), data)["catalogue_entries"]
    assert len(rows) == 75 and rows["function_calling"].eq(True).sum() == 14


@pytest.mark.timeout(30)
def test_a_10_mb_name_is_cut_to_a_bounded_clean_id(catalogue: bytes) -> None:
    data = modified(
        catalogue, lambda d: d["result"][0].__setitem__("name", "@cf/x/" + "m" * 10 * MB)
    )
    row = parse(bundled(SOURCE), data)["catalogue_entries"].iloc[0]
    assert row.platform_model_id.startswith("@cf/x/mmm") and row.platform_model_id.endswith("…")
    assert len(row.platform_model_id) <= 500

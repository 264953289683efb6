"""models.dev's catalogue (https://models.dev/api.json of 2026-06-13 in tests/fixtures): one row per
provider x model offer; broken variants."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from test_parse_support import FIXTURES, in_fixture_store, parse, refused

from pipeline.extract import SnapshotInput
from pipeline.sources.registry import Source

SOURCE_ID = "models-dev"
SOURCE = Source(
    id=SOURCE_ID,
    kind="compilation",
    publisher="models.dev",
    url="https://models.dev/api.json",
    tier="T2",
    format="models_dev",
    cadence="daily",
)
REAL = (FIXTURES / "models-dev" / "api-2026-06-13.json").read_bytes()


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return json.loads(REAL)


@pytest.fixture
def snapshot(tmp_path: Path) -> SnapshotInput:
    return in_fixture_store(
        tmp_path, SOURCE_ID, REAL, retrieved_at="2026-06-13T00:00:00Z", source=SOURCE
    )


@pytest.fixture(scope="module")
def offers(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    tmp = tmp_path_factory.mktemp("models-dev")
    snapshot = in_fixture_store(
        tmp, SOURCE_ID, REAL, retrieved_at="2026-06-13T00:00:00Z", source=SOURCE
    )
    return parse(snapshot)["models_dev_offers"].set_index(["provider_id", "platform_model_id"])


def edited(document: dict[str, Any], change: Any) -> bytes:
    copy = json.loads(json.dumps(document))
    change(copy)
    return json.dumps(copy).encode()


def groq(model: str, key: str, value: object) -> Any:
    return lambda d: d["groq"]["models"][model].__setitem__(key, value)


def test_the_catalogue_gives_145_providers_and_5258_offers(offers: pd.DataFrame) -> None:
    assert len(offers) == 5258
    assert offers.index.get_level_values("provider_id").nunique() == 145
    llama = offers.loc[("groq", "llama-3.1-8b-instant")]
    assert (llama.provider_name, llama["name"], llama.family) == ("Groq", "Llama 3.1 8B", "llama")
    assert (llama.price_input_usd_per_mtok, llama.price_output_usd_per_mtok) == (0.05, 0.08)
    assert (llama.context_window, llama.max_output_tokens) == (131072, 131072)
    assert (bool(llama.open_weights), bool(llama.reasoning)) == (True, False)
    assert (llama.release_date, llama.last_updated) == ("2024-07-23", "2024-07-23")
    assert llama.provider_doc_url == "https://console.groq.com/docs/models"
    assert pd.isna(llama.status) and pd.isna(llama.unread)


def test_counts_as_the_real_catalogue_states_them(offers: pd.DataFrame) -> None:
    assert offers["price_input_usd_per_mtok"].notna().sum() == 4886  # 372 offers state no cost
    assert (offers["price_input_usd_per_mtok"] == 0).sum() == 434  # free is a price
    assert offers["price_cache_read_usd_per_mtok"].notna().sum() == 2101
    assert offers["price_cache_write_usd_per_mtok"].notna().sum() == 715
    assert offers["context_window"].isna().sum() == 80  # a limit of 0 is not stated
    assert offers["max_output_tokens"].isna().sum() == 142
    assert offers["status"].value_counts().to_dict() == {"deprecated": 113, "beta": 39, "alpha": 2}
    assert offers["function_calling"].notna().all()
    assert (offers["release_date"].str.len() == 7).sum() == 164  # 'YYYY-MM' kept as written


def test_the_one_impossible_date_is_noted_not_a_reason_to_refuse(offers: pd.DataFrame) -> None:
    noted = offers[offers["unread"].notna()]
    assert list(noted.index) == [("scaleway", "qwen3-embedding-8b")]
    row = noted.iloc[0]
    assert row.unread == "release_date '2025-25-11' is not a date (YYYY-MM-DD or YYYY-MM)"
    assert pd.isna(row.release_date) and row.last_updated is not None


def test_tiered_prices_leave_the_base_price(offers: pd.DataFrame) -> None:
    opus = offers.loc[("302ai", "claude-opus-4-7")]
    assert (opus.price_input_usd_per_mtok, opus.price_output_usd_per_mtok) == (5, 25)
    assert (opus.price_cache_read_usd_per_mtok, opus.price_cache_write_usd_per_mtok) == (0.5, 6.25)


@pytest.mark.parametrize(
    ("change", "note"),
    [
        (groq("llama-3.1-8b-instant", "tool_call", "yes"), "tool_call is not true or false: 'yes'"),
        (groq("llama-3.1-8b-instant", "cost", {"input": "free"}), "cost.input is not a number"),
        (groq("llama-3.1-8b-instant", "cost", {"input": -1}), "cost.input is negative: -1"),
        (groq("llama-3.1-8b-instant", "cost", [1, 2]), "cost is not an object: [1, 2]"),
        (groq("llama-3.1-8b-instant", "limit", {"context": 1.5}), "limit.context is not a token"),
        (groq("llama-3.1-8b-instant", "limit", {"context": 10**40}), "limit.context is not a"),
        (groq("llama-3.1-8b-instant", "release_date", "2024-02-30"), "'2024-02-30' is not a date"),
        (groq("llama-3.1-8b-instant", "last_updated", 2024), "last_updated 2024 is not a date"),
    ],
)
def test_a_bad_value_is_noted_and_the_offer_kept(
    snapshot: SnapshotInput, document: dict[str, Any], change: Any, note: str
) -> None:
    rows = parse(snapshot, edited(document, change))["models_dev_offers"]
    assert len(rows) == 5258
    row = rows.set_index(["provider_id", "platform_model_id"]).loc[("groq", "llama-3.1-8b-instant")]
    assert note in row.unread, row.unread


def test_markup_in_names_and_unsafe_doc_urls(
    snapshot: SnapshotInput, document: dict[str, Any]
) -> None:
    def change(d: dict[str, Any]) -> None:
        d["groq"]["name"] = "<script>alert(1)</script>Gr<b>o</b>q"
        d["groq"]["doc"] = "javascript:alert(1)"
        d["groq"]["models"]["llama-3.1-8b-instant"]["name"] = "<img src=x onerror=alert(1)>Llama"

    rows = parse(snapshot, edited(document, change))["models_dev_offers"]
    row = rows.set_index(["provider_id", "platform_model_id"]).loc[("groq", "llama-3.1-8b-instant")]
    assert (row.provider_name, row["name"]) == ("Groq", "Llama")
    assert pd.isna(row.provider_doc_url)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda d: d["groq"].__setitem__("models", []), "provider 'groq': expected an object with"),
        (lambda d: d.__setitem__("groq", "Groq"), "provider 'groq': expected an object"),
        (
            lambda d: d["groq"]["models"].__setitem__("x", "y"),
            "provider 'groq', model 'x': expected an object",
        ),
        (
            lambda d: d["groq"]["models"].__setitem__("<b></b>", {}),
            "model '<b></b>': the model id is empty",
        ),
    ],
)
def test_a_catalogue_of_another_shape_is_refused(
    snapshot: SnapshotInput, document: dict[str, Any], change: Any, expected: str
) -> None:
    refused(snapshot, edited(document, change), expected)


@pytest.mark.parametrize("data", [b"", b"{}", b"[]", b"null", REAL[:1_000_000]])
def test_bad_json_or_wrong_shape(snapshot: SnapshotInput, data: bytes) -> None:
    message = refused(snapshot, data)
    assert "not valid JSON" in message or "expected {provider_id: {name, models" in message


def test_an_empty_catalogue_is_refused(snapshot: SnapshotInput) -> None:
    refused(snapshot, b'{"groq": {"name": "Groq", "models": {}}}', "the catalogue lists no models")

"""OpenRouter's provider list (GET /api/v1/providers, a real response of May 2026 in
tests/fixtures) and broken variants."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from test_parse_support import FIXTURES, in_fixture_store, parse, refused

from pipeline.extract import SnapshotInput
from pipeline.sources.registry import Source

SOURCE_ID = "openrouter-providers"
SOURCE = Source(
    id=SOURCE_ID,
    kind="platform_doc",
    publisher="OpenRouter",
    url="https://openrouter.ai/api/v1/providers",
    tier="T1",
    format="openrouter_providers",
    cadence="weekly",
)
REAL = (FIXTURES / "openrouter" / "api-v1-providers-2026-05.json").read_bytes()


@pytest.fixture
def snapshot(tmp_path: Path) -> SnapshotInput:
    return in_fixture_store(
        tmp_path, SOURCE_ID, REAL, retrieved_at="2026-05-07T00:00:00Z", source=SOURCE
    )


def edited(change: Any) -> bytes:
    document = json.loads(REAL)
    change(document)
    return json.dumps(document).encode()


def first(key: str, value: object) -> Any:
    return lambda d: d["data"][0].__setitem__(key, value)


def test_the_real_list_gives_81_providers(snapshot: SnapshotInput) -> None:
    rows = parse(snapshot)["openrouter_providers"].set_index("slug")
    assert len(rows) == 81
    samba = rows.loc["sambanova"]
    assert (samba["name"], samba.headquarters) == ("SambaNova", "US")
    assert pd.isna(samba.datacenters)  # not given
    assert samba.privacy_policy_url == "https://sambanova.ai/privacy-policy"
    assert samba.terms_of_service_url == "https://sambanova.ai/terms-and-conditions"
    assert samba.status_page_url == "https://status.sambanova.ai/"
    assert rows.loc["moonshotai", "datacenters"] == "SG"
    assert rows.loc["reka", "datacenters"] == ""  # an empty list, as listed
    assert pd.isna(rows.loc["reka", "headquarters"])
    assert rows["datacenters"].notna().sum() == 40
    assert rows["status_page_url"].notna().sum() == 24


def test_datacenters_keep_their_order(snapshot: SnapshotInput) -> None:
    rows = parse(snapshot, edited(first("datacenters", ["US", "IE", "DE"])))["openrouter_providers"]
    assert rows.iloc[0].datacenters == "US,IE,DE"


@pytest.mark.parametrize(
    "url", ["javascript:alert(1)", "data:text/html,<script>x</script>", "ftp://x.org/p", "/terms"]
)
def test_only_http_urls_are_kept(snapshot: SnapshotInput, url: str) -> None:
    rows = parse(snapshot, edited(first("terms_of_service_url", url)))["openrouter_providers"]
    assert pd.isna(rows.iloc[0].terms_of_service_url)
    assert len(rows) == 81


def test_markup_in_names_comes_out_as_clean_text(snapshot: SnapshotInput) -> None:
    def change(d: dict[str, Any]) -> None:
        d["data"][0]["name"] = "<script>alert(1)</script>Arcee <b>AI</b>"
        d["data"][0]["slug"] = "arcee-ai\u200b"
        d["data"][0]["headquarters"] = "<img src=x onerror=alert(1)>US"

    row = parse(snapshot, edited(change))["openrouter_providers"].iloc[0]
    assert (row["name"], row.slug, row.headquarters) == ("Arcee AI", "arcee-ai", "US")


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (first("datacenters", "US"), "provider 'arcee-ai': datacenters is not a list: 'US'"),
        (first("datacenters", ["US", 7]), "datacenter 7 is not a country code"),
        (first("datacenters", ["US,IE"]), "datacenter 'US,IE' is not a country code"),
        (first("headquarters", 1), "headquarters is not a string: 1"),
        (first("status_page_url", ["https://x"]), "status_page_url is not a string"),
        (first("slug", None), "provider #1: expected a non-empty string 'slug'"),
        (lambda d: d["data"].__setitem__(0, "arcee"), "provider #1: expected an object"),
        (lambda d: d["data"].append(d["data"][3]), "duplicate row: slug 'cerebras'"),
        (lambda d: d.__setitem__("data", []), "the provider list is empty"),
        (lambda d: d.__setitem__("providers", d.pop("data")), "expected {'data': [provider"),
    ],
)
def test_broken_variants(snapshot: SnapshotInput, change: Any, expected: str) -> None:
    refused(snapshot, edited(change), expected)


@pytest.mark.parametrize("data", [b"", b"[]", b"{}", REAL[:5_000]])
def test_bad_json_or_wrong_shape(snapshot: SnapshotInput, data: bytes) -> None:
    message = refused(snapshot, data)
    assert "not valid JSON" in message or "expected {'data': [provider" in message

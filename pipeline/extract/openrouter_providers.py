"""OpenRouter's provider list (GET /api/v1/providers): {"data": [provider, ...]}, each with name,
slug, headquarters, datacenters (ISO country codes) and policy and status-page URLs. Only http(s)
URLs are kept (`safe_url`): anything else (`javascript:`) becomes null."""

from __future__ import annotations

from typing import Any

from pipeline.extract.base import Frames, Parser, SnapshotInput, validated
from pipeline.extract.jsondoc import json_label, load_json
from pipeline.support.text import safe_url, shorten

URLS = ("privacy_policy_url", "terms_of_service_url", "status_page_url")


def _datacenters(snapshot: SnapshotInput, slug: str, value: Any) -> str | None:
    """The codes comma-joined in their order; '' for an empty list, None when not given."""
    if value is None:
        return None
    if not isinstance(value, list):
        raise snapshot.fail(
            f"provider {slug!r}: datacenters is not a list: {shorten(repr(value), 60)}"
        )
    codes = []
    for item in value:
        code = json_label(item, 100)
        if code is None or "," in code:
            raise snapshot.fail(
                f"provider {slug!r}: datacenter {shorten(repr(item), 60)} is not a country code"
            )
        codes.append(code)
    return ",".join(codes)


def _url(snapshot: SnapshotInput, slug: str, key: str, value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise snapshot.fail(f"provider {slug!r}: {key} is not a string: {shorten(repr(value), 60)}")
    return safe_url(value)


def parse(snapshot: SnapshotInput) -> Frames:
    document = load_json(snapshot)
    if not isinstance(document, dict) or not isinstance(document.get("data"), list):
        raise snapshot.fail("expected {'data': [provider, ...]} (OpenRouter GET /api/v1/providers)")
    rows = []
    for index, provider in enumerate(document["data"], start=1):
        if not isinstance(provider, dict):
            raise snapshot.fail(f"provider #{index}: expected an object")
        slug = json_label(provider.get("slug"))
        if slug is None:
            raise snapshot.fail(f"provider #{index}: expected a non-empty string 'slug'")
        headquarters = provider.get("headquarters")
        if headquarters is not None and not isinstance(headquarters, str):
            shown = shorten(repr(headquarters), 60)
            raise snapshot.fail(f"provider {slug!r}: headquarters is not a string: {shown}")
        rows.append(
            {
                "slug": slug,
                "name": json_label(provider.get("name")) or slug,
                "headquarters": json_label(headquarters, 100),
                "datacenters": _datacenters(snapshot, slug, provider.get("datacenters")),
                **{key: _url(snapshot, slug, key, provider.get(key)) for key in URLS},
            }
        )
    if not rows:
        raise snapshot.fail("the provider list is empty")
    return {"openrouter_providers": validated("openrouter_providers", snapshot, rows)}


PARSER = Parser("openrouter_providers", "1", ("openrouter_providers",), parse)

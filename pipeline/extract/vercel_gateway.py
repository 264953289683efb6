"""Vercel AI Gateway's endpoint statistics: GET https://ai-gateway.vercel.sh/v1/models/{creator}/
{model}/endpoints, one response per model, ``{"data": {"id": "creator/model", "name", ...,
"endpoints": [endpoint, ...]}}`` as Vercel documents it (REST API reference, "Get model
endpoints"; no API key needed). A poll round is one bundle of such responses
(pipeline/raw/bundle.py); one response captured as it came is read as a poll of one.

Per endpoint (`vercel_gateway_endpoints`), keyed by the provider as Vercel names it
(`provider_name`: 'google', 'bedrock'): its name, status, context length, most output
tokens, prices (USD per token as strings, like OpenRouter's; stored per million tokens), tool
calling, implicit caching, uptime over the last 15 minutes, hour and day, and its statistics:
`throughput_last_1h` (output tokens/s) and `latency_last_1h` (time to first token, milliseconds
as documented, stored in seconds) at p50 and p95, a column each, over the last hour of the
gateway's own traffic (Bring-Your-Own-Key requests are not counted). Vercel shows the figures
only for providers with enough traffic: a missing or null one is not measured and stays null.

A problem stays with what it concerns. A response with an HTTP status other than 200, a body that
is not JSON or not that shape, or a model an earlier response of the poll already gave, is left
out; so is an endpoint that names no provider, or whose provider is listed twice. Each is named
in that response's `problem` in `vercel_gateway_poll_members`. A value that is not what the
documentation says (a string where a number belongs, a percentile of 0) is left null and quoted
in the endpoint's `unread`. The snapshot fails only when not one endpoint could be read, or the
bundle itself is damaged.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from pipeline.extract.base import Frames, Parser, SnapshotInput, validated
from pipeline.extract.jsondoc import json_label, parse_json
from pipeline.extract.readings import SCOPE, Reading, Unreadable, label, summary
from pipeline.raw.bundle import BundleError, BundleMember, is_bundle, read_bundle
from pipeline.schema.staging import (
    MAX_TTFT_S,
    VERCEL_PERCENTILES,
    VERCEL_STATISTICS,
    VERCEL_WINDOW_MINUTES,
)
from pipeline.schema.vocabulary import MAX_TOKENS_PER_S
from pipeline.support.text import TextDecodeError, decode_text, shorten

METHOD = "percentiles of live gateway traffic"
SHAPE = "{'data': {'id': 'creator/model', 'endpoints': [endpoint, ...]}}"
# metric -> (field of the endpoint, divisor into the metric's unit, upper bound in that unit)
METRICS = {
    "output_tokens_per_s": ("throughput_last_1h", 1.0, MAX_TOKENS_PER_S),
    "ttft_s": ("latency_last_1h", 1000.0, MAX_TTFT_S),
}
PRICES = {
    "price_input_usd_per_mtok": "prompt",
    "price_output_usd_per_mtok": "completion",
    "price_cache_read_usd_per_mtok": "input_cache_read",
    "price_cache_write_usd_per_mtok": "input_cache_write",
}
COUNTS = ("context_length", "max_completion_tokens")
UPTIMES = ("uptime_last_15m", "uptime_last_1h", "uptime_last_1d")


@dataclass
class _Read:
    """What one response gave."""

    member: dict[str, Any]
    endpoints: list[dict[str, Any]] = field(default_factory=list)


def _add_statistics(row: dict[str, Any], endpoint: dict[str, Any], reading: Reading) -> None:
    for metric, (key, divisor, bound) in METRICS.items():
        block = endpoint.get(key)
        if block is not None and not isinstance(block, dict):
            reading.notes.append(f"{key} is {shorten(repr(block), 40)}: expected an object")
            block = None
        for statistic in VERCEL_STATISTICS:
            raw = None if block is None else block.get(statistic)
            what = f"{key}.{statistic}"
            row[VERCEL_PERCENTILES[metric, statistic]] = reading.positive(raw, what, bound, divisor)


def _endpoint(endpoint: Any, position: int, model: str, url: str) -> dict[str, Any]:
    if not isinstance(endpoint, dict):
        raise Unreadable(f"endpoint #{position} is not an object")
    provider = label(endpoint.get("provider_name"), 200)
    if provider is None:
        raise Unreadable(f"endpoint #{position}: expected a non-empty string 'provider_name'")
    reading = Reading()
    pricing = reading.mapping(endpoint.get("pricing"), "pricing")
    parameters = reading.names(endpoint.get("supported_parameters"), "supported_parameters")
    row: dict[str, Any] = {
        "member_url": url,
        "model": model,
        "endpoint_name": reading.text(endpoint.get("name"), "name"),
        "provider_name": provider,
        "status": reading.code(endpoint.get("status"), "status"),
    }
    for name in COUNTS:
        row[name] = reading.count(endpoint.get(name), name)
    for column, key in PRICES.items():
        row[column] = reading.price_per_token(pricing.get(key), f"pricing.{key}")
    row["function_calling"] = "tools" in parameters if parameters is not None else None
    row["implicit_caching"] = reading.flag(
        endpoint.get("supports_implicit_caching"), "supports_implicit_caching"
    )
    for name in UPTIMES:
        row[name] = reading.number(endpoint.get(name), name, 0, 100)
    _add_statistics(row, endpoint, reading)
    row["window_minutes"] = VERCEL_WINDOW_MINUTES
    row["method"] = METHOD
    row["unread"] = reading.unread
    return row


def _body(member: BundleMember) -> dict[str, Any]:
    """The member's `data` object; Unreadable when it has none."""
    if member.status != 200:
        raise Unreadable(f"HTTP {member.status}")
    try:
        text = decode_text(member.body, member.content_type, "body")
    except TextDecodeError as error:
        raise Unreadable(str(error)) from None
    document = parse_json(SCOPE, text)
    data = document.get("data") if isinstance(document, dict) else None
    if not isinstance(data, dict) or not isinstance(data.get("endpoints"), list):
        error = document.get("error") if isinstance(document, dict) else None
        said = error.get("message") if isinstance(error, dict) else error
        said = f" (the API said: {shorten(json_label(said) or '', 100)!r})" if said else ""
        raise Unreadable(f"expected {SHAPE}{said}")
    return data


def _read_member(index: int, member: BundleMember, models: dict[str, int]) -> _Read:
    read = _Read(
        {
            "member_index": index,
            "member_url": member.url,
            "http_status": member.status,
            "model": None,
            "endpoints_listed": None,
            "endpoints_staged": 0,
            "endpoints_without_statistics": 0,
            "problem": None,
        }
    )
    try:
        data = _body(member)
        model = label(data.get("id"), 300)
        if model is None:
            raise Unreadable(f"expected {SHAPE}: data.id is not a non-empty string")
        if model in models:
            raise Unreadable(f"model {model!r} was read from member #{models[model]} already")
    except Unreadable as problem:
        read.member["problem"] = str(problem)
        return read
    models[model] = index
    endpoints = data["endpoints"]
    read.member |= {"model": model, "endpoints_listed": len(endpoints)}
    problems: list[str] = []
    parsed = []
    for position, endpoint in enumerate(endpoints, start=1):
        try:
            parsed.append(_endpoint(endpoint, position, model, member.url))
        except Unreadable as problem:
            problems.append(str(problem))
    counts = Counter(row["provider_name"] for row in parsed)
    repeated = {provider for provider, n in counts.items() if n > 1}
    problems += [f"provider {p!r} is listed more than once" for p in sorted(repeated)]
    for row in parsed:
        if row["provider_name"] in repeated:
            continue  # which of the copies is right is unknowable
        read.endpoints.append(row)
        if all(row[column] is None for column in VERCEL_PERCENTILES.values()):
            read.member["endpoints_without_statistics"] += 1
    read.member["endpoints_staged"] = len(read.endpoints)
    read.member["problem"] = summary(problems)
    return read


def _members(snapshot: SnapshotInput) -> list[BundleMember]:
    if not is_bundle(snapshot.data):
        content_type = snapshot.meta.content_type
        return [
            BundleMember(snapshot.meta.url, 200, (("content-type", content_type),), snapshot.data)
        ]
    try:
        return read_bundle(snapshot.data)
    except BundleError as error:
        raise snapshot.fail(f"not a readable bundle: {error}") from None


def parse(snapshot: SnapshotInput) -> Frames:
    models: dict[str, int] = {}
    reads = [
        _read_member(index, member, models)
        for index, member in enumerate(_members(snapshot), start=1)
    ]
    if not any(read.endpoints for read in reads):
        if not reads:
            raise snapshot.fail("the bundle holds no responses")
        problems = [
            f"member #{read.member['member_index']} ({shorten(read.member['member_url'], 100)}): "
            + (read.member["problem"] or "no endpoints")
            for read in reads
        ]
        raise snapshot.fail(
            f"no endpoint could be read from any of the {len(reads)} responses: "
            + (summary(problems) or "")
        )
    return {
        "vercel_gateway_endpoints": validated(
            "vercel_gateway_endpoints", snapshot, [row for read in reads for row in read.endpoints]
        ),
        "vercel_gateway_poll_members": validated(
            "vercel_gateway_poll_members", snapshot, [read.member for read in reads]
        ),
    }


PARSER = Parser(
    "vercel_gateway_endpoints",
    "1",
    ("vercel_gateway_endpoints", "vercel_gateway_poll_members"),
    parse,
)

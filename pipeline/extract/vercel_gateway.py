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

from typing import Any

from pipeline.extract.base import Frames, Parser, SnapshotInput, validated
from pipeline.extract.endpoint_poll import EndpointPoll, read_poll
from pipeline.extract.readings import SCOPE, Reading, Unreadable, label, summary
from pipeline.schema.staging import (
    MAX_TTFT_S,
    VERCEL_PERCENTILES,
    VERCEL_STATISTICS,
    VERCEL_WINDOW_MINUTES,
)
from pipeline.schema.vocabulary import MAX_TOKENS_PER_S
from pipeline.support.text import shorten

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


POLL = EndpointPoll(
    shape=SHAPE,
    scope=SCOPE,
    endpoint=_endpoint,
    key="provider_name",
    repeated="provider",
    statistics=tuple(VERCEL_PERCENTILES.values()),
    summary=summary,
    label=lambda value: label(value, 300),
)


def parse(snapshot: SnapshotInput) -> Frames:
    reads = read_poll(POLL, snapshot)
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

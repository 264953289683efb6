"""OpenRouter's endpoint statistics: GET /api/v1/models/{author}/{slug}/endpoints, one response per
model, {"data": {"id": "author/slug", "endpoints": [endpoint, ...]}}. A poll round is one bundle
of such responses (pipeline/raw/bundle.py); one response captured as it came (plain JSON) is read
as a poll of one, with the snapshot's URL.

Per endpoint (`openrouter_endpoints`): provider, tag (split into its root and suffix),
quantization as written and the precision it means, status, limits, uptime, prices (USD per token
in the API, already net of `discount`: the spec says the price "is multiplied by (1 - discount)",
and the real capture's discounted prices are exactly (1 - discount) times the list price; the
discount is kept beside them), tool calling, and its statistics: throughput_last_30m (output
tokens/s) and latency_last_30m (time to first token, milliseconds in every real capture, stored
in seconds) at p50, p75, p90 and p99, a column each. A null or missing figure is not measured:
it stays null (never a 0). Without an API key every figure is null, which the response's row in
`openrouter_poll_members` shows as `endpoints_without_statistics`.

A problem stays with what it concerns. A response with an HTTP status other than 200, a body that
is not JSON or not that shape, or a model an earlier response of the poll already gave, is left
out; an endpoint with a field that is not what the spec says (a string where a number belongs, a
percentile of 0, a tag listed twice) is left out. Each is named in that response's `problem` in
`openrouter_poll_members`, and the rest is staged. The snapshot fails only when not one endpoint
could be read, or the bundle itself is damaged.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from pipeline.extract.base import Frames, Parser, SnapshotInput, validated
from pipeline.extract.endpoint_poll import EndpointPoll, MemberRead, read_poll
from pipeline.extract.jsondoc import json_count, json_number
from pipeline.extract.prices import PER_TOKEN, usd_per_mtok
from pipeline.extract.readings import Unreadable
from pipeline.raw.bundle import is_bundle
from pipeline.schema.quantization import DEFAULT_PRECISION, precision_of_quantization
from pipeline.schema.staging import (
    MAX_COUNT,
    MAX_PRICE_USD_PER_MTOK,
    MAX_TTFT_S,
    OPENROUTER_PERCENTILES,
    OPENROUTER_STATISTICS,
    OPENROUTER_WINDOW_MINUTES,
)
from pipeline.schema.vocabulary import MAX_TOKENS_PER_S
from pipeline.support.text import (
    REMEMBERED_LENGTH,
    REMEMBERED_TEXTS,
    clean_repeated_text,
    shorten,
)

METHOD = "percentiles of live routed traffic"
# metric -> (field of the endpoint, divisor into the metric's unit, upper bound in that unit)
STATISTICS = {
    "output_tokens_per_s": ("throughput_last_30m", 1.0, MAX_TOKENS_PER_S),
    "ttft_s": ("latency_last_30m", 1000.0, MAX_TTFT_S),
}
_UNMEASURED = dict.fromkeys(OPENROUTER_PERCENTILES.values())
# metric -> (statistic, its column) in turn
_COLUMNS = {
    metric: [
        (statistic, OPENROUTER_PERCENTILES[metric, statistic])
        for statistic in OPENROUTER_STATISTICS
    ]
    for metric in STATISTICS
}
PRICES = {
    "price_input_usd_per_mtok": "prompt",
    "price_output_usd_per_mtok": "completion",
    "price_cache_read_usd_per_mtok": "input_cache_read",
    "price_cache_write_usd_per_mtok": "input_cache_write",
}
_PRICE_FIELDS = [(column, key, f"pricing.{key}") for column, key in PRICES.items()]
COUNTS = ("context_length", "max_completion_tokens", "max_prompt_tokens")
UPTIMES = ("uptime_last_5m", "uptime_last_30m", "uptime_last_1d")
SHAPE = "{'data': {'id': 'author/slug', 'endpoints': [endpoint, ...]}}"
SHOWN_PROBLEMS = 5
_EXACT = 2**53  # an integer beyond this may not be a float exactly (json_number then decides)


class _Problem(Unreadable):
    """Something in one response or one endpoint that keeps it out of the staged rows."""


class _Scope:
    """The `where` of jsondoc's readers inside a response: its errors are caught and reported."""

    def fail(self, message: str) -> _Problem:
        return _Problem(message)


_SCOPE = _Scope()


def _summary(problems: list[str]) -> str | None:
    if not problems:
        return None
    shown = "; ".join(shorten(problem, 200) for problem in problems[:SHOWN_PROBLEMS])
    more = len(problems) - SHOWN_PROBLEMS
    return shown + (f"; and {more} more" if more > 0 else "")


def _number(value: Any, what: str, low: float, high: float) -> float | None:
    if value is None:
        return None
    if type(value) is float and low <= value <= high:  # the usual case; NaN fails the test
        return value
    number = json_number(_SCOPE, value, what)
    if not low <= number <= high:
        raise _Problem(f"{what} is {shorten(repr(value), 40)}: expected {low:g} to {high:g}")
    return number


def _price(value: Any, what: str) -> float | None:
    if value is None:
        return None
    if type(value) is str and len(value) <= REMEMBERED_LENGTH:
        try:
            return _price_of_text(value)
        except _Problem:
            pass  # a refused text is read again below, to name the field
    return _price_of(value, what)


def _price_of(value: Any, what: str) -> float | None:
    price = usd_per_mtok(_SCOPE, value, what, per_tokens=PER_TOKEN, variable=True)
    if price is not None and price >= MAX_PRICE_USD_PER_MTOK:
        raise _Problem(f"{what} is {shorten(repr(value), 40)}: not a price per token")
    return price


# A provider's prices and names come back the same in poll after poll: each text is read once
# per process (the decimal conversions and the cleaning were a quarter of the parse).
@lru_cache(maxsize=REMEMBERED_TEXTS)
def _price_of_text(value: str) -> float | None:
    return _price_of(value, "price")


def _label(value: Any, max_length: int = 500) -> str | None:
    """json_label, each short text cleaned once per process (only `str`: what JSON gives)."""
    if type(value) is not str:
        return None
    return clean_repeated_text(value, max_length) or None


def _figure(raw: Any, key: str, statistic: str, divisor: float, bound: float) -> float:
    """A percentile in its metric's unit: positive, under `bound`."""
    # the usual case first: a JSON number in range (NaN and infinities fail the test)
    if type(raw) is float or (type(raw) is int and -_EXACT < raw < _EXACT):
        value = raw / divisor
        if 0 < value < bound:
            return value
    value = json_number(_SCOPE, raw, f"{key}.{statistic}") / divisor
    if not 0 < value < bound:
        raise _Problem(
            f"{key}.{statistic} is {shorten(repr(raw), 40)}: expected a positive figure or null"
        )
    return value


def _add_statistics(row: dict[str, Any], endpoint: dict[str, Any]) -> None:
    """Each percentile column's figure into `row`, None where it was not measured."""
    row.update(_UNMEASURED)
    for metric, (key, divisor, bound) in STATISTICS.items():
        block = endpoint.get(key)
        if block is None:
            continue  # not measured (no API key, or no traffic)
        if not isinstance(block, dict):
            raise _Problem(f"{key} is not an object of percentiles: {shorten(repr(block), 60)}")
        for statistic, column in _COLUMNS[metric]:
            raw = block.get(statistic)
            if raw is not None:  # a percentile missing or null is not measured, never 0
                row[column] = _figure(raw, key, statistic, divisor, bound)


def _endpoint(endpoint: Any, position: int, model: str, url: str) -> dict[str, Any]:
    if not isinstance(endpoint, dict):
        raise _Problem(f"endpoint #{position} is not an object")
    tag = _label(endpoint.get("tag"))
    if tag is None:
        raise _Problem(f"endpoint #{position}: expected a non-empty string 'tag'")
    try:
        return _endpoint_fields(endpoint, tag, model, url)
    except _Problem as problem:
        raise _Problem(f"endpoint {tag!r}: {problem}") from None


def _endpoint_fields(endpoint: dict[str, Any], tag: str, model: str, url: str) -> dict[str, Any]:
    provider = _label(endpoint.get("provider_name"))
    if provider is None:
        raise _Problem("expected a non-empty string 'provider_name'")
    root, _, suffix = tag.partition("/")
    if not root.strip():
        raise _Problem("the tag names no provider before its '/'")
    quantization = endpoint.get("quantization")
    if quantization is not None and not isinstance(quantization, str):
        raise _Problem(f"quantization is not a string: {shorten(repr(quantization), 60)}")
    label = _label(quantization, 100)
    precision = precision_of_quantization(label)
    status = endpoint.get("status")
    if status is not None and (
        isinstance(status, bool) or not isinstance(status, int) or abs(status) > MAX_COUNT
    ):
        raise _Problem(f"status is not a status code: {shorten(repr(status), 60)}")
    pricing = endpoint.get("pricing")
    if pricing is None:
        pricing = {}
    elif not isinstance(pricing, dict):
        raise _Problem(f"pricing is not an object: {shorten(repr(pricing), 60)}")
    parameters = endpoint.get("supported_parameters")
    row: dict[str, Any] = {
        "member_url": url,
        "model": model,
        "endpoint_name": _label(endpoint.get("name")),
        "provider_name": provider,
        "tag": tag,
        "tag_root": root.strip(),
        "tag_suffix": suffix.strip() or None,
        "quantization": label,
        "precision": precision or DEFAULT_PRECISION,
        "quantization_known": precision is not None,
        "status": status,
        "window_minutes": OPENROUTER_WINDOW_MINUTES,
        "method": METHOD,
    }
    # filled in place, in the order the fields are checked (a dict merged per group of fields,
    # with a contextlib.suppress per price, made an endpoint's reading half as long again)
    for key in COUNTS:
        row[key] = json_count(_SCOPE, endpoint.get(key), key)
    for key in UPTIMES:
        row[key] = _number(endpoint.get(key), key, 0, 100)
    for column, key, what in _PRICE_FIELDS:
        row[column] = _price(pricing.get(key), what)
    row["discount"] = _number(pricing.get("discount"), "pricing.discount", 0, 1)
    row["function_calling"] = "tools" in parameters if isinstance(parameters, list) else None
    _add_statistics(row, endpoint)
    return row


POLL = EndpointPoll(
    shape=SHAPE,
    scope=_SCOPE,
    endpoint=_endpoint,
    key="tag",
    repeated="endpoint",
    statistics=tuple(OPENROUTER_PERCENTILES.values()),
    summary=_summary,
    label=_label,
)


def _nothing_read(snapshot: SnapshotInput, reads: list[MemberRead]) -> Exception:
    if not is_bundle(snapshot.data):
        problem = reads[0].member["problem"] or "it lists no endpoints"
        return snapshot.fail(f"no endpoint could be read from the response: {problem}")
    if not reads:
        return snapshot.fail("the bundle holds no responses")
    problems = [
        f"member #{read.member['member_index']} ({shorten(read.member['member_url'], 100)}): "
        + (read.member["problem"] or "no endpoints")
        for read in reads
    ]
    return snapshot.fail(
        f"no endpoint could be read from any of the {len(reads)} responses: "
        + (_summary(problems) or "")
    )


def parse(snapshot: SnapshotInput) -> Frames:
    reads = read_poll(POLL, snapshot)
    if not any(read.endpoints for read in reads):
        raise _nothing_read(snapshot, reads)
    return {
        "openrouter_endpoints": validated(
            "openrouter_endpoints", snapshot, [row for read in reads for row in read.endpoints]
        ),
        "openrouter_poll_members": validated(
            "openrouter_poll_members", snapshot, [read.member for read in reads]
        ),
    }


PARSER = Parser(
    "openrouter_endpoints",
    "2",  # 2: the statistics as columns of openrouter_endpoints
    ("openrouter_endpoints", "openrouter_poll_members"),
    parse,
)

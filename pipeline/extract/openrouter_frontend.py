"""OpenRouter's website statistics: the undocumented API behind its model pages, read as a source
of its own (it may change without notice; OpenRouter documents only /api/v1).

A snapshot is one capture by a third-party collector, gzip-compressed or not::

    {"schema_version": "1.0", "fetched_at_utc": ..., "catalog_url": ...,
     "catalog_payload": <GET /api/v1/models as served>,
     "models": [{"openrouter_model_id", "canonical_slug", "endpoint_url", "throughput_url",
                 "endpoint_payload", "throughput_payload", "errors"}, ...]}

or one response of GET /api/frontend/v1/stats/endpoint?permaslug=<slug>&variant=<variant>
fetched as it came (``{"data": [endpoint, ...]}``), read as a capture of one model.

`endpoint_payload` lists the model's endpoints, each keyed by its own id (a UUID), with its
provider, tag (`provider_slug`), quantization, prices, request status counts, and its statistics:
`stats` and `statsByTier.{default,flex,priority}`, each with p50/p75/p90/p95/p99 of throughput
(tokens/s) and latency (milliseconds; time to first token, as OpenRouter's documented API
defines its latency), `request_count` and `window_minutes`. `throughput_payload` is the week of
daily throughput the model page charts per endpoint and service tier; OpenRouter does not say
which statistic a day's figure is.

Frames: openrouter_frontend_endpoints (endpoint x capture), openrouter_frontend_stats (endpoint
x statistics block x capture), openrouter_frontend_daily (endpoint x service tier x day x
capture), openrouter_frontend_members (model x capture: what was read and what was not) and
openrouter_frontend_models (the catalogue's canonical_slug and hugging_face_id).

A problem stays with what it concerns. A value that is not what the API gives elsewhere (a
string where a number belongs, a percentile of 0) is left null and quoted in its row's `unread`;
an endpoint without an id, provider or tag, an endpoint listed twice, a statistics block without
its window and a daily figure that is not a positive speed are left out and named in the
model's `problem`. The snapshot fails only when it is not a capture at all (not gzip or JSON, not
that shape, a catalogue that is not a model list) or when not one endpoint could be read.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import date
from typing import Any
from urllib.parse import parse_qs, urlsplit

from pipeline.extract.base import Frames, Parser, SnapshotInput, validated
from pipeline.extract.jsondoc import parse_json
from pipeline.extract.readings import Reading, Unreadable, label, summary
from pipeline.raw.snapshots import decompress
from pipeline.schema.quantization import DEFAULT_PRECISION, precision_of_quantization
from pipeline.schema.staging import (
    FRONTEND_PERCENTILES,
    FRONTEND_STATISTICS,
    MAX_TTFT_S,
    MAX_WINDOW_MINUTES,
)
from pipeline.schema.vocabulary import MAX_TOKENS_PER_S
from pipeline.support.text import TextDecodeError, decode_text, shorten, url_problem

METHOD = "percentiles of live routed traffic"
GZIP_MAGIC = b"\x1f\x8b"
# a capture is about 7 MB of JSON; a gzip that unpacks to more is refused, not read
MAX_UNPACKED_BYTES = 128_000_000
SCHEMA_MAJOR = "1"  # the collector's schema_version this parser reads
CAPTURE_SHAPE = "{'schema_version': '1.x', 'catalog_payload': {...}, 'models': [model, ...]}"
RESPONSE_SHAPE = "{'data': [endpoint, ...]}"
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
TIER = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,39}")
DAY = re.compile(r"(\d{4}-\d{2}-\d{2})(?:[ T]00:00:00(?:\.0+)?(?:Z|\+00:00)?)?")
# metric -> (the block's field suffix, divisor into the metric's unit, upper bound in that unit)
METRICS = {
    "output_tokens_per_s": ("throughput", 1.0, MAX_TOKENS_PER_S),
    "ttft_s": ("latency", 1000.0, MAX_TTFT_S),
}
_FIGURES = [
    (FRONTEND_PERCENTILES[metric, statistic], f"{statistic}_{suffix}", divisor, bound)
    for metric, (suffix, divisor, bound) in METRICS.items()
    for statistic in FRONTEND_STATISTICS
]
PRICES = {
    "price_input_usd_per_mtok": "prompt",
    "price_output_usd_per_mtok": "completion",
    "price_cache_read_usd_per_mtok": "input_cache_read",
    "price_cache_write_usd_per_mtok": "input_cache_write",
}
COUNTS = ("context_length", "max_completion_tokens", "max_prompt_tokens")
# column suffix -> the status counts' field
STATUS_WINDOWS = {
    "": "status_heuristics",
    "_5m": "status_heuristics_5m",
    "_1d": "status_heuristics_1d",
}
STATUS_COUNTS = {
    "requests_succeeded": "success",
    "requests_derankable_error": "derankableError",
    "requests_rate_limited": "rateLimited",
}
FLAGS = {"is_free": "is_free", "is_disabled": "is_disabled", "is_deranked": "is_deranked"}


@dataclass
class _Capture:
    """The rows of every frame, and the keys staged so far (a model listed twice in a capture,
    under two ids with one canonical slug, asks for the same statistics twice)."""

    endpoints: list[dict[str, Any]] = field(default_factory=list)
    stats: list[dict[str, Any]] = field(default_factory=list)
    daily: list[dict[str, Any]] = field(default_factory=list)
    members: list[dict[str, Any]] = field(default_factory=list)
    endpoint_keys: dict[tuple[str, str, str], int] = field(default_factory=dict)
    daily_keys: dict[tuple[str, str, str, str], int] = field(default_factory=dict)


# --- the document ------------------------------------------------------------------------------


def _document(snapshot: SnapshotInput) -> Any:
    """The snapshot's JSON: gzip (the collector's files) is unpacked first, whatever the
    content type says."""
    if not snapshot.data.startswith(GZIP_MAGIC):
        return parse_json(snapshot, snapshot.text())
    try:
        data = decompress(snapshot.data, MAX_UNPACKED_BYTES)
    except OSError as error:
        raise snapshot.fail(f"not a readable gzip capture: {error.strerror or error}") from None
    try:
        text = decode_text(data, "application/json", "the unpacked capture")
    except TextDecodeError as error:
        raise snapshot.fail(str(error)) from None
    return parse_json(snapshot, text)


def _query(url: str | None, name: str) -> str | None:
    if url is None:
        return None
    values = parse_qs(urlsplit(url).query).get(name)
    return label(values[0], 300) if values else None


def _url(reading: Reading, value: Any, what: str) -> str | None:
    if value is None:
        return None
    problem = url_problem(value)
    if problem:
        reading.notes.append(f"{what} {problem}")
        return None
    return value


# --- one endpoint ------------------------------------------------------------------------------


def _identity(endpoint: Any, position: int) -> tuple[str, str, str, str]:
    """(endpoint id, permaslug, variant, tag) of a listed endpoint, or Unreadable."""
    if not isinstance(endpoint, dict):
        raise Unreadable(f"endpoint #{position} is not an object")
    endpoint_id = endpoint.get("id")
    if not isinstance(endpoint_id, str) or not UUID.fullmatch(endpoint_id):
        raise Unreadable(
            f"endpoint #{position}: id {shorten(repr(endpoint_id), 60)} is not an endpoint id "
            "(a UUID)"
        )
    permaslug = label(endpoint.get("model_variant_permaslug"), 300)
    variant = label(endpoint.get("variant"), 100)
    tag = label(endpoint.get("provider_slug"), 300)
    for value, name in (
        (permaslug, "model_variant_permaslug"),
        (variant, "variant"),
        (tag, "provider_slug"),
    ):
        if value is None:
            raise Unreadable(f"endpoint {endpoint_id}: expected a non-empty string {name!r}")
    assert permaslug is not None and variant is not None and tag is not None
    return endpoint_id, permaslug, variant, tag


def _endpoint_row(
    endpoint: dict[str, Any], index: int, key: tuple[str, str, str], tag: str
) -> dict[str, Any]:
    endpoint_id, permaslug, variant = key
    provider = label(endpoint.get("provider_name"))
    if provider is None:
        raise Unreadable(f"endpoint {endpoint_id}: expected a non-empty string 'provider_name'")
    root, _, suffix = tag.partition("/")
    if not root.strip():
        raise Unreadable(f"endpoint {endpoint_id}: the tag names no provider before its '/'")
    reading = Reading()
    quantization = reading.text(endpoint.get("quantization"), "quantization", 100)
    precision = precision_of_quantization(quantization)
    pricing = reading.mapping(endpoint.get("pricing"), "pricing")
    parameters = reading.names(endpoint.get("supported_parameters"), "supported_parameters")
    row: dict[str, Any] = {
        "member_index": index,
        "permaslug": permaslug,
        "variant": variant,
        "model_slug": reading.text(endpoint.get("model_variant_slug"), "model_variant_slug", 300),
        "endpoint_id": endpoint_id,
        "endpoint_name": reading.text(endpoint.get("name"), "name"),
        "provider_name": provider,
        "provider_display_name": reading.text(
            endpoint.get("provider_display_name"), "provider_display_name"
        ),
        "tag": tag,
        "tag_root": root.strip(),
        "tag_suffix": suffix.strip() or None,
        "provider_model_id": reading.text(
            endpoint.get("provider_model_id"), "provider_model_id", 300
        ),
        "provider_region": reading.text(endpoint.get("provider_region"), "provider_region", 100),
        "quantization": quantization,
        "precision": precision or DEFAULT_PRECISION,
        "quantization_known": precision is not None,
        "status": reading.code(endpoint.get("status"), "status"),
    }
    for column, key_name in FLAGS.items():
        row[column] = reading.flag(endpoint.get(key_name), key_name)
    for name in COUNTS:
        row[name] = reading.count(endpoint.get(name), name)
    for column, key_name in PRICES.items():
        row[column] = reading.price_per_token(
            pricing.get(key_name), f"pricing.{key_name}", variable=True
        )
    row["discount"] = reading.number(pricing.get("discount"), "pricing.discount", 0, 1)
    row["function_calling"] = "tools" in parameters if parameters is not None else None
    for suffix_name, block_name in STATUS_WINDOWS.items():
        counts = reading.mapping(endpoint.get(block_name), block_name)
        for column, count_name in STATUS_COUNTS.items():
            row[column + suffix_name] = reading.count(
                counts.get(count_name), f"{block_name}.{count_name}", zero=True
            )
    row["unread"] = reading.unread
    return row


def _stats_row(
    block: Any, name: str, tier: str | None, index: int, key: tuple[str, str, str]
) -> dict[str, Any]:
    """One statistics block as a row; Unreadable when it is not one."""
    endpoint_id, permaslug, variant = key
    if not isinstance(block, dict):
        raise Unreadable(f"{name} is not an object: {shorten(repr(block), 60)}")
    named = block.get("endpoint_id")
    if named is not None and named != endpoint_id:
        raise Unreadable(f"{name} is of endpoint {shorten(repr(named), 60)}, not this one")
    window = block.get("window_minutes")
    if (
        isinstance(window, bool)
        or not isinstance(window, int)
        or not 0 < window <= MAX_WINDOW_MINUTES
    ):
        raise Unreadable(
            f"{name}.window_minutes is {shorten(repr(window), 40)}: expected the statistics' "
            "window in whole minutes"
        )
    reading = Reading()
    row: dict[str, Any] = {
        "member_index": index,
        "permaslug": permaslug,
        "variant": variant,
        "endpoint_id": endpoint_id,
        "block": name,
        "service_tier": tier,
    }
    for column, source_key, divisor, bound in _FIGURES:
        row[column] = reading.positive(block.get(source_key), source_key, bound, divisor)
    row["request_count"] = reading.count(block.get("request_count"), "request_count", zero=True)
    row["window_minutes"] = window
    row["method"] = METHOD
    row["unread"] = reading.unread
    return row


def _stats_rows(
    endpoint: dict[str, Any], index: int, key: tuple[str, str, str], problems: list[str]
) -> list[dict[str, Any]]:
    """The endpoint's `stats` and each tier of its `statsByTier`; a block that cannot be read is
    named in `problems` and left out."""
    blocks: list[tuple[Any, str, str | None]] = []
    if endpoint.get("stats") is not None:
        blocks.append((endpoint["stats"], "stats", None))
    tiers = endpoint.get("statsByTier")
    if isinstance(tiers, dict):
        for tier, block in tiers.items():
            if block is None:
                continue  # no traffic in that tier
            if not TIER.fullmatch(tier):
                problems.append(
                    f"endpoint {key[0]}: statsByTier key {shorten(repr(tier), 40)} is not a "
                    "service tier"
                )
                continue
            blocks.append((block, f"statsByTier.{tier}", tier))
    elif tiers is not None:
        problems.append(f"endpoint {key[0]}: statsByTier is not an object")
    rows = []
    for block, name, tier in blocks:
        try:
            rows.append(_stats_row(block, name, tier, index, key))
        except Unreadable as problem:
            problems.append(f"endpoint {key[0]}: {problem}")
    return rows


# --- one model of the capture ------------------------------------------------------------------


def _endpoints_of(payload: Any) -> list[Any]:
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        raise Unreadable(f"the statistics response is not {RESPONSE_SHAPE}")
    return data


def _read_endpoints(
    capture: _Capture, member: dict[str, Any], payload: Any, problems: list[str]
) -> set[str]:
    """Stage the endpoints of one statistics response; returns every endpoint id it lists."""
    index = member["member_index"]
    try:
        listed = _endpoints_of(payload)
    except Unreadable as problem:
        problems.append(str(problem))
        return set()
    member["endpoints_listed"] = len(listed)
    identified = []
    for position, endpoint in enumerate(listed, start=1):
        try:
            identified.append((endpoint, *_identity(endpoint, position)))
        except Unreadable as problem:
            problems.append(str(problem))
    ids = Counter(endpoint_id for _, endpoint_id, *_ in identified)
    for endpoint_id in sorted(i for i, n in ids.items() if n > 1):
        problems.append(f"endpoint {endpoint_id} is listed more than once")  # which one is right?
    for endpoint, endpoint_id, permaslug, variant, tag in identified:
        key = (endpoint_id, permaslug, variant)
        if ids[endpoint_id] > 1:
            continue
        if key in capture.endpoint_keys:
            problems.append(
                f"endpoint {endpoint_id} of {permaslug} was read from model "
                f"#{capture.endpoint_keys[key]} already"
            )
            continue
        try:
            row = _endpoint_row(endpoint, index, key, tag)
        except Unreadable as problem:
            problems.append(str(problem))
            continue
        capture.endpoint_keys[key] = index
        capture.endpoints.append(row)
        stats = _stats_rows(endpoint, index, key, problems)
        capture.stats += stats
        member["endpoints_staged"] += 1
        member["endpoints_without_statistics"] += not stats
    return set(ids)


def _day(value: Any) -> str:
    match = DAY.fullmatch(value) if isinstance(value, str) else None
    try:
        if match is not None:
            return date.fromisoformat(match.group(1)).isoformat()
    except ValueError:
        pass
    raise Unreadable(f"x is {shorten(repr(value), 40)}: expected a day (YYYY-MM-DD 00:00:00)")


def _read_daily(
    capture: _Capture,
    member: dict[str, Any],
    payload: Any,
    permaslug: str | None,
    listed: set[str],
    problems: list[str],
) -> None:
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        problems.append("the daily throughput response is not {'data': [{'x': day, 'y': {...}}]}")
        return
    if permaslug is None:
        problems.append("the daily throughput names no model (no permaslug): not read")
        return
    index = member["member_index"]
    time_range = _query(member["throughput_url"], "timeRange")
    refused: list[str] = []
    for position, point in enumerate(data, start=1):
        try:
            if not isinstance(point, dict) or not isinstance(point.get("y"), dict):
                raise Unreadable(f"point #{position} is not {{'x': day, 'y': {{...}}}}")
            day = _day(point.get("x"))
        except Unreadable as problem:
            refused.append(str(problem))
            continue
        for series, value in point["y"].items():
            endpoint_id, separator, tier = series.rpartition("::")
            if not separator or not UUID.fullmatch(endpoint_id) or not TIER.fullmatch(tier):
                refused.append(f"{day}: key {shorten(repr(series), 60)} is not 'endpoint-id::tier'")
                continue
            reading = Reading()
            speed = reading.positive(value, f"{day} {endpoint_id}::{tier}", MAX_TOKENS_PER_S)
            if speed is None:
                refused += reading.notes or [f"{day} {endpoint_id}::{tier} is null"]
                continue
            key = (permaslug, endpoint_id, tier, day)
            if key in capture.daily_keys:
                refused.append(
                    f"{day} {endpoint_id}::{tier} was read from model #{capture.daily_keys[key]} "
                    "already"
                )
                continue
            capture.daily_keys[key] = index
            capture.daily.append(
                {
                    "member_index": index,
                    "permaslug": permaslug,
                    "endpoint_id": endpoint_id,
                    "service_tier": tier,
                    "day": day,
                    "output_tokens_per_s": speed,
                    "time_range": time_range,
                    "endpoint_listed": endpoint_id in listed,
                }
            )
            member["daily_points_staged"] += 1
    if refused:
        problems.append(f"{len(refused):,} daily figure(s) not read: {summary(refused)}")


def _member_row(index: int, model: str | None = None) -> dict[str, Any]:
    return {
        "member_index": index,
        "model": model,
        "canonical_slug": None,
        "endpoint_url": None,
        "throughput_url": None,
        "collector_errors": None,
        "endpoints_listed": None,
        "endpoints_staged": 0,
        "endpoints_without_statistics": 0,
        "daily_points_staged": 0,
        "problem": None,
    }


def _collector_errors(value: Any, problems: list[str]) -> str | None:
    if value is None or value == []:
        return None
    if not isinstance(value, list):
        problems.append(f"errors is {shorten(repr(value), 40)}: expected a list")
        return None
    texts = [label(error if isinstance(error, str) else repr(error), 300) for error in value]
    return summary([text for text in texts if text])


def _read_model(capture: _Capture, index: int, model: Any) -> None:
    member = _member_row(index)
    capture.members.append(member)
    problems: list[str] = []
    if not isinstance(model, dict):
        member["problem"] = f"model #{index} is not an object"
        return
    reading = Reading()
    member |= {
        "model": reading.text(model.get("openrouter_model_id"), "openrouter_model_id", 300),
        "canonical_slug": reading.text(model.get("canonical_slug"), "canonical_slug", 300),
        "endpoint_url": _url(reading, model.get("endpoint_url"), "endpoint_url"),
        "throughput_url": _url(reading, model.get("throughput_url"), "throughput_url"),
    }
    problems += reading.notes
    member["collector_errors"] = _collector_errors(model.get("errors"), problems)
    listed: set[str] = set()
    if model.get("endpoint_payload") is not None:
        listed = _read_endpoints(capture, member, model["endpoint_payload"], problems)
    else:
        problems.append("no statistics response (endpoint_payload is null)")
    if model.get("throughput_payload") is not None:
        permaslug = _query(member["throughput_url"], "permaslug") or member["canonical_slug"]
        _read_daily(capture, member, model["throughput_payload"], permaslug, listed, problems)
    member["problem"] = summary(problems)


def _read_response(capture: _Capture, snapshot: SnapshotInput, document: Any) -> None:
    """One statistics response fetched as it came: a capture of one model without its chart."""
    member = _member_row(1, _query(snapshot.meta.url, "permaslug"))
    member["endpoint_url"] = snapshot.meta.url
    capture.members.append(member)
    problems: list[str] = []
    _read_endpoints(capture, member, document, problems)
    if member["model"] is None and capture.endpoints:
        member["model"] = capture.endpoints[0]["permaslug"]
    member["problem"] = summary(problems)


# --- the catalogue -----------------------------------------------------------------------------


def _catalogue(snapshot: SnapshotInput, payload: Any) -> list[dict[str, Any]]:
    """canonical_slug and hugging_face_id of each model of the capture's GET /api/v1/models."""
    if payload is None:
        return []
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        raise snapshot.fail("catalog_payload is not {'data': [model, ...]} (GET /api/v1/models)")
    rows = []
    for position, model in enumerate(data, start=1):
        model_id = label(model.get("id"), 300) if isinstance(model, dict) else None
        if model_id is None:
            raise snapshot.fail(f"catalog_payload model #{position}: expected a string 'id'")
        reading = Reading()
        rows.append(
            {
                "model_id": model_id,
                "canonical_slug": reading.text(model.get("canonical_slug"), "canonical_slug", 300),
                "hugging_face_id": reading.text(
                    model.get("hugging_face_id"), "hugging_face_id", 300
                ),
                "name": reading.text(model.get("name"), "name"),
            }
        )
    repeated = [i for i, n in Counter(row["model_id"] for row in rows).items() if n > 1]
    if repeated:
        raise snapshot.fail(
            f"catalog_payload lists model {shorten(repr(repeated[0]), 80)} more than once"
        )
    return rows


def _schema_version(snapshot: SnapshotInput, value: Any) -> None:
    if value is None:
        return
    if not isinstance(value, str) or value.split(".", 1)[0] != SCHEMA_MAJOR:
        raise snapshot.fail(
            f"schema_version {shorten(repr(value), 40)}: this parser reads the collector's "
            f"schema {SCHEMA_MAJOR}.x"
        )


def parse(snapshot: SnapshotInput) -> Frames:
    document = _document(snapshot)
    capture = _Capture()
    catalogue: list[dict[str, Any]] = []
    if isinstance(document, dict) and isinstance(document.get("models"), list):
        _schema_version(snapshot, document.get("schema_version"))
        catalogue = _catalogue(snapshot, document.get("catalog_payload"))
        for index, model in enumerate(document["models"], start=1):
            _read_model(capture, index, model)
    elif isinstance(document, dict) and isinstance(document.get("data"), list):
        _read_response(capture, snapshot, document)
    else:
        raise snapshot.fail(
            f"expected a capture {CAPTURE_SHAPE} or a statistics response {RESPONSE_SHAPE}"
        )
    if not capture.endpoints:
        problems = [
            f"model #{m['member_index']} ({shorten(m['model'] or '?', 80)}): "
            + (m["problem"] or "no endpoints")
            for m in capture.members
        ]
        raise snapshot.fail(
            f"no endpoint could be read from any of the {len(capture.members)} models: "
            + (summary(problems) or "the capture lists none")
        )
    return {
        "openrouter_frontend_endpoints": validated(
            "openrouter_frontend_endpoints", snapshot, capture.endpoints
        ),
        "openrouter_frontend_stats": validated(
            "openrouter_frontend_stats", snapshot, capture.stats
        ),
        "openrouter_frontend_daily": validated(
            "openrouter_frontend_daily", snapshot, capture.daily
        ),
        "openrouter_frontend_members": validated(
            "openrouter_frontend_members", snapshot, capture.members
        ),
        "openrouter_frontend_models": validated("openrouter_frontend_models", snapshot, catalogue),
    }


PARSER = Parser(
    "openrouter_frontend",
    "1",
    (
        "openrouter_frontend_endpoints",
        "openrouter_frontend_stats",
        "openrouter_frontend_daily",
        "openrouter_frontend_members",
        "openrouter_frontend_models",
    ),
    parse,
)

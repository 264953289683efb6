"""Vercel AI Gateway's endpoint statistics (GET /v1/models/{creator}/{model}/endpoints). No full
raw response could be found: the fixtures are written by hand in the documented shape
(tests/fixtures/vercel-ai-gateway/README.md): the documentation's sample response, and one poll
round around the reduced real statistics. Broken and hostile variants are made here."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from test_parse_support import FIXTURES, SOURCES, in_fixture_store, parse, refused

from pipeline.extract import PARSERS, SnapshotInput
from pipeline.raw.bundle import BundleMember, write_bundle
from pipeline.schema.vocabulary import METHODS, STATISTICS
from pipeline.sources.formats import BUNDLE_CONTENT_TYPE, FORMATS

SOURCE_ID = "vercel-ai-gateway-endpoints"
API = "https://ai-gateway.vercel.sh/v1/models"
HERE = FIXTURES / "vercel-ai-gateway"
GEMINI = (HERE / "endpoints-google__gemini-3.1-pro-preview.json").read_bytes()
GEMINI_URL = f"{API}/google/gemini-3.1-pro-preview/endpoints"
ROUND = {
    path.stem.replace("__", "/"): path.read_bytes()
    for path in sorted((HERE / "round-00bafc0650ee").glob("*.json"))
}
JSON_HEADERS = (("content-type", "application/json; charset=utf-8"),)


def response(tmp_path: Path, data: bytes = GEMINI, url: str = GEMINI_URL) -> SnapshotInput:
    """One /endpoints response captured as it came."""
    return in_fixture_store(tmp_path, SOURCE_ID, data, retrieved_at="2026-07-20T10:10:00Z", url=url)


def member(model: str, data: bytes | None = None, status: int = 200) -> BundleMember:
    body = ROUND[model] if data is None else data
    return BundleMember(f"{API}/{model}/endpoints", status, JSON_HEADERS, body)


def poll(tmp_path: Path, *members: BundleMember) -> SnapshotInput:
    return in_fixture_store(
        tmp_path,
        SOURCE_ID,
        write_bundle(members),
        retrieved_at="2026-07-20T10:10:00Z",
        extension="bundle",
        content_type=BUNDLE_CONTENT_TYPE,
    )


def edited(data: bytes, change: Callable[[dict[str, Any]], object]) -> bytes:
    document = json.loads(data)
    change(document)
    return json.dumps(document).encode()


def first_endpoint(document: dict[str, Any]) -> dict[str, Any]:
    return document["data"]["endpoints"][0]


# --- the documented response -------------------------------------------------------------------


def test_the_documented_sample_is_one_row_with_every_value(tmp_path):
    frames = parse(response(tmp_path))
    row = frames["vercel_gateway_endpoints"].iloc[0].to_dict()
    assert {k: row[k] for k in row if k not in ("source_id", "snapshot_id", "observed_at")} == {
        "member_url": GEMINI_URL,
        "model": "google/gemini-3.1-pro-preview",
        "endpoint_name": "google | google/gemini-3.1-pro-preview",
        "provider_name": "google",
        "status": 0,
        "context_length": 1_000_000,
        "max_completion_tokens": 64_000,
        "price_input_usd_per_mtok": 2.0,
        "price_output_usd_per_mtok": 12.0,
        "price_cache_read_usd_per_mtok": 0.2,
        "price_cache_write_usd_per_mtok": 2.0,
        "function_calling": True,
        "implicit_caching": False,
        "uptime_last_15m": 100.0,
        "uptime_last_1h": 99.8,
        "uptime_last_1d": 99.6,
        "output_tokens_per_s_p50": 67.0,
        "output_tokens_per_s_p95": 69.85,
        "ttft_s_p50": 2.292,  # milliseconds in the API
        "ttft_s_p95": 2.685,
        "window_minutes": 60,
        "method": "percentiles of live gateway traffic",
        "unread": row["unread"],
    }
    assert pd.isna(row["unread"])
    assert row["observed_at"] == pd.Timestamp("2026-07-20T10:10:00Z")
    member = frames["vercel_gateway_poll_members"].iloc[0]
    assert (member["model"], member["endpoints_listed"], member["endpoints_staged"]) == (
        "google/gemini-3.1-pro-preview",
        1,
        1,
    )
    assert member["endpoints_without_statistics"] == 0 and pd.isna(member["problem"])


def test_a_poll_round_reads_every_response_with_the_real_reduced_figures(tmp_path):
    frames = parse(poll(tmp_path, *(member(model) for model in ROUND)))
    members = frames["vercel_gateway_poll_members"].set_index("model")
    assert members["endpoints_staged"].to_dict() == {
        "anthropic/claude-sonnet-4-6": 3,
        "deepseek/deepseek-v4-flash": 5,
        "moonshotai/kimi-k3": 1,
        "openai/gpt-5.5": 2,
        "openai/gpt-oss-120b": 5,
        "zhipuai/glm-5.2": 4,
    }
    assert members["problem"].isna().all()
    rows = frames["vercel_gateway_endpoints"].set_index(["model", "provider_name"])
    baseten = rows.loc[("openai/gpt-oss-120b", "baseten")]
    # verbatim from PCODE-pl/MCPTap-Pareto's baseten__models__openai__gpt-oss-120b.00bafc0650ee
    assert (baseten["output_tokens_per_s_p50"], baseten["output_tokens_per_s_p95"]) == (293, 317.3)
    assert baseten["ttft_s_p50"] == 0.33
    assert baseten["ttft_s_p95"] == pytest.approx(0.48579999999999984)
    assert (baseten["uptime_last_15m"], baseten["uptime_last_1d"]) == (100, 99.295)
    # the reduced files carry no prices: not a price of 0, no price
    assert rows["price_input_usd_per_mtok"].isna().all()
    # Cerebras: latency measured, throughput null (not measured), an endpoint with statistics
    cerebras = rows.loc[("openai/gpt-oss-120b", "cerebras")]
    assert pd.isna(cerebras["output_tokens_per_s_p50"]) and cerebras["ttft_s_p50"] == 0.162
    assert rows["unread"].isna().all()
    assert members["endpoints_without_statistics"].sum() == 0


def test_an_endpoint_without_any_figure_is_counted_as_without_statistics(tmp_path):
    def bare(document: dict[str, Any]) -> None:
        for key in ("throughput_last_1h", "latency_last_1h"):
            first_endpoint(document).pop(key)

    frames = parse(response(tmp_path), edited(GEMINI, bare))
    assert frames["vercel_gateway_poll_members"]["endpoints_without_statistics"].tolist() == [1]
    assert frames["vercel_gateway_endpoints"]["unread"].isna().all()


# --- broken, hostile and missing input ---------------------------------------------------------


def test_a_response_that_cannot_be_read_stays_that_members_problem(tmp_path):
    snapshot = poll(
        tmp_path,
        member("openai/gpt-oss-120b"),
        member("acme/gone", b'{"error": {"message": "Model <b>not</b> found"}}', 404),
        member("acme/html", b"<html>checking your browser</html>"),
        member("acme/shape", b'{"data": {"id": "acme/shape", "endpoints": {}}}'),
        member("acme/noid", b'{"data": {"endpoints": []}}'),
        member("acme/again", ROUND["openai/gpt-oss-120b"]),
        member("acme/said", b'{"error": {"message": "Model <b>not</b> found"}}'),
    )
    frames = parse(snapshot)
    problems = frames["vercel_gateway_poll_members"]["problem"].tolist()
    assert pd.isna(problems[0])
    assert problems[1:] == [
        "HTTP 404",
        "not valid JSON: expected value at line 1 column 1",  # jiter's words
        "expected {'data': {'id': 'creator/model', 'endpoints': [endpoint, ...]}}",
        "expected {'data': {'id': 'creator/model', 'endpoints': [endpoint, ...]}}: data.id is "
        "not a non-empty string",
        "model 'openai/gpt-oss-120b' was read from member #1 already",
        "expected {'data': {'id': 'creator/model', 'endpoints': [endpoint, ...]}} (the API "
        "said: 'Model not found')",
    ]
    assert len(frames["vercel_gateway_endpoints"]) == 5


def test_hostile_and_malformed_values_are_left_null_or_left_out_and_named(tmp_path):
    def damage(document: dict[str, Any]) -> None:
        endpoints = document["data"]["endpoints"]
        first = endpoints[0]
        first["provider_name"] = "<b>google</b><script>alert(1)</script>"
        first["name"] = "google | <img src=x onerror=alert(1)>gemini"
        first["throughput_last_1h"] = {"p50": "67", "p95": 0}
        first["latency_last_1h"] = {"p50": -5, "p95": 1e308}
        first["uptime_last_1h"] = 101
        first["uptime_last_1d"] = "up"
        first["context_length"] = 10**30
        first["pricing"]["prompt"] = "free"
        first["pricing"]["completion"] = "-0.1"
        first["supports_implicit_caching"] = "yes"
        first["status"] = True
        endpoints += [
            "not an endpoint",
            {"name": "no provider"},
            {"provider_name": "twice"},
            {"provider_name": "twice"},
        ]

    frames = parse(response(tmp_path), edited(GEMINI, damage))
    rows = frames["vercel_gateway_endpoints"]
    assert rows["provider_name"].tolist() == ["google"]
    row = rows.iloc[0]
    assert row["endpoint_name"] == "google | gemini"
    assert row["output_tokens_per_s_p50"] == 67  # a number as a string is read
    for column in (
        "output_tokens_per_s_p95",
        "ttft_s_p50",
        "ttft_s_p95",
        "uptime_last_1h",
        "uptime_last_1d",
        "context_length",
        "price_input_usd_per_mtok",
        "price_output_usd_per_mtok",
        "implicit_caching",
        "status",
    ):
        assert pd.isna(row[column]), column
    assert row["uptime_last_15m"] == 100 and row["price_cache_read_usd_per_mtok"] == 0.2
    assert row["unread"].startswith(
        f"status is True: expected a whole number; context_length is {10**30}: expected"
    )
    assert row["unread"].endswith("and 5 more")  # ten values in all
    member = frames["vercel_gateway_poll_members"].iloc[0]
    assert (member["endpoints_listed"], member["endpoints_staged"]) == (5, 1)
    assert member["problem"] == (
        "endpoint #2 is not an object; endpoint #3: expected a non-empty string "
        "'provider_name'; provider 'twice' is listed more than once"
    )
    for frame in frames.values():
        assert not frame.astype(str).apply(lambda c: c.str.contains("<script|<b>|<img")).any().any()


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda e: e.update(throughput_last_1h=[67, 69]), "throughput_last_1h is [67, 69]"),
        (lambda e: e.update(latency_last_1h={"p50": 0}), "latency_last_1h.p50 is 0"),
        (lambda e: e.update(pricing="cheap"), "pricing is 'cheap': expected an object"),
        (lambda e: e.update(supported_parameters="tools"), "supported_parameters is 'tools'"),
    ],
)
def test_a_value_not_as_documented_is_quoted_in_unread(tmp_path, change, expected):
    frames = parse(response(tmp_path), edited(GEMINI, lambda d: change(first_endpoint(d))))
    assert expected in frames["vercel_gateway_endpoints"].iloc[0]["unread"]


def test_nothing_readable_fails_naming_each_response(tmp_path):
    snapshot = poll(
        tmp_path,
        member("acme/gone", b"{}", 404),
        member("acme/empty", b'{"data": {"id": "acme/empty", "endpoints": []}}'),
    )
    message = refused(snapshot, snapshot.data, "no endpoint could be read from any of the 2")
    assert "member #1 (https://ai-gateway.vercel.sh/v1/models/acme/gone/endpoints): HTTP 404" in (
        message
    )
    assert "member #2" in message and "no endpoints" in message


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"", "not valid JSON"),
        (b"[]", "expected {'data'"),
        (b'{"data": {"id": "x/y", "endpoints": "none"}}', "expected {'data'"),
    ],
)
def test_one_response_that_is_not_the_documented_shape_fails(tmp_path, data, expected):
    refused(response(tmp_path), data, "no endpoint could be read", expected)


def test_a_damaged_bundle_fails_naming_it(tmp_path):
    snapshot = poll(tmp_path, member("openai/gpt-oss-120b"), member("zhipuai/glm-5.2"))
    refused(snapshot, snapshot.data[:-40], "not a readable bundle")
    empty = write_bundle([])
    refused(snapshot, empty, "the bundle holds no responses")


# --- registry, format, vocabulary --------------------------------------------------------------


def test_the_endpoint_statistics_are_an_hourly_keyless_poll_of_the_gateways_own_list():
    source = SOURCES[SOURCE_ID]
    assert (source.publisher, source.kind, source.tier, source.cadence) == (
        "Vercel",
        "benchmark",
        "T1",
        "hourly",
    )
    assert source.url == API and source.polls and source.scheduled
    assert source.member_url("openai/gpt-oss-120b") == f"{API}/openai/gpt-oss-120b/endpoints"
    assert source.models_from == "vercel-ai-gateway-catalogue" and not source.api_key_env
    catalogue = SOURCES["vercel-ai-gateway-catalogue"]
    assert (catalogue.url, catalogue.format, catalogue.cadence) == (
        API,
        "vercel_gateway_models",
        "daily",
    )
    assert not catalogue.api_key_env
    # the page of the same name stays its own source
    assert SOURCES["vercel-ai-gateway-models"].format == "platform_doc"
    assert FORMATS["vercel_gateway_endpoints"].content_types == (
        BUNDLE_CONTENT_TYPE,
        "application/json",
    )
    assert PARSERS["vercel_gateway_endpoints"].frames == (
        "vercel_gateway_endpoints",
        "vercel_gateway_poll_members",
    )
    assert "percentiles of live gateway traffic" in METHODS and "p95" in STATISTICS
    assert METHODS[:5] == (
        "fixed-workload probe",
        "percentiles of live routed traffic",
        "one-off run",
        "vendor record",
        "compiled",
    )

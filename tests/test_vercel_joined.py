"""Vercel's AI Gateway beside OpenRouter, end to end: both fetched in one hour from a real HTTP
server on 127.0.0.1 (OpenRouter's real deepseek-v4-flash response; Vercel's round in its documented
shape, tests/fixtures/vercel-ai-gateway/README.md), stored, built and exported. Where both routers
measure one provider's endpoint of one model, the two figures sit side by side under the same
provider and model, each labelled with its own method and window, and they corroborate or dispute
only each other."""

from __future__ import annotations

import json

import pytest
from api_world import FLASH, api_world, openrouter_key
from http_fixtures import keyed, ok
from test_fetch_vercel_gateway import API, CATALOGUE, ENDPOINTS, serve_gateway

from pipeline.dagster.envelope import execute
from pipeline.warehouse.connection import connect

pytestmark = pytest.mark.e2e

ROUTER = "openrouter-endpoints"
FLASH_ID = "deepseek/deepseek-v4-flash"


@pytest.fixture
def world(tmp_path, monkeypatch):
    yield from api_world(tmp_path, monkeypatch)


def test_both_routers_on_one_endpoint_are_shown_side_by_side_and_compared(world):
    key = openrouter_key()
    serve_gateway(world)
    world.add(ROUTER, models=[FLASH_ID], models_from=None)
    world.serve_model(FLASH_ID, keyed("Authorization", f"Bearer {key}", ok(FLASH)))
    assert world.fetch(CATALOGUE).get(CATALOGUE).outcome == "new"
    report = world.fetch(ENDPOINTS, ROUTER, environ={"OPENROUTER_API_KEY": key})
    assert report.ok, [record.detail for record in report.records]
    settings = world.settings

    outcome = execute(settings, None)

    assert outcome.success, outcome.failures + outcome.failed_checks
    with connect(settings, read_only=True) as con:
        rows = con.execute(
            """
            SELECT source_id, endpoint_id, method, statistic, window_minutes, value
            FROM core.observations
            WHERE provider_id = 'deepinfra' AND model_id = 'deepseek-v4-flash'
              AND metric = 'output_tokens_per_s' AND statistic IN ('p50', 'p95')
            ORDER BY source_id, statistic
            """
        ).fetchall()
        disputes = con.execute(
            """
            SELECT a_source_id, b_source_id, a_method, b_method, a_value, b_value
            FROM mart.disagreements
            WHERE provider_id = 'deepinfra' AND model_id = 'deepseek-v4-flash'
              AND metric = 'output_tokens_per_s'
            """
        ).fetchall()
    # each router's own figures, each with its own method and window (OpenRouter gives no p95)
    assert rows == [
        (
            ROUTER,
            "deepinfra/deepseek-v4-flash/fp8/standard/-~fp8",  # OpenRouter's tag deepinfra/fp8
            "percentiles of live routed traffic",
            "p50",
            30,
            26.0,
        ),
        (
            ENDPOINTS,
            "deepinfra/deepseek-v4-flash/unknown/standard/-",
            "percentiles of live gateway traffic",
            "p50",
            60,
            85.5,
        ),
        (
            ENDPOINTS,
            "deepinfra/deepseek-v4-flash/unknown/standard/-",
            "percentiles of live gateway traffic",
            "p95",
            60,
            118.19999999999999,
        ),
    ]
    # 26 against 85.5 tokens/s: the two routers dispute each other, and only each other
    assert len(disputes) == 1
    (a, b, a_method, b_method, a_value, b_value) = disputes[0]
    assert {a, b} == {ROUTER, ENDPOINTS}
    assert {a_method, b_method} == {
        "percentiles of live routed traffic",
        "percentiles of live gateway traffic",
    }
    assert {a_value, b_value} == {26.0, 85.5}

    inference = json.loads((settings.exports / "latest" / "inference.json").read_bytes())
    [model] = [m for m in inference["models"] if m["id"] == "deepseek-v4-flash"]
    shown = {
        (endpoint["id"], figure["source"], figure["statistic"], figure["value"])
        for endpoint in model["endpoints"]
        if endpoint["provider"]["id"] == "deepinfra"
        for figure in endpoint["figures"]
        if figure["metric"] == "output_tokens_per_s"
    }
    assert {
        ("deepinfra/deepseek-v4-flash/fp8/standard/-~fp8", ROUTER, "p50", 26.0),
        ("deepinfra/deepseek-v4-flash/unknown/standard/-", ENDPOINTS, "p50", 85.5),
        ("deepinfra/deepseek-v4-flash/unknown/standard/-", ENDPOINTS, "p95", 118.2),
    } <= shown
    sources = {source["id"]: source for source in inference["sources"]}
    assert sources[ENDPOINTS]["publisher"] == "Vercel"
    assert sources[ENDPOINTS]["terms"]["terms_url"] == "https://vercel.com/legal/terms"
    # and each names the other as disputing it
    by_source = {
        figure["source"]: figure
        for endpoint in model["endpoints"]
        if endpoint["provider"]["id"] == "deepinfra"
        for figure in endpoint["figures"]
        if figure["metric"] == "output_tokens_per_s" and figure["statistic"] == "p50"
    }
    assert by_source[ROUTER]["disputed_by"] and by_source[ENDPOINTS]["disputed_by"]
    # no request of the gateway carried a key, and OpenRouter's key reached only OpenRouter
    for hit in world.server.requests(f"{API}/{FLASH_ID}/endpoints"):
        assert "authorization" not in hit.headers

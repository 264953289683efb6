"""What the bundled release carries from the real captures (issue 13) and what its grades mean
(issue 16): OpenRouter's per-endpoint statistics and prices, Artificial Analysis's model-level
medians, models.dev's listings, unreviewed entities, independent corroboration only, and one
endpoint per measurement."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pipeline.warehouse.connection import connect

DEEPSEEK = "deepseek-v4-flash"
# provider -> precision, as OpenRouter's quantization field gives it in the captured response
DEEPSEEK_ENDPOINTS = {
    "digitalocean": "unknown",
    "baidu": "fp8",
    "streamlake": "fp8",
    "gmicloud": "fp8",
    "deepinfra": "fp8",
    "sail-research": "fp4",
}
MEMBER_URL = "https://openrouter.ai/api/v1/models/deepseek/deepseek-v4-flash/endpoints"


@pytest.fixture(scope="module")
def inference(built) -> dict[str, Any]:
    return json.loads((built.exports / "latest" / "inference.json").read_text(encoding="utf-8"))


def _providers(inference: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["id"]: p for p in inference["providers"]}


def test_openrouter_statistics_of_the_six_deepseek_endpoints_with_their_precisions(
    built, inference
):
    """The April poll of the model's endpoints gives the six their percentiles; four are listed
    again in OpenRouter's July website statistics (the same method, newer), whose figures are
    then the current ones the export carries. DeepInfra's fp8 endpoint, absent in July, keeps
    April's."""
    with connect(built, read_only=True) as con:
        polled = con.execute(
            "SELECT o.provider_id, o.precision, o.metric, o.statistic, o.method, "
            "o.window_minutes, o.scope, o.qualifier, s.url FROM core.observations AS o "
            "JOIN core.snapshots AS s USING (snapshot_id) "
            "WHERE o.model_id = ? AND o.source_id = 'openrouter-endpoints'",
            [DEEPSEEK],
        ).fetchall()
    for provider_id, precision in DEEPSEEK_ENDPOINTS.items():
        rows = [r for r in polled if r[0] == provider_id]
        found = {(r[2], r[3]) for r in rows}
        for metric in ("output_tokens_per_s", "ttft_s"):
            assert {(metric, "p50"), (metric, "p90")} <= found, provider_id
        for row in rows:
            assert row[1] == precision
            # traceable: the member's request URL; 30 minutes of live routed traffic
            assert row[4:] == ("percentiles of live routed traffic", 30, "live", None, MEMBER_URL)
    providers = _providers(inference)
    for provider_id, precision in DEEPSEEK_ENDPOINTS.items():
        figures = [
            f
            for f in providers[provider_id]["figures"]
            if f["model"]["id"] == DEEPSEEK and f["variant"]["precision"] == precision
        ]
        found = {(f["metric"], f["statistic"]) for f in figures}
        for metric in ("output_tokens_per_s", "ttft_s"):
            assert {(metric, "p50"), (metric, "p90")} <= found, provider_id
        for figure in figures:
            assert figure["source"] in ("openrouter-endpoints", "openrouter-frontend-stats")
            assert figure["scope"] == "live" and figure["qualifier"] is None
            if figure["statistic"] is not None:  # the website's daily chart has none
                assert figure["method"] == "percentiles of live routed traffic"
                assert figure["window_minutes"] == 30
    current = {f["source"] for f in providers["baidu"]["figures"] if f["model"]["id"] == DEEPSEEK}
    assert current == {"openrouter-frontend-stats"}
    deepinfra = {
        (f["metric"], f["statistic"]): (f["value"], f["source"])
        for f in providers["deepinfra"]["figures"]
        if f["model"]["id"] == DEEPSEEK and f["variant"]["precision"] == "fp8"
    }
    # the capture: throughput p50 26, p90 34 tokens/s; latency p50 798 ms, p90 1289 ms
    april = "openrouter-endpoints"
    assert deepinfra[("output_tokens_per_s", "p50")] == (26.0, april)
    assert deepinfra[("output_tokens_per_s", "p90")] == (34.0, april)
    assert deepinfra[("ttft_s", "p50")] == (0.798, april)
    assert deepinfra[("ttft_s", "p90")] == (1.289, april)


def test_openrouter_prices_are_per_million_tokens_net_of_the_discount(built, inference):
    with connect(built, read_only=True) as con:
        (april,) = con.execute(
            "SELECT price_input_usd_per_mtok, price_output_usd_per_mtok, discount, endpoint_tag, "
            "precision, quantization FROM core.endpoint_offers "
            "WHERE source_id = 'openrouter-endpoints' AND endpoint_id = ?",
            [f"baidu/{DEEPSEEK}/fp8/standard/-~fp8"],
        ).fetchall()
    # the capture lists 0.00000007 and 0.00000014 USD per token, discount 0.5, already applied
    assert april == (0.07, 0.14, 0.5, "baidu/fp8", "fp8", "fp8")
    # the export carries the endpoint's newest listing: OpenRouter's July website, no discount
    (baidu,) = [o for o in _providers(inference)["baidu"]["offers"] if o["model"]["id"] == DEEPSEEK]
    assert baidu["source"] == "openrouter-frontend-stats"
    assert (baidu["price_input_usd_per_mtok"], baidu["price_output_usd_per_mtok"]) == (
        0.0983,
        0.1966,
    )
    assert baidu["discount"] == 0.0 and baidu["listed_as"] == "baidu/fp8"
    assert baidu["variant"]["precision"] == "fp8" and baidu["quantization"] == "fp8"


def test_unreviewed_providers_and_models_are_marked(inference):
    providers = _providers(inference)
    assert providers["sail-research"]["reviewed"] is False
    assert providers["sail-research"]["type"] is None
    assert providers["deepinfra"]["reviewed"] is True
    models = {f["model"]["id"]: f["model"]["reviewed"] for f in providers["deepinfra"]["figures"]}
    assert models[DEEPSEEK] is False and models["gpt-oss-120b"] is True


def test_artificial_analysis_medians_are_model_level_with_attribution(inference):
    models = {m["id"]: m for m in inference["models"]}
    assert len(models) > 200  # every model it measured (the capture has 300 measured)
    (speed,) = [
        f
        for f in models["gpt-oss-120b"]["figures"]
        if f["metric"] == "output_tokens_per_s" and f["reasoning_effort"] == "low"
    ]
    assert speed["value"] == 335.934  # "gpt-oss-120b (low)" in the May 2026 capture
    assert speed["statistic"] == "median" and speed["method"] == "fixed-workload probe"
    assert (speed["prompt_length_tokens"], speed["parallel_queries"]) == (1000, 1)
    assert speed["attribution"] == {
        "publisher": "Artificial Analysis",
        "url": "https://artificialanalysis.ai/",
    }
    # never a provider's figure
    for provider in inference["providers"]:
        assert all(f["source"] != "artificial-analysis-api" for f in provider["figures"])


def test_models_dev_lists_the_platforms_no_own_catalogue_is_read_for(built):
    document = json.loads(
        (built.exports / "latest" / "model_platforms.json").read_text(encoding="utf-8")
    )
    platforms = {p["id"]: p for p in document["platforms"]}
    bedrock = platforms["amazon-bedrock"]["listed_models"]
    assert bedrock["catalogue"] == "models_dev" and bedrock["count"] == 98  # 2026-06-13 capture
    assert [s["source"] for s in bedrock["sources"]] == ["models-dev"]
    assert platforms["amazon-bedrock"]["stated_count"]["text"] == "100+ models"
    cloudflare = platforms["cloudflare-workers-ai"]["listed_models"]
    assert (cloudflare["catalogue"], cloudflare["count"]) == ("own", 75)


def test_model_offers_and_endpoint_stats_answer_the_readme_queries(built):
    with connect(built, read_only=True) as con:
        p90 = con.execute(
            "SELECT provider_id, value FROM mart.endpoint_stats "
            "WHERE model_id = ? AND precision = 'fp8' AND metric = 'ttft_s' "
            "AND statistic = 'p90' AND source_id = 'openrouter-endpoints' ORDER BY provider_id",
            [DEEPSEEK],
        ).fetchall()
        offers = con.execute(
            "SELECT count(*), count(DISTINCT offered_by) FROM mart.model_offers "
            "WHERE source_id = 'models-dev'"
        ).fetchone()
    assert [p for p, _ in p90] == ["baidu", "deepinfra", "gmicloud", "streamlake"]
    assert dict(p90)["deepinfra"] == pytest.approx(1.289)
    # the newest models.dev snapshot: 5,258 offers of 145 provider ids, 144 providers once the
    # identity rules read google-vertex-anthropic as Google Vertex
    assert offers == (5258, 144)


def test_no_circular_corroboration_in_the_bundled_release(inference):
    for provider in inference["providers"]:
        for figure in provider["figures"]:
            assert figure["corroborated_by"] == [], (provider["id"], figure["endpoint"])


def test_one_endpoint_per_measurement(inference, built):
    """The June article's gpt-oss-120b (no effort written) joins the (high) page it cites:
    Groq's 477.6 appears once, and the leaderboard has one winner."""
    text = json.dumps(inference["providers"])
    groq = [
        f
        for f in _providers(inference)["groq"]["figures"]
        if f["model"]["id"] == "gpt-oss-120b"
        and f["metric"] == "output_tokens_per_s"
        and f["method"] == "fixed-workload probe"  # OpenRouter's own, no effort: its own variant
    ]
    assert [(f["endpoint"], f["value"]) for f in groq] == [
        ("groq/gpt-oss-120b/unknown/standard/high", 477.6)
    ]
    assert text.count('"value": 477.6') == 1
    with connect(built, read_only=True) as con:
        winners = con.execute(
            "SELECT count(*) FROM mart.leaderboard WHERE model_id = 'gpt-oss-120b' AND rank = 1 "
            "AND method = 'fixed-workload probe' AND reasoning_effort = 'high' "
            "AND service_tier = 'standard'"
        ).fetchone()[0]
    assert winners == 1


def test_reconstructed_snapshots_say_so_where_they_are_cited(inference):
    snapshots = {s["id"]: s for s in inference["snapshots"]}
    [groq] = [
        f
        for f in _providers(inference)["groq"]["figures"]
        if f["source"] == "aa-llama-3-3-instruct-70b" and f["metric"] == "output_tokens_per_s"
    ]
    snapshot = snapshots[groq["snapshot"]]
    assert snapshot["obtained_by"] == "reconstructed"
    assert snapshot["reconstructed_from"]["title"]
    # graded: its source is T1, the document it was rebuilt from T2
    sources = {s["id"]: s for s in inference["sources"]}
    assert (sources[groq["source"]]["tier"], groq["tier"]) == ("T1", "T2")


def test_every_endpoint_offer_with_its_uptime_and_prices_from_its_own_newest_poll(built, inference):
    """Each endpoint's own newest listing (mart.endpoint_offers): an endpoint the July website
    capture no longer lists keeps April's poll, with its uptime over 5 minutes, 30 minutes and a
    day; one listed in an earlier July capture only keeps that one."""
    with connect(built, read_only=True) as con:
        rows = con.execute(
            "SELECT endpoint_id, snapshot_id, price_input_usd_per_mtok, uptime_last_5m, "
            "uptime_last_30m, uptime_last_1d FROM mart.endpoint_offers ORDER BY ALL"
        ).fetchall()
    offers = sorted(
        (
            o["endpoint"],
            o["snapshot"],
            o["price_input_usd_per_mtok"],
            o["uptime_last_5m"],
            o["uptime_last_30m"],
            o["uptime_last_1d"],
        )
        for p in inference["providers"]
        for o in p["offers"]
    )
    assert len(offers) == len(rows) == len({o[0] for o in offers}) > 900
    for exported, row in zip(offers, rows, strict=True):
        assert exported[:2] == row[:2]
        assert exported[2:] == pytest.approx(row[2:], abs=1e-3)
    newest = "openrouter-frontend-stats/20260718T083231Z-ee7c558b99df.json.gz"
    older = {o[0]: o for o in offers if o[1] != newest}
    april = "openrouter-endpoints/20260424T031746Z-7e2c04d720d9.json"
    assert {e: o[1] for e, o in older.items()} == {
        f"deepinfra/{DEEPSEEK}/fp8/standard/-~fp8": april,
        f"sail-research/{DEEPSEEK}/fp4/standard/-~fp4": april,
        f"nextbit/{DEEPSEEK}/fp8/standard/-~fp8": (
            "openrouter-frontend-stats/20260718T020616Z-727582185d1a.json.gz"
        ),
    }
    polled = [o for o in older.values() if o[1] == april]
    assert all(o[2] is not None and None not in o[3:] for o in polled)
    # the per-model view shows the same listing on the endpoint
    endpoints = {e["id"]: e for m in inference["models"] for e in m["endpoints"]}
    for endpoint, snapshot, *_ in older.values():
        assert endpoints[endpoint]["offer"]["snapshot"] == snapshot


def test_artificial_analysis_listed_prices_reach_the_model_view(built, inference):
    with connect(built, read_only=True) as con:
        listed = con.execute(
            "SELECT count(*) FROM mart.model_figures WHERE scope = 'list_price'"
        ).fetchone()[0]
    prices = [
        (m["id"], f)
        for m in inference["models"]
        for f in m["figures"]
        if f["scope"] == "list_price"
    ]
    assert len(prices) == listed == 1041
    metrics = {f["metric"] for _, f in prices}
    assert metrics == {
        "price_input_usd_per_mtok",
        "price_output_usd_per_mtok",
        "price_blended_usd_per_mtok",
    }
    for _, figure in prices:
        assert figure["method"] == "listed price" and figure["statistic"] is None
        assert figure["attribution"]["publisher"] == "Artificial Analysis"
        assert figure["display"].startswith("$") and "list price" in figure["display"]

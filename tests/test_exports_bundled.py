"""The bundled corpus through the real build: the facts the seeds give must come out."""

import hashlib
import json

import duckdb
import pytest

from pipeline.release.contracts import validate_directory

NINE = {
    "groq": "~321 t/s · Llama 3.3 70B (≈800 t/s on 8B-class)",
    "cerebras": "~2,314 t/s · Llama 3.3 70B (~981 t/s on Kimi K2.6)",
    "together-ai": "~198 t/s · Kimi K2.6 (35–434 t/s across models)",
    "fireworks-ai": "~373 t/s · Kimi K2.6 (up to 740 t/s on gpt-oss-120b)",
    "sambanova": "~691 t/s · gpt-oss-120b (high)",
    "nebius": "~343 t/s · gpt-oss-120b (high)",
    "baseten": "~223 t/s · gpt-oss-120b (high)",
    "deepinfra": "~154 t/s · gpt-oss-120b (high, Turbo)",
    "novita-ai": "~133 t/s · gpt-oss-120b (high)",
}


@pytest.fixture(scope="module")
def latest(built):
    folder = built.exports / "latest"
    return {
        name: json.loads((folder / name).read_text())
        for name in (
            "inference.json",
            "model_platforms.json",
            "inference_catalog.json",
            "datapackage.json",
        )
    }


def test_the_nine_fresh_headlines_reproduce_the_seed(latest):
    providers = {p["id"]: p for p in latest["inference.json"]["providers"]}
    fresh = {
        pid: p["display"]
        for pid, p in providers.items()
        if p["headline"] and not p["headline"]["stale"]
    }
    assert fresh == NINE
    groq = providers["groq"]["headline"]
    assert groq["tier"] == "T1" and groq["scope"] == "live_median"
    assert (
        groq["source"]["url"]
        == "https://artificialanalysis.ai/models/llama-3-3-instruct-70b/providers"
    )
    assert groq["observed_at"] == "2026-11-29T00:00:00Z"
    assert providers["deepinfra"]["headline"]["variant"] == {
        "precision": "unknown",
        "service_tier": "turbo",
        "reasoning_effort": "high",
        "region": None,
    }
    assert providers["nebius"]["country"] == "NL"


def test_other_providers_carry_stale_headlines_and_llmperf_is_stale(latest):
    providers = {p["id"]: p for p in latest["inference.json"]["providers"]}
    for pid in ("anyscale", "lepton-ai", "perplexity", "replicate"):
        headline = providers[pid]["headline"]
        assert headline["stale"] and headline["observed_at"].startswith("2023-12")
        assert providers[pid]["display"].endswith(headline["observed_at"][:10])
    llmperf = [
        f
        for p in providers.values()
        for f in p["live_figures"]
        if f["source"]["id"].startswith("llmperf-")
    ]
    assert llmperf and all(f["stale"] for f in llmperf)
    assert providers["nvidia"]["headline"] is None and len(providers["nvidia"]["claims"]) == 3


def test_record_claims_keep_their_qualifiers_and_sit_beside_live_medians(latest):
    claims = {c["id"]: c for p in latest["inference.json"]["providers"] for c in p["claims"]}
    assert len(claims) == 9  # the eight rows of the seed's table; NVIDIA's row holds two figures
    per_user = claims["nvidia-dgx-b200-llama-4-maverick-per-user"]
    assert (per_user["qualifier"], per_user["value"], per_user["scope"], per_user["precision"]) == (
        "at_least",
        1000.0,
        "peak_per_user",
        "fp8",
    )
    assert "speculative decoding" in per_user["technique"]
    assert per_user["verified_by"] == "Artificial Analysis"
    aggregate = claims["nvidia-dgx-b200-llama-4-maverick-aggregate"]
    assert (aggregate["value"], aggregate["scope"]) == (72000.0, "aggregate")
    assert claims["cerebras-llama-3-1-70b-2100"]["qualifier"] == "approx"
    assert claims["sambanova-deepseek-r1-198"]["precision"] == "fp16"
    tiers = {s["id"]: s["tier"] for s in claims["sambanova-deepseek-r1-198"]["sources"]}
    assert (
        tiers["techradar-sambanova-deepseek-r1"] == "T3"
        and tiers["sambanova-deepseek-r1-671b"] == "T2"
    )
    groq = claims["groq-llama-3-3-70b-276"]
    assert groq["live_median"]["value"] == 321.0 and groq["peak_to_live_ratio"] == 0.86


def test_platforms_and_catalogue(latest):
    platforms = {p["id"]: p for p in latest["model_platforms.json"]["platforms"]}
    assert len(platforms) == 8
    azure = platforms["azure-ai-foundry"]["stated_count"]
    assert azure["text"] == "1,900+ sold directly (11K+ incl. community)"
    assert azure["parsed"] == {"value": 1900.0, "qualifier": "at_least", "context": "sold directly"}
    assert azure["also"] == [
        {"value": 11000.0, "qualifier": "at_least", "context": "incl. community"}
    ]
    assert platforms["vercel-ai-gateway"]["stated_count"]["parsed"] is None
    assert platforms["cloudflare-workers-ai"]["listed_models"]["count"] == 75
    assert platforms["openrouter"]["listed_models"]["count"] == 364
    assert platforms["netlify-ai-gateway"]["stated_count"]["tier"] == "T2"
    catalogue = latest["inference_catalog.json"]
    assert catalogue["total"] == 75 and catalogue["function_calling"] == 14
    assert [(t["name"], t["count"]) for t in catalogue["tasks"]] == [
        ("Text Generation", 38),
        ("Text Embeddings", 7),
        ("Automatic Speech Recognition", 5),
        ("Text-to-Speech", 4),
        ("Text-to-Image", 11),
        ("Image-to-Text", 2),
        ("Translation", 2),
        ("Summarization", 1),
        ("Text Classification", 2),
        ("Object Detection", 1),
        ("Image Classification", 1),
        ("Voice Activity Detection", 1),
    ]
    fast = next(
        m
        for t in catalogue["tasks"]
        for m in t["models"]
        if m["name"] == "llama-3.3-70b-instruct-fp8-fast"
    )
    assert (fast["precision"], fast["service_tier"], fast["function_calling"]) == (
        "fp8",
        "fast",
        True,
    )
    assert fast["model_id"] == "llama-3.3-70b-instruct"


def test_june_table_is_in_the_warehouse(built):
    with duckdb.connect(str(built.database), read_only=True) as con:
        rows = con.execute(
            "SELECT provider_id, model_id, value FROM core.observations "
            "WHERE source_id = 'tokendyno-fastest-llm-inference-2026' AND role = 'row' "
            "ORDER BY value DESC"
        ).fetchall()
    assert len(rows) == 12
    assert rows[0] == ("cerebras", "gpt-oss-120b", 1753.0)
    assert ("groq", "llama-3.3-70b-instruct", 322.0) in rows


def test_exports_validate_and_datapackage_hashes_match(built, latest):
    folder = built.exports / "latest"
    assert all(not found for found in validate_directory(folder).values())
    for resource in latest["datapackage.json"]["resources"]:
        data = (folder / resource["path"]).read_bytes()
        assert resource["hash"] == "sha256:" + hashlib.sha256(data).hexdigest()
        assert resource["bytes"] == len(data)
        assert (folder / resource["jsonSchema"]).is_file()


def test_every_figure_traces_to_a_snapshot_url_tier_and_date(latest):
    cited = {s["id"]: s for s in latest["inference.json"]["snapshots"]}
    for provider in latest["inference.json"]["providers"]:
        for figure in provider["live_figures"] + provider["context"]:
            source = figure["source"]
            assert source["snapshot"] in cited
            assert source["url"].startswith("https://") and source["tier"] in ("T1", "T2", "T3")
            assert source["retrieved_at"]

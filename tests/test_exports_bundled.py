"""The bundled corpus through the real build: the facts the seeds give must come out, every
figure labelled as its source says, and nothing the warehouse holds dropped on the way."""

import hashlib
import json

import pytest

from pipeline.release.contracts import validate_directory
from pipeline.warehouse.connection import connect

# The seed's nine headlines: the model measured and the figure (the fieldbook writes each with ~).
NINE = {
    "groq": ("321 t/s · Llama 3.3 70B", "(≈800 t/s on 8B-class)"),
    "cerebras": ("2,314 t/s · Llama 3.3 70B", "(~981 t/s on Kimi K2.6)"),
    "together-ai": ("198 t/s · Kimi K2.6", "(35–434 t/s across models)"),
    "fireworks-ai": ("373 t/s · Kimi K2.6", "(up to 740 t/s on gpt-oss-120b)"),
    "sambanova": ("691 t/s · gpt-oss-120b (high)", ""),
    "nebius": ("343 t/s · gpt-oss-120b (high)", ""),
    "baseten": ("223 t/s · gpt-oss-120b (high)", ""),
    "deepinfra": ("154 t/s · gpt-oss-120b (high, Turbo)", ""),
    "novita-ai": ("133 t/s · gpt-oss-120b (high)", ""),
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


@pytest.fixture(scope="module")
def providers(latest):
    return {p["id"]: p for p in latest["inference.json"]["providers"]}


def test_the_nine_fresh_headlines_reproduce_the_seed(providers):
    fresh = {pid: p for pid, p in providers.items() if p["headline"] and not p["headline"]["stale"]}
    assert sorted(fresh) == sorted(NINE)
    for pid, (figure, context) in NINE.items():
        display = fresh[pid]["display"]
        assert figure in display and "probe median, 72 h · as of 2026-11-29" in display
        assert display.endswith(context)


def test_headlines_name_their_method_and_are_never_a_bound_or_suspect(providers):
    headlines = {pid: p["headline"] for pid, p in providers.items() if p["headline"]}
    assert len(headlines) >= 9
    for pid, headline in headlines.items():
        assert headline["qualifier"] in (None, "approx") and not headline["suspect"]
        assert headline["statistic"] in ("median", "p50")
        assert providers[pid]["display"].startswith(headline["display"])
        method = headline["rule"].split("; method: ")[1]
        assert method.startswith(headline["method"])


def test_stale_headlines_say_so_and_llmperf_is_stale(providers):
    # with no fresh figure the newest stale one is the headline: LLMPerf's December 2023 runs for
    # two, OpenRouter's July 2026 frontend statistics for Perplexity (newer than its LLMPerf run)
    newest = {
        "anyscale": ("2023-12", "llmperf-anyscale-70b"),
        "lepton-ai": ("2023-12", "llmperf-lepton-7b"),
        "perplexity": ("2026-07-18", "openrouter-frontend-stats"),
    }
    for pid, (when, source) in newest.items():
        headline = providers[pid]["headline"]
        assert headline["stale"] and headline["observed_at"].startswith(when)
        assert headline["source"] == source
        assert headline["rule"].startswith("stale: no fresh figure, the newest one")
        assert providers[pid]["display"].endswith(f"stale, as of {headline['observed_at'][:10]}")
    llmperf = [f for p in providers.values() for f in p["figures"] if f["source"].startswith("llm")]
    assert len(llmperf) == 57 and all(f["stale"] for f in llmperf)
    assert all(f["scope"] == "one_off" and f["method"] == "one-off run" for f in llmperf)
    assert providers["nvidia"]["headline"] is None and len(providers["nvidia"]["claims"]) == 3


def test_a_suspect_figure_is_flagged_shown_and_never_a_headline(latest, providers):
    """Replicate's LLMPerf runs contradict their own fields (0.54 t/s against 150 tokens in a few
    seconds): flagged where they stand, and Replicate has no headline at all."""
    suspect = [f for p in providers.values() for f in p["figures"] if f["suspect"]]
    assert len(suspect) >= 6
    for figure in suspect:
        assert figure["suspect_reason"] and figure["display"].endswith(" · suspect")
    assert providers["replicate"]["headline"] is None
    speeds = [f for f in providers["replicate"]["figures"] if f["metric"] == "output_tokens_per_s"]
    assert speeds and all(f["suspect"] for f in speeds)
    headlines = {(p["headline"]["endpoint"]) for p in providers.values() if p["headline"]}
    assert not headlines & {f["endpoint"] for f in suspect}
    ranked = [
        e for m in latest["inference.json"]["models"] for r in m["rankings"] for e in r["entries"]
    ]
    assert all(e["rank"] is None for e in ranked if e["suspect"])
    assert any(e["suspect"] for e in ranked)


def test_a_bound_is_written_as_one_never_ranked_never_a_headline(latest, providers):
    [bound] = [f for p in providers.values() for f in p["figures"] if f["qualifier"] == "up_to"]
    assert bound["endpoint"] == "fireworks-ai/gpt-oss-120b/unknown/standard/-"
    assert (bound["value"], bound["method"], bound["statistic"]) == (740.0, "compiled", None)
    assert bound["display"].startswith("up to 740 t/s · gpt-oss-120b · compiled figure")
    assert providers["fireworks-ai"]["headline"]["endpoint"] != bound["endpoint"] or (
        providers["fireworks-ai"]["headline"]["qualifier"] != "up_to"
    )
    ranked = {
        e["endpoint"]
        for m in latest["inference.json"]["models"]
        for r in m["rankings"]
        for e in r["entries"]
        if r["method"] == "compiled"
    }
    assert ranked == set()


def test_a_tilde_marks_an_approximate_figure_only(latest):
    def displays(value):
        if isinstance(value, dict):
            if isinstance(value.get("display"), str) and "qualifier" in value:
                yield value["qualifier"], value["display"]
            for child in value.values():
                yield from displays(child)
        elif isinstance(value, list):
            for child in value:
                yield from displays(child)

    found = list(displays(latest["inference.json"]))
    assert len(found) > 300
    for qualifier, display in found:
        assert display.startswith("~") == (qualifier == "approx"), display


def test_record_claims_keep_their_qualifiers_and_meet_their_own_endpoint(providers):
    claims = {c["id"]: (p, c) for p in providers.values() for c in p["claims"]}
    assert len(claims) == 9  # the eight rows of the seed's table; NVIDIA's row holds two figures
    _, per_user = claims["nvidia-dgx-b200-llama-4-maverick-per-user"]
    assert (per_user["qualifier"], per_user["value"], per_user["scope"], per_user["precision"]) == (
        "at_least",
        1000.0,
        "peak_per_user",
        "fp8",
    )
    assert "speculative decoding" in per_user["technique"]
    assert per_user["verified_by"] == "Artificial Analysis"
    _, aggregate = claims["nvidia-dgx-b200-llama-4-maverick-aggregate"]
    assert (aggregate["value"], aggregate["scope"]) == (72000.0, "aggregate")
    assert claims["cerebras-llama-3-1-70b-2100"][1]["qualifier"] == "approx"
    _, sambanova = claims["sambanova-deepseek-r1-198"]
    assert sambanova["precision"] == "fp16"
    tiers = {s["source"]: s["tier"] for s in sambanova["sources"]}
    assert tiers["techradar-sambanova-deepseek-r1"] == "T3"
    assert tiers["sambanova-deepseek-r1-671b"] == "T2"
    _, groq = claims["groq-llama-3-3-70b-276"]
    assert groq["live"]["value"] == 321.0 and groq["peak_to_live_ratio"] == 0.86
    for provider, claim in claims.values():  # a claim meets its own endpoint, never another's
        if claim["live"] is not None:
            assert claim["live"]["endpoint"].startswith(provider["id"] + "/")
            assert claim["live"]["model"]["id"] == claim["model"]["id"]
            assert claim["live"] in provider["figures"]
        else:
            assert claim["peak_to_live_ratio"] is None


def test_platforms_and_catalogue_with_their_listed_prices(latest):
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
    assert platforms["netlify-ai-gateway"]["stated_count"]["tier"] == "T2"
    openrouter = platforms["openrouter"]["listed_models"]
    assert openrouter["count"] == 364
    assert sum(m["price_input_usd_per_mtok"] is not None for m in openrouter["models"]) == 361
    bedrock = platforms["amazon-bedrock"]["listed_models"]  # its listing in models.dev
    assert bedrock["catalogue"] == "models_dev"
    assert sum(m["price_cache_read_usd_per_mtok"] is not None for m in bedrock["models"]) > 0
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
    entries = {m["id"]: m for t in catalogue["tasks"] for m in t["models"]}
    fast = entries["@cf/meta/llama-3.3-70b-instruct-fp8-fast"]
    assert (fast["precision"], fast["service_tier"], fast["function_calling"]) == (
        "fp8",
        "fast",
        True,
    )
    assert fast["model_id"] == "llama-3.3-70b-instruct"
    assert (fast["price_input_usd_per_mtok"], fast["price_output_usd_per_mtok"]) == (0.29, 2.25)


def test_the_catalogue_carries_every_price_the_mart_lists(built, latest):
    with connect(built, read_only=True) as con:
        listed = con.execute(
            "SELECT platform_model_id, price_input_usd_per_mtok, price_output_usd_per_mtok, "
            "price_cached_input_usd_per_mtok, other_prices FROM mart.platform_models "
            "WHERE platform_id = 'cloudflare-workers-ai' AND (price_input_usd_per_mtok IS NOT NULL"
            " OR price_output_usd_per_mtok IS NOT NULL OR price_cached_input_usd_per_mtok IS NOT "
            "NULL OR other_prices IS NOT NULL) ORDER BY ALL"
        ).fetchall()
    entries = {m["id"]: m for t in latest["inference_catalog.json"]["tasks"] for m in t["models"]}
    exported = sorted(
        (
            key,
            m["price_input_usd_per_mtok"],
            m["price_output_usd_per_mtok"],
            m["price_cache_read_usd_per_mtok"],
            m["other_prices"],
        )
        for key, m in entries.items()
        if any(
            m[k] is not None
            for k in (
                "price_input_usd_per_mtok",
                "price_output_usd_per_mtok",
                "price_cache_read_usd_per_mtok",
                "other_prices",
            )
        )
    )
    assert exported == listed and len(listed) == 4


def test_june_table_is_in_the_warehouse(built):
    with connect(built, read_only=True) as con:
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


def _cited(value, found):
    """Every (source, snapshot) pair cited anywhere under `value`."""
    if isinstance(value, dict):
        if isinstance(value.get("source"), str) and isinstance(value.get("snapshot"), str):
            found.add((value["source"], value["snapshot"]))
        for child in value.values():
            _cited(child, found)
    elif isinstance(value, list):
        for child in value:
            _cited(child, found)
    return found


@pytest.mark.parametrize(
    "name", ["inference.json", "model_platforms.json", "inference_catalog.json"]
)
def test_every_citation_traces_to_a_source_and_snapshot_written_once(latest, name):
    document = latest[name]
    sources = {s["id"]: s for s in document["sources"]}
    snapshots = {s["id"]: s for s in document["snapshots"]}
    assert len(sources) == len(document["sources"]) and len(snapshots) == len(document["snapshots"])
    body = {k: v for k, v in document.items() if k not in ("sources", "snapshots")}
    cited = _cited(body, set())
    assert cited and {s for s, _ in cited} == set(sources)
    assert {snapshot for _, snapshot in cited} == set(snapshots)
    for source, snapshot in cited:
        assert snapshots[snapshot]["source"] == source
        assert snapshots[snapshot]["retrieved_at"] and sources[source]["tier"] in ("T1", "T2", "T3")


def test_no_figure_repeats_a_source_object(latest):
    """A source is described once, in `sources`: anywhere else only its id (and, where its terms
    require it, the credit to show) stands."""

    def objects(value, where=""):
        if isinstance(value, dict):
            yield where, value
            for key, child in value.items():
                yield from objects(child, f"{where}/{key}")
        elif isinstance(value, list):
            for child in value:
                yield from objects(child, where)

    for name in ("inference.json", "model_platforms.json", "inference_catalog.json"):
        body = {k: v for k, v in latest[name].items() if k != "sources"}
        for where, item in objects(body):
            assert "terms" not in item, where
            if "publisher" in item and "url" in item:
                assert set(item) == {"publisher", "url"}, where  # an attribution, nothing more

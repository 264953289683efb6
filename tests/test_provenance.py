"""Provenance as it is: a snapshot rebuilt from another document says so wherever it is cited (its
record, core.snapshots, the exports, the changelog, the preview), and an address with a
placeholder to fill in (a template) is published as text, never as a link."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import lxml.html
import pytest
from conftest import BUNDLED_RAW

from pipeline.raw.snapshots import SnapshotStore
from pipeline.release.contracts import EXPORT_FILES, problems
from pipeline.release.exports import address, sanitise
from pipeline.release.preview import render_preview
from pipeline.release.publish import read_release
from pipeline.sources.registry import load_registry
from pipeline.support.settings import Settings
from pipeline.support.text import link_url, url_placeholder
from pipeline.warehouse.connection import connect

CLOUDFLARE_API = "https://api.cloudflare.com/client/v4/accounts/ACCOUNT_ID/ai/models/search"
FIELDBOOK = "agentfieldbook-inference/20261129T000000Z-b37decf324f1.html"
ARTICLE = "tokendyno-fastest-llm-inference-2026/20260628T000000Z-18ce51d60286.html"
# the real files of the corpus (warehouse/raw/README.md): their bytes are as their publishers wrote
CAPTURED = {
    "artificial-analysis-api",
    "azure-foundry-models-direct",
    "models-dev",
    "openrouter",
    "openrouter-endpoints",
    "openrouter-frontend-stats",
    "openrouter-providers",
}


# --- the rule for templates -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "placeholder"),
    [
        (CLOUDFLARE_API, "ACCOUNT_ID"),
        ("https://api.example.com/v1/YOUR_API_KEY/models", "YOUR_API_KEY"),
        ("https://api.example.com/models?account=ACCOUNT_ID&page=2", "ACCOUNT_ID"),
        ("https://example.com/FAQ/index.html", None),  # one upper-case word: a real page
        ("https://example.com/V1_2/models", None),  # a version, not a word
        ("https://example.com/docs/account_id/", None),
        ("https://example.com/ACCOUNT_ID.html", None),  # a file name, not the whole segment
        ("https://ACCOUNT_ID.example.com/", None),  # host names are case-insensitive
        ("https://artificialanalysis.ai/models/gpt-oss-120b/providers", None),
    ],
)
def test_a_template_is_an_upper_case_placeholder_segment(url, placeholder):
    assert url_placeholder(url) == placeholder
    assert link_url(url) == (None if placeholder else url)
    assert address(url) == (
        {"url": None, "url_template": url} if placeholder else {"url": url, "url_template": None}
    )


def test_the_last_line_of_defence_never_writes_a_template_as_a_link():
    document = {"url": CLOUDFLARE_API, "url_template": CLOUDFLARE_API, "website": CLOUDFLARE_API}
    assert sanitise(document) == {"url": None, "url_template": CLOUDFLARE_API, "website": None}
    assert sanitise({"url_template": "javascript:alert(1)"}) == {"url_template": None}


def test_the_only_template_in_the_registry_is_cloudflares_catalogue():
    sources = load_registry(Settings.resolve().registry)
    templates = {s.id: url_placeholder(s.url) for s in sources.values() if url_placeholder(s.url)}
    assert templates == {"cloudflare-workers-ai": "ACCOUNT_ID"}


# --- the bundled records ----------------------------------------------------------------------


def bundled_records() -> Iterator[tuple[str, dict[str, Any]]]:
    for meta in SnapshotStore(BUNDLED_RAW).list():
        yield meta.snapshot_id, json.loads(meta.to_json())


def test_every_rebuilt_page_of_the_corpus_is_reconstructed_and_names_its_document():
    records = dict(bundled_records())
    sources = load_registry(Settings.resolve().registry)
    for snapshot_id, record in records.items():
        source = record["source_id"]
        if source in CAPTURED or source.startswith("llmperf-"):
            assert record["obtained_by"] == "bundled", snapshot_id
            assert "reconstructed_from" not in record, snapshot_id
            continue
        # everything else was rebuilt from the seeds: the pages, claims, platforms, compilations
        assert record["obtained_by"] == "reconstructed", snapshot_id
        document = record["reconstructed_from"]
        assert document["title"], snapshot_id
        if document["snapshot"] is not None:  # the document is itself in the store
            assert document["snapshot"] in records, snapshot_id
            assert document["snapshot"].split("/")[0] in sources
    kinds = {sources[r["source_id"]].kind for r in records.values() if "reconstructed_from" in r}
    assert kinds == {"benchmark", "claim", "compilation", "platform_doc"}
    june = {
        sid: r["reconstructed_from"]["snapshot"]
        for sid, r in records.items()
        if sid.startswith("aa-") and r["retrieved_at"].startswith("2026-06-28")
    }
    november = {
        sid: r["reconstructed_from"]["snapshot"]
        for sid, r in records.items()
        if sid.startswith("aa-") and r["retrieved_at"].startswith("2026-11-29")
    }
    assert len(june) == 4 and set(june.values()) == {ARTICLE}
    assert len(november) == 3 and set(november.values()) == {FIELDBOOK}
    # the seeds themselves are not in the store: named by title (and address, where known)
    assert records[FIELDBOOK]["reconstructed_from"]["snapshot"] is None
    assert records[FIELDBOOK]["reconstructed_from"]["url"] == records[FIELDBOOK]["url"]
    assert records[ARTICLE]["reconstructed_from"] == {
        "title": "Fastest LLM Inference in 2026: Live Tokens/sec Leaderboard "
        "(the seeds' text of the article, seeds/004)",
        "url": None,
        "snapshot": None,
    }


# --- through the build ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def documents(built: Settings) -> dict[str, dict[str, Any]]:
    return read_release(built.exports / "latest")


def citations(value: Any) -> Iterator[dict[str, Any]]:
    """Every citation (a `source` and a `snapshot` id) in a document's rows."""
    if isinstance(value, list):
        for item in value:
            yield from citations(item)
    elif isinstance(value, dict):
        if isinstance(value.get("snapshot"), str) and isinstance(value.get("source"), str):
            yield value
        for child in value.values():
            yield from citations(child)


def rows_of(document: dict[str, Any]) -> dict[str, Any]:
    """A document without its envelope's tables of sources and snapshots."""
    return {k: v for k, v in document.items() if k not in ("sources", "snapshots")}


def test_core_snapshots_carry_how_each_was_obtained(built: Settings):
    with connect(built, read_only=True) as con:
        rows = con.execute(
            "SELECT snapshot_id, obtained_by, reconstructed_from, reconstructed_from_url, "
            "reconstructed_from_snapshot_id FROM core.snapshots ORDER BY snapshot_id"
        ).fetchall()
        latest = dict(
            con.execute(
                "SELECT source_id, reconstructed_from FROM mart.latest_snapshots"
            ).fetchall()
        )
    records = dict(bundled_records())
    assert len(rows) == len(records)
    for snapshot_id, obtained_by, title, url, document_snapshot in rows:
        record = records[snapshot_id]
        assert obtained_by == record["obtained_by"]
        document = record.get("reconstructed_from") or {}
        assert (title, url, document_snapshot) == (
            document.get("title"),
            document.get("url"),
            document.get("snapshot"),
        )
    assert latest["aa-kimi-k2-6"].startswith("AI inference throughput")
    assert latest["llmperf-groq-70b"] is None


def test_every_cited_snapshot_says_how_it_was_obtained(documents):
    records = dict(bundled_records())
    reconstructed = approximate = 0
    for name in EXPORT_FILES:
        document = documents[name]
        listed = {s["id"]: s for s in document["snapshots"]}
        for snapshot_id, entry in listed.items():
            record = records[snapshot_id]
            assert entry["obtained_by"] == record["obtained_by"]
            # the document; a reconstruction's qualifier is carried by every figure read from it
            document_of = dict(record.get("reconstructed_from") or {})
            document_of.pop("qualifier", None)
            assert entry["reconstructed_from"] == (document_of or None)
            reconstructed += entry["obtained_by"] == "reconstructed"
        refs = list(citations(rows_of(document)))
        assert refs, name
        for ref in refs:  # each citation names a snapshot of its source, described once
            assert listed[ref["snapshot"]]["source"] == ref["source"]
            stated = (records[ref["snapshot"]].get("reconstructed_from") or {}).get("qualifier")
            if stated is not None and "qualifier" in ref:
                approximate += 1
                assert ref["qualifier"] == stated, ref
    assert reconstructed >= 20 and approximate > 0
    inference = documents["inference.json"]
    listed = {s["id"]: s for s in inference["snapshots"]}
    groq = next(p for p in inference["providers"] if p["id"] == "groq")
    [page] = [
        f
        for f in groq["figures"]
        if f["source"] == "aa-llama-3-3-instruct-70b" and f["metric"] == "output_tokens_per_s"
    ]
    assert listed[page["snapshot"]]["obtained_by"] == "reconstructed"
    assert listed[page["snapshot"]]["reconstructed_from"]["snapshot"] == FIELDBOOK
    llmperf = [listed[f["snapshot"]] for f in groq["figures"] if f["source"] == "llmperf-groq-70b"]
    assert llmperf and all(s["obtained_by"] == "bundled" for s in llmperf)
    assert all(s["reconstructed_from"] is None for s in llmperf)


def test_the_catalogue_template_is_exported_as_text_never_as_a_link(built: Settings, documents):
    catalog = documents["inference_catalog.json"]
    [source] = catalog["sources"]
    assert (source["url"], source["url_template"]) == (None, CLOUDFLARE_API)
    assert [(s["url"], s["url_template"]) for s in catalog["snapshots"]] == [(None, CLOUDFLARE_API)]
    platforms = documents["model_platforms.json"]
    cloudflare = next(s for s in platforms["sources"] if s["id"] == "cloudflare-workers-ai")
    assert (cloudflare["url"], cloudflare["url_template"]) == (None, CLOUDFLARE_API)
    for name in EXPORT_FILES:
        text = (built.exports / "latest" / name).read_text(encoding="utf-8")
        assert f'"url": "{CLOUDFLARE_API}"' not in text, name
        assert problems(name, documents[name]) == []


def test_a_reconstructed_source_without_its_document_does_not_validate(documents):
    broken = copy.deepcopy(documents["inference.json"])
    broken["snapshots"][0]["reconstructed_from"] = {"title": "<b>x</b>", "url": None}
    found = problems("inference.json", broken)
    assert any("snapshots/0/reconstructed_from" in p for p in found), found


# --- the preview --------------------------------------------------------------------------------


def test_the_preview_marks_every_figure_from_a_reconstructed_snapshot(documents):
    root = lxml.html.document_fromstring(render_preview(documents))
    notes = {li.get("data-note"): " ".join(li.itertext()) for li in root.xpath("//li[@data-note]")}
    assert len(notes) == 4  # the fieldbook, the article, and the seeds' copies of each
    providers = {p["id"]: p for p in documents["inference.json"]["providers"]}
    listed = {s["id"]: s for s in documents["inference.json"]["snapshots"]}
    for bar in root.xpath("//*[@data-bar]"):
        source = listed[providers[bar.get("data-provider")]["headline"]["snapshot"]]
        chips = bar.xpath(".//a[@data-reconstructed]")
        if source["obtained_by"] == "reconstructed":
            assert bar.get("data-reconstructed") == "true"
            (chip,) = chips
            assert chip.text_content().startswith("reconstructed")
            title = source["reconstructed_from"]["title"]
            assert chip.get("title") == f"reconstructed from {title}"
            assert chip.get("href") == f"#reconstructed-{chip.get('data-reconstructed')}"
            assert title in notes[chip.get("data-reconstructed")]
        else:
            assert bar.get("data-reconstructed") == "false" and chips == []
    anyscale = root.xpath("//*[@data-bar][@data-provider='anyscale']")  # an LLMPerf headline
    assert anyscale and anyscale[0].get("data-reconstructed") == "false"
    # the record claims' live medians and the claim pages themselves
    cerebras = root.xpath("//tr[@data-claim='cerebras-gpt-oss-120b-3000']")[0]
    assert len(cerebras.xpath(".//a[@data-reconstructed]")) >= 2


def test_the_preview_shows_the_template_as_text_and_links_it_nowhere(documents):
    html = render_preview(documents)
    root = lxml.html.document_fromstring(html)
    assert not [h for h in root.xpath("//a/@href") if "ACCOUNT_ID" in h]
    row = root.xpath(
        "//tr[@data-snapshot='cloudflare-workers-ai/20261129T000000Z-58e3f7b7ee0b.json']"
    )[0]
    assert row.xpath(".//code[@class='template']/text()") == [CLOUDFLARE_API]
    assert "template, not a link" in row.text_content()
    # even a release that wrote the template as a link (schema 1.1 did) gets no href from it
    old = copy.deepcopy(documents)
    old["inference_catalog.json"]["snapshots"][0] |= {"url": CLOUDFLARE_API, "url_template": None}
    hrefs = lxml.html.document_fromstring(render_preview(old)).xpath("//a/@href")
    assert not [h for h in hrefs if "ACCOUNT_ID" in h]


def test_a_release_with_nothing_reconstructed_has_no_mark_and_no_notes(documents):
    """Hand-made: the same release as if every snapshot had been captured."""
    captured = copy.deepcopy(documents)

    def capture(value: Any) -> None:
        if isinstance(value, list):
            for item in value:
                capture(item)
        elif isinstance(value, dict):
            if value.get("obtained_by") == "reconstructed":
                value["obtained_by"], value["reconstructed_from"] = "fetched", None
            for child in value.values():
                capture(child)

    capture(captured)
    root = lxml.html.document_fromstring(render_preview(captured))
    assert root.xpath("//a[@data-reconstructed]") == [] and root.xpath("//li[@data-note]") == []
    assert {b.get("data-reconstructed") for b in root.xpath("//*[@data-bar]")} == {"false"}
    assert "Reconstructed snapshots" not in root.text_content()

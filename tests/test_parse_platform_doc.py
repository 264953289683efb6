"""Platform documentation pages, read through the reviewed platforms file: each page must still
state the platform's model count and notable families, as a whole phrase and in visible text."""

from __future__ import annotations

import dataclasses

import pytest
from test_parse_support import MB, REVIEWED, SOURCES, bundled, edit, frame, parse, refused

PLATFORMS = {platform.doc_source: platform for platform in REVIEWED.platforms}
BEDROCK = "amazon-bedrock-models"


@pytest.fixture(scope="module")
def bedrock() -> bytes:
    return bundled(BEDROCK).data


@pytest.mark.parametrize("source_id", sorted(PLATFORMS))
def test_every_platform_page_verifies_its_stated_count_and_families(source_id: str) -> None:
    platform = PLATFORMS[source_id]
    rows = frame(source_id, "platform_statements")
    assert rows[["platform_id", "stated_count"]].values.tolist() == [
        [platform.id, platform.stated_count]
    ]
    assert rows["notable"].iloc[0] == " · ".join(platform.notable)


def test_the_eight_platforms_state_the_counts_the_fieldbook_gives() -> None:
    counts = {
        frame(source_id, "platform_statements")["platform_id"].iloc[0]: frame(
            source_id, "platform_statements"
        )["stated_count"].iloc[0]
        for source_id in PLATFORMS
    }
    assert counts == {
        "amazon-bedrock": "100+ models",
        "azure-ai-foundry": "1,900+ sold directly (11K+ incl. community)",
        "google-vertex-model-garden": "200+ models",
        "cloudflare-workers-ai": "~50 open models",
        "netlify-ai-gateway": "Multi-provider",
        "openrouter": "300+ models",
        "vercel-ai-gateway": "Hundreds of models",
        "salesforce-einstein": "Curated + bring-your-own-LLM",
    }
    assert {s.id for s in SOURCES.values() if s.format == "platform_doc"} == set(PLATFORMS)


# Broken variants.


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (b"100+ models", b"120+ models"),
        (b"100+ models", b"2,100+ models"),  # a larger count containing the old one
        (b"100+ models", b"1100+ models"),
        (b"100+ models", b"100+ modelsets"),
        (b"100+ models", b"<script>document.write('100+ models')</script>"),
    ],
)
def test_a_changed_or_hidden_stated_count(bedrock: bytes, old: bytes, new: bytes) -> None:
    refused(
        bundled(BEDROCK),
        edit(bedrock, old, new),
        "platform 'amazon-bedrock': the page no longer states '100+ models'",
        "update pipeline/metadata/platforms.toml after review",
    )


def test_a_notable_family_that_disappeared(bedrock: bytes) -> None:
    refused(
        bundled(BEDROCK),
        edit(bedrock, b"AI21", b"Jurassic"),
        "the page no longer states 'AI21'",
    )


@pytest.mark.parametrize("data", [b"", b" \n", b"<html><head><title>Bedrock</title></head></html>"])
def test_empty_page(data: bytes) -> None:
    refused(bundled(BEDROCK), data, "the page no longer states '100+ models'")


def test_a_page_no_platform_names_is_refused(bedrock: bytes) -> None:
    source = dataclasses.replace(bundled(BEDROCK).source, id="example-new-platform-docs")
    refused(
        dataclasses.replace(bundled(BEDROCK), source=source),
        bedrock,
        "no platform in pipeline/metadata/platforms.toml names this source as its doc_source",
    )


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (b"100+ models", b"<b>100+</b>\n models"),
        (b"100+ models", b"100+&nbsp;models"),
        (b"100+ models", b"100+<!-- x --> models"),
        (b"AI21", b"<span><script>alert(1)</script>AI21</span>"),
        (b"Amazon Nova/Titan", b"Amazon Nova&#47;Titan"),
    ],
)
def test_markup_around_a_statement_does_not_hide_it(bedrock: bytes, old: bytes, new: bytes) -> None:
    rows = parse(bundled(BEDROCK), edit(bedrock, old, new))["platform_statements"]
    assert rows["stated_count"].tolist() == ["100+ models"]


def test_invalid_utf8(bedrock: bytes) -> None:
    refused(bundled(BEDROCK), edit(bedrock, b"Cohere", b"Coh\xe8re"), "not valid utf-8")


@pytest.mark.timeout(30)
def test_a_10_mb_line_changes_nothing(bedrock: bytes) -> None:
    data = edit(bedrock, b"<h2>Notable</h2>", b"<p>" + b"models " * (10 * MB // 7) + b"</p>")
    rows = parse(bundled(BEDROCK), data)["platform_statements"]
    assert rows["stated_count"].tolist() == ["100+ models"]

"""Compilation pages (the fieldbook, the June 2026 leaderboard article): headline and context
figures with their qualifiers and cited pages, live rows, platforms; and broken variants."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from test_parse_support import MB, bundled, edit, frame, parse, refused

FIELDBOOK = "agentfieldbook-inference"
ARTICLE = "tokendyno-fastest-llm-inference-2026"
AA = "https://artificialanalysis.ai/models/{}/providers"
GROQ_ROW = re.compile(rb"<tr>\s*<td>Groq</td>.*?</tr>", re.DOTALL)


@pytest.fixture(scope="module")
def fieldbook() -> bytes:
    return bundled(FIELDBOOK).data


@pytest.fixture(scope="module")
def article() -> bytes:
    return bundled(ARTICLE).data


def none(value: object) -> object:
    return None if pd.isna(value) else value  # type: ignore[arg-type]


def test_fieldbook_gives_nine_headline_rows_each_citing_its_t1_page() -> None:
    rows = frame(FIELDBOOK, "compilation_figures")
    headline = rows[rows["role"] == "headline"]
    got = [
        (r.row_number, r.provider_label, r.figure_text, r.value, r.qualifier, r.model_label)
        for r in headline.itertuples()
    ]
    assert got == [
        (1, "Groq", "~321 t/s", 321.0, "approx", "Llama 3.3 70B"),
        (2, "Cerebras", "~2,314 t/s", 2314.0, "approx", "Llama 3.3 70B"),
        (3, "Together AI", "~198 t/s", 198.0, "approx", "Kimi K2.6"),
        (4, "Fireworks AI", "~373 t/s", 373.0, "approx", "Kimi K2.6"),
        (5, "SambaNova", "~691 t/s", 691.0, "approx", "gpt-oss-120b (high)"),
        (6, "Nebius", "~343 t/s", 343.0, "approx", "gpt-oss-120b (high)"),
        (7, "Baseten", "~223 t/s", 223.0, "approx", "gpt-oss-120b (high)"),
        (8, "DeepInfra", "~154 t/s", 154.0, "approx", "gpt-oss-120b (high, Turbo)"),
        (9, "Novita AI", "~133 t/s", 133.0, "approx", "gpt-oss-120b (high)"),
    ]
    assert headline["cited_url"].tolist() == [
        AA.format("llama-3-3-instruct-70b"),
        *[AA.format("kimi-k2-6")] * 3,
        *[AA.format("gpt-oss-120b")] * 5,
    ]
    assert set(headline["cited_text"]) == {"T1"}
    assert headline.set_index("provider_label").loc["Nebius", "country"] == "NL"
    assert set(headline["provider_type"]) == {"inference_api"}


def test_fieldbook_gives_the_four_context_figures_with_their_qualifiers() -> None:
    rows = frame(FIELDBOOK, "compilation_figures")
    context = rows[rows["role"] == "context"]
    got = [
        (
            r.provider_label,
            r.figure_text,
            none(r.value),
            none(r.low),
            none(r.high),
            r.qualifier,
            none(r.model_label),
            none(r.applies_to),
        )
        for r in context.itertuples()
    ]
    # A figure on a model class or across models is kept with that scope, never pinned to a model.
    assert got == [
        ("Groq", "≈800 t/s on 8B-class", 800.0, None, None, "approx", None, "8B-class"),
        ("Cerebras", "~981 t/s on Kimi K2.6", 981.0, None, None, "approx", "Kimi K2.6", None),
        (
            "Together AI",
            "35–434 t/s across models",
            None,
            35.0,
            434.0,
            "range",
            None,
            "across models",
        ),
        (
            "Fireworks AI",
            "up to 740 t/s on gpt-oss-120b",
            740.0,
            None,
            None,
            "up_to",
            "gpt-oss-120b",
            None,
        ),
    ]
    assert len(rows) == 13


def test_fieldbook_gives_the_eight_platforms_with_counts_as_written() -> None:
    rows = frame(FIELDBOOK, "compilation_platforms").set_index("platform_label")
    assert rows["stated_count"].to_dict() == {
        "Amazon Bedrock": "100+ models",
        "Azure AI Foundry (Microsoft Foundry)": "1,900+ sold directly (11K+ incl. community)",
        "Google Vertex AI Model Garden": "200+ models",
        "Cloudflare Workers AI": "~50 open models",
        "Netlify AI Gateway": "Multi-provider",
        "OpenRouter": "300+ models",
        "Vercel AI Gateway": "Hundreds of models",
        "Salesforce Einstein / Agentforce": "Curated + bring-your-own-LLM",
    }
    bedrock = rows.loc["Amazon Bedrock"]
    assert bedrock["owner"] == "Amazon Web Services"
    assert bedrock["kind_label"] == "Managed cloud catalogue"
    assert bedrock["notable"].split(" · ")[:3] == ["Anthropic Claude", "Meta Llama", "Mistral"]
    assert bedrock["cited_tier"] == "T1"
    assert rows.loc["Netlify AI Gateway", "cited_tier"] == "T2"


def test_article_gives_the_twelve_live_rows_and_verifies_the_record_quotes() -> None:
    rows = frame(ARTICLE, "compilation_figures")
    assert len(rows) == 12 and set(rows["table_name"]) == {"live"}
    first = rows.iloc[0]
    assert (first.provider_label, first.model_label, first.figure_text, first.value) == (
        "Cerebras",
        "gpt-oss-120B",
        "1,753.0",
        1753.0,
    )
    by_row = rows.set_index(["provider_label", "model_label"])["value"]
    assert by_row[("Groq", "Llama 3.3 70B")] == 322.0
    assert by_row[("Azure (FP8)", "Llama 4 Maverick")] == 119.7
    assert set(rows["cited_text"]) == {"Artificial Analysis, 2026"}
    # The peak-records table is not a live table: its rows are reviewed claims, found by quote.
    evidence = frame(ARTICLE, "claim_evidence")
    assert len(evidence) == 10
    assert "cerebras-llama-4-maverick-2522" in set(evidence["claim_id"])
    assert frame(ARTICLE, "compilation_platforms").empty


# Broken variants.


def test_table_missing(fieldbook: bytes) -> None:
    data = re.sub(rb"<table>.*?</table>", b"", fieldbook, flags=re.DOTALL)
    refused(bundled(FIELDBOOK), data, "expected a provider table (name,", "found no tables")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (b"<th>throughput</th>", b"<th>speed</th>"),
        (b"<th>throughput</th><th>src</th>", b"<th>throughput</th><th>link</th>"),
        (b"<th>Kind</th>", b"<th>Type of platform</th>"),
        (b"<th>Notable</th>", b"<th>Families</th>"),
    ],
)
def test_header_renamed_in_either_table(fieldbook: bytes, old: bytes, new: bytes) -> None:
    message = refused(
        bundled(FIELDBOOK),
        edit(fieldbook, old, new),
        "is none of the expected tables (its headers changed?)",
    )
    assert new.split(b"<th>")[-1].removesuffix(b"</th>").decode() in message


def test_live_table_header_renamed(article: bytes) -> None:
    refused(
        bundled(ARTICLE),
        edit(article, b"<th>Provider</th>", b"<th>Vendor</th>"),
        "a table with headers [Model | Vendor | Output tokens/sec | Source]",
    )


@pytest.mark.parametrize("data", [b"", b"   ", b"<html><body></body></html>"])
def test_empty_page(data: bytes) -> None:
    refused(bundled(FIELDBOOK), data, "found no tables")


def test_zero_rows(fieldbook: bytes) -> None:
    data = re.sub(rb"<tbody>.*?</tbody>", b"<tbody></tbody>", fieldbook, count=1, flags=re.DOTALL)
    refused(bundled(FIELDBOOK), data, "the providers table has no rows")


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (b"~321 t/s", b"~fast t/s", "providers table row 1: cannot read the figure '~fast t/s'"),
        (
            b"~321 t/s\xc2\xb7",
            b"~321 t/s",
            "providers table row 1: expected '<figure> · <model>' in '~321 t/s Llama",
        ),
        (b"~373 t/s", b"~373 GB", "providers table row 4: expected a tokens/s figure"),
        (b"~373 t/s", b"~373 ms", "providers table row 4: expected a tokens/s figure"),
    ],
)
def test_non_numeric_cell(fieldbook: bytes, old: bytes, new: bytes, expected: str) -> None:
    refused(bundled(FIELDBOOK), edit(fieldbook, old, new), expected)


def test_non_numeric_live_cell(article: bytes) -> None:
    refused(
        bundled(ARTICLE),
        edit(article, b"<td>692.7</td>", b"<td>fast</td>"),
        "live table row 2: cannot read the figure 'fast'",
    )


@pytest.mark.parametrize(
    ("source", "old", "new"),
    [
        (FIELDBOOK, b"~321 t/s\xc2\xb7 Llama 3.3 70B (", b"~321 t/s\xc2\xb7 ("),
        (ARTICLE, b"<td>gpt-oss-120B</td><td>Groq</td>", b"<td> </td><td>Groq</td>"),
    ],
    ids=["providers", "live"],
)
def test_an_empty_model_cell_is_refused(source: str, old: bytes, new: bytes) -> None:
    data = edit(bundled(source).data, old, new)
    refused(
        bundled(source), data, "compilation_figures failed validation", "model_label: str_length"
    )


def test_duplicate_provider_row(fieldbook: bytes) -> None:
    groq = GROQ_ROW.search(fieldbook).group(0)  # type: ignore[union-attr]
    refused(
        bundled(FIELDBOOK),
        edit(fieldbook, groq, groq + groq),
        "providers table: rows 1 and 2 both give 'Groq'",
    )


def test_duplicate_live_row(article: bytes) -> None:
    row = b"<tr><td>gpt-oss-120B</td><td>Groq</td><td>477.6</td><td>Artificial Analysis, 2026</td>"
    refused(
        bundled(ARTICLE),
        edit(article, row + b"</tr>", (row + b"</tr>") * 2),
        "live table: rows 5 and 6 both give 'Groq / gpt-oss-120B'",
    )


def test_duplicate_platform_row(fieldbook: bytes) -> None:
    row = re.search(rb"<tr>\s*<td><strong>OpenRouter</strong>.*?</tr>", fieldbook, re.DOTALL)
    refused(
        bundled(FIELDBOOK),
        edit(fieldbook, row.group(0), row.group(0) * 2),  # type: ignore[union-attr]
        "duplicate row: platform_label 'OpenRouter' appears more than once",
    )


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (b"~321 t/s", b"~-321 t/s", "a negative number is not a figure"),
        (b"~321 t/s", b"~321,000 t/s", "value: less_than(100000.0) failed for 321000.0"),
        (b"35\xe2\x80\x93434", b"35\xe2\x80\x93434000", "high: less_than(100000.0)"),
        (b"~2,314 t/s", b"~0 t/s", "value: greater_than(0)"),
    ],
)
def test_negative_or_absurd_speed(fieldbook: bytes, old: bytes, new: bytes, expected: str) -> None:
    refused(bundled(FIELDBOOK), edit(fieldbook, old, new), expected)


def test_markup_and_script_in_names_come_out_as_clean_text(fieldbook: bytes) -> None:
    data = edit(fieldbook, b"<td>Groq</td>", b"<td><script>alert(1)</script><b>Groq</b></td>")
    data = edit(
        data,
        b"<strong>OpenRouter</strong>",
        b"<strong><img src=x onerror=alert(1)>Open&shy;Router<style>*{}</style></strong>",
    )
    figures = parse(bundled(FIELDBOOK), data)
    assert figures["compilation_figures"]["provider_label"].iloc[0] == "Groq"
    assert "OpenRouter" in set(figures["compilation_platforms"]["platform_label"])


def test_only_http_links_are_kept_as_cited_pages(fieldbook: bytes) -> None:
    data = edit(
        fieldbook,
        b'<a href="https://artificialanalysis.ai/models/llama-3-3-instruct-70b/providers">',
        b'<a href="javascript:alert(1)">',
    )
    rows = parse(bundled(FIELDBOOK), data)["compilation_figures"]
    assert rows["cited_url"].isna().tolist()[:2] == [True, True]
    assert rows["cited_url"].notna().sum() == 11


def test_invalid_utf8(fieldbook: bytes) -> None:
    refused(
        bundled(FIELDBOOK),
        edit(fieldbook, b"~321 t/s", b"~321 t/s\xff"),
        "not valid utf-8 at byte offset",
    )


def test_a_reviewed_quote_that_disappeared(article: bytes) -> None:
    data = edit(article, b"at 2,522 tokens/sec, verified", b"at 2,600 tokens/sec, verified")
    refused(
        bundled(ARTICLE),
        data,
        "reviewed claim 'cerebras-llama-4-maverick-2522': quote not found in the page",
    )


@pytest.mark.timeout(30)
def test_a_10_mb_cell_gives_a_short_error(fieldbook: bytes) -> None:
    data = edit(fieldbook, b"~321 t/s", b"~" + b"3" * (10 * MB) + b" t/s")
    refused(bundled(FIELDBOOK), data, "providers table row 1: ", "~333")

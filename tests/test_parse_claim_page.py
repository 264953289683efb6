"""Vendor record-claim pages and press articles, read through the reviewed claims file: every
reviewed quote is found, a changed page is refused naming the claim, and a speed figure no claim
covers is reported for a maintainer."""

from __future__ import annotations

import dataclasses

import pytest
from test_parse_support import MB, REVIEWED, SOURCES, bundled, edit, frame, parse, refused

from pipeline.extract import SnapshotInput

CLAIM_PAGES = sorted(s.id for s in SOURCES.values() if s.format == "claim_page")
GROQ = "groq-llama-3-3-70b-benchmark"
GROQ_QUOTE = b"Llama 3.3 70B on the Groq LPU runs at 276 tokens per second"


@pytest.fixture(scope="module")
def groq() -> bytes:
    return bundled(GROQ).data


def unreviewed(data: bytes, snapshot: SnapshotInput | None = None) -> list[tuple[str, str]]:
    rows = parse(snapshot or bundled(GROQ), data)["unreviewed_figures"]
    return list(zip(rows["figure_text"], rows["sentence"], strict=True))


@pytest.mark.parametrize("source_id", CLAIM_PAGES)
def test_every_reviewed_quote_is_found_and_no_figure_is_left_unreviewed(source_id: str) -> None:
    reviewed = {
        (claim.id, evidence.quote)
        for claim in REVIEWED.claims
        for evidence in claim.evidence
        if evidence.source == source_id
    }
    assert reviewed, f"no reviewed claim cites {source_id}"
    found = frame(source_id, "claim_evidence")
    assert set(zip(found["claim_id"], found["quote"], strict=True)) == reviewed
    assert frame(source_id, "unreviewed_figures").empty


def test_the_eight_claim_pages_are_all_covered() -> None:
    assert len(CLAIM_PAGES) == 8
    nvidia = frame("nvidia-blackwell-llama-4-maverick", "claim_evidence")
    assert set(nvidia["claim_id"]) == {
        "nvidia-dgx-b200-llama-4-maverick-per-user",
        "nvidia-dgx-b200-llama-4-maverick-aggregate",
    }


# Broken variants.


def test_a_reviewed_quote_that_disappeared(groq: bytes) -> None:
    data = edit(groq, b"runs at 276 tokens per second", b"runs at 300 tokens per second")
    refused(
        bundled(GROQ),
        data,
        "reviewed claim 'groq-llama-3-3-70b-276': quote not found in the page",
        "(did the page change?)",
        GROQ_QUOTE.decode(),
    )


def test_a_quoted_figure_grown_into_a_larger_number_is_not_the_quote() -> None:
    source = "cerebras-llama-4-maverick-record"
    data = edit(
        bundled(source).data,
        b"2,522 tokens per second per user",
        b"12,522 tokens per second per user",
    )
    refused(bundled(source), data, "reviewed claim 'cerebras-llama-4-maverick-2522'")


@pytest.mark.parametrize(
    "data",
    [b"", b"  \n ", b"<html><body><script>alert('276 tokens per second')</script></body></html>"],
)
def test_empty_page(data: bytes) -> None:
    refused(bundled(GROQ), data, "the page has no visible text")


def test_a_quote_only_in_a_script_is_not_found(groq: bytes) -> None:
    data = edit(groq, GROQ_QUOTE, b"<script>var q = '" + GROQ_QUOTE + b"';</script>")
    refused(bundled(GROQ), data, "reviewed claim 'groq-llama-3-3-70b-276': quote not found")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (b"on the Groq LPU", b"on the <b>Groq</b> LPU"),
        (b"on the Groq LPU", b"on the\n   Groq\tLPU"),
        (b"on the Groq LPU", b"on the Gr<!-- tracking -->oq LPU"),
        (b"on the Groq LPU", b"on the Groq&nbsp;LPU"),
        (b"on the Groq LPU", b"on the Gr\xe2\x80\x8boq LPU"),
    ],
)
def test_markup_inside_a_quote_does_not_hide_it(groq: bytes, old: bytes, new: bytes) -> None:
    frames = parse(bundled(GROQ), edit(groq, old, new))
    assert len(frames["claim_evidence"]) == 2
    assert frames["unreviewed_figures"].empty


def test_a_new_figure_is_reported_with_its_sentence(groq: bytes) -> None:
    added = b"<p>Next year we expect <b>5,000</b> tokens per second on Llama 4.</p></div>"
    assert unreviewed(edit(groq, b"</div>", added)) == [
        ("5,000 tokens per second", "Next year we expect 5,000 tokens per second on Llama 4.")
    ]


def test_markup_and_script_around_a_new_figure_come_out_as_clean_text(groq: bytes) -> None:
    added = (
        b"<p>Also <script>alert(1)</script>over 1,500 t/s <img src=x onerror=alert(1)>per user."
        b"</p><script>var hidden = '9,999 tokens/s';</script><noscript>8,888 TPS</noscript></div>"
    )
    assert unreviewed(edit(groq, b"</div>", added)) == [
        ("over 1,500 t/s per user", "Also over 1,500 t/s per user.")
    ]


def test_a_page_no_claim_covers_lists_all_its_figures(groq: bytes) -> None:
    # A source nobody has reviewed yet: every figure goes to the maintainer's report.
    source = dataclasses.replace(bundled(GROQ).source, id="example-new-vendor-page")
    snapshot = dataclasses.replace(bundled(GROQ), source=source)
    assert [figure for figure, _ in unreviewed(groq, snapshot)] == [
        "276 tokens per second",
        "roughly 275 to 276 tokens per second",
    ]


def test_a_page_with_no_claim_and_no_figure_is_refused(groq: bytes) -> None:
    source = dataclasses.replace(bundled(GROQ).source, id="example-new-vendor-page")
    snapshot = dataclasses.replace(bundled(GROQ), source=source)
    data = b"<html><body><p>We are fast. Very fast.</p></body></html>"
    refused(snapshot, data, "no reviewed claim cites this source", "expected at least one")


def test_invalid_utf8(groq: bytes) -> None:
    refused(bundled(GROQ), edit(groq, b"deterministic", b"determ\xe9nistic"), "not valid utf-8")


@pytest.mark.e2e
@pytest.mark.timeout(30)
def test_a_10_mb_line_of_digits_is_read_in_linear_time(groq: bytes) -> None:
    # A backtracking figure pattern took 25 s on 10,000 digits; 10 MB would never finish.
    data = edit(groq, b"</div>", b"<p>" + b"1234567890" * MB + b" tokens per second</p></div>")
    frames = parse(bundled(GROQ), data)
    assert len(frames["claim_evidence"]) == 2
    assert frames["unreviewed_figures"].empty


@pytest.mark.timeout(30)
def test_twenty_thousand_figures_are_listed_in_linear_time(groq: bytes) -> None:
    # Looking up each figure's sentence by scanning all sentences was quadratic (minutes here).
    figures = b" ".join(b"%d t/s." % n for n in range(1, 20_001))
    rows = unreviewed(edit(groq, b"</div>", b"<p>" + figures + b"</p></div>"))
    assert len(rows) == 20_000
    assert rows[0] == ("1 t/s", "1 t/s.")
    assert all(len(sentence) <= 500 for _, sentence in rows)


@pytest.mark.timeout(30)
def test_a_sentence_of_a_megabyte_is_cut_around_its_figure(groq: bytes) -> None:
    long = b"word " * (MB // 5) + b"at 4,321 tokens per second " + b"word " * 1000 + b"."
    rows = unreviewed(edit(groq, b"</div>", b"<p>" + long + b"</p></div>"))
    assert [figure for figure, _ in rows] == ["4,321 tokens per second"]
    assert len(rows[0][1]) <= 2 * 240 + 30

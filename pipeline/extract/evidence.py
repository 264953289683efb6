"""Checking reviewed quotes against a page, and spotting speed figures nobody has reviewed."""

from __future__ import annotations

import re
import unicodedata

from pipeline.extract.base import SnapshotInput
from pipeline.reviewed import Claim, load_claims

_QUOTES = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "\u00a0": " "})
_SPACES = re.compile(r"\s+")
SPEED_FIGURE = re.compile(
    r"(?:(?:~|≈|>|over |up to |about |roughly |nearly )\s*)?"
    r"\d[\d,]*(?:\.\d+)?(?:\s*(?:to|-|–)\s*\d[\d,]*(?:\.\d+)?)?\s*"
    r"(?:tokens?\s*(?:/|per)\s*(?:s|sec|second)\b|t/s\b|tok/s\b|TPS\b)"
    r"(?:\s*(?:/|per)\s*(?:user|server))?",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def normalise_for_match(text: str) -> str:
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", text).translate(_QUOTES)).strip()


def claims_citing(source_id: str) -> list[tuple[Claim, str]]:
    return [
        (claim, evidence.quote)
        for claim in load_claims()
        for evidence in claim.evidence
        if evidence.source == source_id
    ]


def find_evidence(
    snapshot: SnapshotInput, text: str
) -> tuple[list[dict[str, str]], list[tuple[int, int]]]:
    """Rows for the claim_evidence frame and the spans the quotes cover. A reviewed quote that
    is no longer in the page is an error: the page changed and the claim needs a reviewer."""
    rows: list[dict[str, str]] = []
    spans: list[tuple[int, int]] = []
    for claim, quote in claims_citing(snapshot.source.id):
        matches = list(re.finditer(re.escape(normalise_for_match(quote)), text, re.IGNORECASE))
        if not matches:
            raise snapshot.fail(
                f"reviewed claim {claim.id!r}: quote not found in the page (did the page "
                f"change?): {quote!r}"
            )
        rows.append({"claim_id": claim.id, "quote": quote})
        spans.extend(match.span() for match in matches)
    return rows, spans


def unreviewed_figures(text: str, covered: list[tuple[int, int]]) -> list[dict[str, str]]:
    """Speed figures in the text outside every reviewed quote, with their sentence."""
    rows: list[dict[str, str]] = []
    sentence_starts = [0] + [m.end() for m in _SENTENCE_END.finditer(text)]
    for match in SPEED_FIGURE.finditer(text):
        start, end = match.span()
        if any(lo <= start and end <= hi for lo, hi in covered):
            continue
        begin = max(s for s in sentence_starts if s <= start)
        stop = next((s for s in sentence_starts if s > end), len(text))
        rows.append({"figure_text": match.group(0).strip(), "sentence": text[begin:stop].strip()})
    unique = {(row["figure_text"], row["sentence"]): row for row in rows}
    return list(unique.values())

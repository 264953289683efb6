"""Checking reviewed quotes against a page, and spotting speed figures nobody has reviewed."""

from __future__ import annotations

import bisect
import re
import unicodedata

from pipeline.extract.base import SnapshotInput
from pipeline.sources.reviewed import Claim

_QUOTES = (("’", "'"), ("‘", "'"), ("“", '"'), ("”", '"'), ("\u00a0", " "))
# A number followed by a speed unit. It starts where a number starts (never inside a run of
# digits), its quantifiers are possessive and bounded, so a page of a million digits is read in
# linear time (a backtracking pattern took 25 s on 10,000 digits) and a 40-digit run is no figure.
_NUMBER = r"\d[\d,]{0,39}+(?:\.\d{1,12}+)?"
_FIGURE = re.compile(
    # '\d' first, then the look-behind, lets the engine skip to the next digit quickly.
    rf"\d(?<![\d,.]\d){_NUMBER[2:]}(?:\s*+(?:to|-|–)\s*+{_NUMBER})?\s*+"
    r"(?:tokens?\s*(?:/|per)\s*(?:s|sec|second)\b|t/s\b|tok/s\b|TPS\b)"
    r"(?:\s*(?:/|per)\s*(?:user|server))?",
    re.IGNORECASE,
)
# The qualifier written before a figure, looked for in the few characters before its number.
_QUALIFIER = re.compile(r"(?:~|≈|>|over |up to |about |roughly |nearly )\s*\Z", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?]) ")
_CONTEXT = 240  # at most this many characters of a sentence either side of its figure


def normalise_for_match(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    # str.replace per quote character: str.translate costs seconds on megabytes of non-ASCII.
    for char, plain in _QUOTES:
        if char in text:
            text = text.replace(char, plain)
    return " ".join(text.split())


def phrase_pattern(phrase: str) -> re.Pattern[str]:
    """A case-insensitive pattern for a phrase as a whole: '100+ models' must not be found
    inside '2,100+ models', nor '2,522 tokens' inside '12,522 tokens', nor 'Meta' in 'Metadata'."""
    phrase = normalise_for_match(phrase)
    pattern = re.escape(phrase)
    if phrase[:1].isalnum():
        pattern = r"(?<!\w)(?<!\d[.,])" + pattern
    if phrase[-1:].isalnum():
        pattern += r"(?!\w)(?![.,]\d)"
    return re.compile(pattern, re.IGNORECASE)


class PageText:
    """A page's normalised text, searched for whole phrases. Candidates are found with str.find
    in the lower-cased text and confirmed with `phrase_pattern`: one case-insensitive regex scan
    per phrase cost seconds on a 10 MB page with ten quotes."""

    def __init__(self, text: str) -> None:
        self.text = text
        lowered = text.lower()
        # Positions carry over only if lower-casing kept every character one character.
        self._lowered = lowered if len(lowered) == len(text) else None

    def spans(self, phrase: str) -> list[tuple[int, int]]:
        pattern = phrase_pattern(phrase)
        needle = normalise_for_match(phrase)
        lowered_needle = needle.lower()
        if self._lowered is None or len(lowered_needle) != len(needle) or not needle:
            return [match.span() for match in pattern.finditer(self.text)]
        found = []
        start = self._lowered.find(lowered_needle)
        while start != -1:
            match = pattern.match(self.text, start)
            if match:
                found.append(match.span())
            start = self._lowered.find(lowered_needle, start + 1)
        return found


def claims_citing(claims: tuple[Claim, ...], source_id: str) -> list[tuple[Claim, str]]:
    return [
        (claim, evidence.quote)
        for claim in claims
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
    page = PageText(text)
    for claim, quote in claims_citing(snapshot.reviewed_files().claims, snapshot.source.id):
        matches = page.spans(quote)
        if not matches:
            raise snapshot.fail(
                f"reviewed claim {claim.id!r}: quote not found in the page (did the page "
                f"change?): {quote!r}"
            )
        rows.append({"claim_id": claim.id, "quote": quote})
        spans.extend(matches)
    return rows, spans


def _covered(spans: list[tuple[int, int]]) -> tuple[list[int], list[int]]:
    """Span starts in order, and for each the furthest end of any span starting no later."""
    starts: list[int] = []
    reach: list[int] = []
    for low, high in sorted(spans):
        starts.append(low)
        reach.append(max(high, reach[-1]) if reach else high)
    return starts, reach


def _sentence(text: str, ends: list[int], start: int, end: int) -> str:
    """The sentence around text[start:end] (`ends`: where each sentence after the first
    starts), at most _CONTEXT characters either side."""
    index = bisect.bisect_right(ends, start)
    begin = max(ends[index - 1] if index else 0, start - _CONTEXT)
    index = bisect.bisect_right(ends, end)
    stop = min(ends[index] if index < len(ends) else len(text), end + _CONTEXT)
    return text[begin:stop].strip()


def unreviewed_figures(text: str, covered: list[tuple[int, int]]) -> list[dict[str, str]]:
    """Speed figures in the text outside every reviewed quote, with their sentence."""
    starts, reach = _covered(covered)
    ends = [match.end() for match in _SENTENCE_END.finditer(text)]
    unique: dict[tuple[str, str], dict[str, str]] = {}
    for match in _FIGURE.finditer(text):
        start, end = match.span()
        qualifier = _QUALIFIER.search(text, max(0, start - 16), start)
        if qualifier:
            start = qualifier.start()
        # Covered when some quote starting at or before the figure reaches past its end.
        index = bisect.bisect_right(starts, start) - 1
        if index >= 0 and reach[index] >= end:
            continue
        figure = text[start:end].strip()
        sentence = _sentence(text, ends, start, end)
        unique.setdefault((figure, sentence), {"figure_text": figure, "sentence": sentence})
    return list(unique.values())

"""Vendor record-claim pages and press articles: prose, read through the reviewed claims file."""

from __future__ import annotations

from pipeline.extract.base import Frames, Parser, SnapshotInput, validated
from pipeline.extract.evidence import find_evidence, normalise_for_match, unreviewed_figures
from pipeline.sources.reviewed import CLAIMS_FILE
from pipeline.support.text import page_text


def parse(snapshot: SnapshotInput) -> Frames:
    text = normalise_for_match(page_text(snapshot.text()))
    if not text:
        raise snapshot.fail("the page has no visible text")
    evidence, covered = find_evidence(snapshot, text)
    unreviewed = unreviewed_figures(text, covered)
    if not evidence and not unreviewed:
        raise snapshot.fail(
            "no reviewed claim cites this source and the page states no tokens/s figure: "
            "expected at least one (add the claim to pipeline/metadata/claims.toml)"
        )
    return {
        "claim_evidence": validated("claim_evidence", snapshot, evidence),
        "unreviewed_figures": validated("unreviewed_figures", snapshot, unreviewed),
    }


PARSER = Parser(
    "claim_page", "2", ("claim_evidence", "unreviewed_figures"), parse, reads=(CLAIMS_FILE,)
)

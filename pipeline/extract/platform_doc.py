"""A platform's own documentation page, read through the reviewed platforms file: the stated
model count and each notable family must appear in the page, or the page changed."""

from __future__ import annotations

from pipeline.extract.base import Frames, Parser, SnapshotInput, validated
from pipeline.extract.evidence import PageText, normalise_for_match
from pipeline.sources.reviewed import PLATFORMS_FILE
from pipeline.support.text import page_text


def parse(snapshot: SnapshotInput) -> Frames:
    reviewed = snapshot.reviewed_files()
    platforms = [p for p in reviewed.platforms if p.doc_source == snapshot.source.id]
    if not platforms:
        raise snapshot.fail(
            "no platform in pipeline/metadata/platforms.toml names this source as its doc_source"
        )
    page = PageText(normalise_for_match(page_text(snapshot.text())))
    rows = []
    for platform in platforms:
        for statement in (platform.stated_count, *platform.notable):
            # As a whole phrase: '100+ models' inside '2,100+ models' is a changed count.
            if not page.spans(statement):
                raise snapshot.fail(
                    f"platform {platform.id!r}: the page no longer states {statement!r} "
                    "(update pipeline/metadata/platforms.toml after review)"
                )
        rows.append(
            {
                "platform_id": platform.id,
                "stated_count": platform.stated_count,
                "notable": " · ".join(platform.notable) or None,
            }
        )
    return {"platform_statements": validated("platform_statements", snapshot, rows)}


PARSER = Parser("platform_doc", "2", ("platform_statements",), parse, reads=(PLATFORMS_FILE,))

"""Artificial Analysis provider pages (/models/<slug>/providers): one row per endpoint."""

from __future__ import annotations

import re

import lxml.etree

from pipeline.extract.base import Frames, Parser, SnapshotInput, validated
from pipeline.extract.cells import SECONDS, TOKENS_PER_S, USD, Units, cell_number
from pipeline.extract.html import describe_tables, element_text, find_text_table, parse_html
from pipeline.support.text import clean_text

PROVIDER = ("api provider", "provider")
SPEED = ("output speed",)
TTFT = ("latency", "ttft", "time to first")
PRICE = ("price",)
# The unit each figure column holds: a cell in another unit ('500 ms' as a speed) is an error.
UNITS: dict[str, Units] = {
    "output_tokens_per_s": TOKENS_PER_S,
    "ttft_s": SECONDS,
    "price_blended_usd_per_mtok": USD,
}
_HEADING_SUFFIX = re.compile(r"\s*(?::|-)?\s*API Provider Benchmarking.*$", re.IGNORECASE)


_HEADINGS = (lxml.etree.XPath("//h1"), lxml.etree.XPath("//title"))


def _page_model(document: object, snapshot: SnapshotInput) -> str:
    for xpath in _HEADINGS:
        for element in xpath(document):
            text = element_text(element)
            name = _HEADING_SUFFIX.sub("", text).strip()
            if name and name != text:
                return name
    raise snapshot.fail(
        "expected the page heading '<model> API Provider Benchmarking & Analysis'; not found"
    )


def parse(snapshot: SnapshotInput) -> Frames:
    document = parse_html(snapshot.text())
    # Every column read is required: a renamed TTFT or price header would otherwise leave the
    # column empty without a word.
    table = find_text_table(document, PROVIDER, SPEED, TTFT, PRICE)
    if table is None:
        raise snapshot.fail(
            "expected a table with headers 'API Provider', 'Output Speed (tokens/s)', "
            "'Latency (TTFT)' and 'Blended Price ($/M tokens)'; found " + describe_tables(document)
        )
    model = _page_model(document, snapshot)
    columns = {
        "endpoint_label": table.column(*PROVIDER),
        "output_tokens_per_s": table.column(*SPEED),
        "ttft_s": table.column(*TTFT),
        "price_blended_usd_per_mtok": table.column(*PRICE),
    }
    width = len(table.headers)
    rows = []
    for number, cells in enumerate(table.rows, start=1):
        if len(cells) != width:
            raise snapshot.fail(f"row {number} has {len(cells)} cells, the header has {width}")
        label = clean_text(cells[columns["endpoint_label"]])  # type: ignore[index]
        if not label:
            raise snapshot.fail(f"row {number} has an empty provider cell")
        row: dict[str, object] = {"page_model": model, "endpoint_label": label}
        for field, units in UNITS.items():
            col: int = columns[field]  # type: ignore[assignment]
            row[field] = cell_number(cells[col], snapshot, table.headers[col], number, units)
        rows.append(row)
    if not rows:
        raise snapshot.fail("the provider table has no rows")
    return {"aa_endpoints": validated("aa_endpoints", snapshot, rows)}


PARSER = Parser("aa_provider_page", "5", ("aa_endpoints",), parse)

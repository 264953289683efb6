"""Artificial Analysis provider pages (/models/<slug>/providers): one row per endpoint."""

from __future__ import annotations

import re

import lxml.etree

from pipeline.extract.base import Frames, Parser, SnapshotInput, validated
from pipeline.extract.cells import SECONDS, TOKENS_PER_S, USD, Units, cell_number, plain_numbers
from pipeline.extract.html import (
    TextTable,
    describe_tables,
    element_text,
    find_text_table,
    parse_html,
)
from pipeline.support.text import clean_repeated_text

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


_HEADINGS = ("h1", "title")


def _page_model(document: lxml.etree._Element, snapshot: SnapshotInput) -> str:
    for tag in _HEADINGS:
        # a lazy walk in document order, which stops at the heading (an XPath walked the page)
        for element in document.iter(tag):
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
    rows = _plain_rows(table, columns, model)
    if rows is None:
        rows = _rows_cell_by_cell(table, columns, model, snapshot)
    return {"aa_endpoints": validated("aa_endpoints", snapshot, rows)}


def _plain_rows(
    table: TextTable, columns: dict[str, int | None], model: str
) -> list[dict[str, object]] | None:
    """The rows of a table in the usual shape (every row as wide as the header, a name in every
    row, only plain numbers and blanks in the figure columns), each figure column read at once;
    None for any other, which `_rows_cell_by_cell` reads and names what is wrong in."""
    width = len(table.headers)
    if not table.rows or any(len(cells) != width for cells in table.rows):
        return None
    named: int = columns["endpoint_label"]  # type: ignore[assignment]
    labels = [clean_repeated_text(cells[named]) for cells in table.rows]
    if not all(labels):
        return None
    figures = {}
    for field, units in UNITS.items():
        col: int = columns[field]  # type: ignore[assignment]
        numbers = plain_numbers([cells[col] for cells in table.rows], units)
        if numbers is None:
            return None
        figures[field] = numbers
    speeds, ttfts = figures["output_tokens_per_s"], figures["ttft_s"]
    prices = figures["price_blended_usd_per_mtok"]
    return [
        {
            "page_model": model,
            "endpoint_label": label,
            "output_tokens_per_s": speed,
            "ttft_s": ttft,
            "price_blended_usd_per_mtok": price,
        }
        for label, speed, ttft, price in zip(labels, speeds, ttfts, prices, strict=True)
    ]


def _rows_cell_by_cell(
    table: TextTable, columns: dict[str, int | None], model: str, snapshot: SnapshotInput
) -> list[dict[str, object]]:
    """The rows read one cell at a time, refusing the first that is wrong (by row, then column)."""
    width = len(table.headers)
    rows = []
    for number, cells in enumerate(table.rows, start=1):
        if len(cells) != width:
            raise snapshot.fail(f"row {number} has {len(cells)} cells, the header has {width}")
        label = clean_repeated_text(cells[columns["endpoint_label"]])  # type: ignore[index]
        if not label:
            raise snapshot.fail(f"row {number} has an empty provider cell")
        row: dict[str, object] = {"page_model": model, "endpoint_label": label}
        for field, units in UNITS.items():
            col: int = columns[field]  # type: ignore[assignment]
            row[field] = cell_number(cells[col], snapshot, table.headers[col], number, units)
        rows.append(row)
    if not rows:
        raise snapshot.fail("the provider table has no rows")
    return rows


PARSER = Parser("aa_provider_page", "5", ("aa_endpoints",), parse)

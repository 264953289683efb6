"""Artificial Analysis provider pages (/models/<slug>/providers): one row per endpoint."""

from __future__ import annotations

import re

from pipeline.extract.base import Frames, Parser, SnapshotInput, validated
from pipeline.extract.cells import cell_number
from pipeline.extract.html import Table, describe_tables, element_text, find_table, parse_html

PROVIDER = ("api provider", "provider")
SPEED = ("output speed",)
TTFT = ("latency", "ttft", "time to first")
PRICE = ("price",)
_HEADING_SUFFIX = re.compile(r"\s*(?::|-)?\s*API Provider Benchmarking.*$", re.IGNORECASE)


def _page_model(document: object, snapshot: SnapshotInput) -> str:
    for xpath in ("//h1", "//title"):
        for element in document.xpath(xpath):  # type: ignore[attr-defined]
            name = _HEADING_SUFFIX.sub("", element_text(element)).strip()
            if name and name != element_text(element):
                return name
    raise snapshot.fail(
        "expected the page heading '<model> API Provider Benchmarking & Analysis'; not found"
    )


def _number_at(
    snapshot: SnapshotInput,
    table: Table,
    texts: list[str],
    row: int,
    col: int | None,
    *,
    seconds: bool = False,
) -> float | None:
    if col is None:
        return None
    return cell_number(texts[col], snapshot, table.headers[col], row, seconds=seconds)


def parse(snapshot: SnapshotInput) -> Frames:
    document = parse_html(snapshot.text())
    # Every column read is required: a renamed TTFT or price header would otherwise leave the
    # column empty without a word.
    table = find_table(document, PROVIDER, SPEED, TTFT, PRICE)
    if table is None:
        raise snapshot.fail(
            "expected a table with headers 'API Provider', 'Output Speed (tokens/s)', "
            "'Latency (TTFT)' and 'Blended Price ($/M tokens)'; found " + describe_tables(document)
        )
    model = _page_model(document, snapshot)
    provider_col = table.column(*PROVIDER)
    speed_col = table.column(*SPEED)
    ttft_col = table.column(*TTFT)
    price_col = table.column(*PRICE)
    rows = []
    for number, cells in enumerate(table.rows, start=1):
        if len(cells) != len(table.headers):
            raise snapshot.fail(
                f"row {number} has {len(cells)} cells, the header has {len(table.headers)}"
            )
        texts = [element_text(cell) for cell in cells]
        label = texts[provider_col]  # type: ignore[index]
        if not label:
            raise snapshot.fail(f"row {number} has an empty provider cell")

        rows.append(
            {
                "page_model": model,
                "endpoint_label": label,
                "output_tokens_per_s": _number_at(snapshot, table, texts, number, speed_col),
                "ttft_s": _number_at(snapshot, table, texts, number, ttft_col, seconds=True),
                "price_blended_usd_per_mtok": _number_at(snapshot, table, texts, number, price_col),
            }
        )
    if not rows:
        raise snapshot.fail("the provider table has no rows")
    return {"aa_endpoints": validated("aa_endpoints", snapshot, rows)}


PARSER = Parser("aa_provider_page", "2", ("aa_endpoints",), parse)

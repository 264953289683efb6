"""Microsoft Learn source markdown of the Azure Foundry models sold directly by Azure (the real
file): per-publisher tables, each duplicated in two `::: moniker range` blocks; broken variants."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from test_parse_support import MB, bundled, edit, frame, parse, refused

SOURCE = "azure-foundry-models-direct"
GROK_ROW = re.compile(rb"^\| `grok-4`  \|.*$", re.MULTILINE)


@pytest.fixture(scope="module")
def markdown() -> bytes:
    return bundled(SOURCE).data


def models(data: bytes) -> list[str]:
    return parse(bundled(SOURCE), data)["catalogue_entries"]["platform_model_id"].tolist()


def test_rows_are_deduplicated_across_the_moniker_blocks(markdown: bytes) -> None:
    rows = frame(SOURCE, "catalogue_entries")
    # Each model is listed once per portal block: 48 table rows, 24 models.
    table_rows = [line for line in markdown.splitlines() if line.startswith(b"| ")]
    assert len(table_rows) - 2 * 16 == 48
    assert len(rows) == 24 and rows["platform_model_id"].is_unique
    assert rows.groupby("publisher", sort=False).size().to_dict() == {
        "Black Forest Labs": 3,
        "Cohere": 4,
        "DeepSeek": 4,
        "Meta": 2,
        "Microsoft": 2,
        "Mistral": 2,
        "Moonshot AI": 1,
        "xAI": 6,
    }


def test_each_model_keeps_its_task_and_tool_calling() -> None:
    rows = frame(SOURCE, "catalogue_entries").set_index("platform_model_id")
    llama = rows.loc["Llama-3.3-70B-Instruct"]
    assert (llama["publisher"], llama["task"], llama["function_calling"]) == (
        "Meta",
        "chat-completion",
        False,
    )
    assert rows.loc["grok-4", "function_calling"]
    assert rows.loc["FLUX.2-pro", "task"] == "Image generation"
    assert rows.loc["Cohere-rerank-v4.0-pro", "task"] == "text classification (rerank)"
    assert pd.isna(rows.loc["embed-v-4-0", "function_calling"])  # the page does not say
    assert "Llama-4-Maverick-17B-128E-Instruct-FP8" in rows.index


def test_a_footnote_mark_is_not_part_of_the_model_id() -> None:
    ids = frame(SOURCE, "catalogue_entries")["platform_model_id"]
    assert "model-router" in set(ids)  # written 'model-router<sup>1</sup>'
    assert not any(i.endswith(("1", "2", "3")) and i.startswith("model-router") for i in ids)


# Broken variants.


def test_table_missing(markdown: bytes) -> None:
    data = re.sub(rb"^\|.*\n", b"", markdown, flags=re.MULTILINE)
    refused(bundled(SOURCE), data, "expected tables with headers 'Model | Type | Capabilities")


def test_header_renamed_everywhere(markdown: bytes) -> None:
    data = edit(markdown, b"| Capabilities |", b"| Features |")
    refused(bundled(SOURCE), data, "expected tables with headers", "found none")


def test_header_renamed_in_one_section_loses_no_publisher_silently(markdown: bytes) -> None:
    start = markdown.index(b"## xAI models sold directly by Azure")
    end = markdown.index(b"## Model region availability")
    xai = markdown[start:end].replace(b"| Capabilities |", b"| Features |")
    refused(
        bundled(SOURCE),
        markdown[:start] + xai + markdown[end:],
        "section '## xAI models sold directly by Azure' has no model rows",
        "expected a table with headers 'Model | Type | Capabilities ...' under it",
    )


def test_section_heading_renamed(markdown: bytes) -> None:
    data = edit(markdown, b"sold directly by Azure", b"sold by Azure")
    refused(bundled(SOURCE), data, "under '## <Publisher> models sold directly by Azure'")


@pytest.mark.parametrize("data", [b"", b" \n\n", b"# Foundry Models\n\nNothing here yet.\n"])
def test_empty_page(data: bytes) -> None:
    refused(bundled(SOURCE), data, "expected tables with headers", "found none")


def test_zero_rows(markdown: bytes) -> None:
    data = re.sub(rb"^\| (?!Model|-).*\n", b"", markdown, flags=re.MULTILINE)
    refused(bundled(SOURCE), data, "the model tables have no rows")


def test_a_row_with_a_cell_missing(markdown: bytes) -> None:
    refused(
        bundled(SOURCE),
        edit(markdown, b"| `MAI-DS-R1` | chat-completion <br />", b"| `MAI-DS-R1` <br />"),
        "cells, the table header has 4",
    )


def test_duplicate_row_within_a_table(markdown: bytes) -> None:
    grok = GROK_ROW.search(markdown).group(0)  # type: ignore[union-attr]
    refused(
        bundled(SOURCE),
        edit(markdown, grok, grok + b"\n" + grok),
        "model 'grok-4' appears twice in one table; expected once",
    )


@pytest.mark.parametrize(
    "cell",
    [
        b"<script>alert(1)</script>`grok-4`",
        b"[grok-4](javascript:alert(1))",
        b"**grok-4**<img src=x onerror=alert(1)>",
        b"`grok-4`<sup>4</sup>",
        b"&lt;script&gt;alert(1)&lt;/script&gt;grok-4\xe2\x80\x8b",
    ],
)
def test_markup_and_script_in_a_name_come_out_as_clean_text(markdown: bytes, cell: bytes) -> None:
    grok = GROK_ROW.search(markdown).group(0)  # type: ignore[union-attr]
    ids = models(edit(markdown, grok, grok.replace(b"`grok-4`", cell, 1)))
    assert len(ids) == 24 and "grok-4" in ids


def test_invalid_utf8(markdown: bytes) -> None:
    data = edit(markdown, b"## Meta models", b"## M\xe9ta models")
    refused(bundled(SOURCE), data, "not valid utf-8 at byte offset")


@pytest.mark.timeout(30)
def test_a_10_mb_cell_on_one_line_changes_nothing(markdown: bytes) -> None:
    grok = GROK_ROW.search(markdown).group(0)  # type: ignore[union-attr]
    long = grok.replace(b"- **Input:**", b"- **Input:** " + b"[x](y) " * (10 * MB // 7), 1)
    rows = parse(bundled(SOURCE), edit(markdown, grok, long))["catalogue_entries"]
    assert len(rows) == 24
    assert rows.set_index("platform_model_id").loc["grok-4", "function_calling"]


@pytest.mark.timeout(30)
def test_a_megabyte_of_brackets_in_a_name_is_read_in_linear_time(markdown: bytes) -> None:
    # '\[([^\]]*)\]' retried at each '[' was quadratic: minutes for this cell.
    grok = GROK_ROW.search(markdown).group(0)  # type: ignore[union-attr]
    cell = b"`grok-4`" + b"[" * MB
    ids = models(edit(markdown, grok, grok.replace(b"`grok-4`", cell, 1)))
    assert len(ids) == 25 and any(i.startswith("grok-4[[[") for i in ids)


@pytest.mark.parametrize("renamed", [b"| Kind |", b"| Task |"])
def test_type_column_renamed_is_named_not_a_crash(markdown: bytes, renamed: bytes) -> None:
    refused(
        bundled(SOURCE),
        edit(markdown, b"| Type |", renamed),
        "the table header has no 'Type' column",
        "expected 'Model | Type | Capabilities ...'",
    )

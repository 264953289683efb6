"""Artificial Analysis provider pages: the figures a user reads off them, and broken variants."""

from __future__ import annotations

import dataclasses
import re

import pandas as pd
import pytest
from test_parse_support import BUNDLED, MB, SOURCES, bundled, edit, frame, parse, refused

from pipeline.extract import SnapshotInput
from pipeline.extract import artificial_analysis as aa
from pipeline.extract.html import TextTable, find_text_table, parse_html
from pipeline.raw.snapshots import SnapshotMeta

SOURCE = "aa-llama-3-3-instruct-70b"
GROQ_ROW = re.compile(rb"<tr>\s*<td><img alt=\"Groq logo\".*?</tr>", re.DOTALL)


@pytest.fixture(scope="module")
def page() -> bytes:
    """The November Llama 3.3 70B page: Cerebras 2,314 t/s, then Groq 321 t/s."""
    return bundled(SOURCE).data


def speeds(rows: pd.DataFrame) -> dict[str, float | None]:
    return {
        row.endpoint_label: None if pd.isna(row.output_tokens_per_s) else row.output_tokens_per_s
        for row in rows.itertuples()
    }


def test_june_gpt_oss_page_gives_cerebras_1753_and_the_rest_of_the_live_table() -> None:
    rows = frame("aa-gpt-oss-120b", "aa_endpoints", day="2026-06-28")
    assert speeds(rows) == {
        "Cerebras": 1753.0,
        "SambaNova": 692.7,
        "Fireworks": 690.1,
        "Together AI": 563.5,
        "Groq": 477.6,
        "DeepInfra": 51.7,
    }
    assert set(rows["page_model"]) == {"gpt-oss-120B (high)"}
    assert set(rows["observed_at"]) == {pd.Timestamp("2026-06-28", tz="UTC")}


def test_november_llama_page_gives_groq_321_and_cerebras_2314() -> None:
    rows = frame(SOURCE, "aa_endpoints", day="2026-11-29")
    assert speeds(rows) == {"Cerebras": 2314.0, "Groq": 321.0}
    assert set(rows["page_model"]) == {"Llama 3.3 70B"}
    assert set(rows["source_id"]) == {SOURCE}
    assert set(rows["snapshot_id"]) == {bundled(SOURCE).snapshot_id}


def test_variant_labels_are_kept_as_written_with_or_without_a_figure() -> None:
    june_llama = speeds(frame(SOURCE, "aa_endpoints", day="2026-06-28"))
    assert june_llama["Groq"] == 322.0
    # The article names these two endpoints without a figure: kept, with no speed invented.
    assert june_llama["Azure (FP8)"] is None
    assert june_llama["DeepInfra (Turbo, FP8)"] is None
    assert speeds(frame("aa-llama-4-maverick", "aa_endpoints"))["Azure (FP8)"] == 119.7
    assert speeds(frame("aa-gpt-oss-120b", "aa_endpoints", day="2026-11-29")) == {
        "SambaNova": 691.0,
        "Nebius": 343.0,
        "Baseten": 223.0,
        "DeepInfra (Turbo)": 154.0,
        "Novita": 133.0,
    }
    assert set(frame("aa-deepseek-r1", "aa_endpoints")["page_model"]) == {"DeepSeek R1 (0528)"}


def test_blank_ttft_and_price_cells_are_missing_values_not_zero() -> None:
    rows = frame(SOURCE, "aa_endpoints")
    assert rows["ttft_s"].isna().all()
    assert rows["price_blended_usd_per_mtok"].isna().all()


def test_ttft_in_milliseconds_and_the_blended_price_are_read_by_header(page: bytes) -> None:
    cerebras = edit(
        page,
        b"<td>2,314</td>\n          <td>\xe2\x80\x94</td>\n          <td>\xe2\x80\x94</td>",
        b"<td>2,314</td>\n          <td>240 ms</td>\n          <td>$0.85</td>",
    )
    # Columns found by header text, not position: swapping the last two changes nothing.
    swapped = re.sub(
        rb"(<th>Latency \(TTFT\)</th>)(\s*)(<th>Blended Price \(\$/M tokens\)</th>)",
        rb"\3\2\1",
        cerebras,
    )
    swapped = edit(
        swapped, b"<td>240 ms</td>\n          <td>$0.85</td>", b"<td>$0.85</td><td>240 ms</td>"
    )
    for data in (cerebras, swapped):
        row = parse(bundled(SOURCE), data)["aa_endpoints"].iloc[0]
        assert row.endpoint_label == "Cerebras"
        assert row.ttft_s == pytest.approx(0.24)
        assert row.price_blended_usd_per_mtok == pytest.approx(0.85)


@pytest.mark.parametrize(
    ("cells", "expected"),
    [
        # A figure in another column's unit is refused, not read as the column's unit.
        ((b"500 ms", b"\xe2\x80\x94", b"\xe2\x80\x94"), "column 'Output Speed (tokens/s)', row 1"),
        ((b"$2,314", b"\xe2\x80\x94", b"\xe2\x80\x94"), "column 'Output Speed (tokens/s)', row 1"),
        ((b"2,314", b"$0.85", b"\xe2\x80\x94"), "column 'Latency (TTFT)', row 1"),
        ((b"2,314", b"12 models", b"\xe2\x80\x94"), "column 'Latency (TTFT)', row 1"),
        ((b"2,314", b"\xe2\x80\x94", b"240 ms"), "column 'Blended Price ($/M tokens)', row 1"),
        ((b"2,314", b"\xe2\x80\x94", b"5 t/s"), "column 'Blended Price ($/M tokens)', row 1"),
    ],
    ids=["speed-ms", "speed-usd", "ttft-usd", "ttft-models", "price-ms", "price-tps"],
)
def test_a_cell_in_the_wrong_unit_is_refused(
    page: bytes, cells: tuple[bytes, bytes, bytes], expected: str
) -> None:
    row = b"<td>2,314</td>\n          <td>\xe2\x80\x94</td>\n          <td>\xe2\x80\x94</td>"
    speed, ttft, price = cells
    data = edit(page, row, b"<td>%s</td><td>%s</td><td>%s</td>" % (speed, ttft, price))
    refused(bundled(SOURCE), data, expected, "expected a ")


def test_units_of_the_column_are_read(page: bytes) -> None:
    row = b"<td>2,314</td>\n          <td>\xe2\x80\x94</td>\n          <td>\xe2\x80\x94</td>"
    data = edit(page, row, b"<td>2,314 t/s</td><td>0.5 s</td><td>0.85 USD</td>")
    cerebras = parse(bundled(SOURCE), data)["aa_endpoints"].iloc[0]
    assert (cerebras.output_tokens_per_s, cerebras.ttft_s) == (2314.0, 0.5)
    assert cerebras.price_blended_usd_per_mtok == pytest.approx(0.85)


# Broken variants: each gives an ExtractError naming the snapshot and what was expected.


def test_table_missing(page: bytes) -> None:
    data = edit(edit(page, b"<table>", b"<div>"), b"</table>", b"</div>")
    refused(bundled(SOURCE), data, "expected a table with headers 'API Provider'", "no tables")


@pytest.mark.parametrize(
    ("header", "renamed"),
    [
        (b"Output Speed (tokens/s)", b"Throughput (tokens/s)"),
        (b"API Provider", b"Host"),
        (b"Latency (TTFT)", b"Wait"),
        (b"Blended Price", b"Cost"),
    ],
)
def test_header_renamed(page: bytes, header: bytes, renamed: bytes) -> None:
    message = refused(
        bundled(SOURCE), edit(page, header, renamed), "expected a table with headers", "found ["
    )
    assert renamed.decode() in message  # what the page has now, for the maintainer


@pytest.mark.parametrize("data", [b"", b" \n\t ", b"<!-- nothing here -->", b"\x00\x00"])
def test_empty_page(data: bytes) -> None:
    refused(bundled(SOURCE), data, "expected a table with headers", "found no tables")


def test_zero_rows(page: bytes) -> None:
    data = re.sub(rb"<tbody>.*</tbody>", b"<tbody></tbody>", page, flags=re.DOTALL)
    refused(bundled(SOURCE), data, "the provider table has no rows")


@pytest.mark.parametrize("cell", [b"fast", b"n/a t/s?", b"1e9", b"nan", b"12..5", b"~2,314"])
def test_non_numeric_cell(page: bytes, cell: bytes) -> None:
    refused(
        bundled(SOURCE),
        edit(page, b"<td>2,314</td>", b"<td>" + cell + b"</td>"),
        "column 'Output Speed (tokens/s)', row 1",
    )


def test_duplicate_row(page: bytes) -> None:
    groq = GROQ_ROW.search(page).group(0)  # type: ignore[union-attr]
    refused(
        bundled(SOURCE),
        edit(page, groq, groq + groq),
        "aa_endpoints failed validation",
        "duplicate row: endpoint_label 'Groq' appears more than once",
    )


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        (b"-5", "a negative number is not a figure"),
        (b"0", "greater_than(0)"),
        (b"100,000", "less_than(100000"),
        (b"2,314,000", "less_than(100000"),
    ],
)
def test_negative_zero_or_absurd_speed(page: bytes, cell: bytes, expected: str) -> None:
    refused(bundled(SOURCE), edit(page, b"<td>2,314</td>", b"<td>" + cell + b"</td>"), expected)


@pytest.mark.parametrize(
    "name",
    [
        b"<script>alert(1)</script>Groq",
        b"&lt;script&gt;alert(1)&lt;/script&gt;Groq",
        b"<b onclick='steal()'>Gr</b>oq<style>b{}</style>",
        b"Gr\xe2\x80\x8boq\x00<img src=x onerror=alert(1)>",
        b"<iframe src='javascript:alert(1)'></iframe>Groq<noscript>no</noscript>",
    ],
)
def test_markup_and_script_in_a_name_come_out_as_clean_text(page: bytes, name: bytes) -> None:
    data = edit(page, b"<span>Groq</span>", b"<span>" + name + b"</span>")
    rows = parse(bundled(SOURCE), data)["aa_endpoints"]
    assert rows["endpoint_label"].tolist() == ["Cerebras", "Groq"]
    assert rows.set_index("endpoint_label").loc["Groq", "output_tokens_per_s"] == 321.0


def test_markup_in_the_heading_leaves_the_page_model_clean(page: bytes) -> None:
    data = edit(page, b"<h1>Llama 3.3 70B", b"<h1><script>alert(1)</script><em>Llama 3.3 70B</em>")
    assert set(parse(bundled(SOURCE), data)["aa_endpoints"]["page_model"]) == {"Llama 3.3 70B"}


def test_a_markup_only_name_is_an_empty_cell(page: bytes) -> None:
    data = edit(page, b"<span>Groq</span>", b"<span><script>Groq</script></span>")
    refused(bundled(SOURCE), data, "row 2 has an empty provider cell")


def test_invalid_utf8(page: bytes) -> None:
    refused(
        bundled(SOURCE),
        edit(page, b"<span>Groq</span>", b"<span>Gr\xc3\x28oq</span>"),
        "not valid utf-8 at byte offset",
    )


def test_page_heading_missing(page: bytes) -> None:
    data = re.sub(rb"<h1>.*?</h1>", b"", page)
    data = re.sub(rb"<title>.*?</title>", b"<title>Artificial Analysis</title>", data)
    refused(bundled(SOURCE), data, "expected the page heading")


def test_a_row_with_a_cell_missing(page: bytes) -> None:
    refused(
        bundled(SOURCE),
        edit(page, b"<td>321</td>", b""),
        "row 2 has 3 cells, the header has 4",
    )


def test_an_xhtml_page_with_an_xml_declaration_is_read(page: bytes) -> None:
    data = b'<?xml version="1.0" encoding="utf-8"?>\n' + page
    assert speeds(parse(bundled(SOURCE), data)["aa_endpoints"]) == {
        "Cerebras": 2314.0,
        "Groq": 321.0,
    }


def test_a_table_nested_thousands_deep_is_an_error_not_a_crash(page: bytes) -> None:
    data = edit(page, b"<table>", b"<div>" * 5_000 + b"<table>")
    refused(bundled(SOURCE), data, "expected a table with headers")


@pytest.mark.timeout(30)
def test_a_10_mb_cell_gives_a_short_error(page: bytes) -> None:
    data = edit(page, b"<td>321</td>", b"<td>" + b"3" * (10 * MB) + b"</td>")
    refused(bundled(SOURCE), data, "non-numeric cell '333", "row 2")


# Each figure column read at once (cells.plain_numbers) against the cell-by-cell reading ----------


def _table(snapshot: SnapshotInput, data: bytes | None = None) -> tuple[TextTable, dict, str]:
    if data is not None:
        snapshot = dataclasses.replace(snapshot, data=data)
    document = parse_html(snapshot.text())
    table = find_text_table(document, aa.PROVIDER, aa.SPEED, aa.TTFT, aa.PRICE)
    assert table is not None
    columns = {
        "endpoint_label": table.column(*aa.PROVIDER),
        **{field: table.column(*patterns) for field, patterns in _FIGURES.items()},
    }
    return table, columns, aa._page_model(document, snapshot)


_FIGURES = {
    "output_tokens_per_s": aa.SPEED,
    "ttft_s": aa.TTFT,
    "price_blended_usd_per_mtok": aa.PRICE,
}
_PAGES = [meta for meta in BUNDLED.list() if SOURCES[meta.source_id].format == "aa_provider_page"]


@pytest.mark.parametrize("meta", _PAGES, ids=lambda meta: meta.snapshot_id)
def test_every_bundled_page_reads_the_same_a_column_at_a_time_as_a_cell_at_a_time(
    meta: SnapshotMeta,
) -> None:
    snapshot = SnapshotInput(meta, SOURCES[meta.source_id], BUNDLED.read(meta))
    table, columns, model = _table(snapshot)
    at_once = aa._plain_rows(table, columns, model)
    assert at_once is not None  # the real pages take the quick path
    assert at_once == aa._rows_cell_by_cell(table, columns, model, snapshot)


@pytest.mark.parametrize(
    ("cell", "expected", "at_once"),
    [
        (b"<td>1,753.0</td>", 1753.0, True),  # a thousands separator: still read at once
        (b"<td>\xe2\x80\x94</td>", None, True),  # an em dash as written: blank
        (b"<td><b>321</b></td>", 321.0, True),  # markup inside: the table's text is plain
        (b"<td>N/A</td>", None, False),  # blank once casefolded: cell by cell
        (b"<td>321 t/s</td>", 321.0, False),  # a unit of the column: cell by cell
    ],
)
def test_a_cell_that_is_not_a_plain_number_is_read_as_before(
    page: bytes, cell: bytes, expected: float | None, at_once: bool
) -> None:
    data = edit(page, b"<td>321</td>", cell)
    table, columns, model = _table(bundled(SOURCE), data)
    cell_by_cell = aa._rows_cell_by_cell(table, columns, model, bundled(SOURCE))
    assert aa._plain_rows(table, columns, model) == (cell_by_cell if at_once else None)
    assert speeds(parse(bundled(SOURCE), data)["aa_endpoints"])["Groq"] == expected

"""Compilation pages: tables of provider figures (each citing a T1 page) and of platforms."""

from __future__ import annotations

import re
from typing import Any

from pipeline.extract.base import Frames, Parser, SnapshotInput, validated
from pipeline.extract.cells import TOKENS_PER_S, require_unit
from pipeline.extract.evidence import find_evidence, normalise_for_match
from pipeline.extract.html import Table, describe_tables, element_text, parse_html, tables
from pipeline.sources.reviewed import CLAIMS_FILE
from pipeline.support.figures import Figure, FigureError, parse_figure
from pipeline.support.text import page_text, safe_url, shorten

_CONTEXT = re.compile(r"\(([^()]*\b(?:t/s|tok/s|tokens)\b[^()]*)\)\s*$", re.IGNORECASE)
_MODEL_CLASS = re.compile(r"^\d+(?:\.\d+)?[BM]-class$", re.IGNORECASE)
_TIER = re.compile(r"\bT([123])\b")


def _shown(text: str) -> str:
    return repr(shorten(text, 60))


def _figure(snapshot: SnapshotInput, text: str, where: str, *, context: bool = False) -> Figure:
    """A tokens/s figure; words after it ('on 8B-class') only where the table puts them (the
    context figure in parentheses). '~373 GB' is not a speed, whatever its number."""
    try:
        figure = parse_figure(text)
    except FigureError as error:
        raise snapshot.fail(f"{where}: cannot read the figure {_shown(text)}: {error}") from None
    require_unit(snapshot, figure.unit, TOKENS_PER_S, where, text)
    if figure.context and (not context or not figure.unit):
        raise snapshot.fail(f"{where}: expected a tokens/s figure, got {_shown(text)}")
    return figure


def _figure_columns(figure: Figure) -> dict[str, Any]:
    return {
        "figure_text": figure.text,
        "value": figure.value,
        "low": figure.low,
        "high": figure.high,
        "qualifier": figure.qualifier,
    }


def _cited(cell: Any) -> tuple[str | None, str | None]:
    """The link in a source cell whose text names a tier ('↗ T1'), and that tier."""
    for link in cell.iter("a"):
        match = _TIER.search(element_text(link))
        if match:
            return safe_url(link.get("href")), f"T{match.group(1)}"
    return None, None


def _columns(table: Table, names: tuple[str, ...]) -> dict[str, int]:
    """Index of each named column. `_kind` only dispatches a table that has them all."""
    return {name: index for name in names if (index := table.column(name)) is not None}


def _provider_rows(snapshot: SnapshotInput, table: Table) -> list[dict[str, Any]]:
    cols = _columns(table, PROVIDER_COLUMNS)
    rows: list[dict[str, Any]] = []
    for number, cells in enumerate(table.rows, start=1):
        if len(cells) != len(table.headers):
            raise snapshot.fail(
                f"providers table row {number}: {len(cells)} cells, expected {len(table.headers)}"
            )
        text = [element_text(cell) for cell in cells]
        where = f"providers table row {number}"
        provider = text[cols["name"]]
        headline_text, _, rest = text[cols["throughput"]].partition("·")
        if not rest:
            raise snapshot.fail(
                f"{where}: expected '<figure> · <model>' in {_shown(text[cols['throughput']])}"
            )
        cited_url, cited_tier = _cited(cells[cols["src"]])
        base = {
            "table_name": "providers",
            "row_number": number,
            "provider_label": provider,
            "cited_url": cited_url,
            "cited_text": cited_tier,
            "country": text[cols["country"]],
            "provider_type": text[cols["type"]],
        }
        model = rest.strip()
        context = _CONTEXT.search(model)
        if context:
            model = model[: context.start()].strip()
        headline = _figure(snapshot, headline_text.strip(), where)
        rows.append(
            base
            | _figure_columns(headline)
            | {"role": "headline", "model_label": model, "applies_to": None}
        )
        if context:
            figure = _figure(snapshot, context.group(1).strip(), where, context=True)
            target = figure.context or ""
            on_model = target.casefold().startswith("on ")
            target = target[3:].strip() if on_model else target
            is_model = on_model and not _MODEL_CLASS.match(target)
            rows.append(
                base
                | _figure_columns(figure)
                | {
                    "role": "context",
                    "model_label": target if is_model else None,
                    "applies_to": None if is_model else (target or None),
                }
            )
    headlines = [row for row in rows if row["role"] == "headline"]
    _unique_rows(snapshot, "providers table", [(row["provider_label"],) for row in headlines])
    return rows


def _live_rows(snapshot: SnapshotInput, table: Table) -> list[dict[str, Any]]:
    cols = _columns(table, LIVE_COLUMNS)
    figure_col = next(i for i, h in enumerate(table.headers) if "tokens/s" in h.casefold())
    rows = []
    for number, cells in enumerate(table.rows, start=1):
        text = [element_text(cell) for cell in cells]
        if len(text) != len(table.headers):
            raise snapshot.fail(
                f"live table row {number}: {len(text)} cells, expected {len(table.headers)}"
            )
        figure = _figure(snapshot, text[figure_col], f"live table row {number}")
        rows.append(
            _figure_columns(figure)
            | {
                "table_name": "live",
                "row_number": number,
                "role": "row",
                "provider_label": text[cols["provider"]],
                "model_label": text[cols["model"]],
                "applies_to": None,
                "cited_url": None,
                "cited_text": text[cols["source"]],
                "country": None,
                "provider_type": None,
            }
        )
    keys = [(row["provider_label"], row["model_label"]) for row in rows]
    _unique_rows(snapshot, "live table", keys)
    return rows


def _platform_rows(snapshot: SnapshotInput, table: Table) -> list[dict[str, Any]]:
    cols = _columns(table, PLATFORM_COLUMNS)
    rows = []
    for number, cells in enumerate(table.rows, start=1):
        if len(cells) != len(table.headers):
            raise snapshot.fail(
                f"platforms table row {number}: {len(cells)} cells, expected {len(table.headers)}"
            )
        name_cell = cells[cols["platform"]]
        strong = name_cell.find(".//strong")
        label = element_text(strong) if strong is not None else element_text(name_cell)
        owner = element_text(name_cell)[len(label) :].strip() if strong is not None else None
        cited_url, cited_tier = _cited(cells[cols["src"]])
        notable = element_text(cells[cols["notable"]])
        rows.append(
            {
                "platform_label": label,
                "owner": owner or None,
                "kind_label": element_text(cells[cols["kind"]]),
                "stated_count": element_text(cells[cols["models"]]),
                "notable": " · ".join(p.strip() for p in notable.split("·")) if notable else None,
                "cited_url": cited_url,
                "cited_tier": cited_tier,
            }
        )
    return rows


PROVIDER_COLUMNS = ("name", "country", "type", "throughput", "src")
PLATFORM_COLUMNS = ("platform", "kind", "models", "notable", "src")
LIVE_COLUMNS = ("model", "provider", "source")  # and a 'tokens/s' header
EXPECTED = (
    "a provider table (name, country, type, throughput, src), a live table (Model, Provider, "
    "Output tokens/sec, Source) or a platform table (Platform, Kind, Models, Notable, src)"
)


def _has(table: Table, columns: tuple[str, ...]) -> bool:
    return all(table.column(name) is not None for name in columns)


def _kind(table: Table) -> str | None:
    """Which table this is. Every column a reader uses is required, so a renamed header makes
    the table unknown (an error) rather than a column silently empty."""
    speed = [h.casefold() for h in table.headers if "tokens/s" in h.casefold()]
    if _has(table, PROVIDER_COLUMNS):
        return "providers"
    if _has(table, PLATFORM_COLUMNS):
        return "platforms"
    if speed and any("peak" in k for k in speed):
        return "records"  # record claims: read through the reviewed claims file, not here
    if speed and _has(table, LIVE_COLUMNS):
        return "live"
    return None


def _unique_rows(snapshot: SnapshotInput, where: str, keys: list[tuple[str, ...]]) -> None:
    seen: dict[tuple[str, ...], int] = {}
    for number, key in enumerate(keys, start=1):
        if key in seen:
            raise snapshot.fail(
                f"{where}: rows {seen[key]} and {number} both give {' / '.join(key)!r}; "
                "expected one row each"
            )
        seen[key] = number


def parse(snapshot: SnapshotInput) -> Frames:
    text = snapshot.text()
    document = parse_html(text)
    figures: list[dict[str, Any]] = []
    platforms: list[dict[str, Any]] = []
    found = list(tables(document))
    if not found:
        raise snapshot.fail(f"expected {EXPECTED}; found no tables")
    for table in found:
        kind = _kind(table)
        if kind is None:
            raise snapshot.fail(
                f"a table with headers [{' | '.join(table.headers)}] is none of the expected "
                f"tables (its headers changed?): expected {EXPECTED}"
            )
        if kind != "records" and not table.rows:
            raise snapshot.fail(f"the {kind} table has no rows")
        if kind == "providers":
            figures += _provider_rows(snapshot, table)
        elif kind == "live":
            figures += _live_rows(snapshot, table)
        elif kind == "platforms":
            platforms += _platform_rows(snapshot, table)
    if not figures and not platforms:
        raise snapshot.fail(f"expected {EXPECTED}; found " + describe_tables(document))
    evidence, _spans = find_evidence(snapshot, normalise_for_match(page_text(text)))
    return {
        "compilation_figures": validated("compilation_figures", snapshot, figures),
        "compilation_platforms": validated("compilation_platforms", snapshot, platforms),
        "claim_evidence": validated("claim_evidence", snapshot, evidence),
    }


PARSER = Parser(
    "compilation_page",
    "3",
    ("compilation_figures", "compilation_platforms", "claim_evidence"),
    parse,
    reads=(CLAIMS_FILE,),
)

"""Compilation pages: tables of provider figures (each citing a T1 page) and of platforms."""

from __future__ import annotations

import re
from typing import Any

from pipeline.extract.base import Frames, Parser, SnapshotInput, validated
from pipeline.extract.evidence import find_evidence, normalise_for_match
from pipeline.extract.html import Table, describe_tables, element_text, parse_html, tables
from pipeline.normalise.numbers import Figure, FigureError, parse_figure
from pipeline.reviewed import file_digest
from pipeline.settings import METADATA_DIR
from pipeline.text import page_text, safe_url

_CONTEXT = re.compile(r"\(([^()]*\b(?:t/s|tok/s|tokens)\b[^()]*)\)\s*$", re.IGNORECASE)
_MODEL_CLASS = re.compile(r"^\d+(?:\.\d+)?[BM]-class$", re.IGNORECASE)
_TIER = re.compile(r"\bT([123])\b")


def _figure(snapshot: SnapshotInput, text: str, where: str) -> Figure:
    try:
        figure = parse_figure(text)
    except FigureError as error:
        raise snapshot.fail(f"{where}: cannot read the figure {text!r}: {error}") from None
    if figure.unit not in (None, "t/s"):
        raise snapshot.fail(f"{where}: expected a tokens/s figure, got {text!r}")
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


def _provider_rows(snapshot: SnapshotInput, table: Table) -> list[dict[str, Any]]:
    cols = {name: table.column(name) for name in ("name", "country", "type", "throughput", "src")}
    rows: list[dict[str, Any]] = []
    for number, cells in enumerate(table.rows, start=1):
        if len(cells) != len(table.headers):
            raise snapshot.fail(
                f"providers table row {number}: {len(cells)} cells, expected {len(table.headers)}"
            )
        text = [element_text(cell) for cell in cells]
        where = f"providers table row {number}"
        provider = text[cols["name"]]  # type: ignore[index]
        headline_text, _, rest = text[cols["throughput"]].partition("·")  # type: ignore[index]
        if not rest:
            raise snapshot.fail(
                f"{where}: expected '<figure> · <model>' in {text[cols['throughput']]!r}"
            )  # type: ignore[index]
        cited_url, cited_tier = (
            _cited(cells[cols["src"]]) if cols["src"] is not None else (None, None)
        )
        base = {
            "table_name": "providers",
            "row_number": number,
            "provider_label": provider,
            "cited_url": cited_url,
            "cited_text": cited_tier,
            "country": text[cols["country"]] if cols["country"] is not None else None,
            "provider_type": text[cols["type"]] if cols["type"] is not None else None,
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
            figure = _figure(snapshot, context.group(1).strip(), where)
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
    return rows


def _live_rows(snapshot: SnapshotInput, table: Table) -> list[dict[str, Any]]:
    model_col = table.column("model")
    provider_col = table.column("provider")
    figure_col = next(i for i, h in enumerate(table.headers) if "tokens/s" in h.casefold())
    source_col = table.column("source")
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
                "provider_label": text[provider_col],  # type: ignore[index]
                "model_label": text[model_col],  # type: ignore[index]
                "applies_to": None,
                "cited_url": None,
                "cited_text": text[source_col] if source_col is not None else None,
                "country": None,
                "provider_type": None,
            }
        )
    return rows


def _platform_rows(snapshot: SnapshotInput, table: Table) -> list[dict[str, Any]]:
    cols = {name: table.column(name) for name in ("platform", "kind", "models", "notable", "src")}
    rows = []
    for number, cells in enumerate(table.rows, start=1):
        if len(cells) != len(table.headers):
            raise snapshot.fail(
                f"platforms table row {number}: {len(cells)} cells, expected {len(table.headers)}"
            )
        name_cell = cells[cols["platform"]]  # type: ignore[index]
        strong = name_cell.find(".//strong")
        label = element_text(strong) if strong is not None else element_text(name_cell)
        owner = element_text(name_cell)[len(label) :].strip() if strong is not None else None
        cited_url, cited_tier = (
            _cited(cells[cols["src"]]) if cols["src"] is not None else (None, None)
        )
        notable = element_text(cells[cols["notable"]]) if cols["notable"] is not None else None
        rows.append(
            {
                "platform_label": label,
                "owner": owner or None,
                "kind_label": element_text(cells[cols["kind"]]),  # type: ignore[index]
                "stated_count": element_text(cells[cols["models"]]),  # type: ignore[index]
                "notable": " · ".join(p.strip() for p in notable.split("·")) if notable else None,
                "cited_url": cited_url,
                "cited_tier": cited_tier,
            }
        )
    return rows


def _kind(table: Table) -> str | None:
    keys = [h.casefold() for h in table.headers]
    if table.column("throughput") is not None and table.column("name") is not None:
        return "providers"
    if table.column("platform") is not None and table.column("models") is not None:
        return "platforms"
    speed = [k for k in keys if "tokens/s" in k]
    if (
        speed
        and not any("peak" in k for k in speed)
        and table.column("provider") is not None
        and table.column("model") is not None
    ):
        return "live"
    return None


def parse(snapshot: SnapshotInput) -> Frames:
    text = snapshot.text()
    document = parse_html(text)
    figures: list[dict[str, Any]] = []
    platforms: list[dict[str, Any]] = []
    for table in tables(document):
        kind = _kind(table)
        if kind == "providers":
            figures += _provider_rows(snapshot, table)
        elif kind == "live":
            figures += _live_rows(snapshot, table)
        elif kind == "platforms":
            platforms += _platform_rows(snapshot, table)
    if not figures and not platforms:
        raise snapshot.fail(
            "expected a provider table (name, throughput), a live table (Model, Provider, "
            "Output tokens/sec) or a platform table (Platform, Models); found "
            + describe_tables(document)
        )
    evidence, _spans = find_evidence(snapshot, normalise_for_match(page_text(text)))
    return {
        "compilation_figures": validated("compilation_figures", snapshot, figures),
        "compilation_platforms": validated("compilation_platforms", snapshot, platforms),
        "claim_evidence": validated("claim_evidence", snapshot, evidence),
    }


PARSER = Parser(
    "compilation_page",
    f"1+claims.{file_digest(METADATA_DIR / 'claims.toml')}",
    ("compilation_figures", "compilation_platforms", "claim_evidence"),
    parse,
)

"""The preview page of a release: one self-contained `index.html` built from its three exports.

The exports are parsed into the contract's models, turned into the view models below, and laid
out by templates/preview.html.jinja. The page holds no script and loads nothing: the CSS is
inline, and a Content-Security-Policy forbids every fetch, so even a name that slipped past
escaping could neither run nor call out. The template autoescapes every value, links go out only
when `safe_url` accepts them (absolute http/https), and the same documents always give the same
bytes. Nothing here recomputes a rule of the warehouse: the live medians beside a claim are the
ones the export carries (mart.peak_vs_live's).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pipeline.release.contract import CATALOG, INFERENCE, PLATFORMS, Release, read_release
from pipeline.release.contract.common import LICENSE_URL, ModelRef, SourceRef
from pipeline.release.contract.inference import Claim, Figure, Provider
from pipeline.release.contract.platforms import ListedModels
from pipeline.release.contracts import EXPORT_FILES
from pipeline.release.formatting import day, speed, variant_label
from pipeline.release.templates import render_html_template
from pipeline.support.text import safe_url

TIER_TITLES = {
    "T1": "T1: independent measurement, or a platform documenting itself",
    "T2": "T2: a vendor's claim about its own product, or a compilation citing T1 sources",
    "T3": "T3: press repeating a claim",
}
PROVIDER_TYPES = {
    "inference_api": "inference API",
    "cloud": "cloud",
    "hardware_vendor": "hardware vendor",
}
SCOPES = {
    "peak_per_user": ("per user", "peak, one stream, best case"),
    "aggregate": ("aggregate", "all users of a server together"),
}
UNITS = {"tokens/s": "t/s"}
CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
    "form-action 'none'"
)
_RELATIVE_HREF = re.compile(r"^[A-Za-z0-9._~/#%-]+$")


# --- view models -----------------------------------------------------------------------------


@dataclass(frozen=True)
class SourceView:
    """'[T1] Artificial Analysis, 2026-11-29', the publisher linked to the snapshot's URL."""

    tier: str
    publisher: str
    id: str
    url: str
    day: str | None
    role: str | None = None


@dataclass(frozen=True)
class FigureView:
    """'1,753 t/s' over 'Cerebras · high · [T1] · 2026-06-28 · stale'."""

    speed: str
    who: str
    variant: str
    tier: str
    day: str | None
    stale: bool


@dataclass(frozen=True)
class Bar:
    provider_id: str
    provider_name: str
    provider_type: str
    model_id: str
    model: str  # with its variant
    tier: str
    stale: bool
    rule: str
    display: str
    width: str  # percent of the fastest, two decimals
    source: SourceView


@dataclass(frozen=True)
class ClaimRow:
    id: str
    provider: str
    model: str
    figure: str
    detail: str  # hardware, year
    notes: str | None
    sources: list[SourceView]
    scope: str
    scope_label: str
    scope_title: str
    precision: str | None
    technique: str | None
    verified_by: str | None
    live: FigureView | None
    ratio: str | None
    fastest: FigureView | None


@dataclass(frozen=True)
class ListedView:
    count: str
    url: str | None
    source_id: str
    scope: str | None


@dataclass(frozen=True)
class PlatformRow:
    id: str
    name: str
    owner: str
    kind: str
    stated: str
    stated_tier: str
    listed: ListedView | None
    notable: list[str]
    sources: list[SourceView]


@dataclass(frozen=True)
class CatalogEntry:
    id: str
    name: str
    function_calling: bool


@dataclass(frozen=True)
class TaskView:
    name: str
    count: int
    models: list[CatalogEntry]


@dataclass(frozen=True)
class CatalogueView:
    where: str
    total: int
    function_calling: int
    sources: list[SourceView]
    tasks: list[TaskView]


@dataclass(frozen=True)
class SnapshotRow:
    id: str
    day: str | None
    obtained_by: str
    url: str | None  # shown only when safe_url accepts it


@dataclass(frozen=True)
class Page:
    version: str
    data_day: str | None
    as_of_day: str | None
    license: str
    license_url: str | None
    changelog_href: str | None
    versions: list[str]  # more than one when the exports disagree
    files: tuple[str, ...]
    tier_titles: dict[str, str]
    csp: str
    bars: list[Bar]
    without_headline: list[str]
    claims: list[ClaimRow]
    platforms: list[PlatformRow]
    catalogue: CatalogueView
    snapshots: list[SnapshotRow]


# --- building them ---------------------------------------------------------------------------


def _model_name(model: ModelRef | None) -> str:
    return model.name if model else ""


def _model_with_variant(figure: Figure) -> str:
    name, label = _model_name(figure.model), variant_label(figure.variant)
    return f"{name} ({label})" if label else name


def _source(ref: SourceRef, with_day: bool = True) -> SourceView:
    return SourceView(
        tier=ref.tier,
        publisher=ref.publisher,
        id=ref.id,
        url=ref.url,
        day=day(ref.retrieved_at) if with_day else None,
        role=getattr(ref, "role", None),
    )


def _figure(figure: Figure | None, who: str = "") -> FigureView | None:
    if figure is None or figure.value is None:
        return None
    return FigureView(
        speed=speed(figure.value),
        who=who,
        variant=variant_label(figure.variant),
        tier=figure.tier,
        day=day(figure.observed_at),
        stale=figure.stale,
    )


def _bar_value(figure: Figure) -> float:
    """The length of a headline's bar: its value, else the bound it gives."""
    return next((v for v in (figure.value, figure.high, figure.low) if v is not None), 0.0)


def _bars(providers: list[Provider]) -> list[Bar]:
    headlines = {p.id: p.headline for p in providers if p.headline}
    top = max((_bar_value(h) for h in headlines.values()), default=0.0)
    bars = []
    for provider in providers:
        headline = headlines.get(provider.id)
        if headline is None:
            continue
        value = _bar_value(headline)
        width = 100.0 * value / top if value and top else 0.0
        bars.append(
            Bar(
                provider_id=provider.id,
                provider_name=provider.name,
                provider_type=PROVIDER_TYPES[provider.type] if provider.type else "unreviewed",
                model_id=headline.model.id if headline.model else "",
                model=_model_with_variant(headline),
                tier=headline.tier,
                stale=headline.stale,
                rule=headline.rule,
                display=headline.display,
                width=f"{width:.2f}",
                source=_source(headline.source),
            )
        )
    # fastest first; the tie-breakers keep the order stable
    return sorted(
        bars,
        key=lambda b: (-_bar_value(headlines[b.provider_id]), b.provider_name, b.provider_id),
    )


def _claim_row(provider: Provider, claim: Claim) -> ClaimRow:
    label, title = SCOPES[claim.scope]
    fastest = claim.fastest_live_median
    return ClaimRow(
        id=claim.id,
        provider=provider.name,
        model=_model_name(claim.model),
        figure=f"{claim.figure} {UNITS.get(claim.unit, claim.unit)}".strip(),
        detail=", ".join(part for part in (claim.hardware, claim.claimed) if part),
        notes=claim.notes,
        sources=[_source(ref, with_day=False) for ref in claim.sources],
        scope=claim.scope,
        scope_label=label,
        scope_title=title,
        precision=claim.precision.upper() if claim.precision != "unknown" else None,
        technique=claim.technique,
        verified_by=claim.verified_by,
        live=_figure(claim.live_median),
        ratio=f"{claim.peak_to_live_ratio:.2f}×" if claim.peak_to_live_ratio is not None else None,
        fastest=_figure(fastest, fastest.provider.name) if fastest else None,
    )


def _listed(listed: ListedModels | None) -> ListedView | None:
    if listed is None:
        return None
    first = listed.sources[0]
    return ListedView(
        count=f"{listed.count:,}", url=first.url, source_id=first.id, scope=listed.scope
    )


def _catalogue(release: Release) -> CatalogueView:
    catalog = release.catalog
    return CatalogueView(
        where=catalog.platform.name if catalog.platform else "the edge catalogue",
        total=catalog.total,
        function_calling=catalog.function_calling,
        sources=[_source(ref) for ref in catalog.sources],
        tasks=[
            TaskView(
                name=task.name,
                count=task.count,
                models=[CatalogEntry(m.id, m.name, m.function_calling) for m in task.models],
            )
            for task in catalog.tasks
        ],
    )


def _snapshots(release: Release) -> list[SnapshotRow]:
    found: dict[str, SnapshotRow] = {}
    for export in (release.inference, release.platforms, release.catalog):
        for snapshot in export.snapshots:
            found.setdefault(
                snapshot.id,
                SnapshotRow(
                    id=snapshot.id,
                    day=day(snapshot.retrieved_at),
                    obtained_by=snapshot.obtained_by,
                    url=snapshot.url if safe_url(snapshot.url) else None,
                ),
            )
    return [found[key] for key in sorted(found)]


def _local_href(href: str) -> str | None:
    """A relative link (no scheme, so never `javascript:`) or an absolute http(s) URL."""
    if _RELATIVE_HREF.match(href) and not href.startswith("//"):
        return href
    return safe_url(href)


def page_view(release: Release, changelog_href: str = "CHANGELOG.md") -> Page:
    inference = release.inference
    providers = inference.providers
    return Page(
        version=inference.version,
        data_day=day(inference.data_date),
        as_of_day=day(inference.as_of),
        license=inference.license,
        license_url=LICENSE_URL,
        changelog_href=_local_href(changelog_href) if isinstance(changelog_href, str) else None,
        versions=sorted({inference.version, release.platforms.version, release.catalog.version}),
        files=EXPORT_FILES,
        tier_titles=TIER_TITLES,
        csp=CSP,
        bars=_bars(providers),
        without_headline=[p.name for p in providers if p.headline is None],
        claims=[_claim_row(p, c) for p in providers for c in p.claims],
        platforms=[
            PlatformRow(
                id=p.id,
                name=p.name,
                owner=p.owner,
                kind=p.kind_label,
                stated=p.stated_count.text,
                stated_tier=p.stated_count.tier,
                listed=_listed(p.listed_models),
                notable=p.notable,
                sources=[_source(ref, with_day=False) for ref in p.sources],
            )
            for p in release.platforms.platforms
        ],
        catalogue=_catalogue(release),
        snapshots=_snapshots(release),
    )


def render_preview(documents: Mapping[str, Any], *, changelog_href: str = "CHANGELOG.md") -> str:
    """The preview page of a release from its exports, keyed by file name
    (`inference.json`, `model_platforms.json`, `inference_catalog.json`). Raises ValueError
    when one is missing or does not fit the contract."""
    missing = [name for name in EXPORT_FILES if not isinstance(documents.get(name), Mapping)]
    if missing:
        raise ValueError(f"render_preview needs every export; missing: {', '.join(missing)}")
    release = read_release({name: documents[name] for name in (INFERENCE, PLATFORMS, CATALOG)})
    return render_html_template("preview.html.jinja", page=page_view(release, changelog_href))

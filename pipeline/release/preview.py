"""The preview page of a release: one self-contained `index.html` built from its three exports.

The exports are parsed into the contract's models, turned into the view models below, and laid
out by templates/preview.html.jinja. The page holds no script and loads nothing: the CSS is
inline, and a Content-Security-Policy forbids every fetch, so even a name that slipped past
escaping could neither run nor call out. The template autoescapes every value, links go out only
when `link_url` accepts them (absolute http/https, no template with a placeholder to fill in), and
the same documents always give the same bytes. A figure read from a reconstructed snapshot is
tagged "reconstructed", with a footnote naming the document it was rebuilt from. Nothing here
recomputes a rule of the warehouse: the live figure beside a claim is the one the export carries
(mart.peak_vs_live's: the claim's own endpoint). The page credits every source whose terms
require it (`sources[].terms.attribution`) beside the data it shows.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pipeline.release.contract import CATALOG, INFERENCE, PLATFORMS, Release, read_release
from pipeline.release.contract.common import (
    COMPILATION_LICENSE_URL,
    Citation,
    ModelRef,
    ReconstructedFrom,
    Snapshot,
    Source,
)
from pipeline.release.contract.inference import Claim, Figure, Provider
from pipeline.release.contract.platforms import ListedModels
from pipeline.release.contracts import EXPORT_FILES
from pipeline.release.formatting import day, speed, variant_label
from pipeline.release.preview_history import FigureHistory
from pipeline.release.preview_models import Credit, ModelSections, model_sections
from pipeline.release.templates import render_html_template
from pipeline.support.text import link_url

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


SPEED_METRIC = "output_tokens_per_s"


@dataclass(frozen=True)
class Note:
    """A footnote naming a document reconstructed snapshots were rebuilt from."""

    number: int
    title: str
    url: str | None
    snapshot: str | None
    snapshots: list[str]  # the cited snapshots rebuilt from it


@dataclass(frozen=True)
class SourceView:
    """'[T1] Artificial Analysis, 2026-11-29', the publisher linked to the snapshot's URL, and
    'reconstructed' with its footnote when the snapshot was rebuilt from another document."""

    tier: str
    publisher: str
    id: str
    url: str | None
    day: str | None
    role: str | None = None
    reconstructed: Note | None = None


@dataclass(frozen=True)
class FigureView:
    """'1,753 t/s' over 'Cerebras · high · [T1] · 2026-06-28 · stale · reconstructed'."""

    speed: str
    who: str
    variant: str
    tier: str
    day: str | None
    stale: bool
    reconstructed: Note | None = None


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


@dataclass(frozen=True)
class ListedView:
    count: str
    url: str | None
    source_id: str
    scope: str | None
    reconstructed: Note | None
    catalogue: str | None  # "models.dev" for a listing in a catalogue of catalogues


@dataclass(frozen=True)
class ModelFigureView:
    """One model's median output speed across providers (a model-level figure)."""

    model: str
    reviewed: bool
    value: str
    ttft: str | None
    day: str | None
    stale: bool
    prompt_tokens: int | None


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
    url: str | None  # a link only when link_url accepts it
    url_template: str | None  # shown as text: a placeholder to fill in, no address
    reconstructed: Note | None


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
    notes: list[Note]  # the documents reconstructed snapshots were rebuilt from
    # what the sources whose data the page shows require to be credited, beside it
    credits: list[Credit]
    model_figures: list[ModelFigureView]
    model_figures_total: int
    by_model: ModelSections  # each model's endpoints, ranked and drawn


# --- building them ---------------------------------------------------------------------------


def _model_name(model: ModelRef | None) -> str:
    return model.name if model else ""


def _model_with_variant(figure: Figure) -> str:
    name, label = _model_name(figure.model), variant_label(figure.variant)
    return f"{name} ({label})" if label else name


class _Notes:
    """One footnote per document that cited snapshots were rebuilt from, numbered in title
    order; every reference to a snapshot finds its note by the snapshot's id."""

    def __init__(self, release: Release) -> None:
        documents: dict[ReconstructedFrom, list[str]] = {}
        for snapshot_id, snapshot in sorted(_cited(release).items()):
            if snapshot.reconstructed_from is not None:
                documents.setdefault(snapshot.reconstructed_from, []).append(snapshot_id)
        ordered = sorted(documents, key=lambda d: (d.title, d.url or "", d.snapshot or ""))
        self.notes = [
            Note(n, d.title, link_url(d.url), d.snapshot, documents[d])
            for n, d in enumerate(ordered, start=1)
        ]
        self.by_snapshot = {sid: note for note in self.notes for sid in note.snapshots}

    def of(self, snapshot_id: str) -> Note | None:
        return self.by_snapshot.get(snapshot_id)


def _cited(release: Release) -> dict[str, Snapshot]:
    """Every snapshot the three exports cite, by id."""
    found: dict[str, Snapshot] = {}
    for export in (release.inference, release.platforms, release.catalog):
        for snapshot in export.snapshots:
            found.setdefault(snapshot.id, snapshot)
    return found


def _sources(release: Release) -> dict[str, Source]:
    """Every source the three exports cite, by id."""
    found: dict[str, Source] = {}
    for export in (release.inference, release.platforms, release.catalog):
        for source in export.sources:
            found.setdefault(source.id, source)
    return found


class _Cited:
    """What a citation (a source and snapshot id) shows: the source's publisher and tier, the
    snapshot's address and day, and the footnote of a reconstructed snapshot."""

    def __init__(self, release: Release, notes: _Notes) -> None:
        self.sources = _sources(release)
        self.snapshots = _cited(release)
        self.notes = notes

    def view(self, ref: Citation, with_day: bool = True, tier: str | None = None) -> SourceView:
        source, snapshot = self.sources.get(ref.source), self.snapshots.get(ref.snapshot)
        return SourceView(
            tier=tier or (source.tier if source else "T3"),
            publisher=source.publisher if source else ref.source,
            id=ref.source,
            url=link_url(snapshot.url) if snapshot else None,
            day=day(snapshot.retrieved_at) if snapshot and with_day else None,
            role=getattr(ref, "role", None),
            reconstructed=self.notes.of(ref.snapshot),
        )


def _figure(figure: Figure | None, notes: _Notes, who: str = "") -> FigureView | None:
    if figure is None or figure.value is None:
        return None
    return FigureView(
        speed=speed(figure.value),
        who=who,
        variant=variant_label(figure.variant),
        tier=figure.tier,
        day=day(figure.observed_at),
        stale=figure.stale,
        reconstructed=notes.of(figure.snapshot),
    )


def _bar_value(figure: Figure) -> float:
    """The length of a headline's bar: its value, else the bound it gives."""
    return next((v for v in (figure.value, figure.high, figure.low) if v is not None), 0.0)


def _bars(providers: list[Provider], cited: _Cited) -> list[Bar]:
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
                display=provider.display or "",
                width=f"{width:.2f}",
                source=cited.view(headline, tier=headline.tier),
            )
        )
    # fastest first; the tie-breakers keep the order stable
    return sorted(
        bars,
        key=lambda b: (-_bar_value(headlines[b.provider_id]), b.provider_name, b.provider_id),
    )


def _claim_row(provider: Provider, claim: Claim, cited: _Cited) -> ClaimRow:
    label, title = SCOPES[claim.scope]
    return ClaimRow(
        id=claim.id,
        provider=provider.name,
        model=_model_name(claim.model),
        figure=f"{claim.figure} {UNITS.get(claim.unit, claim.unit)}".strip(),
        detail=", ".join(part for part in (claim.hardware, claim.claimed) if part),
        notes=claim.notes,
        sources=[cited.view(ref, with_day=False, tier=ref.tier) for ref in claim.sources],
        scope=claim.scope,
        scope_label=label,
        scope_title=title,
        precision=claim.precision.upper() if claim.precision != "unknown" else None,
        technique=claim.technique,
        verified_by=claim.verified_by,
        live=_figure(claim.live, cited.notes),
        ratio=f"{claim.peak_to_live_ratio:.2f}×" if claim.peak_to_live_ratio is not None else None,
    )


def _listed(listed: ListedModels | None, cited: _Cited) -> ListedView | None:
    if listed is None:
        return None
    first = cited.view(listed.sources[0])
    return ListedView(
        count=f"{listed.count:,}",
        url=first.url,
        source_id=first.id,
        scope=listed.scope,
        reconstructed=first.reconstructed,
        catalogue="models.dev" if listed.catalogue == "models_dev" else None,
    )


MODEL_FIGURES_SHOWN = 15  # the fastest models; inference.json holds them all


def _credits(release: Release) -> list[Credit]:
    """The credit of every source of inference.json whose terms require it, once: the page
    credits the publisher wherever its data is shown."""
    found = {
        (source.terms.attribution.publisher, source.terms.attribution.url)
        for source in release.inference.sources
        if source.terms.attribution is not None
    }
    return [Credit(publisher, link_url(url)) for publisher, url in sorted(found)]


def _model_figures(release: Release) -> list[ModelFigureView]:
    rows = []
    for model in release.inference.models:
        speeds = [f for f in model.figures if f.metric == SPEED_METRIC]
        ttfts = {f.reasoning_effort: f for f in model.figures if f.metric == "ttft_s"}
        for figure in speeds:
            effort = figure.reasoning_effort
            label = f"{model.name} ({effort})" if effort else model.name
            ttft = ttfts.get(figure.reasoning_effort)
            rows.append(
                (
                    figure.value,
                    ModelFigureView(
                        model=label,
                        reviewed=model.reviewed,
                        value=f"{speed(figure.value)} t/s",
                        ttft=f"{ttft.value:.2f} s" if ttft else None,
                        day=day(figure.observed_at),
                        stale=figure.stale,
                        prompt_tokens=figure.prompt_length_tokens,
                    ),
                )
            )
    rows.sort(key=lambda row: (-row[0], row[1].model))
    return [view for _, view in rows[:MODEL_FIGURES_SHOWN]]


def _catalogue(release: Release, cited: _Cited) -> CatalogueView:
    catalog = release.catalog
    return CatalogueView(
        where=catalog.platform.name if catalog.platform else "the edge catalogue",
        total=catalog.total,
        function_calling=catalog.function_calling,
        sources=[cited.view(ref) for ref in catalog.catalogue_snapshots],
        tasks=[
            TaskView(
                name=task.name,
                count=task.count,
                models=[CatalogEntry(m.id, m.name, m.function_calling) for m in task.models],
            )
            for task in catalog.tasks
        ],
    )


def _snapshots(release: Release, notes: _Notes) -> list[SnapshotRow]:
    return [
        SnapshotRow(
            id=snapshot_id,
            day=day(snapshot.retrieved_at),
            obtained_by=snapshot.obtained_by,
            url=link_url(snapshot.url),
            url_template=snapshot.url_template,
            reconstructed=notes.by_snapshot.get(snapshot_id)
            if snapshot.reconstructed_from
            else None,
        )
        for snapshot_id, snapshot in sorted(_cited(release).items())
    ]


def _local_href(href: str) -> str | None:
    """A relative link (no scheme, so never `javascript:`) or an absolute http(s) URL."""
    if _RELATIVE_HREF.match(href) and not href.startswith("//"):
        return href
    return link_url(href)


def page_view(
    release: Release, changelog_href: str = "CHANGELOG.md", history: FigureHistory | None = None
) -> Page:
    inference = release.inference
    providers = inference.providers
    notes = _Notes(release)
    cited = _Cited(release, notes)
    return Page(
        version=inference.version,
        data_day=day(inference.data_date),
        as_of_day=day(inference.as_of),
        license=inference.license.id,
        license_url=COMPILATION_LICENSE_URL,
        changelog_href=_local_href(changelog_href) if isinstance(changelog_href, str) else None,
        versions=sorted({inference.version, release.platforms.version, release.catalog.version}),
        files=EXPORT_FILES,
        tier_titles=TIER_TITLES,
        csp=CSP,
        bars=_bars(providers, cited),
        without_headline=[p.name for p in providers if p.headline is None],
        claims=[_claim_row(p, c, cited) for p in providers for c in p.claims],
        platforms=[
            PlatformRow(
                id=p.id,
                name=p.name,
                owner=p.owner,
                kind=p.kind_label,
                stated=p.stated_count.text,
                stated_tier=p.stated_count.tier,
                listed=_listed(p.listed_models, cited),
                notable=p.notable,
                sources=[cited.view(ref, with_day=False) for ref in p.sources],
            )
            for p in release.platforms.platforms
        ],
        catalogue=_catalogue(release, cited),
        snapshots=_snapshots(release, notes),
        notes=notes.notes,
        credits=_credits(release),
        model_figures=_model_figures(release),
        model_figures_total=sum(
            1 for m in inference.models if any(f.metric == SPEED_METRIC for f in m.figures)
        ),
        by_model=model_sections(inference.models, history),
    )


def render_preview(
    documents: Mapping[str, Any] | Release,
    *,
    changelog_href: str = "CHANGELOG.md",
    history: FigureHistory | None = None,
) -> str:
    """The preview page of a release from its exports, keyed by file name
    (`inference.json`, `model_platforms.json`, `inference_catalog.json`), or from them parsed,
    with the history of its Parquet when there is one (preview_history.read_history on the
    release folder). Raises ValueError when an export is missing or does not fit the contract."""
    if not isinstance(documents, Release):
        missing = [name for name in EXPORT_FILES if not isinstance(documents.get(name), Mapping)]
        if missing:
            raise ValueError(f"render_preview needs every export; missing: {', '.join(missing)}")
        exports = {name: documents[name] for name in (INFERENCE, PLATFORMS, CATALOG)}
        documents = read_release(exports)
    page = page_view(documents, changelog_href, history)
    return render_html_template("preview.html.jinja", page=page)

"""The three exports, built from the warehouse's records by pure functions.

Each export is built as its contract model (pipeline/release/contract/), then dumped to the JSON
document that is validated and published:
inference.json: providers (headline, context, figures, claims, offers) and models (endpoints
across providers with figures per method, offers, rankings; model-level figures).
model_platforms.json: one row per model-access platform (stated and listed model counts).
inference_catalog.json: the edge catalogue (platform, tasks in a stable order, their models).
Every file writes each source and snapshot it cites once, in its envelope, and cites them by id.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

from pydantic import BaseModel, ValidationError

from pipeline.release.contract import DATASET, SCHEMA_VERSION
from pipeline.release.contract.catalog import (
    CatalogModel,
    CatalogPlatform,
    InferenceCatalog,
    Task,
)
from pipeline.release.contract.common import (
    COMPILATION_LICENSE,
    COMPILATION_LICENSE_URL,
    Attribution,
    Citation,
    CompilationLicense,
    Contract,
    ModelRef,
    ReconstructedFrom,
    Snapshot,
    Source,
    Terms,
    Variant,
)
from pipeline.release.contract.inference import (
    Claim,
    ClaimSource,
    ContextFigure,
    EndpointFigure,
    Figure,
    Headline,
    Inference,
    ModelEndpoint,
    ModelFigure,
    ModelRow,
    Offer,
    OfferFields,
    Provider,
    ProviderRef,
    RankedEndpoint,
    Ranking,
)
from pipeline.release.contract.platforms import (
    ListedModel,
    ListedModels,
    ModelPlatforms,
    ParsedCount,
    Platform,
    PlatformSource,
    StatedCount,
)
from pipeline.release.contracts import ContractError
from pipeline.release.formatting import (
    PLATFORM_KIND_LABELS,
    amount_text,
    figure_display,
    timestamp,
    with_variant,
)
from pipeline.release.queries import ExportInputs, Record
from pipeline.support.figures import Figure as ParsedFigure
from pipeline.support.figures import parse_count_statement
from pipeline.support.text import clean_text, link_url, safe_url, url_placeholder

__all__ = [
    "DATASET",
    "SCHEMA_VERSION",
    "ReleaseInfo",
    "build_exports",
]

# The edge catalogue's tasks, in the order the fieldbook lists them; others follow alphabetically.
TASK_ORDER = (
    "Text Generation",
    "Text Embeddings",
    "Automatic Speech Recognition",
    "Text-to-Speech",
    "Text-to-Image",
    "Image-to-Text",
    "Translation",
    "Summarization",
    "Text Classification",
    "Object Detection",
    "Image Classification",
    "Voice Activity Detection",
)
SPEED = "output_tokens_per_s"
RANKING_RULE_EXPORTED = (
    "a suspect figure is listed without a rank; bounds and ranges are not ranked"
)


@dataclass(frozen=True)
class ReleaseInfo:
    version: str
    schema_version: str = SCHEMA_VERSION


def number(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(float(value), digits)


def _variant(record: Record) -> Variant:
    return Variant(
        precision=record["precision"],
        service_tier=record["service_tier"],
        reasoning_effort=record["reasoning_effort"],
        region=record.get("region"),
        key=record.get("endpoint_key"),
    )


def address(url: str) -> dict[str, str | None]:
    """`url` and `url_template`: a template (ACCOUNT_ID to fill in) is text, never a link."""
    if url_placeholder(url) is None:
        return {"url": url, "url_template": None}
    return {"url": None, "url_template": url}


def reconstructed_from(snapshot: Record) -> ReconstructedFrom | None:
    """The document a reconstructed snapshot was rebuilt from (core.snapshots' columns)."""
    if snapshot["obtained_by"] != "reconstructed":
        return None
    return ReconstructedFrom(
        title=snapshot["reconstructed_from"],
        url=snapshot["reconstructed_from_url"],
        snapshot=snapshot["reconstructed_from_snapshot_id"],
    )


class _Lookups:
    """The entities the records name, and the sources and snapshots an export cites: each
    citation is recorded, so the envelope lists every source and snapshot the rows cite, once."""

    def __init__(self, inputs: ExportInputs) -> None:
        self.models = {m["model_id"]: m for m in inputs.models}
        self.providers = {p["provider_id"]: p for p in inputs.providers}
        self.sources = {s["source_id"]: s for s in inputs.sources}
        self.snapshots = {s["snapshot_id"]: s for s in inputs.snapshots}
        self.cited: set[tuple[str, str]] = set()
        self._model_refs: dict[str, ModelRef] = {}
        self._attributions: dict[str, Attribution | None] = {}

    def model(self, model_id: str) -> ModelRef:
        ref = self._model_refs.get(model_id)
        if ref is None:
            model = self.models[model_id]
            ref = ModelRef(id=model_id, name=model["name"], reviewed=bool(model["reviewed"]))
            self._model_refs[model_id] = ref
        return ref

    def model_or_none(self, model_id: str | None) -> ModelRef | None:
        return None if model_id is None else self.model(model_id)

    def provider(self, provider_id: str) -> ProviderRef:
        provider = self.providers[provider_id]
        return ProviderRef(
            id=provider_id, name=provider["name"], reviewed=bool(provider["reviewed"])
        )

    def cite(self, record: Record) -> dict[str, Any]:
        """A record's source and snapshot, as the rows cite them (`source`, `snapshot`)."""
        source_id, snapshot_id = record["source_id"], record["snapshot_id"]
        self.cited.add((source_id, snapshot_id))
        return {"source": source_id, "snapshot": snapshot_id}

    def citation(self, record: Record) -> Citation:
        return Citation(**self.cite(record))

    def attribution(self, source_id: str) -> Attribution | None:
        """The credit a source's data carries wherever it is shown, when its terms require it:
        its publisher, and a link to the publisher's site (https://artificialanalysis.ai/)."""
        if source_id not in self._attributions:
            source = self.sources[source_id]
            found = None
            if source["attribution_required"]:
                parts = urlsplit(source["url"])
                found = Attribution(
                    publisher=source["publisher"], url=f"{parts.scheme}://{parts.netloc}/"
                )
            self._attributions[source_id] = found
        return self._attributions[source_id]

    def source_list(self) -> list[Source]:
        cited = sorted({source_id for source_id, _ in self.cited})
        return [self._source(source_id) for source_id in cited]

    def _source(self, source_id: str) -> Source:
        source = self.sources[source_id]
        return Source(
            id=source_id,
            publisher=source["publisher"],
            title=source["title"],
            kind=source["kind"],
            tier=source["tier"],
            **address(source["url"]),
            terms=Terms(
                license=source["license"],
                terms_url=source["terms_url"],
                attribution_required=source["attribution_required"],
                attribution=self.attribution(source_id),
            ),
        )

    def snapshot_list(self) -> list[Snapshot]:
        return [
            Snapshot(
                id=snapshot_id,
                source=snapshot["source_id"],
                **address(snapshot["url"]),
                retrieved_at=timestamp(snapshot["retrieved_at"]),
                retrieved_at_bound=snapshot["retrieved_at_bound"],
                sha256=snapshot["sha256"],
                obtained_by=snapshot["obtained_by"],
                reconstructed_from=reconstructed_from(snapshot),
            )
            for snapshot_id in sorted({snapshot_id for _, snapshot_id in self.cited})
            for snapshot in (self.snapshots[snapshot_id],)
        ]


def _envelope(info: ReleaseInfo, inputs: ExportInputs, lookups: _Lookups) -> dict[str, Any]:
    """The envelope's fields; called after the rows are built, so that `sources` and
    `snapshots` list every one they cite."""
    return {
        "dataset": DATASET,
        "version": info.version,
        "schema_version": info.schema_version,
        "license": CompilationLicense(id=COMPILATION_LICENSE, url=COMPILATION_LICENSE_URL),
        "data_date": timestamp(inputs.data_date),
        "as_of": timestamp(inputs.as_of),
        "sources": lookups.source_list(),
        "snapshots": lookups.snapshot_list(),
    }


def _grouped(records: Iterable[Record], key: str) -> dict[str, list[Record]]:
    groups: dict[str, list[Record]] = defaultdict(list)
    for record in records:
        groups[record[key]].append(record)
    return groups


# --- inference.json ------------------------------------------------------------------------------


def _amount(record: Record) -> str:
    """The figure's amount as exported (rounded as its `value` is), as people read it."""
    return amount_text(
        number(record["value"], 6 if record["unit"] == "USD per 1M tokens" else 3),
        number(record.get("low")),
        number(record.get("high")),
        record.get("qualifier"),
        record["metric"],
        record["unit"],
    )


def _display(record: Record, subject: str) -> str:
    """A figure's display (formatting.figure_display) from its record."""
    return figure_display(
        amount=_amount(record),
        subject=subject,
        method=record["method"],
        statistic=record["statistic"],
        window=record["window_minutes"],
        observed_at=timestamp(record["observed_at"]),
        bound=record["observed_at_bound"],
        stale=bool(record["stale"]),
        suspect=bool(record.get("suspect")),
    )


def _labels(record: Record, lookups: _Lookups, subject: str) -> dict[str, Any]:
    """The fields every figure carries about itself (contract.inference.Labelled)."""
    return {
        "metric": record["metric"],
        "scope": record["scope"],
        "method": record["method"],
        "statistic": record["statistic"],
        "window_minutes": record["window_minutes"],
        "value": number(record["value"]),
        "low": number(record["low"]),
        "high": number(record["high"]),
        "qualifier": record["qualifier"],
        "unit": record["unit"],
        "observed_at": timestamp(record["observed_at"]),
        "observed_at_bound": record["observed_at_bound"],
        "stale": bool(record["stale"]),
        "tier": record["tier"],
        "suspect": bool(record["suspect"]),
        "suspect_reason": record["suspect_reason"],
        "corroborated_by": list(record["corroborated_by"]),
        "disputed_by": list(record["disputed_by"]),
        **lookups.cite(record),
        "attribution": lookups.attribution(record["source_id"]),
        "display": _display(record, subject),
    }


_M = TypeVar("_M", bound=BaseModel)


def _checked(kind: type[_M], record: Record, /, **fields: Any) -> _M:
    """`model(**fields)`, or an error naming the snapshot the figure comes from: a staged row
    changed after its extraction (never validated again) stops the release, by name."""
    try:
        return kind(**fields)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ContractError(
            f"a {record['metric']} figure from snapshot {record['snapshot_id']} breaks the "
            f"export contract: {where} {first['input']!r}: {first['msg']}"
        ) from error


def _figure(record: Record, lookups: _Lookups) -> Figure:
    """A figure as the providers view shows it: about its model (and variant)."""
    model, variant = lookups.model(record["model_id"]), _variant(record)
    return _checked(
        Figure,
        record,
        **_labels(record, lookups, with_variant(model.name, variant)),
        endpoint=record["endpoint_id"],
        model=model,
        variant=variant,
    )


def _headline(record: Record, lookups: _Lookups) -> Headline:
    return Headline(**dict(_figure(record, lookups)), rule=record["headline_rule"])


def provider_display(headline: Headline, context: list[Record]) -> str:
    """The headline's display, with the figures its compilation gives beside it:
    '321 t/s · Llama 3.3 70B · probe median, 72 h · as of 2026-06-28 (≈800 t/s on 8B-class)'."""
    assert headline.display is not None  # a 2.0 figure always has one
    if not context:
        return headline.display
    return f"{headline.display} (" + "; ".join(c["figure_text"] for c in context) + ")"


def _context(record: Record, lookups: _Lookups) -> ContextFigure:
    return ContextFigure(
        text=record["figure_text"],
        value=number(record["value"]),
        low=number(record["low"]),
        high=number(record["high"]),
        qualifier=record["qualifier"],
        applies_to=record["applies_to"],
        model=lookups.model_or_none(record["model_id"]),
        tier=record["tier"],
        **lookups.cite(record),
        attribution=lookups.attribution(record["source_id"]),
    )


def _claim(
    claim: Record,
    sources: list[Record],
    beside: Record | None,
    figures: dict[str, Figure],
    lookups: _Lookups,
) -> Claim:
    """A claim beside its own endpoint's live figure, as mart.peak_vs_live names it."""
    live_id = beside["live_observation_id"] if beside else None
    live = None
    if live_id is not None:
        live = figures.get(live_id)
        if live is None:
            raise LookupError(
                f"claim {claim['claim_id']}: live figure {live_id} is not among the current "
                f"figures of provider {claim['provider_id']}: a claim meets its own endpoint only"
            )
    return Claim(
        id=claim["claim_id"],
        model=lookups.model_or_none(claim["model_id"]),
        hardware=claim["hardware"],
        figure=claim["figure_text"],
        value=number(claim["value"]),
        qualifier=claim["qualifier"],
        unit=claim["unit"],
        scope=claim["scope"],
        precision=claim["precision"],
        technique=claim["technique"],
        verified_by=claim["verified_by"],
        claimed=claim["claimed"],
        notes=claim["notes"],
        sources=[ClaimSource(**lookups.cite(s), tier=s["tier"]) for s in sources],
        live=live,
        peak_to_live_ratio=(
            number(beside["peak_to_live_ratio"], 2) if beside and live is not None else None
        ),
    )


def _offer_fields(record: Record, lookups: _Lookups) -> dict[str, Any]:
    return {
        "listed_as": record["endpoint_tag"],
        "quantization": record["quantization"],
        "price_input_usd_per_mtok": number(record["price_input_usd_per_mtok"], 6),
        "price_output_usd_per_mtok": number(record["price_output_usd_per_mtok"], 6),
        "price_cache_read_usd_per_mtok": number(record["price_cache_read_usd_per_mtok"], 6),
        "price_cache_write_usd_per_mtok": number(record["price_cache_write_usd_per_mtok"], 6),
        "discount": number(record["discount"]),
        "uptime_last_5m": number(record["uptime_last_5m"]),
        "uptime_last_30m": number(record["uptime_last_30m"]),
        "uptime_last_1d": number(record["uptime_last_1d"]),
        "context_window": record["context_window"],
        "max_output_tokens": record["max_output_tokens"],
        "max_prompt_tokens": record["max_prompt_tokens"],
        "function_calling": record["function_calling"],
        "status": record["status"],
        "observed_at": timestamp(record["observed_at"]),
        "observed_at_bound": record["observed_at_bound"],
        "stale": bool(record["stale"]),
        "tier": record["tier"],
        **lookups.cite(record),
        "attribution": lookups.attribution(record["source_id"]),
    }


def _offer(record: Record, lookups: _Lookups) -> Offer:
    return Offer(
        **_offer_fields(record, lookups),
        endpoint=record["endpoint_id"],
        model=lookups.model(record["model_id"]),
        variant=_variant(record),
    )


def _providers(inputs: ExportInputs, lookups: _Lookups) -> list[Provider]:
    headlines = {h["provider_id"]: h for h in inputs.headlines}
    context = _grouped(inputs.context, "provider_id")
    figures = _grouped(inputs.figures, "provider_id")
    claims = _grouped(inputs.claims, "provider_id")
    claim_sources = _grouped(inputs.claim_sources, "claim_id")
    beside = {record["claim_id"]: record for record in inputs.peak_vs_live}
    offers = _grouped(inputs.offers, "provider_id")
    rows = []
    for provider in inputs.providers:
        pid = provider["provider_id"]
        if pid not in headlines and not figures[pid] and not claims[pid] and not offers[pid]:
            continue
        headline = _headline(headlines[pid], lookups) if pid in headlines else None
        own = {f["observation_id"]: _figure(f, lookups) for f in figures[pid]}
        row_claims = [
            _claim(c, claim_sources[c["claim_id"]], beside.get(c["claim_id"]), own, lookups)
            for c in claims[pid]
        ]
        row_context = [_context(c, lookups) for c in context[pid]]
        row_offers = [_offer(o, lookups) for o in offers[pid]]
        cited = [*own.values(), *row_context, *row_offers, *([headline] if headline else [])]
        used = {item.source for item in cited} | {s.source for c in row_claims for s in c.sources}
        rows.append(
            Provider(
                id=pid,
                name=provider["name"],
                reviewed=bool(provider["reviewed"]),
                country=provider["country"],
                type=provider["type"],
                website=provider["website"],
                headline=headline,
                display=provider_display(headline, context[pid]) if headline else None,
                context=row_context,
                figures=list(own.values()),
                claims=row_claims,
                offers=row_offers,
                sources=sorted(used),
            )
        )
    return rows


def _ranking(rows: list[Record], lookups: _Lookups) -> Ranking:
    first = rows[0]
    entries = []
    for row in rows:
        provider = lookups.providers[row["provider_id"]]
        record = row | {"metric": SPEED, "value": row["output_tokens_per_s"], "unit": "tokens/s"}
        entries.append(
            RankedEndpoint(
                rank=row["rank"],
                endpoint=row["endpoint_id"],
                provider=row["provider_id"],
                value=number(row["output_tokens_per_s"]),
                qualifier=row["qualifier"],
                stale=bool(row["stale"]),
                suspect=bool(row["suspect"]),
                tier=row["tier"],
                observed_at=timestamp(row["observed_at"]),
                observed_at_bound=row["observed_at_bound"],
                **lookups.cite(row),
                display=_display(record, provider["name"]),
            )
        )
    return Ranking(
        metric=SPEED,
        scope=first["scope"],
        method=first["method"],
        statistic=first["statistic"],
        window_minutes=first["window_minutes"],
        precision=first["precision"],
        service_tier=first["service_tier"],
        reasoning_effort=first["reasoning_effort"],
        region=first["region"],
        rule=f"{first['ranking_rule']}; {RANKING_RULE_EXPORTED}",
        entries=entries,
    )


RANKING_GROUP = (
    "precision",
    "service_tier",
    "reasoning_effort",
    "region",
    "scope",
    "method",
    "statistic",
)


def _rankings(rows: list[Record], lookups: _Lookups) -> list[Ranking]:
    groups: dict[tuple[Any, ...], list[Record]] = {}
    for row in rows:
        groups.setdefault(tuple(row[k] for k in RANKING_GROUP), []).append(row)
    return [_ranking(group, lookups) for group in groups.values()]


def _model_figure(record: Record, lookups: _Lookups, name: str) -> ModelFigure:
    workload = json.loads(record["workload"]) if record["workload"] else {}
    effort = record["reasoning_effort"]
    subject = f"{name} ({effort})" if effort else name
    return _checked(
        ModelFigure,
        record,
        metric=record["metric"],
        scope=record["scope"],
        method=record["method"],
        statistic=record["statistic"],
        window_minutes=record["window_minutes"],
        value=number(record["value"], 6),
        unit=record["unit"],
        reasoning_effort=effort,
        prompt_length_tokens=workload.get("prompt_length_tokens"),
        parallel_queries=workload.get("parallel_queries"),
        observed_at=timestamp(record["observed_at"]),
        observed_at_bound=record["observed_at_bound"],
        stale=bool(record["stale"]),
        tier=record["tier"],
        **lookups.cite(record),
        attribution=lookups.attribution(record["source_id"]),
        display=_display(record, f"{subject} across providers"),
    )


def _endpoint(
    endpoint_id: str, figures: list[Record], offer: Record | None, lookups: _Lookups
) -> ModelEndpoint:
    first = figures[0] if figures else offer
    assert first is not None  # an endpoint is listed for a figure or an offer
    provider = lookups.provider(first["provider_id"])
    variant = _variant(first)
    subject = with_variant(provider.name, variant)
    return ModelEndpoint(
        id=endpoint_id,
        provider=provider,
        variant=variant,
        figures=[_checked(EndpointFigure, f, **_labels(f, lookups, subject)) for f in figures],
        offer=OfferFields(**_offer_fields(offer, lookups)) if offer else None,
    )


def _models(inputs: ExportInputs, lookups: _Lookups) -> list[ModelRow]:
    figures = _grouped(inputs.figures, "endpoint_id")
    offers = {o["endpoint_id"]: o for o in inputs.offers}
    endpoints: dict[str, dict[tuple[str, str], str]] = defaultdict(dict)
    for record in [*inputs.figures, *inputs.offers]:
        endpoints[record["model_id"]][record["provider_id"], record["endpoint_id"]] = record[
            "endpoint_id"
        ]
    rankings = _grouped(inputs.rankings, "model_id")
    model_figures = _grouped(inputs.model_figures, "model_id")
    rows = []
    for model_id in sorted(endpoints.keys() | model_figures.keys()):
        model = lookups.models[model_id]
        rows.append(
            ModelRow(
                id=model_id,
                name=model["name"],
                family=model["family"],
                reviewed=bool(model["reviewed"]),
                endpoints=[
                    _endpoint(e, figures.get(e, []), offers.get(e), lookups)
                    for _, e in sorted(endpoints[model_id])
                ],
                rankings=_rankings(rankings[model_id], lookups),
                figures=[_model_figure(f, lookups, model["name"]) for f in model_figures[model_id]],
            )
        )
    return rows


def inference_export(inputs: ExportInputs, info: ReleaseInfo) -> Inference:
    lookups = _Lookups(inputs)
    providers = _providers(inputs, lookups)
    models = _models(inputs, lookups)
    return Inference(
        export="inference", providers=providers, models=models, **_envelope(info, inputs, lookups)
    )


# --- model_platforms.json -------------------------------------------------------------------------


def _count(figure: ParsedFigure | None) -> ParsedCount | None:
    if figure is None:
        return None
    return ParsedCount(
        value=number(figure.value), qualifier=figure.qualifier, context=figure.context
    )


def _listed_model(entry: Record, lookups: _Lookups) -> ListedModel:
    """A listing of the platform's own catalogue (mart.platform_models) or of models.dev
    (mart.model_offers), with the prices it lists."""
    own = "platform_model_id" in entry
    cache_read = entry.get(
        "price_cached_input_usd_per_mtok" if own else "price_cache_read_usd_per_mtok"
    )
    return ListedModel(
        id=entry["platform_model_id"] if own else entry["catalogue_model_id"],
        model=lookups.model_or_none(entry["model_id"]),
        price_input_usd_per_mtok=number(entry["price_input_usd_per_mtok"], 6),
        price_output_usd_per_mtok=number(entry["price_output_usd_per_mtok"], 6),
        price_cache_read_usd_per_mtok=number(cache_read, 6),
        price_cache_write_usd_per_mtok=number(entry.get("price_cache_write_usd_per_mtok"), 6),
        other_prices=entry.get("other_prices"),
    )


def platforms_export(inputs: ExportInputs, info: ReleaseInfo) -> ModelPlatforms:
    lookups = _Lookups(inputs)
    statements = {s["platform_id"]: s for s in inputs.platform_statements}
    own = _grouped(inputs.platform_models, "platform_id")
    listings = _grouped(inputs.platform_offers, "platform_id")
    rows = []
    for platform in inputs.platforms:
        pid = platform["platform_id"]
        statement = statements.get(pid)
        if statement is None:
            continue  # its documentation has no snapshot as of this build
        primary, others = parse_count_statement(platform["stated_count"])
        doc = lookups.citation(statement)
        # its own catalogue where one is read, else its listing in models.dev
        kind, listed = ("own", own[pid]) if own[pid] else ("models_dev", listings[pid])
        catalogue = [lookups.citation(e) for e in listed]
        # one entry per distinct listing (a catalogue read twice lists a model twice alike)
        models = sorted(
            {_listed_model(e, lookups) for e in listed},
            key=lambda m: (m.id, m.model.id if m.model else "", repr(m)),
        )
        rows.append(
            Platform(
                id=pid,
                name=platform["name"],
                owner=platform["owner"],
                kind=platform["kind"],
                kind_label=PLATFORM_KIND_LABELS[platform["kind"]],
                stated_count=StatedCount(
                    text=platform["stated_count"],
                    parsed=_count(primary),
                    also=[_count(f) for f in others],
                    tier=lookups.sources[doc.source]["tier"],
                ),
                listed_models=(
                    ListedModels(
                        count=len(models),
                        scope=platform["catalogue_scope"] if kind == "own" else None,
                        catalogue=kind,
                        models=models,
                        sources=sorted(set(catalogue), key=lambda c: (c.source, c.snapshot)),
                    )
                    if listed
                    else None
                ),
                notable=platform["notable"].split(" · ") if platform["notable"] else [],
                sources=[PlatformSource(**dict(doc), role="documentation")]
                + [
                    PlatformSource(**dict(c), role="catalogue")
                    for c in sorted(set(catalogue), key=lambda c: (c.source, c.snapshot))
                ],
            )
        )
    return ModelPlatforms(
        export="model_platforms", platforms=rows, **_envelope(info, inputs, lookups)
    )


# --- inference_catalog.json -----------------------------------------------------------------------


def task_rank(task: str) -> tuple[int, str]:
    return (TASK_ORDER.index(task), task) if task in TASK_ORDER else (len(TASK_ORDER), task)


def _catalog_model(entry: Record) -> CatalogModel:
    return CatalogModel(
        id=entry["platform_model_id"],
        name=entry["listed_name"],
        publisher=entry["publisher"],
        model_id=entry["model_id"],
        model_reviewed=entry["model_reviewed"],
        # the catalogue omits a flag when it is false
        function_calling=bool(entry["function_calling"]),
        precision=entry["precision"],
        service_tier=entry["service_tier"],
        beta=bool(entry["beta"]),
        lora=bool(entry["lora"]),
        context_window=entry["context_window"],
        planned_deprecation=entry["planned_deprecation"],
        price_input_usd_per_mtok=number(entry["price_input_usd_per_mtok"], 6),
        price_output_usd_per_mtok=number(entry["price_output_usd_per_mtok"], 6),
        price_cache_read_usd_per_mtok=number(entry["price_cached_input_usd_per_mtok"], 6),
        other_prices=entry["other_prices"],
    )


def catalog_export(inputs: ExportInputs, info: ReleaseInfo) -> InferenceCatalog:
    lookups = _Lookups(inputs)
    edge = [p for p in inputs.platforms if p["kind"] == "edge_hosted"]
    entries = [
        e for e in inputs.platform_models if edge and e["platform_id"] == edge[0]["platform_id"]
    ]
    by_task: dict[str, list[Record]] = defaultdict(list)
    for entry in entries:
        by_task[entry["task"] or "Other"].append(entry)
    tasks = []
    for task in sorted(by_task, key=task_rank):
        models = sorted(by_task[task], key=lambda e: (e["listed_name"], e["platform_model_id"]))
        tasks.append(Task(name=task, count=len(models), models=[_catalog_model(m) for m in models]))
    sources = sorted({lookups.citation(e) for e in entries}, key=lambda c: (c.source, c.snapshot))
    platform = edge[0] if edge else None
    return InferenceCatalog(
        export="inference_catalog",
        platform=(
            CatalogPlatform(
                id=platform["platform_id"], name=platform["name"], owner=platform["owner"]
            )
            if platform
            else None
        ),
        total=len(entries),
        function_calling=sum(1 for e in entries if e["function_calling"]),
        catalogue_snapshots=sources,
        tasks=tasks,
        **_envelope(info, inputs, lookups),
    )


# --- documents -------------------------------------------------------------------------------


def _kind(key: str) -> str:
    """How a string under `key` is cleaned: as a link, a URL template, or text."""
    if key in ("url", "website") or key.endswith("_url"):
        return "url"
    return "template" if key == "url_template" else "text"


_UNSEEN = object()


def _clean_text(value: str) -> str:
    return clean_text(value, max_length=2000)


def sanitise(value: Any, key: str = "") -> Any:
    """Last line of defence before anything is written: no markup or control characters in any
    string, and under keys that hold links only http(s) URLs that are no template. Each distinct
    string is cleaned once per call (a 30 MB export repeats a few thousand names and units), and
    the rule of each distinct key is found once."""
    cleaners = {"url": link_url, "template": safe_url, "text": _clean_text}
    by_kind: dict[str, dict[str, Any]] = {kind: {} for kind in cleaners}
    by_key: dict[str, tuple[dict[str, Any], Callable[[str], Any]]] = {}

    def text(value: str, key: str) -> Any:
        found = by_key.get(key)
        if found is None:
            kind = _kind(key)
            found = by_key[key] = by_kind[kind], cleaners[kind]
        memo, cleaner = found
        result = memo.get(value, _UNSEEN)
        if result is _UNSEEN:
            result = memo[value] = cleaner(value)
        return result

    # A million values, half of them numbers, nulls and booleans: those are kept without a call
    # each; only strings, objects and arrays (and their subclasses, through `clean`) go further.
    def clean_dict(value: dict[str, Any]) -> dict[str, Any]:
        out = {}
        for k, v in value.items():
            kind = type(v)
            if kind is str:
                out[k] = text(v, k)
            elif kind is dict:
                out[k] = clean_dict(v)
            elif kind is list:
                out[k] = clean_list(v, k)
            else:
                out[k] = clean(v, k)
        return out

    def clean_list(value: list[Any], key: str) -> list[Any]:
        return [
            text(v, key) if type(v) is str else clean_dict(v) if type(v) is dict else clean(v, key)
            for v in value
        ]

    def clean(value: Any, key: str) -> Any:
        if isinstance(value, str):
            return text(value, key)
        if isinstance(value, dict):
            return clean_dict(value)
        if isinstance(value, list):
            return clean_list(value, key)
        return value

    return clean(value, key)


Builder = Callable[[ExportInputs, ReleaseInfo], dict[str, Any]]


def _document(build: Callable[[ExportInputs, ReleaseInfo], Contract]) -> Builder:
    """A builder of the export's JSON document from a builder of its model."""

    def document(inputs: ExportInputs, info: ReleaseInfo) -> dict[str, Any]:
        return build(inputs, info).model_dump(mode="json")

    return document


build_inference = _document(inference_export)
build_model_platforms = _document(platforms_export)
build_catalog = _document(catalog_export)
BUILDERS: dict[str, Builder] = {
    "inference.json": build_inference,
    "model_platforms.json": build_model_platforms,
    "inference_catalog.json": build_catalog,
}


def build_exports(inputs: ExportInputs, info: ReleaseInfo) -> dict[str, dict[str, Any]]:
    """The three exports as JSON documents, keyed by file name."""
    return {name: sanitise(build(inputs, info)) for name, build in BUILDERS.items()}

"""The three exports, built from the warehouse's records by pure functions.

Each export is built as its contract model (pipeline/release/contract/), then dumped to the JSON
document that is validated and published:
inference.json: one row per provider with figures (headline, context, live figures, claims).
model_platforms.json: one row per model-access platform (stated and listed model counts).
inference_catalog.json: the edge catalogue (platform, tasks in a stable order, their models).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from pipeline.normalise.numbers import Figure as ParsedFigure
from pipeline.normalise.numbers import parse_count_statement
from pipeline.release.contract import DATASET, LICENSE, SCHEMA_VERSION
from pipeline.release.contract.catalog import (
    CatalogModel,
    CatalogPlatform,
    InferenceCatalog,
    Task,
)
from pipeline.release.contract.common import (
    Contract,
    ModelRef,
    ReconstructedFrom,
    Snapshot,
    SourceRef,
    Variant,
)
from pipeline.release.contract.inference import (
    Attribution,
    Claim,
    ContextFigure,
    EndpointPrice,
    FastestLive,
    Figure,
    Headline,
    Inference,
    ModelFigure,
    ModelRow,
    Provider,
    ProviderRef,
    SourceSummary,
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
from pipeline.release.formatting import (
    PLATFORM_KIND_LABELS,
    day,
    speed,
    timestamp,
    variant_label,
)
from pipeline.release.queries import ExportInputs, Record
from pipeline.support.bulk import bulk_objects
from pipeline.support.text import clean_text, link_url, safe_url, url_placeholder

__all__ = [
    "DATASET",
    "LICENSE",
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
    )


class _Lookups:
    def __init__(self, inputs: ExportInputs) -> None:
        self.models = {m["model_id"]: m for m in inputs.models}
        self.providers = {p["provider_id"]: p for p in inputs.providers}
        self.sources = {s["source_id"]: s for s in inputs.sources}
        self.snapshots = {s["snapshot_id"]: s for s in inputs.snapshots}
        self.used_snapshots: set[str] = set()
        # references are frozen models, made once each: 25,000 figures cite a few hundred
        self._model_refs: dict[str, ModelRef] = {}
        self._source_refs: dict[tuple[str, str], SourceRef] = {}

    def model(self, model_id: str | None) -> ModelRef | None:
        if model_id is None:
            return None
        ref = self._model_refs.get(model_id)
        if ref is None:
            model = self.models[model_id]
            ref = ModelRef(id=model_id, name=model["name"], reviewed=bool(model["reviewed"]))
            self._model_refs[model_id] = ref
        return ref

    def provider(self, provider_id: str) -> ProviderRef:
        provider = self.providers[provider_id]
        return ProviderRef(
            id=provider_id, name=provider["name"], reviewed=bool(provider["reviewed"])
        )

    def attribution(self, source_id: str) -> Attribution:
        """The credit a source's data carries wherever it is shown: its publisher, and a link
        to the publisher's site (the registry URL's origin, https://artificialanalysis.ai/)."""
        source = self.sources[source_id]
        parts = urlsplit(source["url"])
        return Attribution(publisher=source["publisher"], url=f"{parts.scheme}://{parts.netloc}/")

    def source_ref(self, source_id: str, snapshot_id: str) -> SourceRef:
        """Where a figure comes from: enough to trace it to its snapshot, URL, tier and date."""
        self.used_snapshots.add(snapshot_id)
        ref = self._source_refs.get((source_id, snapshot_id))
        if ref is None:
            ref = self._source_refs[source_id, snapshot_id] = self._source_ref(
                source_id, snapshot_id
            )
        return ref

    def _source_ref(self, source_id: str, snapshot_id: str) -> SourceRef:
        snapshot = self.snapshots[snapshot_id]
        source = self.sources[source_id]
        return SourceRef(
            id=source_id,
            publisher=source["publisher"],
            tier=source["tier"],
            **address(snapshot["url"]),
            snapshot=snapshot_id,
            retrieved_at=timestamp(snapshot["retrieved_at"]),
            obtained_by=snapshot["obtained_by"],
            reconstructed_from=reconstructed_from(snapshot),
        )

    def source_summary(self, source_id: str) -> SourceSummary:
        source = self.sources[source_id]
        return SourceSummary(
            id=source_id,
            publisher=source["publisher"],
            kind=source["kind"],
            tier=source["tier"],
            **address(source["url"]),
        )

    def snapshot_list(self) -> list[Snapshot]:
        return [
            Snapshot(
                id=snapshot_id,
                source=snapshot["source_id"],
                **address(snapshot["url"]),
                retrieved_at=timestamp(snapshot["retrieved_at"]),
                sha256=snapshot["sha256"],
                obtained_by=snapshot["obtained_by"],
                reconstructed_from=reconstructed_from(snapshot),
            )
            for snapshot_id in sorted(self.used_snapshots)
            for snapshot in (self.snapshots[snapshot_id],)
        ]


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


def _envelope(info: ReleaseInfo, inputs: ExportInputs, lookups: _Lookups) -> dict[str, Any]:
    """The envelope's fields; called after the rows are built, so that `snapshots` lists every
    snapshot they cite."""
    return {
        "dataset": DATASET,
        "version": info.version,
        "schema_version": info.schema_version,
        "license": LICENSE,
        "data_date": timestamp(inputs.data_date),
        "as_of": timestamp(inputs.as_of),
        "snapshots": lookups.snapshot_list(),
    }


# --- inference.json ------------------------------------------------------------------------------


def _figure_fields(record: Record, lookups: _Lookups) -> dict[str, Any]:
    return {
        "endpoint": record["endpoint_id"],
        "model": lookups.model(record["model_id"]),
        "variant": _variant(record),
        "metric": record["metric"],
        "scope": record["scope"],
        "value": number(record["value"]),
        "low": number(record["low"]),
        "high": number(record["high"]),
        "qualifier": record["qualifier"],
        "unit": record["unit"],
        "method": record["method"],
        "statistic": record["statistic"],
        "window_minutes": record["window_minutes"],
        "observed_at": timestamp(record["observed_at"]),
        "stale": bool(record["stale"]),
        "tier": record["tier"],
        "source": lookups.source_ref(record["source_id"], record["snapshot_id"]),
        "corroborating_sources": len(record["corroborated_by"]),
        "corroborated_by": list(record["corroborated_by"]),
        "disputed_by": list(record["disputed_by"]),
    }


def _context(record: Record, lookups: _Lookups) -> ContextFigure:
    return ContextFigure(
        text=record["figure_text"],
        value=number(record["value"]),
        low=number(record["low"]),
        high=number(record["high"]),
        qualifier=record["qualifier"],
        applies_to=record["applies_to"],
        model=lookups.model(record["model_id"]),
        tier=record["tier"],
        source=lookups.source_ref(record["source_id"], record["snapshot_id"]),
    )


def headline_display(headline: Record, model_name: str, context: list[Record]) -> str:
    """'~321 t/s · Llama 3.3 70B (≈800 t/s on 8B-class)', '· as of <day>' when stale."""
    label = variant_label(_variant(headline))
    text = f"~{speed(headline['value'])} t/s · {model_name}" + (f" ({label})" if label else "")
    if context:
        text += " (" + "; ".join(c["figure_text"] for c in context) + ")"
    if headline["stale"]:
        text += f" · as of {day(timestamp(headline['observed_at']))}"
    return text


def _headline(record: Record, lookups: _Lookups, context: list[Record]) -> Headline:
    return Headline(
        **_figure_fields(record, lookups),
        rule=record["headline_rule"],
        display=headline_display(record, lookups.models[record["model_id"]]["name"], context),
    )


class _LiveFigures:
    """Every current live figure, by observation: what mart.peak_vs_live names beside a claim is
    looked up here, so the export shows the view's figures and cannot disagree with it."""

    def __init__(self, records: list[Record]) -> None:
        self.speeds = {r["observation_id"]: r for r in records if r["metric"] == SPEED}

    def speed_of(self, claim_id: str, observation_id: str | None) -> Record | None:
        if observation_id is None:
            return None
        if observation_id not in self.speeds:
            raise LookupError(
                f"claim {claim_id}: live figure {observation_id} is not among the current figures"
            )
        return self.speeds[observation_id]


def _claim(
    claim: Record,
    sources: list[Record],
    beside: Record | None,
    live: _LiveFigures,
    lookups: _Lookups,
) -> Claim:
    # the view gives ratios only to per-user claims with a live point figure
    same = live.speed_of(claim["claim_id"], beside["live_observation_id"]) if beside else None
    fastest = live.speed_of(claim["claim_id"], beside["fastest_observation_id"]) if beside else None
    return Claim(
        id=claim["claim_id"],
        model=lookups.model(claim["model_id"]),
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
        sources=[lookups.source_ref(s["source_id"], s["snapshot_id"]) for s in sources],
        live_median=Figure(**_figure_fields(same, lookups)) if same else None,
        peak_to_live_ratio=number(beside["peak_to_live_ratio"], 2) if beside else None,
        fastest_live_median=(
            FastestLive(
                **_figure_fields(fastest, lookups),
                provider=lookups.provider(fastest["provider_id"]),
            )
            if fastest
            else None
        ),
        peak_to_fastest_live_ratio=(
            number(beside["peak_to_fastest_live_ratio"], 2) if beside else None
        ),
    )


def _grouped(records: list[Record], key: str) -> dict[str, list[Record]]:
    groups: dict[str, list[Record]] = defaultdict(list)
    for record in records:
        groups[record[key]].append(record)
    return groups


def _price(record: Record, lookups: _Lookups) -> EndpointPrice:
    model = lookups.model(record["model_id"])
    assert model is not None  # an endpoint always names its model
    return EndpointPrice(
        endpoint=record["endpoint_id"],
        model=model,
        variant=_variant(record),
        listed_as=record["endpoint_tag"],
        quantization=record["quantization"],
        price_input_usd_per_mtok=number(record["price_input_usd_per_mtok"], 6),
        price_output_usd_per_mtok=number(record["price_output_usd_per_mtok"], 6),
        price_cache_read_usd_per_mtok=number(record["price_cache_read_usd_per_mtok"], 6),
        discount=number(record["discount"]),
        context_window=record["context_window"],
        max_output_tokens=record["max_output_tokens"],
        function_calling=record["function_calling"],
        status=record["status"],
        observed_at=timestamp(record["observed_at"]),
        source=lookups.source_ref(record["source_id"], record["snapshot_id"]),
    )


def _model_rows(records: list[Record], lookups: _Lookups) -> list[ModelRow]:
    rows = []
    for model_id, figures in _grouped(records, "model_id").items():
        model = lookups.models[model_id]
        rows.append(
            ModelRow(
                id=model_id,
                name=model["name"],
                reviewed=bool(model["reviewed"]),
                figures=[_model_figure(f, lookups) for f in figures],
            )
        )
    return sorted(rows, key=lambda row: row.id)


def _model_figure(record: Record, lookups: _Lookups) -> ModelFigure:
    workload = json.loads(record["workload"]) if record["workload"] else {}
    return ModelFigure(
        metric=record["metric"],
        statistic=record["statistic"],
        value=number(record["value"]),
        unit=record["unit"],
        reasoning_effort=record["reasoning_effort"],
        method=record["method"],
        window_minutes=record["window_minutes"],
        prompt_length_tokens=workload.get("prompt_length_tokens"),
        parallel_queries=workload.get("parallel_queries"),
        observed_at=timestamp(record["observed_at"]),
        stale=bool(record["stale"]),
        tier=record["tier"],
        source=lookups.source_ref(record["source_id"], record["snapshot_id"]),
        attribution=lookups.attribution(record["source_id"]),
    )


def inference_export(inputs: ExportInputs, info: ReleaseInfo) -> Inference:
    lookups = _Lookups(inputs)
    headlines = {h["provider_id"]: h for h in inputs.headlines}
    context = _grouped(inputs.context, "provider_id")
    figures = _grouped(inputs.live_figures, "provider_id")
    claims = _grouped(inputs.claims, "provider_id")
    claim_sources = _grouped(inputs.claim_sources, "claim_id")
    beside = {record["claim_id"]: record for record in inputs.peak_vs_live}
    live = _LiveFigures(inputs.live_figures)
    prices = _grouped(inputs.endpoint_prices, "provider_id")
    rows = []
    for provider in inputs.providers:
        pid = provider["provider_id"]
        if pid not in headlines and not figures[pid] and not claims[pid] and not prices[pid]:
            continue
        headline = _headline(headlines[pid], lookups, context[pid]) if pid in headlines else None
        row_context = [_context(c, lookups) for c in context[pid]]
        live_figures = [Figure(**_figure_fields(f, lookups)) for f in figures[pid]]
        row_claims = [
            _claim(c, claim_sources[c["claim_id"]], beside.get(c["claim_id"]), live, lookups)
            for c in claims[pid]
        ]
        row_prices = [_price(p, lookups) for p in prices[pid]]
        used = {f.source.id for f in live_figures} | {c.source.id for c in row_context}
        used |= {p.source.id for p in row_prices}
        used |= {s.id for c in row_claims for s in c.sources}
        # the fastest live median beside a claim may be another provider's figure
        used |= {c.fastest_live_median.source.id for c in row_claims if c.fastest_live_median}
        if headline:
            used.add(headline.source.id)
        rows.append(
            Provider(
                id=pid,
                name=provider["name"],
                reviewed=bool(provider["reviewed"]),
                country=provider["country"],
                type=provider["type"],
                website=provider["website"],
                headline=headline,
                display=headline.display if headline else None,
                context=row_context,
                live_figures=live_figures,
                claims=row_claims,
                prices=row_prices,
                sources=[lookups.source_summary(s) for s in sorted(used)],
            )
        )
    models = _model_rows(inputs.model_figures, lookups)
    return Inference(
        export="inference", providers=rows, models=models, **_envelope(info, inputs, lookups)
    )


# --- model_platforms.json -------------------------------------------------------------------------


def _count(figure: ParsedFigure | None) -> ParsedCount | None:
    if figure is None:
        return None
    return ParsedCount(
        value=number(figure.value), qualifier=figure.qualifier, context=figure.context
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
        doc = lookups.source_ref(statement["source_id"], statement["snapshot_id"])
        # its own catalogue where one is read, else its listing in models.dev
        kind, listed = ("own", own[pid]) if own[pid] else ("models_dev", listings[pid])
        catalogue_snapshots = sorted({(e["source_id"], e["snapshot_id"]) for e in listed})
        catalogue = [lookups.source_ref(s, snap) for s, snap in catalogue_snapshots]
        models = sorted(
            {(e.get("platform_model_id") or e["catalogue_model_id"], e["model_id"]) for e in listed}
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
                    tier=doc.tier,
                ),
                listed_models=(
                    ListedModels(
                        count=len(models),
                        scope=platform["catalogue_scope"] if kind == "own" else None,
                        catalogue=kind,
                        models=[ListedModel(id=i, model=lookups.model(m)) for i, m in models],
                        sources=catalogue,
                    )
                    if listed
                    else None
                ),
                notable=platform["notable"].split(" · ") if platform["notable"] else [],
                sources=[PlatformSource(**dict(doc), role="documentation")]
                + [PlatformSource(**dict(c), role="catalogue") for c in catalogue],
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
    sources = sorted({(e["source_id"], e["snapshot_id"]) for e in entries})
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
        sources=[lookups.source_ref(s, snap) for s, snap in sources],
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
    with bulk_objects():
        return {name: sanitise(build(inputs, info)) for name, build in BUILDERS.items()}

"""Core tables of the warehouse (schema `core`). Each model documents its table: descriptions and
units become DuckDB column comments, and the same models validate what gets loaded."""

from __future__ import annotations

import pandas as pd
import pandera.pandas as pa
from pandera.typing import Series

from pipeline.schema.staging import UtcTimestamp
from pipeline.schema.vocabulary import (
    CLAIM_SCOPES,
    ENDPOINT_ID,
    FETCH_OUTCOMES,
    METHODS,
    METRICS,
    OBTAINED_BY,
    PLATFORM_KINDS,
    PRECISIONS,
    PROVIDER_TYPES,
    QUALIFIERS,
    REASONING_EFFORTS,
    SCOPES,
    SERVICE_TIERS,
    SOURCE_KINDS,
    STATISTICS,
    TIERS,
    TIME_BOUNDS,
    UNITS,
)


class CoreTable(pa.DataFrameModel):
    class Config:
        strict = True
        coerce = True


class Sources(CoreTable):
    """Every registered source with its tier and cadence, as of the build."""

    source_id: Series[str] = pa.Field(unique=True, description="registry id")
    kind: Series[str] = pa.Field(isin=list(SOURCE_KINDS))
    publisher: Series[str]
    title: Series[str] = pa.Field(nullable=True)
    url: Series[str] = pa.Field(str_startswith="http", description="http(s) address")
    tier: Series[str] = pa.Field(isin=list(TIERS), description="T1, T2 or T3 (docs/methodology.md)")
    format: Series[str] = pa.Field(description="parser that reads it")
    cadence: Series[str] = pa.Field(description="how often it should be refreshed")
    max_age_minutes: Series[int] = pa.Field(
        gt=0, metadata={"unit": "minutes"}, description="a figure older than this is stale"
    )
    confirmed_at: Series[UtcTimestamp] = pa.Field(
        nullable=True,
        description="latest time the source's newest snapshot was retrieved or re-confirmed "
        "unchanged by a fetch",
    )
    license: Series[str] = pa.Field(
        description="the terms its data is under: an SPDX id, publisher-terms (see terms_url) or "
        "unknown"
    )
    terms_url: Series[str] = pa.Field(nullable=True, description="where its terms are written")
    attribution_required: Series[pd.BooleanDtype] = pa.Field(
        nullable=True,
        description="whether the publisher requires credit wherever its data is shown (null: "
        "nobody knows)",
    )


class Snapshots(CoreTable):
    """Every raw snapshot the warehouse has read: the provenance of every figure."""

    snapshot_id: Series[str] = pa.Field(unique=True, description="<source_id>/<file>")
    source_id: Series[str]
    url: Series[str] = pa.Field(str_startswith="http")
    retrieved_at: Series[UtcTimestamp] = pa.Field(description="when the bytes were obtained")
    sha256: Series[str] = pa.Field(str_length={"min_value": 64, "max_value": 64})
    size_bytes: Series[int] = pa.Field(gt=0, metadata={"unit": "bytes"})
    content_type: Series[str]
    obtained_by: Series[str] = pa.Field(isin=list(OBTAINED_BY))
    note: Series[str] = pa.Field(nullable=True, description="provenance note")
    reconstructed_from: Series[str] = pa.Field(
        nullable=True,
        description="for a reconstructed snapshot, the title of the document it was rebuilt "
        "from; null for bytes as obtained",
    )
    reconstructed_from_url: Series[str] = pa.Field(
        nullable=True, description="that document's http(s) address, where known"
    )
    reconstructed_from_snapshot_id: Series[str] = pa.Field(
        nullable=True, description="the snapshot of that document it was rebuilt from, if stored"
    )
    reconstructed_qualifier: Series[str] = pa.Field(
        isin=list(QUALIFIERS),
        nullable=True,
        description="how that document gives its figures, where it rounds them (approx): every "
        "figure read from the reconstruction carries it",
    )
    retrieved_at_bound: Series[str] = pa.Field(
        isin=list(TIME_BOUNDS),
        description="exact, or lower_bound when the capture time was not recorded and "
        "retrieved_at is the earliest time it can have been (a time the response itself gives)",
    )
    in_scope: Series[bool] = pa.Field(
        description="the build reads it: listed in the store, retrieved up to the build's as-of "
        "time, and read by its parser without error"
    )


REVIEWED = (
    "a reviewer confirmed it (the reviewed file lists it); false for an entity kept under a "
    "source's stable id that no alias knows yet (speedbook resolve --pending)"
)
NAMED_BY = "the sources whose stable ids name an unreviewed entity; null when reviewed"


class Providers(CoreTable):
    """Inference providers, clouds and hardware vendors: reviewed (providers.csv), and unreviewed
    ones kept under a source's stable id."""

    provider_id: Series[str] = pa.Field(unique=True)
    name: Series[str]
    country: Series[str] = pa.Field(
        nullable=True, description="ISO 3166 alpha-2, where a source states it"
    )
    type: Series[str] = pa.Field(isin=list(PROVIDER_TYPES), nullable=True)
    website: Series[str] = pa.Field(nullable=True)
    reviewed: Series[bool] = pa.Field(description=REVIEWED)
    named_by: Series[str] = pa.Field(nullable=True, description=NAMED_BY)


class Models(CoreTable):
    """Canonical models: reviewed (models.csv), and unreviewed ones kept under a source's stable
    id."""

    model_id: Series[str] = pa.Field(unique=True)
    name: Series[str] = pa.Field(description="display name")
    creator: Series[str] = pa.Field(nullable=True)
    family: Series[str] = pa.Field(
        nullable=True,
        description="the undated model a dated snapshot belongs to (gpt-4o for "
        "gpt-4o-2024-11-20); null when the model is not a dated snapshot",
    )
    reviewed: Series[bool] = pa.Field(description=REVIEWED)
    named_by: Series[str] = pa.Field(nullable=True, description=NAMED_BY)


SCOPE = (
    "live (a statistic over a window on a public endpoint), one_off (a single benchmark run), "
    "peak_per_user or aggregate (a vendor's record), list_price: figures of different scopes "
    "never compare"
)
TIME_BOUND = (
    "exact; or lower_bound: the capture time was not recorded, observed_at is the earliest it "
    "can have been"
)
GRADED_TIER = (
    "tier of the figure's source; a figure read from a reconstructed snapshot carries the lower "
    "of that tier and the tier of the document it was rebuilt from"
)
SUSPECT = (
    "the source's own fields contradict the figure beyond a stated tolerance "
    "(docs/methodology.md): shown wherever the figure is, and never a headline"
)
REGION = (
    "region of a regional endpoint, as its source names it (OpenRouter's tag suffix "
    "'eu-west-1'); null for the provider's default endpoint"
)
MODEL_REGION = (
    "the region profile the catalogue's model id names (Bedrock's us., eu., apac., global.): a "
    "regional variant of one offer, not a model; null when it names none"
)
METHOD = (
    "how the figure was measured: fixed-workload probe (Artificial Analysis), percentiles of "
    "live routed traffic (OpenRouter), one-off run (LLMPerf), vendor record (a claim), or "
    "compiled (a compilation's figure whose cited page is not read here)"
)


ENDPOINT_KEY = (
    "what else tells the endpoint apart among a source's endpoints of one provider, model and "
    "variant: the words of OpenRouter's tag beyond the provider and region ('fp8' in "
    "novita/fp8), the model slug's variant ('free'); null when nothing does"
)


class Endpoints(CoreTable):
    """Provider x model x variant (and the source's key where it has one): the key of every
    speed figure."""

    endpoint_id: Series[str] = pa.Field(unique=True, description=ENDPOINT_ID)
    provider_id: Series[str]
    model_id: Series[str]
    precision: Series[str] = pa.Field(isin=list(PRECISIONS))
    service_tier: Series[str] = pa.Field(isin=list(SERVICE_TIERS))
    reasoning_effort: Series[str] = pa.Field(isin=list(REASONING_EFFORTS), nullable=True)
    region: Series[str] = pa.Field(nullable=True, description=REGION)
    endpoint_key: Series[str] = pa.Field(nullable=True, description=ENDPOINT_KEY)


class EndpointKeys(CoreTable):
    """How each source's own key for an endpoint (a provider label, an OpenRouter tag) maps to
    the endpoint: facts keep the key, so an identity rule re-maps keys and never rewrites
    facts."""

    class Config:
        unique = ["frame", "model_label", "endpoint_label", "precision_label", "tier_label"]

    frame: Series[str] = pa.Field(description="the staged frame the key comes from")
    model_label: Series[str] = pa.Field(description="the model as that frame writes it")
    endpoint_label: Series[str] = pa.Field(
        description="the endpoint as that frame writes it: a provider label, an OpenRouter tag"
    )
    precision_label: Series[str] = pa.Field(
        isin=list(PRECISIONS), description="the precision the frame states for the row"
    )
    tier_label: Series[str] = pa.Field(
        nullable=True,
        description="the service tier the frame states for the row, as written ('flex' of "
        "OpenRouter's statsByTier); null when it states none",
    )
    endpoint_id: Series[str] = pa.Field(description=ENDPOINT_ID)
    provider_id: Series[str]
    model_id: Series[str]
    precision: Series[str] = pa.Field(isin=list(PRECISIONS))
    service_tier: Series[str] = pa.Field(isin=list(SERVICE_TIERS))
    reasoning_effort: Series[str] = pa.Field(isin=list(REASONING_EFFORTS), nullable=True)
    region: Series[str] = pa.Field(nullable=True, description=REGION)
    endpoint_key: Series[str] = pa.Field(nullable=True, description=ENDPOINT_KEY)


class Observations(CoreTable):
    """One figure from one snapshot, every snapshot the build reads: the history of every
    figure. A view over the measured figures (core.measured_observations, made from the facts
    as their sources give them) and the figures each build derives (core.cited_observations);
    the mart picks the current ones."""

    observation_id: Series[str] = pa.Field(unique=True, description="stable hash of its origin")
    endpoint_id: Series[str]
    provider_id: Series[str]
    model_id: Series[str]
    precision: Series[str] = pa.Field(isin=list(PRECISIONS))
    service_tier: Series[str] = pa.Field(isin=list(SERVICE_TIERS))
    reasoning_effort: Series[str] = pa.Field(isin=list(REASONING_EFFORTS), nullable=True)
    region: Series[str] = pa.Field(nullable=True, description=REGION)
    endpoint_key: Series[str] = pa.Field(nullable=True, description=ENDPOINT_KEY)
    metric: Series[str] = pa.Field(isin=list(METRICS))
    scope: Series[str] = pa.Field(isin=list(SCOPES), description=SCOPE)
    method: Series[str] = pa.Field(isin=list(METHODS), description=METHOD)
    statistic: Series[str] = pa.Field(
        isin=list(STATISTICS),
        nullable=True,
        description="median, p50, p75, p90, p95 or p99 of the requests in the window; null for a "
        "record claim, a listed price, a bound or range, or a figure whose source does not say",
    )
    window_minutes: Series[pd.Int64Dtype] = pa.Field(
        gt=0,
        nullable=True,
        metadata={"unit": "minutes"},
        description="the window the statistic covers (4320: 72 hours; 30); null for a one-off "
        "run, a claim, or a source that does not say",
    )
    cited_source_id: Series[str] = pa.Field(
        nullable=True,
        description="the registered source this figure repeats (a compilation's cited page): "
        "never independent of it",
    )
    lineage: Series[str] = pa.Field(
        description="the measurement the figure repeats: claim:<claim_id> for a record claim "
        "(whichever page repeats it), else the cited source, else its own source. Two figures "
        "of one lineage never corroborate each other"
    )
    value: Series[float] = pa.Field(nullable=True, ge=0, description="the figure; null for a range")
    low: Series[float] = pa.Field(nullable=True, ge=0, description="range low end")
    high: Series[float] = pa.Field(nullable=True, ge=0, description="range high end")
    qualifier: Series[str] = pa.Field(
        isin=list(QUALIFIERS),
        nullable=True,
        description="approx, at_least, up_to, range; null when exact",
    )
    unit: Series[str] = pa.Field(isin=list(UNITS))
    observed_at: Series[UtcTimestamp] = pa.Field(description="when the figure was observed")
    observed_at_bound: Series[str] = pa.Field(isin=list(TIME_BOUNDS), description=TIME_BOUND)
    retrieved_at: Series[UtcTimestamp] = pa.Field(description="when its snapshot was retrieved")
    snapshot_id: Series[str]
    source_id: Series[str]
    tier: Series[str] = pa.Field(isin=list(TIERS), description=GRADED_TIER)
    origin: Series[str] = pa.Field(description="staged frame it came from")
    role: Series[str] = pa.Field(
        isin=["measured", "headline", "context", "row", "claim"],
        description="how the source presents it: a benchmark measurement, a compilation's "
        "headline, context or table row, or a record claim",
    )
    quote: Series[str] = pa.Field(description="the figure as the source wrote it")
    workload: Series[str] = pa.Field(nullable=True, description="benchmark workload, JSON")
    suspect: Series[bool] = pa.Field(description=SUSPECT)
    suspect_reason: Series[str] = pa.Field(
        nullable=True, description="which of the source's own fields contradict the figure"
    )


class MeasuredObservations(Observations):
    """The measured figures of core.observations (every figure a source's staged rows give),
    kept between builds: a build adds those of the snapshots new to its scope or whose
    extraction or grade changed, drops those of the snapshots that left it, and makes them all
    again when the rules that make them or a key or label mapping they were made with change,
    or when asked (`build --force`; pipeline/warehouse/measured.py)."""


class CurrentMeasured(Observations):
    """The current figure of each endpoint, metric, scope, method and statistic among the
    measured figures (core.current_of), kept between builds with them: a build that only adds
    snapshots merges their figures in; one that drops or makes figures again takes them anew.
    mart.current_observations takes these with the derived figures."""


class CitedObservations(Observations):
    """The figures each build derives, few whatever the history: compilations' figures, each
    joined to the endpoint of the measurement it cites, and record claims."""


class FiguresFromStaging(Observations):
    """The measured figures computed from the facts as their sources give them (staging), at
    each read: what core.measured_observations keeps, for checking it or reading a rule's
    effect without a build."""


class MeasuredSnapshots(CoreTable):
    """The snapshots whose figures core.measured_observations holds, each with what they were
    made from: a snapshot whose token differs now has its figures made again."""

    snapshot_id: Series[str] = pa.Field(unique=True)
    token: Series[str] = pa.Field(
        description="md5 of the rules, the extraction and the grade its figures were made with"
    )


class ContextFigures(CoreTable):
    """Figures a compilation gives beside a provider's headline that are not about one model
    (a model class, a range across models)."""

    provider_id: Series[str]
    figure_text: Series[str] = pa.Field(description="as written, e.g. '≈800 t/s on 8B-class'")
    value: Series[float] = pa.Field(nullable=True)
    low: Series[float] = pa.Field(nullable=True)
    high: Series[float] = pa.Field(nullable=True)
    qualifier: Series[str] = pa.Field(isin=list(QUALIFIERS), nullable=True)
    applies_to: Series[str] = pa.Field(nullable=True, description="model class or scope")
    model_id: Series[str] = pa.Field(nullable=True, description="model, when the figure names one")
    observed_at: Series[UtcTimestamp]
    snapshot_id: Series[str]
    source_id: Series[str]
    tier: Series[str] = pa.Field(isin=list(TIERS))
    row_number: Series[int] = pa.Field(description="row of the compilation's table")


class ModelFigures(CoreTable):
    """Model-level figures: a source's figure about a model across providers (Artificial
    Analysis's medians), never attributed to a provider or an endpoint."""

    figure_id: Series[str] = pa.Field(unique=True, description="stable hash of its origin")
    model_id: Series[str]
    reasoning_effort: Series[str] = pa.Field(isin=list(REASONING_EFFORTS), nullable=True)
    label: Series[str] = pa.Field(description="the model as the source names it")
    metric: Series[str] = pa.Field(isin=list(METRICS))
    scope: Series[str] = pa.Field(isin=list(SCOPES), description=SCOPE)
    statistic: Series[str] = pa.Field(
        isin=list(STATISTICS),
        nullable=True,
        description="the statistic of the probes (median); null for a listed price",
    )
    value: Series[float] = pa.Field(ge=0)
    unit: Series[str] = pa.Field(isin=list(UNITS))
    window_minutes: Series[pd.Int64Dtype] = pa.Field(
        gt=0, nullable=True, metadata={"unit": "minutes"}, description="the statistic's window"
    )
    method: Series[str] = pa.Field(isin=list(METHODS), description=METHOD)
    workload: Series[str] = pa.Field(
        nullable=True, description="the probes' workload (prompt length, parallel queries), JSON"
    )
    observed_at: Series[UtcTimestamp]
    observed_at_bound: Series[str] = pa.Field(isin=list(TIME_BOUNDS), description=TIME_BOUND)
    retrieved_at: Series[UtcTimestamp]
    snapshot_id: Series[str]
    source_id: Series[str]
    tier: Series[str] = pa.Field(isin=list(TIERS))


class EndpointOffers(CoreTable):
    """What a provider's endpoint offers, per listing (OpenRouter's API and website, Vercel's
    gateway): prices in USD per million tokens, limits, status, uptime over each source's own
    windows, and tool calling."""

    class Config:
        unique = ["snapshot_id", "catalogue_model_id", "endpoint_tag"]

    endpoint_id: Series[str] = pa.Field(description=ENDPOINT_ID)
    provider_id: Series[str]
    model_id: Series[str]
    precision: Series[str] = pa.Field(isin=list(PRECISIONS))
    service_tier: Series[str] = pa.Field(isin=list(SERVICE_TIERS))
    reasoning_effort: Series[str] = pa.Field(isin=list(REASONING_EFFORTS), nullable=True)
    region: Series[str] = pa.Field(nullable=True, description=REGION)
    endpoint_key: Series[str] = pa.Field(nullable=True, description=ENDPOINT_KEY)
    catalogue_model_id: Series[str] = pa.Field(description="the model's id in the source")
    endpoint_tag: Series[str] = pa.Field(description="the endpoint's key in the source")
    quantization: Series[str] = pa.Field(
        nullable=True, description="quantization as the source writes it ('mxfp4')"
    )
    status: Series[pd.Int64Dtype] = pa.Field(nullable=True, description="status code as given")
    context_window: Series[pd.Int64Dtype] = pa.Field(nullable=True, metadata={"unit": "tokens"})
    max_output_tokens: Series[pd.Int64Dtype] = pa.Field(nullable=True, metadata={"unit": "tokens"})
    max_prompt_tokens: Series[pd.Int64Dtype] = pa.Field(nullable=True, metadata={"unit": "tokens"})
    price_input_usd_per_mtok: Series[float] = pa.Field(nullable=True, ge=0)
    price_output_usd_per_mtok: Series[float] = pa.Field(nullable=True, ge=0)
    price_cache_read_usd_per_mtok: Series[float] = pa.Field(
        nullable=True, ge=0, description="price per million cached input tokens read [USD]"
    )
    price_cache_write_usd_per_mtok: Series[float] = pa.Field(
        nullable=True, ge=0, description="price per million input tokens written to cache [USD]"
    )
    discount: Series[float] = pa.Field(
        nullable=True, ge=0, le=1, description="fraction already taken off the prices"
    )
    function_calling: Series[pd.BooleanDtype] = pa.Field(nullable=True)
    uptime_last_5m: Series[float] = pa.Field(nullable=True, metadata={"unit": "%"})
    uptime_last_15m: Series[float] = pa.Field(nullable=True, metadata={"unit": "%"})
    uptime_last_30m: Series[float] = pa.Field(nullable=True, metadata={"unit": "%"})
    uptime_last_1h: Series[float] = pa.Field(nullable=True, metadata={"unit": "%"})
    uptime_last_1d: Series[float] = pa.Field(nullable=True, metadata={"unit": "%"})
    member_url: Series[str] = pa.Field(
        nullable=True, description="request URL of the response it came from"
    )
    observed_at: Series[UtcTimestamp]
    observed_at_bound: Series[str] = pa.Field(isin=list(TIME_BOUNDS), description=TIME_BOUND)
    retrieved_at: Series[UtcTimestamp]
    snapshot_id: Series[str]
    source_id: Series[str]
    tier: Series[str] = pa.Field(isin=list(TIERS), description=GRADED_TIER)


class CatalogueOffers(CoreTable):
    """Offers of a catalogue of many providers' catalogues (models.dev): one row per provider x
    model, per snapshot."""

    class Config:
        unique = ["snapshot_id", "catalogue_provider_id", "catalogue_model_id"]

    provider_id: Series[str] = pa.Field(description="the offering provider (reviewed or not)")
    platform_id: Series[str] = pa.Field(
        nullable=True, description="the reviewed platform whose catalogue this provider is"
    )
    catalogue_provider_id: Series[str] = pa.Field(description="the provider's id in the source")
    catalogue_model_id: Series[str] = pa.Field(description="the model's id in the source")
    model_id: Series[str] = pa.Field(nullable=True)
    region: Series[str] = pa.Field(nullable=True, description=MODEL_REGION)
    name: Series[str]
    family: Series[str] = pa.Field(nullable=True, description="model family as listed")
    price_input_usd_per_mtok: Series[float] = pa.Field(nullable=True, ge=0)
    price_output_usd_per_mtok: Series[float] = pa.Field(nullable=True, ge=0)
    price_cache_read_usd_per_mtok: Series[float] = pa.Field(
        nullable=True, ge=0, description="price per million cached input tokens read [USD]"
    )
    price_cache_write_usd_per_mtok: Series[float] = pa.Field(
        nullable=True, ge=0, description="price per million input tokens written to cache [USD]"
    )
    context_window: Series[pd.Int64Dtype] = pa.Field(nullable=True, metadata={"unit": "tokens"})
    max_output_tokens: Series[pd.Int64Dtype] = pa.Field(nullable=True, metadata={"unit": "tokens"})
    function_calling: Series[pd.BooleanDtype] = pa.Field(nullable=True)
    reasoning: Series[pd.BooleanDtype] = pa.Field(
        nullable=True, description="the catalogue marks a reasoning model"
    )
    open_weights: Series[pd.BooleanDtype] = pa.Field(
        nullable=True, description="the catalogue marks the weights as published"
    )
    release_date: Series[str] = pa.Field(nullable=True, description="as written")
    last_updated: Series[str] = pa.Field(nullable=True, description="as written")
    status: Series[str] = pa.Field(nullable=True, description="as written ('beta')")
    unread: Series[str] = pa.Field(
        nullable=True, description="values the catalogue gave that were not what its schema says"
    )
    provider_doc_url: Series[str] = pa.Field(
        nullable=True, description="the provider's model documentation (http(s) only)"
    )
    observed_at: Series[UtcTimestamp]
    snapshot_id: Series[str]
    source_id: Series[str]


class Claims(CoreTable):
    """Reviewed record claims (claims.toml) with their qualifiers."""

    claim_id: Series[str] = pa.Field(unique=True)
    provider_id: Series[str]
    model_id: Series[str]
    endpoint_id: Series[str]
    hardware: Series[str] = pa.Field(nullable=True)
    figure_text: Series[str] = pa.Field(description="as the sources write it")
    value: Series[float] = pa.Field(gt=0)
    qualifier: Series[str] = pa.Field(isin=list(QUALIFIERS), nullable=True)
    unit: Series[str]
    scope: Series[str] = pa.Field(isin=list(CLAIM_SCOPES))
    precision: Series[str] = pa.Field(isin=list(PRECISIONS))
    technique: Series[str] = pa.Field(nullable=True, description="e.g. speculative decoding")
    verified_by: Series[str] = pa.Field(nullable=True, description="who measured it, if stated")
    claimed: Series[str] = pa.Field(nullable=True, description="year the claim was made")
    notes: Series[str] = pa.Field(nullable=True)


class ClaimEvidence(CoreTable):
    """Where each claim was found: source, snapshot and the verified quote."""

    claim_id: Series[str]
    source_id: Series[str]
    snapshot_id: Series[str]
    tier: Series[str] = pa.Field(isin=list(TIERS))
    retrieved_at: Series[UtcTimestamp]
    quote: Series[str]


class Platforms(CoreTable):
    """Model-access platforms (reviewed: platforms.toml) with the model count they state."""

    platform_id: Series[str] = pa.Field(unique=True)
    name: Series[str]
    owner: Series[str]
    kind: Series[str] = pa.Field(isin=list(PLATFORM_KINDS))
    stated_count: Series[str] = pa.Field(description="as written")
    stated_count_value: Series[float] = pa.Field(nullable=True, metadata={"unit": "models"})
    stated_count_qualifier: Series[str] = pa.Field(isin=list(QUALIFIERS), nullable=True)
    notable: Series[str] = pa.Field(nullable=True, description="' · '-joined")
    doc_source_id: Series[str]
    catalogue_scope: Series[str] = pa.Field(nullable=True)


class PlatformModels(CoreTable):
    """Catalogue entries: which platform lists which model, from each catalogue snapshot."""

    platform_id: Series[str]
    platform_model_id: Series[str] = pa.Field(description="the platform's own id")
    name: Series[str]
    publisher: Series[str] = pa.Field(nullable=True)
    task: Series[str] = pa.Field(nullable=True)
    model_id: Series[str] = pa.Field(
        nullable=True,
        description="the model (reviewed, or unreviewed under the catalogue's id); null when "
        "the id yields no slug",
    )
    precision: Series[str] = pa.Field(isin=list(PRECISIONS), description="parsed from the name")
    service_tier: Series[str] = pa.Field(
        isin=list(SERVICE_TIERS), description="parsed from the name"
    )
    region: Series[str] = pa.Field(nullable=True, description=MODEL_REGION)
    function_calling: Series[pd.BooleanDtype] = pa.Field(nullable=True)
    beta: Series[pd.BooleanDtype] = pa.Field(nullable=True)
    lora: Series[pd.BooleanDtype] = pa.Field(nullable=True)
    context_window: Series[pd.Int64Dtype] = pa.Field(nullable=True, metadata={"unit": "tokens"})
    price_input_usd_per_mtok: Series[float] = pa.Field(nullable=True)
    price_output_usd_per_mtok: Series[float] = pa.Field(nullable=True)
    price_cached_input_usd_per_mtok: Series[float] = pa.Field(
        nullable=True, description="price per million cached input tokens [USD]"
    )
    other_prices: Series[str] = pa.Field(
        nullable=True, description="prices in units not read as numbers, as written"
    )
    planned_deprecation: Series[str] = pa.Field(nullable=True)
    source_id: Series[str]
    snapshot_id: Series[str]
    observed_at: Series[UtcTimestamp]


class Extractions(CoreTable):
    """How each snapshot's extraction went: copied from the staging cache so that the core layer
    (and its Parquet copy) says which snapshots were read and which failed."""

    snapshot_id: Series[str] = pa.Field(unique=True)
    source_id: Series[str]
    format: Series[str] = pa.Field(description="parser that read it")
    parser_version: Series[str] = pa.Field(description="version of the parser that read it")
    status: Series[str] = pa.Field(
        isin=["ok", "failed", "damaged"],
        description="ok; failed (the parser raised); damaged (bytes no longer match sha256)",
    )
    error: Series[str] = pa.Field(nullable=True, description="why it failed, naming the snapshot")
    rows_extracted: Series[int] = pa.Field(
        ge=0, metadata={"unit": "rows"}, description="rows over every staged frame"
    )
    row_counts: Series[str] = pa.Field(nullable=True, description="rows per staged frame, JSON")


class FetchOutcomes(CoreTable):
    """Every fetch outcome in the sources' logs (<warehouse>/state/fetch/<source_id>.jsonl): one
    row per `speedbook fetch` of a source, whatever happened."""

    source_id: Series[str]
    log_line: Series[int] = pa.Field(ge=1, description="position in the source's log, from 1")
    outcome: Series[str] = pa.Field(isin=list(FETCH_OUTCOMES))
    detail: Series[str] = pa.Field(
        nullable=True, description="for failed, the reason; otherwise what was stored or matched"
    )
    fetched_at: Series[UtcTimestamp] = pa.Field(description="when the fetch ended")
    snapshot_id: Series[str] = pa.Field(
        nullable=True, description="the new or identical snapshot, <source_id>/<file>"
    )
    http_status: Series[pd.Int64Dtype] = pa.Field(
        nullable=True, description="status of the final response, if one arrived"
    )
    size_bytes: Series[pd.Int64Dtype] = pa.Field(
        nullable=True, metadata={"unit": "bytes"}, description="decoded body size, if read"
    )
    attempts: Series[int] = pa.Field(ge=0, description="requests made; 0 when skipped")


# Tables each build fills again, in one transaction, from the reviewed files, the store's records
# and the SQL of sql/core/: small, whatever the history's size.
CORE_TABLES: dict[str, type[CoreTable]] = {
    "sources": Sources,
    "snapshots": Snapshots,
    "providers": Providers,
    "models": Models,
    "endpoint_keys": EndpointKeys,
    "endpoints": Endpoints,
    "cited_observations": CitedObservations,
    "context_figures": ContextFigures,
    "claims": Claims,
    "claim_evidence": ClaimEvidence,
    "platforms": Platforms,
    "fetch_outcomes": FetchOutcomes,
}
# Tables kept from build to build, each brought up to date with what is new: the measured
# figures, a pass over the whole history to compute (pipeline/warehouse/measured.py).
KEPT_TABLES: dict[str, type[CoreTable]] = {
    "measured_observations": MeasuredObservations,
    "measured_snapshots": MeasuredSnapshots,
    "current_measured": CurrentMeasured,
}
# Views over the facts (sql/core/): documented by their models, checked by the asset checks.
CORE_VIEWS: dict[str, type[CoreTable]] = {
    "observations": Observations,
    "figures_from_staging": FiguresFromStaging,
    "model_figures": ModelFigures,
    "endpoint_offers": EndpointOffers,
    "catalogue_offers": CatalogueOffers,
    "platform_models": PlatformModels,
    "extractions": Extractions,
}

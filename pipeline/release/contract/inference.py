"""inference.json: one row per provider with figures or claims, and one row per model with its
endpoints across providers, their figures per method, prices, uptime and rankings."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from pipeline.release.contract.common import (
    BEFORE_2,
    CITED_SNAPSHOT,
    CITED_SOURCE,
    HIGH,
    LOW,
    QUALIFIER,
    REVIEWED,
    TIME_BOUND,
    VALUE,
    Attribution,
    Citation,
    Contract,
    Envelope,
    ModelRef,
    Variant,
)
from pipeline.release.contract.types import (
    Amount,
    CountryCode,
    EndpointId,
    Id,
    PositiveCount,
    Ratio,
    Text,
    Timestamp,
    Url,
)
from pipeline.schema.vocabulary import (
    ClaimScope,
    Method,
    Metric,
    Precision,
    ProviderType,
    Qualifier,
    ReasoningEffort,
    Scope,
    ServiceTier,
    Statistic,
    Tier,
    TimeBound,
    Unit,
)

METHOD = (
    "how the figure was measured: fixed-workload probe (Artificial Analysis: the same prompt "
    "for every provider), percentiles of live routed traffic (OpenRouter), one-off run "
    "(LLMPerf), vendor record (a claim), compiled (a compilation whose cited page is not read), "
    "listed price (a price as listed, not a measurement); figures of different methods are "
    "never ranked, corroborated or disputed against each other"
)
SCOPE = (
    "live (a statistic over a window on a public endpoint), one_off (a single benchmark run), "
    "peak_per_user or aggregate (a vendor's record), list_price (a price as listed): figures of "
    "different scopes never compare"
)
STATISTIC = (
    "median, p50, p75, p90, p95 or p99 of the requests in the window, as the source gives it; "
    "null for a record, a listed price, or a source that does not say"
)
WINDOW = "minutes the statistic covers (4320: 72 hours; 30); null for a one-off run or a record"
TIER = (
    "tier of the figure: its source's, or for a figure read from a reconstructed snapshot the "
    "lower of that and the tier of the document it was rebuilt from"
)
STALE = (
    "older than its source's cadence allows at the release's data date; a stale figure is kept "
    "only while nothing fresher exists"
)
SUSPECT = (
    "the source's own fields contradict the figure beyond the tolerance stated in "
    "docs/methodology.md (suspect_reason says which): shown, never a headline, never ranked"
)
DISPLAY = (
    "the figure as a page shows it: ~ only for an approximate figure, a bound or range written "
    "as one (up to 740 t/s), what it is about, the method and statistic, and its date, e.g. "
    "187.1 t/s · Llama 4 Maverick · probe median, 72 h · as of 2026-06-28"
)
ATTRIBUTION = (
    "the credit the source's terms require wherever this figure is shown; null when its terms "
    "require none or nobody knows"
)


class ProviderRef(Contract):
    """A provider, by id and name."""

    id: Id = Field(description="provider id (pipeline/metadata/providers.csv)")
    name: Text = Field(description="the provider's display name")
    reviewed: bool = Field(description=REVIEWED)


class Labelled(Contract):
    """What a figure is, exactly as its source says it: separate scope, method, statistic, window
    and qualifier that never contradict, its date and how exact that is, its tier, its flags, and
    where it was read."""

    metric: Metric = Field(
        description="output_tokens_per_s (output speed), ttft_s (time to first token), e2e_s "
        "(end-to-end time), time_to_first_answer_token_s or a price in USD per 1M tokens"
    )
    scope: Scope = Field(description=SCOPE)
    method: Method | None = Field(
        description=f"{METHOD}; null only in releases before schema 1.2, which did not record it"
    )
    statistic: Statistic | None = Field(description=STATISTIC)
    window_minutes: PositiveCount | None = Field(description=WINDOW)
    value: Amount | None = Field(description=VALUE)
    low: Amount | None = Field(description=LOW)
    high: Amount | None = Field(description=HIGH)
    qualifier: Qualifier | None = Field(description=QUALIFIER)
    unit: Unit = Field(description="unit of value, low and high")
    observed_at: Timestamp = Field(description="when the figure was observed (UTC)")
    observed_at_bound: TimeBound = Field(description=TIME_BOUND)
    stale: bool = Field(description=STALE)
    tier: Tier = Field(description=TIER)
    suspect: bool = Field(description=SUSPECT)
    suspect_reason: Text | None = Field(
        description="which of the source's own fields contradict the figure; null unless suspect"
    )
    corroborated_by: list[Id] = Field(
        description="independent sources of the same measurement (method and statistic; the two "
        "routers' live-traffic percentiles count as one kind) whose figure on a comparable "
        "endpoint agrees within 10%, observed within 7 days; independent: another publisher, "
        "and neither repeats the other (a cited page, a repeated claim, one reconstruction)"
    )
    disputed_by: list[Id] = Field(
        description="independent sources of the same measurement whose figure differs by more "
        "than 10% (observed within 7 days)"
    )
    source: Id = Field(description=CITED_SOURCE)
    snapshot: Text = Field(description=CITED_SNAPSHOT)
    attribution: Attribution | None = Field(description=ATTRIBUTION)
    display: Text | None = Field(description=f"{DISPLAY}; {BEFORE_2}")


class Figure(Labelled):
    """A current figure of an endpoint (provider x model x variant) for one metric, scope, method
    and statistic: the best-tier, newest observation (mart.current_figures)."""

    endpoint: EndpointId = Field(
        description="the endpoint, as the warehouse spells it (core.endpoint_id): "
        "provider/model/precision/service_tier/reasoning_effort[@region][~key], - for an effort "
        "not stated"
    )
    model: ModelRef = Field(description="the model the figure was measured on")
    variant: Variant = Field(description="the endpoint's variant")


class Headline(Figure):
    """The figure the headline rule picked for a provider (mart.provider_headline): never a
    bound, a range or a suspect figure."""

    rule: Text = Field(description="which step of the headline rule picked the figure")


class ContextFigure(Contract):
    """A figure shown beside a provider's headline: one the seed gives only with a qualifier
    (≈800 t/s on 8B-class, 35–434 t/s across models), never pinned to an invented model."""

    text: Text = Field(description="the figure as the source writes it")
    value: Amount | None = Field(description=VALUE)
    low: Amount | None = Field(description=LOW)
    high: Amount | None = Field(description=HIGH)
    qualifier: Qualifier | None = Field(description=QUALIFIER)
    applies_to: Text | None = Field(
        description="what the figure applies to when it names no model (8B-class, across "
        "models); null when it names one"
    )
    model: ModelRef | None = Field(description="the model the figure names, if any")
    tier: Tier = Field(description="tier of the figure's source")
    source: Id = Field(description=CITED_SOURCE)
    snapshot: Text = Field(description=CITED_SNAPSHOT)
    attribution: Attribution | None = Field(description=ATTRIBUTION)


class ClaimSource(Citation):
    """A source carrying a claim: its newest snapshot, and the tier it gives the claim."""

    tier: Tier = Field(description="the tier this source gives the claim")


class Claim(Contract):
    """A record claim (reviewed, pipeline/metadata/claims.toml) beside what the same provider's
    own endpoint sustains live, as mart.peak_vs_live puts them: never another provider's."""

    id: Id = Field(description="claim id (pipeline/metadata/claims.toml)")
    model: ModelRef | None = Field(description="the model the claim was measured on")
    hardware: Text | None = Field(description="hardware the claim names, e.g. Cerebras WSE-3")
    figure: Text = Field(description="the claimed figure as the sources write it")
    value: float = Field(gt=0, description="the claimed figure as a number [tokens/s]")
    qualifier: Qualifier | None = Field(description=QUALIFIER)
    unit: Literal["tokens/s"] = Field(description="unit of value")
    scope: ClaimScope = Field(
        description="peak_per_user (best case, one stream) or aggregate (all users of a "
        "server together)"
    )
    precision: Precision = Field(description="precision the claim states; unknown when none")
    technique: Text | None = Field(
        description="technique behind the figure, e.g. speculative decoding"
    )
    verified_by: Text | None = Field(description="who measured the figure, if stated")
    claimed: Text | None = Field(description="when the claim was made (a year)")
    notes: Text | None = Field(description="the reviewer's notes on the claim")
    sources: list[ClaimSource] = Field(
        min_length=1, description="every source carrying the claim, newest snapshot of each"
    )
    live: Figure | None = Field(
        description="what the claim's own endpoint sustains live (mart.peak_vs_live): the same "
        "provider's current central (median or p50) live output speed on the same model, a "
        "point figure that is not suspect, at a compatible precision (equal, or unstated on one "
        "side), fresh first, then by tier, then by method, then newest; null when it has none. "
        "Never another provider's figure: that measures another system"
    )
    peak_to_live_ratio: Ratio | None = Field(
        description="value / live.value, 2 decimals: how far a per-user record sits above what "
        "its own endpoint sustains live; null for an aggregate claim and without a live figure"
    )


class OfferFields(Contract):
    """What an endpoint offers, from its own newest listing (mart.endpoint_offers: an endpoint
    polled earlier than its source's newest snapshot keeps its prices)."""

    listed_as: Text = Field(description="the endpoint's key in the source (OpenRouter's tag)")
    quantization: Text | None = Field(
        description="quantization as the source writes it (mxfp4), beside variant.precision"
    )
    price_input_usd_per_mtok: Amount | None = Field(
        description="price per million input tokens, net of any discount [USD]"
    )
    price_output_usd_per_mtok: Amount | None = Field(
        description="price per million output tokens, net of any discount [USD]"
    )
    price_cache_read_usd_per_mtok: Amount | None = Field(
        description="price per million cached input tokens read, net of any discount [USD]"
    )
    price_cache_write_usd_per_mtok: Amount | None = Field(
        description="price per million input tokens written to the cache, net of any discount [USD]"
    )
    discount: Amount | None = Field(
        description="fraction the source already took off these prices (list = price / (1 - "
        "discount)); null when none is stated"
    )
    uptime_last_5m: Amount | None = Field(
        description="share of requests served over the last 5 minutes, as the source gives it "
        "[%]; null when not given"
    )
    uptime_last_30m: Amount | None = Field(description="the same over the last 30 minutes [%]")
    uptime_last_1d: Amount | None = Field(description="the same over the last day [%]")
    context_window: PositiveCount | None = Field(description="context window [tokens]")
    max_output_tokens: PositiveCount | None = Field(description="most output tokens [tokens]")
    max_prompt_tokens: PositiveCount | None = Field(description="most prompt tokens [tokens]")
    function_calling: bool | None = Field(description="the endpoint accepts tools")
    status: int | None = Field(description="the source's status code of the endpoint, as given")
    observed_at: Timestamp = Field(description="when the listing was read (UTC)")
    observed_at_bound: TimeBound = Field(description=TIME_BOUND)
    stale: bool = Field(description=STALE)
    tier: Tier = Field(description=TIER)
    source: Id = Field(description=CITED_SOURCE)
    snapshot: Text = Field(description=CITED_SNAPSHOT)
    attribution: Attribution | None = Field(description=ATTRIBUTION)


class Offer(OfferFields):
    """One of a provider's endpoints as its own newest listing describes it."""

    endpoint: EndpointId = Field(description="the endpoint (core.endpoint_id)")
    model: ModelRef = Field(description="the model the endpoint serves")
    variant: Variant = Field(description="the endpoint's variant")


class Provider(Contract):
    """A provider with figures, claims or listed endpoints: its headline, context figures, every
    current figure of its endpoints, its record claims, its endpoints' offers, and the sources
    they cite."""

    # a reviewed provider always has its type (providers.csv requires one)
    model_config = ConfigDict(
        **Contract.model_config,
        json_schema_extra={
            "if": {"properties": {"reviewed": {"const": True, "description": "reviewed"}}},
            "then": {
                "properties": {
                    "type": {"type": "string", "description": "a reviewed provider's type"}
                }
            },
        },
    )

    id: Id = Field(
        description="provider id: a reviewed one (pipeline/metadata/providers.csv), or the "
        "normalised slug of a source's id"
    )
    name: Text = Field(description="the provider's display name")
    reviewed: bool = Field(description=REVIEWED)
    country: CountryCode | None = Field(description="ISO 3166-1 alpha-2 code of where it is based")
    type: ProviderType | None = Field(
        description="inference_api, cloud or hardware_vendor; null for an unreviewed provider"
    )
    website: Url | None = Field(description="the provider's website")
    headline: Headline | None = Field(
        description="the figure the headline rule picked: a current T1 central (median or p50) "
        "output speed on the provider's reference model, never a bound, range or suspect "
        "figure; null when there is none of any age"
    )
    display: Text | None = Field(
        description="headline.display, with the context figures the headline's compilation "
        "gives beside it; null without a headline"
    )
    context: list[ContextFigure] = Field(description="figures shown beside the headline")
    figures: list[Figure] = Field(
        description="every current measured figure (scope live or one_off) of the provider's "
        "endpoints, all metrics, methods and statistics, sorted by model, endpoint, metric, "
        "method and statistic"
    )
    claims: list[Claim] = Field(description="the provider's record claims")
    offers: list[Offer] = Field(
        description="each of its endpoints' own newest listing (prices, uptime, limits), sorted "
        "by endpoint"
    )
    sources: list[Id] = Field(description="every source the row cites (see `sources`), sorted")


class EndpointFigure(Labelled):
    """A current figure of a model's endpoint (the endpoint, model and variant are the row's)."""


class ModelEndpoint(Contract):
    """One endpoint of the model: a provider serving it in one variant, with its current figures
    per method and statistic and its own newest listing."""

    id: EndpointId = Field(description="the endpoint (core.endpoint_id)")
    provider: ProviderRef = Field(description="the provider serving it")
    variant: Variant = Field(description="the endpoint's variant")
    figures: list[EndpointFigure] = Field(
        description="its current measured figures (scope live or one_off): every metric, "
        "method and statistic the sources give (p50 and the tails: p75, p90, p95, p99), sorted "
        "by metric, method and statistic"
    )
    offer: OfferFields | None = Field(
        description="its own newest listing (prices incl. cache, uptime over 5 minutes, 30 "
        "minutes and a day, limits); null when no source lists it"
    )


class RankedEndpoint(Contract):
    """One place of a ranking."""

    rank: PositiveCount | None = Field(
        description="1 = fastest fresh figure; a stale figure ranks after every fresh one; ties "
        "share a rank; null for a suspect figure, listed last and never ranked"
    )
    endpoint: EndpointId = Field(description="the endpoint (see the model's endpoints)")
    provider: Id = Field(description="the provider's id")
    value: Amount = Field(description="the figure ranked [tokens/s]")
    qualifier: Literal["approx"] | None = Field(
        description="approx when the source gives an approximate figure; null when exact "
        "(bounds and ranges are never ranked)"
    )
    stale: bool = Field(description=STALE)
    suspect: bool = Field(description=SUSPECT)
    tier: Tier = Field(description=TIER)
    observed_at: Timestamp = Field(description="when the figure was observed (UTC)")
    observed_at_bound: TimeBound = Field(description=TIME_BOUND)
    source: Id = Field(description=CITED_SOURCE)
    snapshot: Text = Field(description=CITED_SNAPSHOT)
    display: Text = Field(description=DISPLAY)


class Ranking(Contract):
    """The model's endpoints of one variant ranked by one method and statistic of output speed
    (mart.leaderboard): figures of different methods or statistics are never ranked together."""

    metric: Literal["output_tokens_per_s"] = Field(description="what is ranked: output speed")
    scope: Scope = Field(description=SCOPE)
    method: Method = Field(description=METHOD)
    statistic: Statistic | None = Field(description=STATISTIC)
    window_minutes: PositiveCount | None = Field(description=WINDOW)
    precision: Precision = Field(description="the variant ranked: precision")
    service_tier: ServiceTier = Field(description="the variant ranked: service tier")
    reasoning_effort: ReasoningEffort | None = Field(
        description="the variant ranked: reasoning effort; null when not stated"
    )
    region: Text | None = Field(description="the variant ranked: region; null for the default")
    rule: Text = Field(description="how the ranking treats stale, suspect and bounded figures")
    entries: list[RankedEndpoint] = Field(min_length=1, description="best first")


class ModelFigure(Contract):
    """A model-level figure: a source's figure about a model across the providers it measures
    (Artificial Analysis's medians and its listed prices), never one provider's endpoint."""

    metric: Metric = Field(
        description="output_tokens_per_s, ttft_s, time_to_first_answer_token_s, or a price "
        "(blended, input, output) per 1M tokens"
    )
    scope: Scope = Field(description=SCOPE)
    method: Method = Field(description=METHOD)
    statistic: Statistic | None = Field(description=STATISTIC)
    window_minutes: PositiveCount | None = Field(description=WINDOW)
    value: Amount = Field(description="the figure")
    unit: Unit = Field(description="unit of value")
    reasoning_effort: ReasoningEffort | None = Field(
        description="reasoning effort the model was run at, as the source names the model; "
        "null when not stated"
    )
    prompt_length_tokens: PositiveCount | None = Field(
        description="the probes' prompt length [tokens]"
    )
    parallel_queries: PositiveCount | None = Field(description="the probes' parallel queries")
    observed_at: Timestamp = Field(description="when the figure was observed (UTC)")
    observed_at_bound: TimeBound = Field(description=TIME_BOUND)
    stale: bool = Field(description=STALE)
    tier: Tier = Field(description=TIER)
    source: Id = Field(description=CITED_SOURCE)
    snapshot: Text = Field(description=CITED_SNAPSHOT)
    attribution: Attribution | None = Field(description=ATTRIBUTION)
    display: Text | None = Field(description=f"{DISPLAY}; {BEFORE_2}")


class ModelRow(Contract):
    """A model with endpoints or model-level figures: what a site needs to answer "the endpoints
    of model X, fastest first"."""

    id: Id = Field(description="model id (reviewed, or the slug of a source's id)")
    name: Text = Field(description="the model's display name")
    family: Id | None = Field(
        description="the undated model a dated snapshot belongs to (gpt-4o for "
        "gpt-4o-2024-11-20); null when the model is not a dated snapshot"
    )
    reviewed: bool = Field(description=REVIEWED)
    endpoints: list[ModelEndpoint] = Field(
        description="its endpoints across providers with current figures or a listing, sorted "
        "by provider and endpoint id"
    )
    rankings: list[Ranking] = Field(
        description="its endpoints ranked by output speed, one ranking per variant, method and "
        "statistic"
    )
    figures: list[ModelFigure] = Field(
        description="its model-level figures: the newest per metric, method and reasoning effort"
    )


class Inference(Envelope):
    """Providers (headline, context figures, every current figure, record claims beside their own
    endpoint's live figure, endpoint offers) and models (endpoints across providers with figures
    per method, offers and rankings; model-level figures), citing the sources and snapshots of
    the envelope by id."""

    export: Literal["inference"] = Field(description="which export this file is")
    providers: list[Provider] = Field(
        description="one row per provider with figures, claims or listed endpoints, sorted by id"
    )
    models: list[ModelRow] = Field(
        description="one row per model with endpoints or model-level figures, sorted by id"
    )

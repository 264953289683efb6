"""inference.json: one row per provider with figures or claims."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from pipeline.release.contract.common import (
    HIGH,
    LOW,
    QUALIFIER,
    REVIEWED,
    URL,
    URL_TEMPLATE,
    VALUE,
    Contract,
    Envelope,
    ModelRef,
    SourceRef,
    Variant,
)
from pipeline.release.contract.types import (
    Amount,
    Count,
    CountryCode,
    EndpointId,
    Id,
    PositiveCount,
    Ratio,
    Text,
    Timestamp,
    Url,
    UrlTemplate,
)
from pipeline.schema.vocabulary import (
    ClaimScope,
    Method,
    Metric,
    Precision,
    ProviderType,
    Qualifier,
    Scope,
    SourceKind,
    Statistic,
    Tier,
    Unit,
)

METHOD = (
    "how the figure was measured: fixed-workload probe (Artificial Analysis: the same prompt "
    "for every provider), percentiles of live routed traffic (OpenRouter), one-off run "
    "(LLMPerf), vendor record (a claim), compiled (a compilation whose cited page is not read); "
    "null only in releases before schema 1.2, which did not record it"
)
STATISTIC = "median, p50, p75, p90 or p99 of the requests in the window; null when not stated"
WINDOW = "minutes the statistic covers (4320: 72 hours; 30); null for a one-off run or a record"


class ProviderRef(Contract):
    """A provider, by id and name."""

    id: Id = Field(description="provider id (pipeline/metadata/providers.csv)")
    name: Text = Field(description="the provider's display name")
    reviewed: bool = Field(description=REVIEWED)


class Figure(Contract):
    """A current figure of an endpoint (provider x model x variant) for one metric and scope:
    the best-tier, newest observation (mart.current_figures)."""

    endpoint: EndpointId = Field(
        description="the endpoint, as the warehouse spells it (core.endpoint_id): "
        "provider/model/precision/service_tier/reasoning_effort, - for an effort not stated"
    )
    model: ModelRef | None = Field(description="the model the figure was measured on")
    variant: Variant = Field(description="the endpoint's variant")
    metric: Metric = Field(
        description="output_tokens_per_s (output speed), ttft_s (time to first token), e2e_s "
        "(end-to-end time) or price_blended_usd_per_mtok (blended price)"
    )
    scope: Scope = Field(
        description="live_median (sustained, measured on a public endpoint over a window), "
        "peak_per_user (a record claim, one stream) or aggregate (all users of a server "
        "together); figures of different scopes never compare"
    )
    value: Amount | None = Field(description=VALUE)
    low: Amount | None = Field(description=LOW)
    high: Amount | None = Field(description=HIGH)
    qualifier: Qualifier | None = Field(description=QUALIFIER)
    unit: Unit = Field(description="unit of value, low and high")
    method: Method | None = Field(description=METHOD)
    statistic: Statistic | None = Field(description=STATISTIC)
    window_minutes: PositiveCount | None = Field(description=WINDOW)
    observed_at: Timestamp = Field(description="when the figure was observed (UTC)")
    stale: bool = Field(
        description="older than its source's cadence allows at the release's data date; a "
        "stale figure is kept only while nothing fresher exists"
    )
    tier: Tier = Field(description="tier of the figure's source")
    source: SourceRef = Field(description="where the figure comes from")
    corroborating_sources: Count = Field(description="how many sources corroborated_by names")
    corroborated_by: list[Id] = Field(
        description="independent sources of the same measurement (method and statistic) whose "
        "figure on a comparable endpoint agrees within 10%, observed within 7 days; independent: "
        "another publisher, and neither repeats the other (a cited page, a repeated claim)"
    )
    disputed_by: list[Id] = Field(
        description="independent sources of the same measurement whose figure differs by more "
        "than 10% (observed within 7 days)"
    )


class Headline(Figure):
    """The figure the headline rule picked for a provider (mart.provider_headline)."""

    rule: Text = Field(description="which step of the headline rule picked the figure")
    display: Text = Field(
        description="the headline in the fieldbook's style, e.g. ~321 t/s · Llama 3.3 70B "
        "(≈800 t/s on 8B-class); a stale one ends · as of <date>"
    )


class FastestLive(Figure):
    """The fastest current live median output speed on a claim's model, any provider."""

    provider: ProviderRef = Field(description="the provider whose endpoint it is")


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
    source: SourceRef = Field(description="where the figure comes from")


class Claim(Contract):
    """A record claim (reviewed, pipeline/metadata/claims.toml) beside what a live endpoint
    sustains, as mart.peak_vs_live puts them side by side."""

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
    sources: list[SourceRef] = Field(
        min_length=1, description="every source carrying the claim, newest snapshot of each"
    )
    live_median: Figure | None = Field(
        description="the live median mart.peak_vs_live puts beside the claim: the provider's "
        "current live median output speed on the same model, a point figure at a compatible "
        "precision (equal, or unstated on one side), fresh first, then by tier, then newest; "
        "null when the provider has none"
    )
    peak_to_live_ratio: Ratio | None = Field(
        description="value / live_median.value, 2 decimals: how far a per-user record sits "
        "above what the same provider sustains live; null for an aggregate claim and without "
        "a live median"
    )
    fastest_live_median: FastestLive | None = Field(
        description="the fastest current live median output speed on the claim's model, any "
        "provider (mart.peak_vs_live): a point figure at a compatible precision, fresh figures "
        "before stale ones, then fastest, then by tier, then by endpoint id; null when no "
        "provider has one"
    )
    peak_to_fastest_live_ratio: Ratio | None = Field(
        description="value / fastest_live_median.value, 2 decimals: a per-user record against "
        "the best any live endpoint sustains on the model; null for an aggregate claim and "
        "without a live median"
    )


class SourceSummary(Contract):
    """A source a provider's row cites."""

    id: Id = Field(description="registry id of the source (pipeline/metadata/sources.toml)")
    publisher: Text = Field(description="who publishes the source")
    kind: SourceKind = Field(
        description="benchmark, compilation, claim (a vendor's or the press's page) or platform_doc"
    )
    tier: Tier = Field(description="the source's tier")
    url: Url | None = Field(description=f"the source's address in the registry: {URL}")
    url_template: UrlTemplate | None = Field(description=URL_TEMPLATE)


class EndpointPrice(Contract):
    """What one of the provider's endpoints offers, as the newest usable snapshot of a source
    listing endpoints says (OpenRouter): prices, limits, tool calling."""

    endpoint: EndpointId = Field(description="the endpoint (core.endpoint_id)")
    model: ModelRef = Field(description="the model the endpoint serves")
    variant: Variant = Field(description="the endpoint's variant")
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
    discount: Amount | None = Field(
        description="fraction the source already took off these prices (list = price / (1 - "
        "discount)); null when none is stated"
    )
    context_window: PositiveCount | None = Field(description="context window [tokens]")
    max_output_tokens: PositiveCount | None = Field(description="most output tokens [tokens]")
    function_calling: bool | None = Field(description="the endpoint accepts tools")
    status: int | None = Field(description="the source's status code of the endpoint, as given")
    observed_at: Timestamp = Field(description="when the listing was read (UTC)")
    source: SourceRef = Field(description="where the listing comes from")


class Provider(Contract):
    """A provider with figures or claims: its headline, context figures, every current live
    figure, its record claims, its endpoints' prices, and the sources they cite."""

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
        description="the figure the headline rule picked: the current T1 live median output "
        "speed on the provider's reference model; null when there is none of any age"
    )
    display: Text | None = Field(description="headline.display, or null without a headline")
    context: list[ContextFigure] = Field(description="figures shown beside the headline")
    live_figures: list[Figure] = Field(
        description="every current live-median figure of the provider, all metrics, sorted by "
        "model, endpoint and metric"
    )
    claims: list[Claim] = Field(description="the provider's record claims")
    prices: list[EndpointPrice] = Field(
        description="its endpoints' prices and limits, sorted by endpoint and listing"
    )
    sources: list[SourceSummary] = Field(description="every source the row cites, sorted by id")


class Attribution(Contract):
    """The credit a source's terms require wherever its data is shown."""

    publisher: Text = Field(description="who to credit")
    url: Url = Field(description="the link the credit must carry")


class ModelFigure(Contract):
    """A model-level figure: a source's median about a model across the providers it measures
    (Artificial Analysis), never one provider's endpoint."""

    metric: Metric = Field(
        description="output_tokens_per_s, ttft_s or time_to_first_answer_token_s"
    )
    statistic: Statistic = Field(description="the statistic (median)")
    value: Amount = Field(description="the figure")
    unit: Unit = Field(description="unit of value")
    reasoning_effort: Text | None = Field(
        description="reasoning effort the model was run at, as the source names the model; "
        "null when not stated"
    )
    method: Method = Field(description=METHOD)
    window_minutes: PositiveCount | None = Field(description=WINDOW)
    prompt_length_tokens: PositiveCount | None = Field(
        description="the probes' prompt length [tokens]"
    )
    parallel_queries: PositiveCount | None = Field(description="the probes' parallel queries")
    observed_at: Timestamp = Field(description="when the figure was observed (UTC)")
    stale: bool = Field(description="older than its source's cadence allows at the data date")
    tier: Tier = Field(description="tier of the figure's source")
    source: SourceRef = Field(description="where the figure comes from")
    attribution: Attribution = Field(description="the credit its source requires")


class ModelRow(Contract):
    """A model with model-level figures."""

    id: Id = Field(description="model id (reviewed, or the slug of a source's id)")
    name: Text = Field(description="the model's display name")
    reviewed: bool = Field(description=REVIEWED)
    figures: list[ModelFigure] = Field(
        min_length=1, description="its newest figure per metric, method and reasoning effort"
    )


class Inference(Envelope):
    """One row per provider with figures: the headline (current T1 live median on the
    reference model), context figures, every current live figure, record claims beside the
    live median on the same model, and the sources with tiers."""

    export: Literal["inference"] = Field(description="which export this file is")
    providers: list[Provider] = Field(
        description="one row per provider with figures or claims, sorted by id"
    )
    models: list[ModelRow] = Field(
        description="model-level figures (Artificial Analysis's medians across providers), one "
        "row per model, sorted by id; each figure carries the attribution its source requires"
    )

"""Staged frames: what each parser returns, one model per frame.

Every model is strict (no unexpected columns), coercing, validated lazily (all failures at once),
and unique on its key. Labels are kept as the source wrote them (cleaned of markup); resolving
them to entities happens in the normalise step.
"""

from __future__ import annotations

from typing import Annotated

import pandas as pd
import pandera.pandas as pa
from pandera.typing import Series

from pipeline.schema.sql_checks import holds, sql_rule
from pipeline.schema.vocabulary import (
    MAX_TOKENS_PER_S,
    METHODS,
    PRECISIONS,
    QUALIFIERS,
    STATISTICS,
    TIERS,
)

UtcTimestamp = Annotated[pd.DatetimeTZDtype, "ns", "UTC"]


class StagedFrame(pa.DataFrameModel):
    """Columns every staged frame carries: where its rows came from."""

    source_id: Series[str] = pa.Field(str_length={"min_value": 1}, description="registry id")
    snapshot_id: Series[str] = pa.Field(
        str_length={"min_value": 1}, description="<source_id>/<snapshot file>"
    )
    observed_at: Series[UtcTimestamp] = pa.Field(
        description="when the figure was observed: the snapshot's retrieval time unless the "
        "source dates its figures itself"
    )

    class Config:
        strict = True
        coerce = True


def _speed(**kwargs: object) -> object:
    return pa.Field(gt=0, lt=MAX_TOKENS_PER_S, metadata={"unit": "tokens/s"}, **kwargs)


MAX_PRICE_USD_PER_MTOK = 100_000.0
MAX_COUNT = 10**12  # beyond any token limit; keeps hostile integers inside int64


def _price(description: str) -> object:
    return pa.Field(
        ge=0,
        lt=MAX_PRICE_USD_PER_MTOK,
        nullable=True,
        metadata={"unit": "USD per 1M tokens"},
        description=description,
    )


def _text(description: str, nullable: bool = False) -> object:
    """A label as the source writes it, cleaned of markup: never empty."""
    return pa.Field(str_length={"min_value": 1}, nullable=nullable, description=description)


def _url(description: str) -> object:
    return pa.Field(str_matches=r"^https?://", nullable=True, description=description)


def _count(description: str, unit: str = "tokens") -> object:
    return pa.Field(
        gt=0, le=MAX_COUNT, nullable=True, metadata={"unit": unit}, description=description
    )


def _flag(description: str) -> object:
    return pa.Field(nullable=True, description=description)


_MONTH_OR_DAY = r"^\d{4}-\d{2}(-\d{2})?$"
MAX_TTFT_S = 3600.0
# frame-wide rules, in SQL: the warehouse runs them as they are (pipeline/schema/sql_checks.py)
TIMES_WITHIN_AN_HOUR = f"metric = 'output_tokens_per_s' OR value < {MAX_TTFT_S}"


class AAEndpoints(StagedFrame):
    """One row per endpoint on an Artificial Analysis provider page."""

    page_model: Series[str] = pa.Field(
        str_length={"min_value": 1}, description="model the page measures"
    )
    endpoint_label: Series[str] = pa.Field(
        str_length={"min_value": 1}, description="provider label with variant, e.g. 'Azure (FP8)'"
    )
    output_tokens_per_s: Series[float] = _speed(nullable=True, description="median output speed")
    ttft_s: Series[float] = pa.Field(
        ge=0,
        lt=3600,
        nullable=True,
        metadata={"unit": "s"},
        description="median time to first token",
    )
    price_blended_usd_per_mtok: Series[float] = pa.Field(
        ge=0,
        lt=100_000,
        nullable=True,
        metadata={"unit": "USD per 1M tokens"},
        description="blended price, 3:1 input:output",
    )

    class Config:
        unique = ["snapshot_id", "endpoint_label"]


class CompilationFigures(StagedFrame):
    """Speed figures a compilation page reports per provider, each with the page it cites."""

    table_name: Series[str] = pa.Field(isin=["providers", "live"], description="which table")
    row_number: Series[int] = pa.Field(ge=1, description="1-based row in that table")
    role: Series[str] = pa.Field(
        isin=["headline", "context", "row"],
        description="headline (the provider's headline figure), context (a figure beside it "
        "that is not about one model) or row (a row of the live table)",
    )
    provider_label: Series[str] = pa.Field(
        str_length={"min_value": 1}, description="the provider as the page writes it"
    )
    # Null when the row names no model; an empty cell is a broken row, not a missing model.
    model_label: Series[str] = pa.Field(
        str_length={"min_value": 1}, nullable=True, description="model the figure is on"
    )
    applies_to: Series[str] = pa.Field(
        str_length={"min_value": 1},
        nullable=True,
        description="a model class or scope instead of a model ('8B-class')",
    )
    figure_text: Series[str] = pa.Field(str_length={"min_value": 1}, description="as written")
    value: Series[float] = _speed(nullable=True)
    low: Series[float] = _speed(nullable=True)
    high: Series[float] = _speed(nullable=True)
    qualifier: Series[str] = pa.Field(isin=list(QUALIFIERS), nullable=True)
    cited_url: Series[str] = pa.Field(nullable=True, description="the T1 page the row cites")
    cited_text: Series[str] = pa.Field(nullable=True, description="the row's source, as written")
    country: Series[str] = pa.Field(nullable=True, description="the provider's country, as written")
    provider_type: Series[str] = pa.Field(
        nullable=True, description="what kind of provider the page says it is, as written"
    )

    class Config:
        unique = ["snapshot_id", "table_name", "row_number", "role", "figure_text"]


class CompilationPlatforms(StagedFrame):
    """The model-access platform table of a compilation page."""

    platform_label: Series[str] = pa.Field(
        str_length={"min_value": 1}, description="the platform as the page writes it"
    )
    owner: Series[str] = pa.Field(nullable=True)
    kind_label: Series[str] = pa.Field(
        str_length={"min_value": 1}, description="what kind of platform the page says it is"
    )
    stated_count: Series[str] = pa.Field(str_length={"min_value": 1}, description="as written")
    notable: Series[str] = pa.Field(nullable=True, description="' · '-joined notable families")
    cited_url: Series[str] = pa.Field(nullable=True, description="the page the row cites")
    cited_tier: Series[str] = pa.Field(
        isin=list(TIERS), nullable=True, description="the tier the page gives its citation"
    )

    class Config:
        unique = ["snapshot_id", "platform_label"]


class LLMPerfRuns(StagedFrame):
    """One LLMPerf run summary: a provider, a model, a workload and its medians."""

    framework: Series[str] = pa.Field(str_length={"min_value": 1}, description="provider name")
    model_label: Series[str] = pa.Field(
        str_length={"min_value": 1}, description="the model as the run names it"
    )
    output_tokens_per_s: Series[float] = _speed(description="median per-request output throughput")
    ttft_s: Series[float] = pa.Field(ge=0, lt=3600, nullable=True, metadata={"unit": "s"})
    e2e_s: Series[float] = pa.Field(ge=0, lt=3600, nullable=True, metadata={"unit": "s"})
    mean_input_tokens: Series[int] = pa.Field(
        gt=0, metadata={"unit": "tokens"}, description="the workload's mean input tokens"
    )
    mean_output_tokens: Series[int] = pa.Field(
        gt=0, metadata={"unit": "tokens"}, description="the workload's mean output tokens"
    )
    concurrency: Series[int] = pa.Field(gt=0, description="requests in flight at once")
    completed_requests: Series[int] = pa.Field(ge=0, description="requests the run completed")
    error_rate: Series[float] = pa.Field(
        ge=0, le=1, description="share of the run's requests that failed"
    )

    class Config:
        unique = ["snapshot_id"]


class ClaimEvidence(StagedFrame):
    """A reviewed claim's quote, found in the snapshot's text."""

    claim_id: Series[str] = pa.Field(str_length={"min_value": 1})
    quote: Series[str] = pa.Field(str_length={"min_value": 1})

    class Config:
        unique = ["snapshot_id", "claim_id", "quote"]


class UnreviewedFigures(StagedFrame):
    """Tokens-per-second figures on a claim page that no reviewed claim covers."""

    figure_text: Series[str] = pa.Field(
        str_length={"min_value": 1}, description="the figure as written ('1,000 tokens/s')"
    )
    sentence: Series[str] = pa.Field(
        str_length={"min_value": 1}, description="the sentence that carries it"
    )

    class Config:
        unique = ["snapshot_id", "figure_text", "sentence"]


class CatalogueEntries(StagedFrame):
    """A model as a platform's catalogue lists it (Cloudflare, OpenRouter, Azure Foundry)."""

    platform_model_id: Series[str] = pa.Field(
        str_length={"min_value": 1}, description="the platform's own id for the model"
    )
    name: Series[str] = pa.Field(str_length={"min_value": 1})
    publisher: Series[str] = pa.Field(nullable=True, description="model creator as listed")
    task: Series[str] = pa.Field(nullable=True, description="task or modality as listed")
    function_calling: Series[pd.BooleanDtype] = pa.Field(nullable=True)
    beta: Series[pd.BooleanDtype] = pa.Field(nullable=True)
    lora: Series[pd.BooleanDtype] = pa.Field(nullable=True)
    context_window: Series[pd.Int64Dtype] = pa.Field(
        gt=0, nullable=True, metadata={"unit": "tokens"}
    )
    price_input_usd_per_mtok: Series[float] = pa.Field(ge=0, nullable=True)
    price_output_usd_per_mtok: Series[float] = pa.Field(ge=0, nullable=True)
    planned_deprecation: Series[str] = pa.Field(
        nullable=True, str_matches=r"^\d{4}-\d{2}-\d{2}$", description="ISO date"
    )
    price_cached_input_usd_per_mtok: Series[float] = _price(
        description="price per million cached input tokens (Cloudflare 'per M cached input tokens')"
    )
    other_prices: Series[str] = pa.Field(
        nullable=True,
        description="prices in units the parser does not read, as written and '; '-joined "
        "('0.5 USD per audio minute'); null when there are none",
    )
    canonical_slug: Series[str] = _text(
        "the platform's permanent slug of the model (OpenRouter's canonical_slug, "
        "'qwen/qwen3-coder-480b-a35b-07-25'); null when not given",
        nullable=True,
    )
    hugging_face_id: Series[str] = _text(
        "the Hugging Face repository of the weights the model serves (OpenRouter's "
        "hugging_face_id, 'Qwen/Qwen3-Coder-480B-A35B-Instruct'); null when not given",
        nullable=True,
    )

    class Config:
        unique = ["snapshot_id", "platform_model_id"]


class PlatformStatements(StagedFrame):
    """A platform's own page, verified to state the reviewed model count and notable families."""

    platform_id: Series[str] = pa.Field(str_length={"min_value": 1})
    stated_count: Series[str] = pa.Field(str_length={"min_value": 1}, description="as written")
    notable: Series[str] = pa.Field(nullable=True, description="' · '-joined")

    class Config:
        unique = ["snapshot_id", "platform_id"]


OPENROUTER_WINDOW_MINUTES = 30
OPENROUTER_STATISTICS = ("p50", "p75", "p90", "p99")


# The percentile columns of live traffic (OpenRouter's API and website, Vercel's gateway):
# metric -> (what it is, its unit, its upper bound in that unit)
_PERCENTILE_METRICS = {
    "output_tokens_per_s": ("output tokens/s", "tokens/s", MAX_TOKENS_PER_S),
    "ttft_s": ("time to first token", "s", MAX_TTFT_S),
}


def percentile_columns(statistics: tuple[str, ...]) -> dict[tuple[str, str], str]:
    """(metric, statistic) -> its column, `<metric>_<statistic>`, metric by metric."""
    return {
        (metric, statistic): f"{metric}_{statistic}"
        for metric in _PERCENTILE_METRICS
        for statistic in statistics
    }


def _percentile(metric: str, statistic: str, given_as: str) -> object:
    """A percentile column: positive, under its metric's bound, null when not measured;
    `given_as` names the source's field it is read from."""
    what, unit, bound = _PERCENTILE_METRICS[metric]
    return pa.Field(
        gt=0,
        lt=bound,
        nullable=True,
        metadata={"unit": unit},
        description=f"{what} at {statistic} of the requests in the window ({given_as}): null "
        "when not measured",
    )


def _throughput(statistic: str) -> object:
    return _percentile("output_tokens_per_s", statistic, "throughput_last_30m")


def _ttft(statistic: str) -> object:
    return _percentile("ttft_s", statistic, "latency_last_30m, milliseconds in the API")


class OpenRouterEndpoints(StagedFrame):
    """One row per endpoint of a model, from OpenRouter's GET
    /api/v1/models/{author}/{slug}/endpoints (a member of a poll bundle, or one captured response).
    """

    member_url: Series[str] = pa.Field(
        str_matches=r"^https?://", description="request URL of the response the row comes from"
    )
    model: Series[str] = _text("OpenRouter's model id (author/slug): the response's data.id")
    endpoint_name: Series[str] = _text("the endpoint's name as listed", nullable=True)
    provider_name: Series[str] = _text("provider as OpenRouter names it ('DeepInfra')")
    tag: Series[str] = _text("the endpoint's key among the model's endpoints ('deepinfra/fp8')")
    tag_root: Series[str] = _text("the tag before its first '/': the provider's slug")
    tag_suffix: Series[str] = _text(
        "the tag after its first '/': precision, service tier or region ('fp8', 'fast', "
        "'eu-west-1'); null when the tag has none",
        nullable=True,
    )
    quantization: Series[str] = _text(
        "quantization as OpenRouter writes it ('mxfp4', 'unknown'); null when not given",
        nullable=True,
    )
    precision: Series[str] = pa.Field(
        isin=list(PRECISIONS),
        description="precision the quantization means (pipeline/normalise/variants.py)",
    )
    quantization_known: Series[bool] = pa.Field(
        description="false when the reviewed table does not know the quantization label: "
        "precision is then unknown and the label is reported"
    )
    status: Series[pd.Int64Dtype] = pa.Field(
        nullable=True,
        description="OpenRouter's endpoint status code as given (0 in normal service; its spec "
        "lists 0, -1, -2, -3, -5, -10 without meanings)",
    )
    context_length: Series[pd.Int64Dtype] = _count("context window")
    max_completion_tokens: Series[pd.Int64Dtype] = _count("most output tokens per request")
    max_prompt_tokens: Series[pd.Int64Dtype] = _count("most input tokens per request")
    uptime_last_5m: Series[float] = pa.Field(
        ge=0, le=100, nullable=True, metadata={"unit": "%"}, description="uptime, last 5 minutes"
    )
    uptime_last_30m: Series[float] = pa.Field(
        ge=0, le=100, nullable=True, metadata={"unit": "%"}, description="uptime, last 30 minutes"
    )
    uptime_last_1d: Series[float] = pa.Field(
        ge=0, le=100, nullable=True, metadata={"unit": "%"}, description="uptime, last day"
    )
    price_input_usd_per_mtok: Series[float] = _price("input price, net of discount")
    price_output_usd_per_mtok: Series[float] = _price("output price, net of discount")
    price_cache_read_usd_per_mtok: Series[float] = _price("cached input (read) price, net")
    price_cache_write_usd_per_mtok: Series[float] = _price("cache write price, net")
    discount: Series[float] = pa.Field(
        ge=0,
        le=1,
        nullable=True,
        description="OpenRouter's fractional discount, already applied to the prices here "
        "(list price = price / (1 - discount))",
    )
    function_calling: Series[pd.BooleanDtype] = _flag(
        "'tools' is among the endpoint's supported_parameters"
    )
    # Its statistics of live routed traffic, one column per metric and percentile (a row per
    # figure made eight rows per endpoint: four fifths of the staged bytes and of their writing).
    # The core SQL turns each figure into an observation (10_measured_observations.sql).
    output_tokens_per_s_p50: Series[float] = _throughput("p50")
    output_tokens_per_s_p75: Series[float] = _throughput("p75")
    output_tokens_per_s_p90: Series[float] = _throughput("p90")
    output_tokens_per_s_p99: Series[float] = _throughput("p99")
    ttft_s_p50: Series[float] = _ttft("p50")
    ttft_s_p75: Series[float] = _ttft("p75")
    ttft_s_p90: Series[float] = _ttft("p90")
    ttft_s_p99: Series[float] = _ttft("p99")
    window_minutes: Series[int] = pa.Field(
        isin=[OPENROUTER_WINDOW_MINUTES],
        metadata={"unit": "minutes"},
        description="the statistics' window",
    )
    method: Series[str] = pa.Field(isin=list(METHODS), description="how they were measured")

    class Config:
        unique = ["snapshot_id", "model", "tag"]


# (metric, statistic) -> its column in openrouter_endpoints
OPENROUTER_PERCENTILES = percentile_columns(OPENROUTER_STATISTICS)


def _endpoints_staged(table: str = "") -> object:
    into = f" into {table}" if table else ""
    return pa.Field(ge=0, description=f"endpoints read{into}")


def _without_statistics(note: str = "") -> object:
    """`note`: why a staged endpoint may have no figure, as the source says."""
    return pa.Field(
        ge=0, description=f"staged endpoints with no throughput or latency figure{note}"
    )


class PollMembers(StagedFrame):
    """One row per response of a poll of per-model endpoint responses (a bundle member, or the
    one captured response): what was read from it and what was not
    (pipeline/extract/endpoint_poll.py)."""

    member_index: Series[int] = pa.Field(ge=1, description="1-based position in the bundle")
    member_url: Series[str] = pa.Field(
        str_matches=r"^https?://", description="request URL of the response"
    )
    http_status: Series[int] = pa.Field(ge=100, le=599, description="HTTP status received")
    model: Series[str] = _text("the response's data.id; null when unreadable", nullable=True)
    endpoints_listed: Series[pd.Int64Dtype] = pa.Field(
        ge=0, nullable=True, description="endpoints in the response; null when unreadable"
    )
    endpoints_staged: Series[int] = _endpoints_staged()
    endpoints_without_statistics: Series[int] = _without_statistics()
    problem: Series[str] = _text(
        "why the response, or some of its endpoints, was not read; null when all was read",
        nullable=True,
    )

    class Config:
        unique = ["snapshot_id", "member_index"]


class OpenRouterPollMembers(PollMembers):
    """One row per response of an OpenRouter poll (a bundle member, or the one captured
    response): what was read from it and what was not."""

    endpoints_staged: Series[int] = _endpoints_staged("openrouter_endpoints")
    endpoints_without_statistics: Series[int] = _without_statistics(
        " at all (all of them when the request carried no API key)"
    )


class OpenRouterProviders(StagedFrame):
    """One row per provider of OpenRouter's GET /api/v1/providers."""

    slug: Series[str] = _text("OpenRouter's provider slug ('sambanova')")
    name: Series[str] = _text("provider name as listed")
    headquarters: Series[str] = _text("country code of the headquarters", nullable=True)
    datacenters: Series[str] = pa.Field(
        nullable=True,
        str_matches=r"^([^,]+(,[^,]+)*)?$",
        description="country codes of the datacenters, comma-separated in the listed order; "
        "empty when the list is empty, null when not given",
    )
    privacy_policy_url: Series[str] = _url("privacy policy (http(s) only)")
    terms_of_service_url: Series[str] = _url("terms of service (http(s) only)")
    status_page_url: Series[str] = _url("status page (http(s) only)")

    class Config:
        unique = ["snapshot_id", "slug"]


AA_METRICS = ("output_tokens_per_s", "ttft_s", "time_to_first_answer_token_s")


class AAModels(StagedFrame):
    """One row per model of Artificial Analysis's GET /api/v2/data/llms/models, measured or not.
    Its figures are about the model across providers, never about one provider."""

    aa_model_id: Series[str] = _text("Artificial Analysis's id of the model")
    slug: Series[str] = _text("Artificial Analysis's slug ('gpt-oss-120b-low')")
    name: Series[str] = _text("model name as listed ('gpt-oss-120b (low)')")
    creator_name: Series[str] = _text("the model's creator as listed", nullable=True)
    creator_slug: Series[str] = _text("the creator's slug", nullable=True)
    release_date: Series[str] = pa.Field(
        nullable=True, str_matches=r"^\d{4}-\d{2}-\d{2}$", description="ISO date"
    )
    price_blended_usd_per_mtok: Series[float] = _price("blended price, 3:1 input:output")
    price_input_usd_per_mtok: Series[float] = _price("input price")
    price_output_usd_per_mtok: Series[float] = _price("output price")

    class Config:
        unique = ["snapshot_id", "aa_model_id"]


class AAModelFigures(StagedFrame):
    """One row per model x metric Artificial Analysis measured (0, its mark for not measured,
    has no row): medians of its fixed-workload probes, across the providers it measures."""

    aa_model_id: Series[str] = _text("Artificial Analysis's id of the model (see aa_models)")
    slug: Series[str] = _text("Artificial Analysis's slug of the model")
    metric: Series[str] = pa.Field(
        isin=list(AA_METRICS),
        description="output_tokens_per_s, ttft_s or time_to_first_answer_token_s (after a "
        "reasoning model's thinking)",
    )
    statistic: Series[str] = pa.Field(isin=list(STATISTICS), description="median")
    value: Series[float] = pa.Field(
        gt=0,
        lt=MAX_TOKENS_PER_S,
        metadata={"unit": "tokens/s or s"},
        description="the figure: tokens/s for output_tokens_per_s, seconds otherwise",
    )
    window_minutes: Series[int] = pa.Field(
        gt=0,
        metadata={"unit": "minutes"},
        description="window of the median: 72 hours, as Artificial Analysis's methodology "
        "states (the API does not)",
    )
    method: Series[str] = pa.Field(isin=list(METHODS), description="how it was measured")
    prompt_length_tokens: Series[pd.Int64Dtype] = _count(
        "the workload's prompt length (the response's prompt_options)"
    )
    parallel_queries: Series[pd.Int64Dtype] = _count(
        "the workload's parallel queries (the response's prompt_options)", unit="queries"
    )

    @pa.dataframe_check(statistics=sql_rule(TIMES_WITHIN_AN_HOUR))
    @classmethod
    def times_within_an_hour(cls, frame: pd.DataFrame) -> pd.Series:
        return holds(frame, TIMES_WITHIN_AN_HOUR)

    class Config:
        unique = ["snapshot_id", "aa_model_id", "metric"]


class ModelsDevOffers(StagedFrame):
    """One row per provider x model offer of models.dev's catalogue (https://models.dev/api.json).
    A catalogue of many platforms' catalogues, so its key carries the provider."""

    provider_id: Series[str] = _text("models.dev's provider id ('amazon-bedrock')")
    provider_name: Series[str] = _text("provider name as listed")
    provider_doc_url: Series[str] = _url("the provider's model documentation (http(s) only)")
    platform_model_id: Series[str] = _text("the model's id in that provider's catalogue")
    name: Series[str] = _text("model name as listed")
    family: Series[str] = _text("model family as listed", nullable=True)
    price_input_usd_per_mtok: Series[float] = _price("input price")
    price_output_usd_per_mtok: Series[float] = _price("output price")
    price_cache_read_usd_per_mtok: Series[float] = _price("cached input (read) price")
    price_cache_write_usd_per_mtok: Series[float] = _price("cache write price")
    context_window: Series[pd.Int64Dtype] = _count("context window (limit.context)")
    max_output_tokens: Series[pd.Int64Dtype] = _count("most output tokens (limit.output)")
    function_calling: Series[pd.BooleanDtype] = _flag("tool calling (tool_call)")
    reasoning: Series[pd.BooleanDtype] = _flag("a reasoning model")
    open_weights: Series[pd.BooleanDtype] = _flag("the weights are published")
    release_date: Series[str] = pa.Field(
        nullable=True, str_matches=_MONTH_OR_DAY, description="as written: YYYY-MM-DD or YYYY-MM"
    )
    last_updated: Series[str] = pa.Field(
        nullable=True, str_matches=_MONTH_OR_DAY, description="as written: YYYY-MM-DD or YYYY-MM"
    )
    status: Series[str] = _text(
        "the offer's status as written ('beta', 'deprecated'); null when not given", nullable=True
    )
    unread: Series[str] = _text(
        "values of the offer that were not what models.dev's schema says, left null above and "
        "quoted here ('release_date '2025-25-11' is not a date'); null when all were read",
        nullable=True,
    )

    class Config:
        unique = ["snapshot_id", "provider_id", "platform_model_id"]


# --- OpenRouter's website statistics (undocumented: /api/frontend/v1/stats/...) --------------

FRONTEND_STATISTICS = ("p50", "p75", "p90", "p95", "p99")
# (metric, statistic) -> its column in openrouter_frontend_stats
FRONTEND_PERCENTILES = percentile_columns(FRONTEND_STATISTICS)
MAX_WINDOW_MINUTES = 366 * 24 * 60
_UUID = r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
_DAY = r"^\d{4}-\d{2}-\d{2}$"


def _frontend_throughput(statistic: str) -> object:
    return _percentile("output_tokens_per_s", statistic, f"{statistic}_throughput")


def _frontend_ttft(statistic: str) -> object:
    return _percentile(
        "ttft_s",
        statistic,
        f"{statistic}_latency in milliseconds: OpenRouter's latency, which its documented API "
        "defines as time to first token",
    )


def _status_count(window: str) -> object:
    return pa.Field(
        ge=0,
        le=MAX_COUNT,
        nullable=True,
        metadata={"unit": "requests"},
        description=f"requests of the endpoint {window}",
    )


def _unread(what: str) -> object:
    return _text(
        f"values of the {what} that could not be read as the API gives them (a string where a "
        "number belongs, a percentile of 0), left null above and quoted here; null when all "
        "was read",
        nullable=True,
    )


class OpenRouterFrontendEndpoints(StagedFrame):
    """One row per endpoint of a model in one capture of OpenRouter's undocumented website API
    GET /api/frontend/v1/stats/endpoint?permaslug=<slug>&variant=<variant>: who serves it, how,
    at what price, and its request status counts. Its statistics: openrouter_frontend_stats."""

    member_index: Series[int] = pa.Field(
        ge=1,
        description="the model's 1-based position in the capture (openrouter_frontend_members)",
    )
    permaslug: Series[str] = _text(
        "the model's permanent slug (model_variant_permaslug: its canonical_slug, often dated)"
    )
    variant: Series[str] = _text("the model variant the statistics are of ('standard')")
    model_slug: Series[str] = _text(
        "the model's public id (model_variant_slug, as GET /api/v1/models spells it)", nullable=True
    )
    endpoint_id: Series[str] = pa.Field(
        str_matches=_UUID, description="OpenRouter's id of the endpoint (a UUID): its key"
    )
    endpoint_name: Series[str] = _text("the endpoint's name as listed", nullable=True)
    provider_name: Series[str] = _text("provider as OpenRouter names it ('DeepInfra')")
    provider_display_name: Series[str] = _text("the provider's display name", nullable=True)
    tag: Series[str] = _text(
        "provider_slug: the endpoint's provider slug with its variant ('deepinfra/fp8'), the "
        "documented API's `tag`; two endpoints can share it (their ids differ)"
    )
    tag_root: Series[str] = _text("the tag before its first '/': the provider's slug")
    tag_suffix: Series[str] = _text(
        "the tag after its first '/' ('fp8', 'us-south1'); null when the tag has none",
        nullable=True,
    )
    provider_model_id: Series[str] = _text(
        "the provider's own id of the model it serves", nullable=True
    )
    provider_region: Series[str] = _text("the endpoint's region, when given", nullable=True)
    quantization: Series[str] = _text(
        "quantization as OpenRouter writes it ('fp8', 'unknown'); null when not given",
        nullable=True,
    )
    precision: Series[str] = pa.Field(
        isin=list(PRECISIONS),
        description="precision the quantization means (pipeline/normalise/variants.py)",
    )
    quantization_known: Series[bool] = pa.Field(
        description="false when the reviewed table does not know the quantization label"
    )
    status: Series[pd.Int64Dtype] = pa.Field(
        nullable=True, description="OpenRouter's endpoint status code as given (0 in service)"
    )
    is_free: Series[pd.BooleanDtype] = _flag("the endpoint is free of charge")
    is_disabled: Series[pd.BooleanDtype] = _flag("OpenRouter lists the endpoint as disabled")
    is_deranked: Series[pd.BooleanDtype] = _flag("OpenRouter ranks the endpoint down in routing")
    context_length: Series[pd.Int64Dtype] = _count("context window")
    max_completion_tokens: Series[pd.Int64Dtype] = _count("most output tokens per request")
    max_prompt_tokens: Series[pd.Int64Dtype] = _count("most input tokens per request")
    price_input_usd_per_mtok: Series[float] = _price("input price (pricing.prompt)")
    price_output_usd_per_mtok: Series[float] = _price("output price (pricing.completion)")
    price_cache_read_usd_per_mtok: Series[float] = _price("cached input (read) price")
    price_cache_write_usd_per_mtok: Series[float] = _price("cache write price")
    discount: Series[float] = pa.Field(
        ge=0, le=1, nullable=True, description="OpenRouter's fractional discount, as given"
    )
    function_calling: Series[pd.BooleanDtype] = _flag(
        "'tools' is among the endpoint's supported_parameters"
    )
    requests_succeeded: Series[pd.Int64Dtype] = _status_count(
        "that succeeded (status_heuristics.success; its window is not stated)"
    )
    requests_derankable_error: Series[pd.Int64Dtype] = _status_count(
        "that failed with an error OpenRouter ranks the endpoint down for "
        "(status_heuristics.derankableError; window not stated)"
    )
    requests_rate_limited: Series[pd.Int64Dtype] = _status_count(
        "that were rate limited (status_heuristics.rateLimited; window not stated)"
    )
    requests_succeeded_5m: Series[pd.Int64Dtype] = _status_count(
        "that succeeded in the last 5 minutes"
    )
    requests_derankable_error_5m: Series[pd.Int64Dtype] = _status_count(
        "that failed with a derankable error in the last 5 minutes"
    )
    requests_rate_limited_5m: Series[pd.Int64Dtype] = _status_count(
        "that were rate limited in the last 5 minutes"
    )
    requests_succeeded_1d: Series[pd.Int64Dtype] = _status_count("that succeeded in the last day")
    requests_derankable_error_1d: Series[pd.Int64Dtype] = _status_count(
        "that failed with a derankable error in the last day"
    )
    requests_rate_limited_1d: Series[pd.Int64Dtype] = _status_count(
        "that were rate limited in the last day"
    )
    unread: Series[str] = _unread("endpoint")

    class Config:
        unique = ["snapshot_id", "permaslug", "variant", "endpoint_id"]


class OpenRouterFrontendStats(StagedFrame):
    """One row per endpoint x statistics block of one capture of OpenRouter's website API: the
    endpoint's `stats`, and each service tier of its `statsByTier` (default, flex, priority):
    percentiles of the live routed traffic of its window, and how many requests they cover."""

    member_index: Series[int] = pa.Field(ge=1, description="the model's position in the capture")
    permaslug: Series[str] = _text("the model's permanent slug (see openrouter_frontend_endpoints)")
    variant: Series[str] = _text("the model variant ('standard')")
    endpoint_id: Series[str] = pa.Field(str_matches=_UUID, description="OpenRouter's endpoint id")
    block: Series[str] = pa.Field(
        str_length={"min_value": 1},
        description="where the figures are in the endpoint: 'stats', or 'statsByTier.<tier>'",
    )
    service_tier: Series[str] = _text(
        "OpenRouter's service tier key in statsByTier ('default', 'flex', 'priority'), as "
        "written; null for the `stats` block, which names none (in the captures it is within a "
        "few percent of statsByTier.default, often equal: the same window computed apart)",
        nullable=True,
    )
    output_tokens_per_s_p50: Series[float] = _frontend_throughput("p50")
    output_tokens_per_s_p75: Series[float] = _frontend_throughput("p75")
    output_tokens_per_s_p90: Series[float] = _frontend_throughput("p90")
    output_tokens_per_s_p95: Series[float] = _frontend_throughput("p95")
    output_tokens_per_s_p99: Series[float] = _frontend_throughput("p99")
    ttft_s_p50: Series[float] = _frontend_ttft("p50")
    ttft_s_p75: Series[float] = _frontend_ttft("p75")
    ttft_s_p90: Series[float] = _frontend_ttft("p90")
    ttft_s_p95: Series[float] = _frontend_ttft("p95")
    ttft_s_p99: Series[float] = _frontend_ttft("p99")
    request_count: Series[pd.Int64Dtype] = pa.Field(
        ge=0,
        le=MAX_COUNT,
        nullable=True,
        metadata={"unit": "requests"},
        description="requests the percentiles are of (request_count)",
    )
    window_minutes: Series[int] = pa.Field(
        gt=0,
        le=MAX_WINDOW_MINUTES,
        metadata={"unit": "minutes"},
        description="the statistics' window as the block gives it (window_minutes: 30)",
    )
    method: Series[str] = pa.Field(isin=list(METHODS), description="how they were measured")
    unread: Series[str] = _unread("block")

    class Config:
        unique = ["snapshot_id", "permaslug", "variant", "endpoint_id", "block"]


class OpenRouterFrontendDaily(StagedFrame):
    """One row per endpoint x service tier x day of the week of daily throughput that OpenRouter's
    website charts, GET /api/frontend/v1/stats/throughput-comparison?permaslug=<slug>&timeRange=1w
    ({"x": "2026-07-17 00:00:00", "y": {"<endpoint id>::<tier>": 36}}). OpenRouter does not say
    which statistic of which requests a day's figure is, nor the time zone of its days: the
    figure is stored as given and labelled as neither a median nor a mean."""

    member_index: Series[int] = pa.Field(ge=1, description="the model's position in the capture")
    permaslug: Series[str] = _text("the model's permanent slug the chart was requested for")
    endpoint_id: Series[str] = pa.Field(
        str_matches=_UUID, description="OpenRouter's endpoint id, before '::' in the chart's key"
    )
    service_tier: Series[str] = _text("the service tier, after '::' in the chart's key")
    day: Series[str] = pa.Field(
        str_matches=_DAY,
        description="the day the figure is of, as the chart's x gives it (YYYY-MM-DD 00:00:00, "
        "time zone not stated); the capture's own day is not over",
    )
    output_tokens_per_s: Series[float] = _speed(
        description="the day's throughput as charted (tokens/s); the statistic is not stated"
    )
    time_range: Series[str] = _text(
        "the chart's timeRange, from its request URL ('1w'); null when the URL is not given",
        nullable=True,
    )
    endpoint_listed: Series[bool] = pa.Field(
        description="the endpoint is among the capture's endpoints of the model (the chart also "
        "names endpoints no longer listed, of any variant: the request names none)"
    )

    class Config:
        unique = ["snapshot_id", "permaslug", "endpoint_id", "service_tier", "day"]


class OpenRouterFrontendMembers(StagedFrame):
    """One row per model of a capture of OpenRouter's website statistics: what was requested,
    what was read and what was not."""

    member_index: Series[int] = pa.Field(ge=1, description="1-based position in the capture")
    model: Series[str] = _text(
        "the model the capture asked for (the collector's openrouter_model_id; the permaslug "
        "of a response fetched directly); null when unreadable",
        nullable=True,
    )
    canonical_slug: Series[str] = _text(
        "the model's canonical_slug, as the capture gives it", nullable=True
    )
    endpoint_url: Series[str] = _url("the statistics request's URL")
    throughput_url: Series[str] = _url("the daily throughput request's URL")
    collector_errors: Series[str] = _text(
        "errors the collector recorded for the model, '; '-joined; null when none",
        nullable=True,
    )
    endpoints_listed: Series[pd.Int64Dtype] = pa.Field(
        ge=0, nullable=True, description="endpoints in the statistics response; null if unread"
    )
    endpoints_staged: Series[int] = pa.Field(
        ge=0, description="endpoints read into openrouter_frontend_endpoints"
    )
    endpoints_without_statistics: Series[int] = pa.Field(
        ge=0, description="staged endpoints with no statistics block (no recent traffic)"
    )
    daily_points_staged: Series[int] = pa.Field(
        ge=0, description="rows read into openrouter_frontend_daily"
    )
    problem: Series[str] = _text(
        "why the model, or some of its endpoints or daily figures, was not read; null when "
        "all was read",
        nullable=True,
    )

    class Config:
        unique = ["snapshot_id", "member_index"]


class OpenRouterFrontendModels(StagedFrame):
    """One row per model of the GET /api/v1/models response a capture carries (its
    catalog_payload): the stable keys OpenRouter publishes for model identity."""

    model_id: Series[str] = _text("OpenRouter's model id ('openai/gpt-oss-120b')")
    canonical_slug: Series[str] = _text("canonical_slug: the model's permanent slug", nullable=True)
    hugging_face_id: Series[str] = _text(
        "hugging_face_id: the model's Hugging Face repository; null when not given or empty",
        nullable=True,
    )
    name: Series[str] = _text("model name as listed", nullable=True)

    class Config:
        unique = ["snapshot_id", "model_id"]


# --- Vercel AI Gateway: GET /v1/models/{creator}/{model}/endpoints ----------------------------

VERCEL_WINDOW_MINUTES = 60
VERCEL_STATISTICS = ("p50", "p95")
# (metric, statistic) -> its column in vercel_gateway_endpoints
VERCEL_PERCENTILES = percentile_columns(VERCEL_STATISTICS)


def _vercel_figure(metric: str, statistic: str) -> object:
    given_as = {
        "output_tokens_per_s": "throughput_last_1h",
        "ttft_s": "latency_last_1h, milliseconds in the API",
    }[metric]
    return _percentile(metric, statistic, given_as)


def _uptime(window: str) -> object:
    return pa.Field(
        ge=0, le=100, nullable=True, metadata={"unit": "%"}, description=f"uptime, last {window}"
    )


class VercelGatewayEndpoints(StagedFrame):
    """One row per provider endpoint of a model, from Vercel AI Gateway's documented GET
    /v1/models/{creator}/{model}/endpoints (a member of a poll bundle, or one response): prices,
    limits, uptime, and p50/p95 of throughput and time to first token over the last hour of
    the gateway's own traffic (BYOK requests excluded, as Vercel documents)."""

    member_url: Series[str] = pa.Field(
        str_matches=r"^https?://", description="request URL of the response the row comes from"
    )
    model: Series[str] = _text("Vercel's model id (creator/model): the response's data.id")
    endpoint_name: Series[str] = _text(
        "the endpoint's name as listed ('google | google/gemini-3.1-pro-preview')", nullable=True
    )
    provider_name: Series[str] = _text(
        "the provider as Vercel names it ('google', 'bedrock'): the endpoint's key "
        "among the model's endpoints"
    )
    status: Series[pd.Int64Dtype] = pa.Field(
        nullable=True, description="Vercel's endpoint status as given (0 is active)"
    )
    context_length: Series[pd.Int64Dtype] = _count("context window")
    max_completion_tokens: Series[pd.Int64Dtype] = _count("most output tokens per request")
    price_input_usd_per_mtok: Series[float] = _price("input price (pricing.prompt)")
    price_output_usd_per_mtok: Series[float] = _price("output price (pricing.completion)")
    price_cache_read_usd_per_mtok: Series[float] = _price("cached input (read) price")
    price_cache_write_usd_per_mtok: Series[float] = _price("cache write price")
    function_calling: Series[pd.BooleanDtype] = _flag(
        "'tools' is among the endpoint's supported_parameters"
    )
    implicit_caching: Series[pd.BooleanDtype] = _flag(
        "supports_implicit_caching: the provider caches prompts automatically"
    )
    uptime_last_15m: Series[float] = _uptime("15 minutes")
    uptime_last_1h: Series[float] = _uptime("hour")
    uptime_last_1d: Series[float] = _uptime("day")
    output_tokens_per_s_p50: Series[float] = _vercel_figure("output_tokens_per_s", "p50")
    output_tokens_per_s_p95: Series[float] = _vercel_figure("output_tokens_per_s", "p95")
    ttft_s_p50: Series[float] = _vercel_figure("ttft_s", "p50")
    ttft_s_p95: Series[float] = _vercel_figure("ttft_s", "p95")
    window_minutes: Series[int] = pa.Field(
        isin=[VERCEL_WINDOW_MINUTES],
        metadata={"unit": "minutes"},
        description="the statistics' window: the last hour, as the fields' names and Vercel's "
        "documentation say",
    )
    method: Series[str] = pa.Field(isin=list(METHODS), description="how they were measured")
    unread: Series[str] = _unread("endpoint")

    class Config:
        unique = ["snapshot_id", "model", "provider_name"]


class VercelGatewayPollMembers(PollMembers):
    """One row per response of a Vercel AI Gateway poll (a bundle member, or the one response):
    what was read from it and what was not."""

    endpoints_staged: Series[int] = _endpoints_staged("vercel_gateway_endpoints")
    endpoints_without_statistics: Series[int] = _without_statistics(
        " (Vercel shows metrics only for providers with enough traffic)"
    )


FRAMES: dict[str, type[StagedFrame]] = {
    "aa_endpoints": AAEndpoints,
    "compilation_figures": CompilationFigures,
    "compilation_platforms": CompilationPlatforms,
    "llmperf_runs": LLMPerfRuns,
    "claim_evidence": ClaimEvidence,
    "unreviewed_figures": UnreviewedFigures,
    "catalogue_entries": CatalogueEntries,
    "platform_statements": PlatformStatements,
    "openrouter_endpoints": OpenRouterEndpoints,
    "openrouter_poll_members": OpenRouterPollMembers,
    "openrouter_providers": OpenRouterProviders,
    "aa_models": AAModels,
    "aa_model_figures": AAModelFigures,
    "models_dev_offers": ModelsDevOffers,
    "openrouter_frontend_endpoints": OpenRouterFrontendEndpoints,
    "openrouter_frontend_stats": OpenRouterFrontendStats,
    "openrouter_frontend_daily": OpenRouterFrontendDaily,
    "openrouter_frontend_members": OpenRouterFrontendMembers,
    "openrouter_frontend_models": OpenRouterFrontendModels,
    "vercel_gateway_endpoints": VercelGatewayEndpoints,
    "vercel_gateway_poll_members": VercelGatewayPollMembers,
}

"""The controlled vocabulary of DESIGN.md, in one place.

Each enum is written once, as a Literal type (which the export contract's models use); the tuple
beside it is the same values, for code that checks membership or lists them.
"""

from __future__ import annotations

from typing import Literal, get_args

SourceKind = Literal["benchmark", "compilation", "claim", "platform_doc"]
Tier = Literal["T1", "T2", "T3"]
ClaimScope = Literal["peak_per_user", "aggregate"]
# How a snapshot's bytes came: committed with the code, fetched over HTTP, added by hand, or
# rebuilt from another document (its record's `reconstructed_from` names which): never captured.
ObtainedBy = Literal["bundled", "fetched", "manual", "reconstructed"]
Precision = Literal["fp32", "bf16", "fp16", "fp8", "fp6", "fp4", "int8", "int4", "unknown"]
ServiceTier = Literal[
    "standard", "turbo", "fast", "latency-optimized", "reference", "flex", "priority"
]
# A reasoning effort as sources state it: the levels, `none` for a model run without reasoning
# ("Non-reasoning"), and `reasoning` for reasoning on at a level the source does not state
# ("(Reasoning)", ":thinking"). Appended in the order they were met; low/medium/high first.
ReasoningEffort = Literal["low", "medium", "high", "minimal", "xhigh", "max", "none", "reasoning"]
# What a figure is, never mixed in one ranking: `live` (sustained on a public endpoint, a statistic
# over a window), `one_off` (a single benchmark run), `peak_per_user` and `aggregate` (a vendor's
# record: one stream's best, or all users of a server together), `list_price` (a price as listed).
Scope = Literal["live", "one_off", "peak_per_user", "aggregate", "list_price"]
Metric = Literal[
    "output_tokens_per_s",
    "ttft_s",
    "time_to_first_answer_token_s",  # after a reasoning model's thinking (Artificial Analysis)
    "e2e_s",
    "price_blended_usd_per_mtok",
    "price_input_usd_per_mtok",
    "price_output_usd_per_mtok",
]
Qualifier = Literal["approx", "at_least", "up_to", "range"]
# How exact a capture time is: `lower_bound` when it was not recorded and the time is the earliest
# it can have been (a time the response itself gives).
TimeBound = Literal["exact", "lower_bound"]
# How a figure was measured (DESIGN.md "method"); figures of different methods never compare.
Method = Literal[
    "fixed-workload probe",  # Artificial Analysis
    "percentiles of live routed traffic",  # OpenRouter's endpoint statistics
    "one-off run",  # LLMPerf
    "vendor record",  # a vendor's own record claim
    "compiled",  # a compilation's figure whose cited page is not read here: method unknown
    "listed price",  # a price as a benchmark or catalogue lists it, not a measurement
    "percentiles of live gateway traffic",  # Vercel AI Gateway's endpoint statistics
    "daily throughput chart",  # OpenRouter's website chart: one figure a day, statistic not stated
]
Statistic = Literal["median", "p50", "p75", "p90", "p99", "p95"]
Unit = Literal["tokens/s", "s", "USD per 1M tokens"]
PlatformKind = Literal["managed_cloud_catalogue", "edge_hosted", "gateway", "model_choice_layer"]
ProviderType = Literal["inference_api", "cloud", "hardware_vendor"]
# How one `speedbook fetch` of a source ended (pipeline/raw/outcomes.py).
FetchOutcome = Literal["new", "unchanged", "not_modified", "skipped", "failed"]

SOURCE_KINDS: tuple[SourceKind, ...] = get_args(SourceKind)
TIERS: tuple[Tier, ...] = get_args(Tier)
CLAIM_SCOPES: tuple[ClaimScope, ...] = get_args(ClaimScope)
OBTAINED_BY: tuple[ObtainedBy, ...] = get_args(ObtainedBy)
PRECISIONS: tuple[Precision, ...] = get_args(Precision)
SERVICE_TIERS: tuple[ServiceTier, ...] = get_args(ServiceTier)
REASONING_EFFORTS: tuple[ReasoningEffort, ...] = get_args(ReasoningEffort)
SCOPES: tuple[Scope, ...] = get_args(Scope)
METRICS: tuple[Metric, ...] = get_args(Metric)
QUALIFIERS: tuple[Qualifier, ...] = get_args(Qualifier)
TIME_BOUNDS: tuple[TimeBound, ...] = get_args(TimeBound)
METHODS: tuple[Method, ...] = get_args(Method)
STATISTICS: tuple[Statistic, ...] = get_args(Statistic)
UNITS: tuple[Unit, ...] = get_args(Unit)
PLATFORM_KINDS: tuple[PlatformKind, ...] = get_args(PlatformKind)
PROVIDER_TYPES: tuple[ProviderType, ...] = get_args(ProviderType)
FETCH_OUTCOMES: tuple[FetchOutcome, ...] = get_args(FetchOutcome)

# Ids: a source, provider, model, claim or platform is a slug; an endpoint spells its parts,
# provider/model/precision/service_tier/reasoning_effort[@region][~key] (sql/core/00_macros.sql).
ID_PATTERN = r"[a-z0-9]+(?:[.-][a-z0-9]+)*"
ENDPOINT_ID = (
    "provider/model/precision/service_tier/reasoning_effort, then @region for a regional "
    "endpoint and ~key where the source's own key tells endpoints of one variant apart"
)
ENDPOINT_ID_PATTERN = (
    f"^{ID_PATTERN}/{ID_PATTERN}/{ID_PATTERN}/{ID_PATTERN}/(?:[a-z]+|-)"
    f"(?:@{ID_PATTERN})?(?:~{ID_PATTERN})?$"
)

# Speeds outside this open interval are not tokens per second of any real endpoint.
MAX_TOKENS_PER_S = 100_000.0

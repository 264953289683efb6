"""The controlled vocabulary of DESIGN.md, in one place."""

from __future__ import annotations

SOURCE_KINDS = ("benchmark", "compilation", "claim", "platform_doc")
TIERS = ("T1", "T2", "T3")
CLAIM_SCOPES = ("peak_per_user", "aggregate")
OBTAINED_BY = ("bundled", "fetched", "manual")
PRECISIONS = ("fp32", "bf16", "fp16", "fp8", "fp6", "fp4", "int8", "int4", "unknown")
SERVICE_TIERS = ("standard", "turbo", "fast", "latency-optimized", "reference")
REASONING_EFFORTS = ("low", "medium", "high")
SCOPES = ("live_median", "peak_per_user", "aggregate")
METRICS = ("output_tokens_per_s", "ttft_s", "e2e_s", "price_blended_usd_per_mtok")
QUALIFIERS = ("approx", "at_least", "up_to", "range")
# How a figure was measured (DESIGN.md "method"); figures of different methods never compare.
METHODS = (
    "fixed-workload probe",  # Artificial Analysis
    "percentiles of live routed traffic",  # OpenRouter's endpoint statistics
    "one-off run",  # LLMPerf
    "vendor record",  # a vendor's own record claim
)
STATISTICS = ("median", "p50", "p75", "p90", "p99")
PLATFORM_KINDS = ("managed_cloud_catalogue", "edge_hosted", "gateway", "model_choice_layer")
PROVIDER_TYPES = ("inference_api", "cloud", "hardware_vendor")

# Speeds outside this open interval are not tokens per second of any real endpoint.
MAX_TOKENS_PER_S = 100_000.0

"""The formats a parser can read. The registry names one per source; fetching checks content types.

This module is deliberately free of parser imports so that loading the registry stays cheap.
"""

from __future__ import annotations

from dataclasses import dataclass

# A bundle: many HTTP responses in one snapshot (pipeline/raw/bundle.py reads and writes them).
BUNDLE_CONTENT_TYPE = "application/vnd.speedbook.bundle"
BUNDLE_EXTENSION = "bundle"
MAX_MEMBERS = 100_000  # responses one bundle may hold

GZIP_CONTENT_TYPE = "application/gzip"
GZIPPED_JSON_EXTENSION = "json.gz"  # a JSON document as its collector gzipped it


@dataclass(frozen=True)
class Measurement:
    """How the figures of a format were measured, where its frames do not say it row by row
    (vocabulary: Method, Statistic); window in minutes, None for a one-off run or a record."""

    method: str
    statistic: str | None = None
    window_minutes: int | None = None


@dataclass(frozen=True)
class FormatSpec:
    name: str
    description: str
    extension: str
    content_types: tuple[str, ...]
    measurement: Measurement | None = None

    def extension_for(self, content_type: str) -> str:
        """The file extension of a snapshot stored with `content_type`: the one that names that
        type when the format reads it (a plain JSON response of a format whose fetches are
        bundles is a `.json`), else the format's own."""
        base = content_type.split(";", 1)[0].strip().lower()
        if base in self.content_types:
            for extension, named in EXTENSION_CONTENT_TYPES.items():
                if named == base:
                    return extension
        return self.extension


FORMATS: dict[str, FormatSpec] = {
    spec.name: spec
    for spec in (
        FormatSpec(
            "aa_provider_page",
            "Artificial Analysis /models/<slug>/providers page: per-endpoint leaderboard",
            "html",
            ("text/html",),
            Measurement("fixed-workload probe", "median", 72 * 60),  # a 72-hour median
        ),
        FormatSpec(
            "compilation_page",
            "A page compiling figures from T1 sources into provider and platform tables",
            "html",
            ("text/html",),
            Measurement("compiled"),  # the cited page's method, when read
        ),
        FormatSpec(
            "llmperf_summary",
            "LLMPerf leaderboard run summary (raw_data/summary/*.json)",
            "json",
            ("application/json", "text/plain"),
            Measurement("one-off run", "p50"),  # the run's per-request median
        ),
        FormatSpec(
            "claim_page",
            "Vendor press release or press article stating record tokens/sec claims in prose",
            "html",
            ("text/html",),
            Measurement("vendor record"),
        ),
        FormatSpec(
            "cloudflare_models",
            "Cloudflare Workers AI catalogue API response {success, result: [model]}",
            "json",
            ("application/json",),
        ),
        FormatSpec(
            "openrouter_models",
            "OpenRouter GET /api/v1/models response {data: [model]}",
            "json",
            ("application/json",),
        ),
        FormatSpec(
            "platform_doc",
            "A platform's own documentation page stating its model count and families",
            "html",
            ("text/html",),
        ),
        FormatSpec(
            "mslearn_model_tables",
            "Microsoft Learn source markdown with per-publisher model tables",
            "md",
            ("text/markdown", "text/plain"),
        ),
        FormatSpec(
            "openrouter_endpoints",
            "OpenRouter GET /api/v1/models/{author}/{slug}/endpoints responses: a bundle of one "
            "poll round, or one response {data: {id, endpoints: [endpoint]}}",
            BUNDLE_EXTENSION,
            (BUNDLE_CONTENT_TYPE, "application/json"),
        ),
        FormatSpec(
            "openrouter_providers",
            "OpenRouter GET /api/v1/providers response {data: [provider]}",
            "json",
            ("application/json",),
        ),
        FormatSpec(
            "artificial_analysis_api",
            "Artificial Analysis GET /api/v2/data/llms/models response {status, prompt_options, "
            "data: [model]}",
            "json",
            ("application/json",),
        ),
        FormatSpec(
            "models_dev",
            "models.dev catalogue https://models.dev/api.json {provider_id: {name, models}}",
            "json",
            ("application/json",),
        ),
        FormatSpec(
            "openrouter_frontend",
            "OpenRouter's undocumented website statistics: a collector's capture {schema_version, "
            "catalog_payload, models: [{endpoint_payload, throughput_payload, ...}]} (gzip or "
            "not), or one GET /api/frontend/v1/stats/endpoint response {data: [endpoint]}",
            GZIPPED_JSON_EXTENSION,
            (GZIP_CONTENT_TYPE, "application/json"),
        ),
        FormatSpec(
            "vercel_gateway_endpoints",
            "Vercel AI Gateway GET /v1/models/{creator}/{model}/endpoints responses: a bundle of "
            "one poll round, or one response {data: {id, endpoints: [endpoint]}}",
            BUNDLE_EXTENSION,
            (BUNDLE_CONTENT_TYPE, "application/json"),
        ),
        FormatSpec(
            "vercel_gateway_models",
            "Vercel AI Gateway GET /v1/models response {object: 'list', data: [model]}",
            "json",
            ("application/json",),
        ),
    )
}

EXTENSION_CONTENT_TYPES = {
    BUNDLE_EXTENSION: BUNDLE_CONTENT_TYPE,
    GZIPPED_JSON_EXTENSION: GZIP_CONTENT_TYPE,
    "html": "text/html",
    "json": "application/json",
    "md": "text/markdown",
    "txt": "text/plain",
}

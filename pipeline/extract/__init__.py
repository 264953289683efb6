"""One parser per format. Each is a plain function from a snapshot to validated staged frames."""

from __future__ import annotations

from pipeline.extract import (
    artificial_analysis,
    artificial_analysis_api,
    claim_page,
    cloudflare,
    compilation,
    llmperf,
    models_dev,
    mslearn,
    openrouter,
    openrouter_endpoints,
    openrouter_frontend,
    openrouter_providers,
    platform_doc,
    vercel_gateway,
    vercel_gateway_models,
)
from pipeline.extract.base import ExtractError, Parser, SnapshotInput

PARSERS: dict[str, Parser] = {
    module.PARSER.format: module.PARSER
    for module in (
        artificial_analysis,
        compilation,
        llmperf,
        claim_page,
        cloudflare,
        openrouter,
        platform_doc,
        mslearn,
        openrouter_endpoints,
        openrouter_providers,
        artificial_analysis_api,
        models_dev,
        openrouter_frontend,
        vercel_gateway,
        vercel_gateway_models,
    )
}

__all__ = ["PARSERS", "ExtractError", "Parser", "SnapshotInput"]

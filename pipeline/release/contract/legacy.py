"""Reading releases published under an earlier schema version, so that a changelog and the
release history can still compare with them.

Schema 1.0 had no endpoint id on figures and no fastest live median beside claims (both added in
1.1). Its figures get the endpoint id spelled as core.endpoint_id spelled it when 1.0 was written
(frozen: nothing newer is read this way), and its claims a null fastest live median, which the
changelog does not compare.
"""

from __future__ import annotations

from typing import Any

Document = dict[str, Any]


def _frozen_endpoint_id(provider_id: str, figure: Document) -> str:
    model = figure.get("model") or {}
    variant = figure.get("variant") or {}
    return "/".join(
        [
            provider_id,
            model.get("id") or "-",
            variant.get("precision") or "unknown",
            variant.get("service_tier") or "standard",
            variant.get("reasoning_effort") or "-",
        ]
    )


def _with_endpoint(provider_id: str, figure: Any) -> Any:
    if not isinstance(figure, dict) or "endpoint" in figure:
        return figure
    return {"endpoint": _frozen_endpoint_id(provider_id, figure), **figure}


def _claim(provider_id: str, claim: Any) -> Any:
    if not isinstance(claim, dict):
        return claim
    return {
        "fastest_live_median": None,
        "peak_to_fastest_live_ratio": None,
        **claim,
        "live_median": _with_endpoint(provider_id, claim.get("live_median")),
    }


def _provider(provider: Any) -> Any:
    if not isinstance(provider, dict) or not isinstance(provider.get("id"), str):
        return provider  # malformed: the model's validation names the problem
    pid = provider["id"]
    return {
        **provider,
        "headline": _with_endpoint(pid, provider.get("headline")),
        "live_figures": [_with_endpoint(pid, f) for f in provider.get("live_figures") or []],
        "claims": [_claim(pid, c) for c in provider.get("claims") or []],
    }


def upgrade(export_file: str, document: Document) -> Document:
    """The document in the current shape; the input is not changed."""
    version = str(document.get("schema_version") or "")
    if export_file != "inference.json" or not version.startswith("1.0."):
        return document
    return {**document, "providers": [_provider(p) for p in document.get("providers") or []]}

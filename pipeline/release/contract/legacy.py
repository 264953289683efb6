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


def _frozen_endpoint_id(provider_id: str, figure: Document) -> str | None:
    model, variant = figure.get("model") or {}, figure.get("variant") or {}
    if not isinstance(model, dict) or not isinstance(variant, dict):
        return None
    parts = [
        provider_id,
        model.get("id") or "-",
        variant.get("precision") or "unknown",
        variant.get("service_tier") or "standard",
        variant.get("reasoning_effort") or "-",
    ]
    return "/".join(parts) if all(isinstance(part, str) for part in parts) else None


def _with_endpoint(provider_id: str, figure: Any) -> Any:
    if not isinstance(figure, dict) or "endpoint" in figure:
        return figure
    endpoint = _frozen_endpoint_id(provider_id, figure)
    return figure if endpoint is None else {"endpoint": endpoint, **figure}


def _claim(provider_id: str, claim: Any) -> Any:
    if not isinstance(claim, dict):
        return claim
    upgraded = {"fastest_live_median": None, "peak_to_fastest_live_ratio": None, **claim}
    if "live_median" in claim:
        upgraded["live_median"] = _with_endpoint(provider_id, claim["live_median"])
    return upgraded


def _provider(provider: Any) -> Any:
    # what is malformed stays as it is, for the model's validation to name
    if not isinstance(provider, dict) or not isinstance(provider.get("id"), str):
        return provider
    pid = provider["id"]
    upgraded = dict(provider)
    if "headline" in provider:
        upgraded["headline"] = _with_endpoint(pid, provider["headline"])
    if isinstance(provider.get("live_figures"), list):
        upgraded["live_figures"] = [_with_endpoint(pid, f) for f in provider["live_figures"]]
    if isinstance(provider.get("claims"), list):
        upgraded["claims"] = [_claim(pid, c) for c in provider["claims"]]
    return upgraded


def upgrade(export_file: str, document: Document) -> Document:
    """The document in the current shape; the input is not changed."""
    version = str(document.get("schema_version") or "")
    providers = document.get("providers")
    if export_file != "inference.json" or not version.startswith("1.0."):
        return document
    if not isinstance(providers, list):
        return document
    return {**document, "providers": [_provider(p) for p in providers]}

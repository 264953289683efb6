"""Reading releases published under an earlier schema version, so that a changelog and the
release history can still compare with them.

Schema 1.0 had no endpoint id on figures and no fastest live median beside claims (both added in
1.1). Its figures get the endpoint id spelled as core.endpoint_id spelled it when 1.0 was written
(frozen: nothing newer is read this way), and its claims a null fastest live median, which the
changelog does not compare.

Schemas before 1.2 wrote every address as a link (a template's too) and said nothing of how a
cited snapshot was obtained in a figure's source: an address with a placeholder moves to
`url_template`, a source takes `obtained_by` from the document's own snapshot list, and nothing is
read as reconstructed (those releases did not say so).
"""

from __future__ import annotations

from typing import Any

from pipeline.support.text import url_placeholder

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


def _address(item: Document) -> Document:
    url = item.get("url")
    if "url_template" in item or not isinstance(url, str):
        return item  # a missing or malformed address stays so, for the model to name
    if url_placeholder(url) is None:
        return {**item, "url_template": None}
    return {**item, "url": None, "url_template": url}


def _with_provenance(value: Any, obtained_by: dict[str, Any]) -> Any:
    """Every snapshot entry, source reference and source summary in `value`, in the 1.2 shape."""
    if isinstance(value, list):
        return [_with_provenance(item, obtained_by) for item in value]
    if not isinstance(value, dict):
        return value
    item = {key: _with_provenance(child, obtained_by) for key, child in value.items()}
    if "publisher" in item and "url" in item:  # a source reference or summary
        item = _address(item)
        snapshot = item.get("snapshot")
        if isinstance(snapshot, str) and "obtained_by" not in item and snapshot in obtained_by:
            item = {**item, "obtained_by": obtained_by[snapshot], "reconstructed_from": None}
    return item


def _provenance(document: Document) -> Document:
    snapshots = document.get("snapshots")
    if not isinstance(snapshots, list):
        return document
    entries = [
        {**_address(entry), "reconstructed_from": None} if isinstance(entry, dict) else entry
        for entry in snapshots
    ]
    obtained_by = {
        entry["id"]: entry.get("obtained_by")
        for entry in snapshots
        if isinstance(entry, dict) and isinstance(entry.get("id"), str)
    }
    rest = {k: _with_provenance(v, obtained_by) for k, v in document.items() if k != "snapshots"}
    return {**rest, "snapshots": entries}


def upgrade(export_file: str, document: Document) -> Document:
    """The document in the current shape; the input is not changed."""
    version = str(document.get("schema_version") or "")
    if version.startswith(("1.0.", "1.1.")):
        document = _provenance(document)
    providers = document.get("providers")
    if export_file != "inference.json" or not version.startswith("1.0."):
        return document
    if not isinstance(providers, list):
        return document
    return {**document, "providers": [_provider(p) for p in providers]}

"""Reading releases published under an earlier schema version, so that a changelog and the
release history can still compare with them.

- 1.0 had no endpoint id on figures and no fastest live median beside claims (both added in
  1.1). Its figures get the endpoint id spelled as core.endpoint_id spelled it when 1.0 was
  written (frozen: nothing newer is read this way), and its claims a null fastest live median,
  which the changelog does not compare.
- 1.0 and 1.1 did not record how a figure was measured, which sources corroborate it by name,
  regions, reviewed flags, endpoint prices, model-level figures or the models a platform's
  catalogue lists (all added in 1.2). Their figures read with a null method, statistic and
  window and no named corroborating source; every entity they name was reviewed (unreviewed
  entities did not exist); they list no prices, model-level figures or listed models.
- Schemas before 1.2 wrote every address as a link (a template's too) and said nothing of how a
  cited snapshot was obtained in a figure's source: an address with a placeholder moves to
  `url_template`, a source takes `obtained_by` from the document's own snapshot list, and
  nothing is read as reconstructed (those releases did not say so).
"""

from __future__ import annotations

from typing import Any

from pipeline.support.text import url_placeholder

Document = dict[str, Any]
_BEFORE_1_2 = ("1.0.", "1.1.")


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


def _reviewed(ref: Any) -> Any:
    return {"reviewed": True, **ref} if isinstance(ref, dict) else ref


def _variant(variant: Any) -> Any:
    return {"region": None, **variant} if isinstance(variant, dict) else variant


def _measured(figure: Any) -> Any:
    """A figure of 1.0 or 1.1 in 1.2's shape."""
    if not isinstance(figure, dict):
        return figure
    upgraded = {
        "method": None,
        "statistic": None,
        "window_minutes": None,
        "corroborated_by": [],
        **figure,
    }
    upgraded["model"] = _reviewed(figure.get("model"))
    upgraded["variant"] = _variant(figure.get("variant"))
    if "provider" in figure:
        upgraded["provider"] = _reviewed(figure["provider"])
    return upgraded


def _claim(provider_id: str, claim: Any, version: str) -> Any:
    if not isinstance(claim, dict):
        return claim
    upgraded = dict(claim)
    if version.startswith("1.0."):
        upgraded = {"fastest_live_median": None, "peak_to_fastest_live_ratio": None, **upgraded}
        if "live_median" in claim:
            upgraded["live_median"] = _with_endpoint(provider_id, claim["live_median"])
    upgraded["model"] = _reviewed(upgraded.get("model"))
    for key in ("live_median", "fastest_live_median"):
        if upgraded.get(key) is not None:
            upgraded[key] = _measured(upgraded[key])
    return upgraded


def _provider(provider: Any, version: str) -> Any:
    # what is malformed stays as it is, for the model's validation to name
    if not isinstance(provider, dict) or not isinstance(provider.get("id"), str):
        return provider
    pid = provider["id"]
    upgraded = {"reviewed": True, "prices": [], **provider}
    figures = provider.get("live_figures")
    if version.startswith("1.0."):
        if "headline" in provider:
            upgraded["headline"] = _with_endpoint(pid, provider["headline"])
        if isinstance(figures, list):
            upgraded["live_figures"] = figures = [_with_endpoint(pid, f) for f in figures]
    if upgraded.get("headline") is not None:
        upgraded["headline"] = _measured(upgraded["headline"])
    if isinstance(figures, list):
        upgraded["live_figures"] = [_measured(f) for f in figures]
    if isinstance(provider.get("claims"), list):
        upgraded["claims"] = [_claim(pid, c, version) for c in provider["claims"]]
    if isinstance(provider.get("context"), list):
        upgraded["context"] = [
            {**c, "model": _reviewed(c.get("model"))} if isinstance(c, dict) else c
            for c in provider["context"]
        ]
    return upgraded


def _platform(platform: Any) -> Any:
    if not isinstance(platform, dict) or not isinstance(platform.get("listed_models"), dict):
        return platform
    listed = {"catalogue": "own", "models": [], **platform["listed_models"]}
    return {**platform, "listed_models": listed}


def _catalogue_model(model: Any) -> Any:
    if not isinstance(model, dict):
        return model
    reviewed = None if model.get("model_id") is None else True
    return {"model_reviewed": reviewed, **model}


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
    if "publisher" in item and "url" in item and "tier" in item:  # a source reference or summary
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
    if not version.startswith(_BEFORE_1_2):
        return document
    document = _provenance(document)
    if export_file == "inference.json" and isinstance(document.get("providers"), list):
        providers = [_provider(p, version) for p in document["providers"]]
        return {"models": [], **document, "providers": providers}
    if export_file == "model_platforms.json" and isinstance(document.get("platforms"), list):
        return {**document, "platforms": [_platform(p) for p in document["platforms"]]}
    if export_file == "inference_catalog.json" and isinstance(document.get("tasks"), list):
        tasks = [
            {**t, "models": [_catalogue_model(m) for m in t["models"]]}
            if isinstance(t, dict) and isinstance(t.get("models"), list)
            else t
            for t in document["tasks"]
        ]
        return {**document, "tasks": tasks}
    return document

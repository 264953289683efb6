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
- 1.x (read in 1.2's shape first) wrote a source object into every figure and no sources table,
  no terms, no suspect flag, no time bound, no displays but the headline's, and scope
  `live_median` for every measured figure. 2.0 reads each source object as a citation of the
  source and snapshot it names, and builds the sources table from those objects (with unknown
  terms: 1.x did not record them, and its CC-BY-4.0 stamp is read as the compilation's licence
  it could only ever be); a figure is not suspect, its time exact (as 1.x said), its display
  null; `live_median` is `one_off` for a one-off run and `live` otherwise. 1.x's claims keep
  their own provider's live median (the fastest other provider's is not read: 2.0 never
  compares a claim with another endpoint), and its endpoint prices are not read (2.0's offers
  record staleness and uptime, which 1.x did not; no changelog compared prices).
"""

from __future__ import annotations

from typing import Any

from pipeline.release.contract.common import COMPILATION_LICENSE, COMPILATION_LICENSE_URL
from pipeline.support.text import url_placeholder

Document = dict[str, Any]
_BEFORE_1_2 = ("1.0.", "1.1.")
_BEFORE_2 = ("1.",)


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


def _to_1_2(export_file: str, document: Document, version: str) -> Document:
    """A document of 1.0 or 1.1 in 1.2's shape."""
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


# --- 1.x to 2.0 ------------------------------------------------------------------------------


def _is_source_ref(item: Any) -> bool:
    """A 1.x source reference (a figure's, a claim's, a catalogue's): it names a snapshot."""
    return (
        isinstance(item, dict)
        and isinstance(item.get("id"), str)
        and isinstance(item.get("snapshot"), str)
        and "publisher" in item
        and "tier" in item
    )


class _Sources:
    """The sources table of a 1.x document, built from the source objects it repeats."""

    def __init__(self) -> None:
        self.found: dict[str, Document] = {}

    def add(self, ref: Document, kind: Any = None, attribution: Any = None) -> None:
        entry = self.found.setdefault(
            ref["id"],
            {
                "id": ref["id"],
                "publisher": ref.get("publisher"),
                "title": None,
                "kind": None,
                "tier": ref.get("tier"),
                "url": ref.get("url"),
                "url_template": ref.get("url_template"),
                "terms": {
                    "license": "unknown",
                    "terms_url": None,
                    "attribution_required": None,
                    "attribution": None,
                },
            },
        )
        if kind is not None:
            entry["kind"] = kind
        if isinstance(attribution, dict):  # 1.2 credited a source whose terms require it
            entry["terms"] = {**entry["terms"], "attribution_required": True}
            entry["terms"]["attribution"] = attribution

    def cite(self, ref: Any) -> Any:
        """A source object as 2.0 cites it; anything else stays as it is, for the model's
        validation to name."""
        if not _is_source_ref(ref):
            return ref
        self.add(ref)
        return {"source": ref["id"], "snapshot": ref["snapshot"]}

    def table(self) -> list[Document]:
        return [self.found[key] for key in sorted(self.found)]


def _scope(figure: Document) -> Any:
    scope = figure.get("scope")
    if scope != "live_median":
        return scope
    return "one_off" if figure.get("method") == "one-off run" else "live"


def _labelled(figure: Any, sources: _Sources) -> Any:
    """A 1.x figure (a live figure, a headline, a claim's live median) in 2.0's shape."""
    if not isinstance(figure, dict):
        return figure
    cited = sources.cite(figure.get("source"))
    variant = figure.get("variant")
    upgraded = {
        **{k: v for k, v in figure.items() if k not in ("source", "corroborating_sources")},
        "scope": _scope(figure),
        "observed_at_bound": "exact",
        "suspect": False,
        "suspect_reason": None,
        "attribution": None,
        "variant": {"key": None, **variant} if isinstance(variant, dict) else variant,
    }
    if "rule" not in figure:  # 1.x wrote a display on headlines only
        upgraded["display"] = None
    return {**upgraded, **cited} if isinstance(cited, dict) else {**upgraded, "source": cited}


def _claim_2(claim: Any, sources: _Sources) -> Any:
    if not isinstance(claim, dict):
        return claim
    refs = claim.get("sources")
    cited = (
        [{**sources.cite(r), "tier": r["tier"]} if _is_source_ref(r) else r for r in refs]
        if isinstance(refs, list)
        else refs
    )
    dropped = ("live_median", "fastest_live_median", "peak_to_fastest_live_ratio")
    upgraded = {k: v for k, v in claim.items() if k not in dropped}
    if "live_median" in claim:  # a missing one stays missing, for the model to name
        live = claim["live_median"]
        upgraded["live"] = _labelled(live, sources) if live else None
    return {**upgraded, "sources": cited}


def _provider_2(provider: Any, sources: _Sources) -> Any:
    if not isinstance(provider, dict):
        return provider
    summaries = provider.get("sources")
    if isinstance(summaries, list):
        for summary in summaries:
            if isinstance(summary, dict) and isinstance(summary.get("id"), str):
                sources.add(summary, kind=summary.get("kind"))
    upgraded = {k: v for k, v in provider.items() if k not in ("live_figures", "prices")}
    headline = provider.get("headline")
    figures = provider.get("live_figures")
    context = provider.get("context")
    claims = provider.get("claims")
    return {
        **upgraded,
        "headline": _labelled(headline, sources) if headline else headline,
        "figures": [_labelled(f, sources) for f in figures]
        if isinstance(figures, list)
        else figures,
        "context": [
            {**{k: v for k, v in c.items() if k != "source"}, **_cited(c, sources)}
            if isinstance(c, dict)
            else c
            for c in context
        ]
        if isinstance(context, list)
        else context,
        "claims": [_claim_2(c, sources) for c in claims] if isinstance(claims, list) else claims,
        "offers": [],
        "sources": [s["id"] if isinstance(s, dict) else s for s in summaries]
        if isinstance(summaries, list)
        else summaries,
    }


def _cited(item: Document, sources: _Sources) -> Document:
    """An item's `source` object as `source` and `snapshot` ids, with no attribution."""
    cited = sources.cite(item.get("source"))
    found = cited if isinstance(cited, dict) else {"source": cited}
    return {**found, "attribution": item.get("attribution")}


def _model_row(row: Any, sources: _Sources) -> Any:
    if not isinstance(row, dict) or not isinstance(row.get("figures"), list):
        return row
    figures = []
    for figure in row["figures"]:
        if not isinstance(figure, dict):
            figures.append(figure)
            continue
        if _is_source_ref(figure.get("source")):
            sources.add(figure["source"], attribution=figure.get("attribution"))
        figures.append(
            {
                **{k: v for k, v in figure.items() if k != "source"},
                **_cited(figure, sources),
                "scope": "live",  # 1.2's model-level figures were probe medians over a window
                "observed_at_bound": "exact",
                "display": None,
            }
        )
    return {"family": None, "endpoints": [], "rankings": [], **row, "figures": figures}


_PRICES = {
    "price_input_usd_per_mtok": None,
    "price_output_usd_per_mtok": None,
    "price_cache_read_usd_per_mtok": None,
}


def _platform_2(platform: Any, sources: _Sources) -> Any:
    if not isinstance(platform, dict):
        return platform
    upgraded = dict(platform)
    if isinstance(platform.get("sources"), list):
        upgraded["sources"] = [
            {**sources.cite(s), "role": s.get("role")} if _is_source_ref(s) else s
            for s in platform["sources"]
        ]
    listed = platform.get("listed_models")
    if isinstance(listed, dict):
        models = listed.get("models")
        refs = listed.get("sources")
        upgraded["listed_models"] = {
            **listed,
            "models": [
                {**_PRICES, "price_cache_write_usd_per_mtok": None, "other_prices": None, **m}
                if isinstance(m, dict)
                else m
                for m in models
            ]
            if isinstance(models, list)
            else models,
            "sources": [sources.cite(r) for r in refs] if isinstance(refs, list) else refs,
        }
    return upgraded


def _catalog_2(document: Document, sources: _Sources) -> Document:
    upgraded = {k: v for k, v in document.items() if k != "sources"}
    refs = document.get("sources")
    upgraded["catalogue_snapshots"] = (
        [sources.cite(r) for r in refs] if isinstance(refs, list) else refs
    )
    tasks = document.get("tasks")
    if isinstance(tasks, list):
        upgraded["tasks"] = [
            {
                **t,
                "models": [
                    {**_PRICES, "other_prices": None, **m} if isinstance(m, dict) else m
                    for m in t["models"]
                ],
            }
            if isinstance(t, dict) and isinstance(t.get("models"), list)
            else t
            for t in tasks
        ]
    return upgraded


def _to_2(export_file: str, document: Document) -> Document:
    """A document of 1.x (in 1.2's shape) in 2.0's shape."""
    sources = _Sources()
    upgraded = dict(document)
    if export_file == "inference.json":
        if isinstance(document.get("providers"), list):
            upgraded["providers"] = [_provider_2(p, sources) for p in document["providers"]]
        if isinstance(document.get("models"), list):
            upgraded["models"] = [_model_row(m, sources) for m in document["models"]]
    elif export_file == "model_platforms.json" and isinstance(document.get("platforms"), list):
        upgraded["platforms"] = [_platform_2(p, sources) for p in document["platforms"]]
    elif export_file == "inference_catalog.json":
        upgraded = _catalog_2(document, sources)
    if document.get("license") == COMPILATION_LICENSE:
        upgraded["license"] = {"id": COMPILATION_LICENSE, "url": COMPILATION_LICENSE_URL}
    snapshots = document.get("snapshots")
    if isinstance(snapshots, list):
        upgraded["snapshots"] = [
            {**s, "retrieved_at_bound": "exact"} if isinstance(s, dict) else s for s in snapshots
        ]
    return {**upgraded, "sources": sources.table()}


def upgrade(export_file: str, document: Document) -> Document:
    """The document in the current shape; the input is not changed."""
    version = str(document.get("schema_version") or "")
    if version.startswith(_BEFORE_1_2):
        document = _to_1_2(export_file, document, version)
    if version.startswith(_BEFORE_2):
        document = _to_2(export_file, document)
    return document

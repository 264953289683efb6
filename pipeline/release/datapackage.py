"""datapackage.json, a Frictionless Data Package (v1 of the standard, `profile: data-package`):
each export with its size, sha256, JSON Schema, the sources it cites and their terms.

Licences say exactly who licenses what. The package's `licenses` is Speedbook's own: its
compilation (selection and arrangement, labels, reviewed entities). The publishers' data stays
under each source's terms: every source the exports cite is listed once in the package's
`sources` with its terms (`license`: an SPDX id, publisher-terms or unknown; `terms_url`;
`attribution_required`; the `attribution` to show), and each resource's `licenses` lists the
terms of the sources it holds that name a licence or terms (an unknown licence names nothing, so
it is not a licence entry; its source still says `unknown`).

The standard reserves a resource's `schema` for a Table Schema, which describes tables; these
exports are nested JSON documents, so each resource names its JSON Schema under `jsonSchema` (the
property the frictionless framework reserves for it) and says it is `type: json` (without it,
frictionless takes `inference_catalog.json` for a catalog descriptor of its own, by its name).
`frictionless validate exports/latest/datapackage.json` checks the descriptor and every hash."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pipeline.release.contract.common import COMPILATION_LICENSE, COMPILATION_LICENSE_URL, DATASET
from pipeline.release.contracts import schema_path
from pipeline.sources.registry import PUBLISHER_TERMS, UNKNOWN_LICENSE

DESCRIPTIONS = {
    "inference.json": (
        "Providers (headline, context, current figures, claims beside their own endpoint, "
        "offers) and models (endpoints across providers with figures per method, prices, "
        "uptime and rankings; model-level figures)."
    ),
    "model_platforms.json": (
        "One row per model-access platform: stated and listed model counts, listed prices."
    ),
    "inference_catalog.json": "The edge inference catalogue, by task, with its listed prices.",
}
COMPILATION = (
    "Speedbook's compilation: its selection and arrangement of the figures, its labels and its "
    "reviewed entities. Not the publishers' data, which stays under each source's terms "
    "(sources)."
)
SPDX_URL = "https://spdx.org/licenses/{}.html"


def resource_hash(data: bytes) -> str:
    """The `hash` of a resource, as datapackage.json records it and release checks compare it."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _source(source: dict[str, Any]) -> dict[str, Any]:
    """A package source (Frictionless: title and path) with its terms."""
    terms = source["terms"]
    title = f"{source['publisher']}: {source['title']}" if source.get("title") else source["id"]
    entry = {"id": source["id"], "title": title, **terms}
    if source.get("url"):
        entry["path"] = source["url"]
    return entry


def _licence(source: dict[str, Any]) -> dict[str, Any] | None:
    """A resource licence entry (Frictionless: name or path, and a title) for a source's terms;
    None when nobody knows them."""
    terms = source["terms"]
    title = source["publisher"]
    if terms["license"] == PUBLISHER_TERMS:
        return {"path": terms["terms_url"], "title": f"terms of {title}"}
    if terms["license"] == UNKNOWN_LICENSE:
        return None
    return {
        "name": terms["license"],
        "path": SPDX_URL.format(terms["license"]),
        "title": f"licence of {title}",
    }


def build_datapackage(
    files: dict[str, bytes], documents: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    resources = []
    sources: dict[str, dict[str, Any]] = {}
    for name in sorted(files):
        cited = documents[name].get("sources") or []
        sources.update((s["id"], s) for s in cited)
        # one entry per distinct licence or terms of a publisher (19 LLMPerf files, one licence)
        found = [entry for s in cited if (entry := _licence(s)) is not None]
        licences = {json.dumps(entry, sort_keys=True): entry for entry in found}
        resources.append(
            {
                "name": name.removesuffix(".json"),
                "path": name,
                "type": "json",
                "format": "json",
                "mediatype": "application/json",
                "encoding": "utf-8",
                "bytes": len(files[name]),
                "hash": resource_hash(files[name]),
                "description": DESCRIPTIONS.get(name, ""),
                "jsonSchema": f"schemas/{schema_path(name).name}",
                "sources": [{"title": s["id"]} for s in cited],
                "licenses": [licences[key] for key in sorted(licences)],
            }
        )
    first = documents[sorted(documents)[0]]
    return {
        "profile": "data-package",
        "name": DATASET,
        "title": "Speedbook: LLM inference speed and model access",
        "version": first["version"],
        "licenses": [
            {"name": COMPILATION_LICENSE, "path": COMPILATION_LICENSE_URL, "title": COMPILATION}
        ],
        "sources": [_source(sources[key]) for key in sorted(sources)],
        "data_date": first["data_date"],
        "resources": resources,
    }

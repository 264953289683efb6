"""datapackage.json, a Frictionless Data Package (v1 of the standard, `profile: data-package`):
each export with its size, sha256, JSON Schema and the sources it cites.

The standard reserves a resource's `schema` for a Table Schema, which describes tables; these
exports are nested JSON documents, so each resource names its JSON Schema under `jsonSchema` (the
property the frictionless framework reserves for it) and says it is `type: json` (without it,
frictionless takes `inference_catalog.json` for a catalog descriptor of its own, by its name).
`frictionless validate exports/latest/datapackage.json` checks the descriptor and every hash."""

from __future__ import annotations

import hashlib
from typing import Any

from pipeline.release.contract.common import DATASET, LICENSE, LICENSE_URL
from pipeline.release.contracts import schema_path

DESCRIPTIONS = {
    "inference.json": "One row per provider with figures: headline, context, live figures, claims.",
    "model_platforms.json": "One row per model-access platform: stated and listed model counts.",
    "inference_catalog.json": "The edge inference catalogue, by task.",
}


def resource_hash(data: bytes) -> str:
    """The `hash` of a resource, as datapackage.json records it and release checks compare it."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def build_datapackage(
    files: dict[str, bytes], documents: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    resources = []
    for name in sorted(files):
        document = documents[name]
        sources = sorted({s["source"] for s in document.get("snapshots", [])})
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
                "sources": [{"title": source} for source in sources],
            }
        )
    first = documents[sorted(documents)[0]]
    return {
        "profile": "data-package",
        "name": DATASET,
        "title": "Speedbook: LLM inference speed and model access",
        "version": first["version"],
        "licenses": [{"name": LICENSE, "path": LICENSE_URL}],
        "data_date": first["data_date"],
        "resources": resources,
    }

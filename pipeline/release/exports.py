"""The three exports, built from the warehouse's records by pure functions.

inference.json: one row per provider with figures (headline, context, live figures, claims).
model_platforms.json: one row per model-access platform (stated and listed model counts).
inference_catalog.json: the edge catalogue (platform, tasks in a stable order, their models).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pipeline.normalise.numbers import Figure, parse_count_statement
from pipeline.release.queries import ExportInputs, Record
from pipeline.support.text import clean_text, safe_url

DATASET = "speedbook"
LICENSE = "CC-BY-4.0"
SCHEMA_VERSION = "1.0.0"
# The edge catalogue's tasks, in the order the fieldbook lists them; others follow alphabetically.
TASK_ORDER = (
    "Text Generation",
    "Text Embeddings",
    "Automatic Speech Recognition",
    "Text-to-Speech",
    "Text-to-Image",
    "Image-to-Text",
    "Translation",
    "Summarization",
    "Text Classification",
    "Object Detection",
    "Image Classification",
    "Voice Activity Detection",
)
PLATFORM_KIND_LABELS = {
    "managed_cloud_catalogue": "Managed cloud catalogue",
    "edge_hosted": "Edge-hosted",
    "gateway": "Gateway (proxy)",
    "model_choice_layer": "Model-choice layer",
}
SERVICE_TIER_LABELS = {
    "turbo": "Turbo",
    "fast": "Fast",
    "latency-optimized": "Latency Optimized",
    "reference": "Reference",
}


@dataclass(frozen=True)
class ReleaseInfo:
    version: str
    schema_version: str = SCHEMA_VERSION


# --- formatting helpers -------------------------------------------------------------------------


def iso(value: datetime | None) -> str | None:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value is not None else None


def number(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(float(value), digits)


def speed_number(value: float) -> str:
    """A speed as the exports write it: '321', '2,314', '51.7', '0.54'."""
    if abs(value) >= 100:
        return f"{round(value):,}"
    if abs(value) >= 10:
        return f"{value:,.1f}"
    return f"{value:,.2f}"


def speed_text(value: float) -> str:
    """A live median as the seed writes it: '~321', '~2,314', '~51.7', '~0.54'."""
    return f"~{speed_number(value)}"


def variant(record: Record) -> dict[str, Any]:
    return {
        "precision": record["precision"],
        "service_tier": record["service_tier"],
        "reasoning_effort": record["reasoning_effort"],
    }


def variant_label(record: Record) -> str:
    """'(high, Turbo)', '(FP8)', '' : reasoning effort, then service tier, then precision."""
    parts = []
    if record.get("reasoning_effort"):
        parts.append(record["reasoning_effort"])
    if record.get("service_tier") in SERVICE_TIER_LABELS:
        parts.append(SERVICE_TIER_LABELS[record["service_tier"]])
    if record.get("precision") not in (None, "unknown"):
        parts.append(record["precision"].upper())
    return f" ({', '.join(parts)})" if parts else ""


class _Lookups:
    def __init__(self, inputs: ExportInputs) -> None:
        self.models = {m["model_id"]: m for m in inputs.models}
        self.sources = {s["source_id"]: s for s in inputs.sources}
        self.snapshots = {s["snapshot_id"]: s for s in inputs.snapshots}
        self.used_snapshots: set[str] = set()

    def model(self, model_id: str | None) -> dict[str, str] | None:
        if model_id is None:
            return None
        return {"id": model_id, "name": self.models[model_id]["name"]}

    def source_ref(self, source_id: str, snapshot_id: str) -> dict[str, Any]:
        """Where a figure comes from: enough to trace it to its snapshot, URL, tier and date."""
        self.used_snapshots.add(snapshot_id)
        snapshot = self.snapshots[snapshot_id]
        source = self.sources[source_id]
        return {
            "id": source_id,
            "publisher": source["publisher"],
            "tier": source["tier"],
            "url": snapshot["url"],
            "snapshot": snapshot_id,
            "retrieved_at": iso(snapshot["retrieved_at"]),
        }

    def source_summary(self, source_id: str) -> dict[str, Any]:
        source = self.sources[source_id]
        return {
            "id": source_id,
            "publisher": source["publisher"],
            "kind": source["kind"],
            "tier": source["tier"],
            "url": source["url"],
        }

    def snapshot_list(self) -> list[dict[str, Any]]:
        return [
            {
                "id": snapshot_id,
                "source": self.snapshots[snapshot_id]["source_id"],
                "url": self.snapshots[snapshot_id]["url"],
                "retrieved_at": iso(self.snapshots[snapshot_id]["retrieved_at"]),
                "sha256": self.snapshots[snapshot_id]["sha256"],
                "obtained_by": self.snapshots[snapshot_id]["obtained_by"],
            }
            for snapshot_id in sorted(self.used_snapshots)
        ]


def _envelope(
    name: str,
    info: ReleaseInfo,
    inputs: ExportInputs,
    lookups: _Lookups,
    rows_key: str,
    rows: Any,
    **extra: Any,
) -> dict[str, Any]:
    return {
        "dataset": DATASET,
        "export": name,
        "version": info.version,
        "schema_version": info.schema_version,
        "license": LICENSE,
        "data_date": iso(inputs.data_date),
        "as_of": iso(inputs.as_of),
        **extra,
        rows_key: rows,
        "snapshots": lookups.snapshot_list(),
    }


# --- inference.json ------------------------------------------------------------------------------


def _figure(record: Record, lookups: _Lookups) -> dict[str, Any]:
    return {
        "model": lookups.model(record["model_id"]),
        "variant": variant(record),
        "metric": record["metric"],
        "scope": record["scope"],
        "value": number(record["value"]),
        "low": number(record["low"]),
        "high": number(record["high"]),
        "qualifier": record["qualifier"],
        "unit": record["unit"],
        "observed_at": iso(record["observed_at"]),
        "stale": bool(record["stale"]),
        "tier": record["tier"],
        "source": lookups.source_ref(record["source_id"], record["snapshot_id"]),
        "corroborating_sources": int(record["corroborating_sources"]),
        "disputed_by": list(record["disputed_by"]),
    }


def _context(record: Record, lookups: _Lookups) -> dict[str, Any]:
    return {
        "text": record["figure_text"],
        "value": number(record["value"]),
        "low": number(record["low"]),
        "high": number(record["high"]),
        "qualifier": record["qualifier"],
        "applies_to": record["applies_to"],
        "model": lookups.model(record["model_id"]),
        "tier": record["tier"],
        "source": lookups.source_ref(record["source_id"], record["snapshot_id"]),
    }


def headline_display(headline: Record, model_name: str, context: list[Record]) -> str:
    text = f"{speed_text(headline['value'])} t/s · {model_name}{variant_label(headline)}"
    if context:
        text += " (" + "; ".join(c["figure_text"] for c in context) + ")"
    if headline["stale"]:
        text += f" · as of {iso(headline['observed_at'])[:10]}"  # type: ignore[index]
    return text


def _headline(record: Record, lookups: _Lookups, context: list[Record]) -> dict[str, Any]:
    figure = _figure(record, lookups)
    figure["rule"] = record["headline_rule"]
    figure["display"] = headline_display(
        record, lookups.models[record["model_id"]]["name"], context
    )
    return figure


def _live_beside(beside: Record | None, figures: list[Record]) -> Record | None:
    """The live median mart.peak_vs_live puts beside a claim (same provider and model, a point
    figure at a compatible precision, fresh first), as its full current figure. The view owns
    the rule; this only looks the figure up, so the export and the mart cannot disagree."""
    if beside is None or beside["live_endpoint_id"] is None:
        return None
    for figure in figures:
        if (
            figure["endpoint_id"] == beside["live_endpoint_id"]
            and figure["metric"] == "output_tokens_per_s"
        ):
            return figure
    raise LookupError(
        f"claim {beside['claim_id']}: live figure {beside['live_endpoint_id']} "
        "is not among the provider's current figures"
    )


def _claim(
    claim: Record,
    sources: list[Record],
    beside: Record | None,
    figures: list[Record],
    lookups: _Lookups,
) -> dict[str, Any]:
    live = _live_beside(beside, figures)
    # the view gives a ratio only to per-user claims with a live point figure
    ratio = beside["peak_to_live_ratio"] if beside is not None else None
    return {
        "id": claim["claim_id"],
        "model": lookups.model(claim["model_id"]),
        "hardware": claim["hardware"],
        "figure": claim["figure_text"],
        "value": number(claim["value"]),
        "qualifier": claim["qualifier"],
        "unit": claim["unit"],
        "scope": claim["scope"],
        "precision": claim["precision"],
        "technique": claim["technique"],
        "verified_by": claim["verified_by"],
        "claimed": claim["claimed"],
        "notes": claim["notes"],
        "sources": [lookups.source_ref(s["source_id"], s["snapshot_id"]) for s in sources],
        "live_median": _figure(live, lookups) if live else None,
        "peak_to_live_ratio": number(ratio, 2),
    }


def build_inference(inputs: ExportInputs, info: ReleaseInfo) -> dict[str, Any]:
    lookups = _Lookups(inputs)
    headlines = {h["provider_id"]: h for h in inputs.headlines}
    context: dict[str, list[Record]] = defaultdict(list)
    for record in inputs.context:
        context[record["provider_id"]].append(record)
    figures: dict[str, list[Record]] = defaultdict(list)
    for record in inputs.live_figures:
        figures[record["provider_id"]].append(record)
    claims: dict[str, list[Record]] = defaultdict(list)
    for record in inputs.claims:
        claims[record["provider_id"]].append(record)
    claim_sources: dict[str, list[Record]] = defaultdict(list)
    for record in inputs.claim_sources:
        claim_sources[record["claim_id"]].append(record)
    beside = {record["claim_id"]: record for record in inputs.peak_vs_live}
    rows = []
    for provider in inputs.providers:
        pid = provider["provider_id"]
        if pid not in headlines and not figures[pid] and not claims[pid]:
            continue
        headline = headlines.get(pid)
        row = {
            "id": pid,
            "name": provider["name"],
            "country": provider["country"],
            "type": provider["type"],
            "website": provider["website"],
            "headline": _headline(headline, lookups, context[pid]) if headline else None,
            "display": (
                headline_display(
                    headline, lookups.models[headline["model_id"]]["name"], context[pid]
                )
                if headline
                else None
            ),
            "context": [_context(c, lookups) for c in context[pid]],
            "live_figures": [_figure(f, lookups) for f in figures[pid]],
            "claims": [
                _claim(
                    c,
                    claim_sources[c["claim_id"]],
                    beside.get(c["claim_id"]),
                    figures[pid],
                    lookups,
                )
                for c in claims[pid]
            ],
        }
        used = {f["source"]["id"] for f in row["live_figures"]}
        used |= {c["source"]["id"] for c in row["context"]}
        used |= {s["id"] for c in row["claims"] for s in c["sources"]}
        if row["headline"]:
            used.add(row["headline"]["source"]["id"])
        row["sources"] = [lookups.source_summary(s) for s in sorted(used)]
        rows.append(row)
    return _envelope("inference", info, inputs, lookups, "providers", rows)


# --- model_platforms.json -------------------------------------------------------------------------


def _count(figure: Figure | None) -> dict[str, Any] | None:
    if figure is None:
        return None
    return {"value": number(figure.value), "qualifier": figure.qualifier, "context": figure.context}


def build_model_platforms(inputs: ExportInputs, info: ReleaseInfo) -> dict[str, Any]:
    lookups = _Lookups(inputs)
    statements = {s["platform_id"]: s for s in inputs.platform_statements}
    listed: dict[str, list[Record]] = defaultdict(list)
    for entry in inputs.platform_models:
        listed[entry["platform_id"]].append(entry)
    rows = []
    for platform in inputs.platforms:
        pid = platform["platform_id"]
        statement = statements.get(pid)
        if statement is None:
            continue  # its documentation has no snapshot as of this build
        primary, others = parse_count_statement(platform["stated_count"])
        doc = lookups.source_ref(statement["source_id"], statement["snapshot_id"])
        catalogue_snapshots = sorted({(e["source_id"], e["snapshot_id"]) for e in listed[pid]})
        catalogue = [lookups.source_ref(s, snap) for s, snap in catalogue_snapshots]
        rows.append(
            {
                "id": pid,
                "name": platform["name"],
                "owner": platform["owner"],
                "kind": platform["kind"],
                "kind_label": PLATFORM_KIND_LABELS[platform["kind"]],
                "stated_count": {
                    "text": platform["stated_count"],
                    "parsed": _count(primary),
                    "also": [_count(f) for f in others],
                    "tier": doc["tier"],
                },
                "listed_models": (
                    {
                        "count": len(listed[pid]),
                        "scope": platform["catalogue_scope"],
                        "sources": catalogue,
                    }
                    if listed[pid]
                    else None
                ),
                "notable": platform["notable"].split(" · ") if platform["notable"] else [],
                "sources": [doc | {"role": "documentation"}]
                + [c | {"role": "catalogue"} for c in catalogue],
            }
        )
    return _envelope("model_platforms", info, inputs, lookups, "platforms", rows)


# --- inference_catalog.json -----------------------------------------------------------------------


def task_rank(task: str) -> tuple[int, str]:
    return (TASK_ORDER.index(task), task) if task in TASK_ORDER else (len(TASK_ORDER), task)


def build_catalog(inputs: ExportInputs, info: ReleaseInfo) -> dict[str, Any]:
    lookups = _Lookups(inputs)
    edge = [p for p in inputs.platforms if p["kind"] == "edge_hosted"]
    entries = [
        e for e in inputs.platform_models if edge and e["platform_id"] == edge[0]["platform_id"]
    ]
    by_task: dict[str, list[Record]] = defaultdict(list)
    for entry in entries:
        by_task[entry["task"] or "Other"].append(entry)
    tasks = []
    for task in sorted(by_task, key=task_rank):
        models = sorted(by_task[task], key=lambda e: (e["listed_name"], e["platform_model_id"]))
        tasks.append(
            {
                "name": task,
                "count": len(models),
                "models": [
                    {
                        "id": m["platform_model_id"],
                        "name": m["listed_name"],
                        "publisher": m["publisher"],
                        "model_id": m["model_id"],
                        # the catalogue omits a flag when it is false
                        "function_calling": bool(m["function_calling"]),
                        "precision": m["precision"],
                        "service_tier": m["service_tier"],
                        "beta": bool(m["beta"]),
                        "lora": bool(m["lora"]),
                        "context_window": m["context_window"],
                        "planned_deprecation": m["planned_deprecation"],
                    }
                    for m in models
                ],
            }
        )
    sources = sorted({(e["source_id"], e["snapshot_id"]) for e in entries})
    platform = edge[0] if edge else None
    return _envelope(
        "inference_catalog",
        info,
        inputs,
        lookups,
        "tasks",
        tasks,
        platform=(
            {"id": platform["platform_id"], "name": platform["name"], "owner": platform["owner"]}
            if platform
            else None
        ),
        total=len(entries),
        function_calling=sum(1 for e in entries if e["function_calling"]),
        sources=[lookups.source_ref(s, snap) for s, snap in sources],
    )


# --- untrusted text ------------------------------------------------------------------------


def sanitise(value: Any, key: str = "") -> Any:
    """Last line of defence before anything is written: no markup or control characters in any
    string, and only http(s) URLs under keys that hold URLs."""
    if isinstance(value, dict):
        return {k: sanitise(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [sanitise(v, key) for v in value]
    if isinstance(value, str):
        if key in ("url", "website") or key.endswith("_url"):
            return safe_url(value)
        return clean_text(value, max_length=2000)
    return value


BUILDERS = {
    "inference.json": build_inference,
    "model_platforms.json": build_model_platforms,
    "inference_catalog.json": build_catalog,
}


def build_exports(inputs: ExportInputs, info: ReleaseInfo) -> dict[str, dict[str, Any]]:
    return {name: sanitise(build(inputs, info)) for name, build in BUILDERS.items()}

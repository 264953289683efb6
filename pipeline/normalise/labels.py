"""Resolve every distinct label in staging to an entity, and report what does not resolve.

Labels repeat thousands of times in a large build; each distinct one is resolved once. The result
is a table the core SQL joins against. Two kinds of label:

- names as prose and tables write them (benchmark pages, compilations, LLMPerf): they resolve
  through reviewed aliases only; one that does not is `unresolved`, reported with suggestions,
  and the figures it names are held back from the release (never guessed, never blocking it);
- names a source gives as stable ids (OpenRouter, Artificial Analysis's API, models.dev, the
  catalogues): one no alias knows becomes an `unreviewed` entity under the id's normalised slug
  (`Resolver.resolve_stable`), marked as such, so new names never block a release.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import duckdb
import pandas as pd

from pipeline.extract.staging import scope_build
from pipeline.normalise.entities import UNRESOLVED, UNREVIEWED, Resolver, alias_key
from pipeline.normalise.label_uses import label_uses, refresh_label_uses
from pipeline.normalise.reviewed import Platform
from pipeline.normalise.variants import parse_variant, tag_variant

RESOLUTION_COLUMNS = [
    "kind",
    "label",
    "stable",
    "name",
    "status",
    "entity_id",
    "precision",
    "service_tier",
    "reasoning_effort",
    "rule",
    "suggestions",
    "held_back",
    "sources",
    "uses",
]
MAX_SUGGESTED = 200  # names a report computes suggestions for (most used first)


@dataclass(frozen=True)
class LabelColumn:
    """Where a kind of label lives in staging. `column` is what the core SQL joins on; for a
    stable id, `name_column` holds the display name tried against the aliases first."""

    kind: str  # provider, model, platform, or endpoint_tag (a tag suffix: variant and region)
    table: str
    column: str
    stable: bool = False  # the column is a source's stable id: unknown -> unreviewed entity
    name_column: str | None = None
    slug_from_name: bool = False  # the unreviewed slug comes from the name's base, not the id


LABEL_COLUMNS: tuple[LabelColumn, ...] = (
    LabelColumn("provider", "aa_endpoints", "endpoint_label"),
    LabelColumn("provider", "compilation_figures", "provider_label"),
    LabelColumn("provider", "llmperf_runs", "framework"),
    LabelColumn("model", "aa_endpoints", "page_model"),
    LabelColumn("model", "compilation_figures", "model_label"),
    LabelColumn("model", "llmperf_runs", "model_label"),
    LabelColumn("platform", "compilation_platforms", "platform_label"),
    # stable ids: the provider's OpenRouter slug (its display name first), the model's id
    LabelColumn("provider", "openrouter_endpoints", "tag_root", True, "provider_name"),
    LabelColumn("model", "openrouter_endpoints", "model", True),
    LabelColumn("endpoint_tag", "openrouter_endpoints", "tag_suffix", True),
    LabelColumn("provider", "openrouter_providers", "slug", True, "name"),
    # Artificial Analysis's slugs carry the reasoning effort ('gpt-oss-120b-low'): its name's
    # base ('gpt-oss-120b', effort low) is the model
    LabelColumn("model", "aa_models", "name", True, slug_from_name=True),
    LabelColumn("provider", "models_dev_offers", "provider_id", True, "provider_name"),
    LabelColumn("model", "models_dev_offers", "platform_model_id", True, "name"),
    LabelColumn("model", "catalogue_entries", "platform_model_id", True),
)


@dataclass(frozen=True)
class LabelReport:
    resolutions: pd.DataFrame  # RESOLUTION_COLUMNS, one row per (kind, label)

    @property
    def unresolved(self) -> pd.DataFrame:
        """Names from prose and tables no reviewed alias resolves: their figures are held back
        from the release until a reviewer adds the alias."""
        return self.resolutions[self.resolutions["status"] == UNRESOLVED]

    @property
    def held_back(self) -> pd.DataFrame:
        """The unresolved names that stand behind a figure (their figures are not released)."""
        table = self.resolutions
        return table[(table["status"] == UNRESOLVED) & table["held_back"]]

    @property
    def unreviewed(self) -> pd.DataFrame:
        """Stable ids no reviewer confirmed yet, each kept as an entity of its own."""
        return self.resolutions[self.resolutions["status"] == UNREVIEWED]


def _platform_resolution(
    label: str, platforms: tuple[Platform, ...]
) -> tuple[str | None, str | None]:
    key = alias_key(label)
    for platform in platforms:
        for alias in (platform.name, *platform.aliases):
            if alias_key(alias) == key:
                return platform.id, f"alias {alias!r}"
    return None, None


def _resolve(
    resolver: Resolver, platforms: tuple[Platform, ...], spec: LabelColumn, label: str, name: str
) -> dict[str, object]:
    if spec.kind == "platform":
        entity_id, rule = _platform_resolution(label, platforms)
        variant = parse_variant(label)
        return {
            "status": "resolved" if entity_id else UNRESOLVED,
            "entity_id": entity_id,
            "rule": rule,
            "precision": variant.precision,
            "service_tier": variant.service_tier,
            "reasoning_effort": variant.reasoning_effort,
        }
    if spec.kind == "endpoint_tag":
        tag = tag_variant(label)
        return {
            "status": "resolved",
            "entity_id": tag.region,  # the region of a regional endpoint, else null
            "rule": f"tag suffix {label!r}",
            "precision": tag.precision,
            "service_tier": tag.service_tier,
            "reasoning_effort": tag.reasoning_effort,
        }
    if not spec.stable:
        result = resolver.resolve(spec.kind, label)
    elif spec.slug_from_name:
        result = resolver.resolve_stable(spec.kind, label)
    else:
        result = resolver.resolve_stable(spec.kind, name or label, label)
    return {
        "status": result.status,
        "entity_id": result.entity_id,
        "rule": result.rule,
        "precision": result.precision,
        "service_tier": result.service_tier,
        "reasoning_effort": result.reasoning_effort,
    }


def resolve_labels(
    con: duckdb.DuckDBPyConnection,
    resolver: Resolver,
    platforms: tuple[Platform, ...],
    snapshot_ids: Iterable[str],
) -> LabelReport:
    """Resolve the labels of the build's snapshots (`snapshot_ids`: its inventory), from the
    kept counts of each label (label_uses.py: only the snapshots not counted yet are read).
    Suggestions are computed only for the unresolved names a report shows (the most used
    `MAX_SUGGESTED`), never for every unknown name of a large catalogue."""
    scope_build(con, snapshot_ids)
    refresh_label_uses(con, LABEL_COLUMNS)
    collected: dict[tuple[str, str], dict[str, object]] = {}
    for spec in LABEL_COLUMNS:
        for row in label_uses(con, spec).itertuples(index=False):
            # a text can be both a prose label and a stable id: resolved apart, joined apart
            key = (spec.kind, row.label, spec.stable)
            entry = collected.setdefault(
                key, {"spec": spec, "name": None, "sources": set(), "uses": 0, "held_back": False}
            )
            if entry["name"] is None and isinstance(row.name, str):
                entry["name"] = row.name
            entry["sources"].update(str(row.sources).split(", "))  # type: ignore[union-attr]
            entry["uses"] = int(entry["uses"]) + int(row.uses)  # type: ignore[call-overload]
            entry["held_back"] = not spec.stable
    rows = []
    for (kind, label, stable), entry in sorted(collected.items()):
        spec: LabelColumn = entry["spec"]  # type: ignore[assignment]
        name = entry["name"] if isinstance(entry["name"], str) else label
        rows.append(
            {
                "kind": kind,
                "label": label,
                "stable": stable,
                "name": name,
                **_resolve(resolver, platforms, spec, label, name),
                "suggestions": [],
                "held_back": bool(entry["held_back"]),
                "sources": ", ".join(sorted(entry["sources"])),  # type: ignore[arg-type]
                "uses": int(entry["uses"]),  # type: ignore[call-overload]
            }
        )
    table = pd.DataFrame(rows, columns=RESOLUTION_COLUMNS)
    reported = table[table["status"] == UNRESOLVED].sort_values("uses", ascending=False)
    for index in reported.index[:MAX_SUGGESTED]:
        kind = str(table.at[index, "kind"])
        if kind in ("provider", "model"):
            table.at[index, "suggestions"] = list(resolver.suggest(kind, table.at[index, "label"]))
    table["held_back"] = table["held_back"] & (table["status"] == UNRESOLVED)
    return LabelReport(table)

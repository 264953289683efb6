"""Resolve every distinct label in staging to an entity, and report what does not resolve.

Labels repeat thousands of times in a large build; each distinct one is resolved once. The result
is a table the core SQL joins against. Two kinds of label:

- names as prose and tables write them (benchmark pages, compilations, LLMPerf): they resolve
  through reviewed aliases only; one that does not is `unresolved`, reported with suggestions,
  and the figures it names are held back from the release (never guessed, never blocking it);
- names a source gives as stable ids (OpenRouter, Artificial Analysis's API, models.dev, the
  catalogues): one no alias or identity rule resolves becomes an `unreviewed` entity under its
  identity spelling (`Resolver.resolve_stable`), marked as such, so new names never block a
  release. Spellings the identity rules give one key are one entity: the group's id is one of
  its spellings (`identity.group_ids`), so every source's figures on that model sit on one id.

Both kinds go through the identity rules (identity.py), with the stable keys each source
publishes beside a label (`LabelColumn.hints`: OpenRouter's Hugging Face ids, Artificial
Analysis's slugs).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

import duckdb
import pandas as pd

from pipeline.normalise.entities import UNRESOLVED, UNREVIEWED, Resolver, alias_key
from pipeline.normalise.identity import NO_HINTS, Hints, group_ids
from pipeline.normalise.label_uses import label_uses, refresh_label_uses, scope_build, spec_key
from pipeline.normalise.variants import parse_variant, tag_variant
from pipeline.sources.reviewed import Platform

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
    "family",
    "region",
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
    stable id, `name_column` holds the display name tried against the aliases first; `hints`
    names the columns beside it that hold the source's stable keys, as (identity.Hints field,
    column) pairs."""

    kind: str  # provider, model, platform, or endpoint_tag (a tag suffix: variant and region)
    table: str
    column: str
    stable: bool = False  # the column is a source's stable id: unknown -> unreviewed entity
    name_column: str | None = None
    slug_from_name: bool = False  # the unreviewed slug comes from the name's base, not the id
    hints: tuple[tuple[str, str], ...] = ()


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
    # base ('gpt-oss-120b', effort low) is the model; its slug says how precise a month in the
    # name is ("GPT-4o (Aug '24)": gpt-4o-2024-08-06)
    LabelColumn(
        "model",
        "aa_models",
        "name",
        True,
        slug_from_name=True,
        hints=(("slug", "slug"),),
    ),
    LabelColumn("provider", "models_dev_offers", "provider_id", True, "provider_name"),
    # models.dev's family is no key: in the bundled captures, 140 of the 1,179 models it gives a
    # family carry two or more across its providers (gpt-5.1-codex: 'gpt' and 'gpt-codex')
    LabelColumn("model", "models_dev_offers", "platform_model_id", True, "name"),
    # OpenRouter's catalogue names the weights a model serves (hugging_face_id); its
    # canonical_slug is no key (docs/identity.md)
    LabelColumn(
        "model",
        "catalogue_entries",
        "platform_model_id",
        True,
        hints=(("hugging_face_id", "hugging_face_id"),),
    ),
    # OpenRouter's website statistics: the same tags as its API, the model's public slug
    LabelColumn("provider", "openrouter_frontend_endpoints", "tag_root", True, "provider_name"),
    LabelColumn("model", "openrouter_frontend_endpoints", "model_slug", True),
    LabelColumn("endpoint_tag", "openrouter_frontend_endpoints", "tag_suffix", True),
    # Vercel's gateway: its provider names ('bedrock') and model ids ('meta/llama-3.3-70b')
    LabelColumn("provider", "vercel_gateway_endpoints", "provider_name", True),
    LabelColumn("model", "vercel_gateway_endpoints", "model", True),
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
    resolver: Resolver,
    platforms: tuple[Platform, ...],
    spec: LabelColumn,
    label: str,
    name: str,
    hints: Hints = NO_HINTS,
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
            "family": None,
            "region": None,
            "key": "",
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
            "family": None,
            "region": tag.region,
            "key": "",
        }
    if not spec.stable:
        result = resolver.resolve(spec.kind, label)
    elif spec.slug_from_name:
        result = resolver.resolve_stable(spec.kind, label, hints=hints)
    else:
        result = resolver.resolve_stable(spec.kind, name or label, label, hints)
    return {
        "status": result.status,
        "entity_id": result.entity_id,
        "rule": result.rule,
        "precision": result.precision,
        "service_tier": result.service_tier,
        "reasoning_effort": result.reasoning_effort,
        "family": result.family,
        "region": result.region,
        "key": result.key,
    }


@dataclass(frozen=True)
class LabelUse:
    """One distinct label of one staged column over a build's snapshots (label_uses.py)."""

    spec: LabelColumn
    label: str
    name: str | None  # its most used display name, where the column has one
    hints: Hints
    sources: tuple[str, ...]
    uses: int


def parse_hints(text: object) -> Hints:
    """The hints label_uses keeps as a JSON object; anything else is no hints."""
    if not isinstance(text, str) or not text:
        return NO_HINTS
    try:
        values = json.loads(text)
    except ValueError:
        return NO_HINTS
    return Hints.of(values) if isinstance(values, dict) else NO_HINTS


def resolve_uses(
    resolver: Resolver, platforms: tuple[Platform, ...], uses: Iterable[LabelUse]
) -> pd.DataFrame:
    """Resolve distinct labels (RESOLUTION_COLUMNS, one row per kind, label and stable-ness),
    then give each group of unreviewed spellings with one identity key one id. Pure: the build
    feeds it the kept counts (resolve_labels), the tests parsed frames."""
    collected: dict[tuple[str, str, bool], dict[str, object]] = {}
    for use in uses:
        # a text can be both a prose label and a stable id: resolved apart, joined apart
        key = (use.spec.kind, use.label, use.spec.stable)
        entry = collected.setdefault(
            key,
            {
                "spec": use.spec,
                "name": None,
                "hints": NO_HINTS,
                "sources": set(),
                "uses": 0,
                "held_back": False,
            },
        )
        if entry["name"] is None and isinstance(use.name, str):
            entry["name"] = use.name
        entry["hints"] = entry["hints"].merged(use.hints)  # type: ignore[attr-defined]
        entry["sources"].update(use.sources)  # type: ignore[union-attr]
        entry["uses"] = int(entry["uses"]) + use.uses  # type: ignore[call-overload]
        entry["held_back"] = not use.spec.stable
    rows = []
    for (kind, label, stable), entry in sorted(collected.items()):
        spec: LabelColumn = entry["spec"]  # type: ignore[assignment]
        name = entry["name"] if isinstance(entry["name"], str) else label
        hints: Hints = entry["hints"]  # type: ignore[assignment]
        rows.append(
            {
                "kind": kind,
                "label": label,
                "stable": stable,
                "name": name,
                **_resolve(resolver, platforms, spec, label, name, hints),
                "suggestions": [],
                "held_back": bool(entry["held_back"]),
                "sources": ", ".join(sorted(entry["sources"])),  # type: ignore[arg-type]
                "uses": int(entry["uses"]),  # type: ignore[call-overload]
                "from_name": spec.slug_from_name,
            }
        )
    table = pd.DataFrame(rows, columns=[*RESOLUTION_COLUMNS, "key", "from_name"])
    _one_id_per_key(table)
    return table[RESOLUTION_COLUMNS]


def _one_id_per_key(table: pd.DataFrame) -> None:
    """Unreviewed spellings with one identity key get one id: the spelling of a stable id
    before one read from a display name, then the most shared, then the first by text
    (identity.group_ids). Two provider ids of one source are two providers by that source's
    word (models.dev's `stepfun` and `stepfun-ai` serve other endpoints): their key merges
    nothing."""
    unreviewed = table["status"] == UNREVIEWED
    for kind in table.loc[unreviewed, "kind"].unique():
        rows = table[unreviewed & (table["kind"] == kind) & (table["key"] != "")]
        if kind == "provider":
            rows = rows[~rows["key"].isin(_keys_one_source_splits(rows))]
        stable = [not from_name for from_name in rows["from_name"].astype(bool).tolist()]
        chosen = group_ids(
            zip(rows["key"].tolist(), rows["entity_id"].tolist(), stable, strict=True)
        )
        ids = rows["key"].map(chosen)
        moved = ids[ids != rows["entity_id"]]
        table.loc[moved.index, "rule"] = [
            f"{rule}; one id for every spelling of its key: {entity_id!r}"
            for rule, entity_id in zip(table.loc[moved.index, "rule"], moved, strict=True)
        ]
        table.loc[moved.index, "entity_id"] = moved


def _keys_one_source_splits(rows: pd.DataFrame) -> set[str]:
    """Keys under which one source names two different labels."""
    named: dict[tuple[str, str], set[str]] = {}
    for key, label, sources in zip(rows["key"], rows["label"], rows["sources"], strict=True):
        for source in str(sources).split(", "):
            named.setdefault((key, source), set()).add(label)
    return {key for (key, _), labels in named.items() if len(labels) > 1}


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
    columns = {spec_key(spec): spec for spec in LABEL_COLUMNS}
    # in the order of LABEL_COLUMNS: the first column that names a label gives its display name
    uses = [
        LabelUse(
            spec=columns[row.spec],
            label=row.label,
            name=row.name if isinstance(row.name, str) else None,
            hints=parse_hints(row.hints),
            sources=tuple(str(row.sources).split(", ")),
            uses=int(row.uses),
        )
        for row in label_uses(con, LABEL_COLUMNS).itertuples(index=False)
    ]
    table = resolve_uses(resolver, platforms, uses)
    reported = table[table["status"] == UNRESOLVED].sort_values("uses", ascending=False)
    for index in reported.index[:MAX_SUGGESTED]:
        kind = str(table.at[index, "kind"])
        if kind in ("provider", "model"):
            table.at[index, "suggestions"] = list(resolver.suggest(kind, table.at[index, "label"]))
    table["held_back"] = table["held_back"] & (table["status"] == UNRESOLVED)
    return LabelReport(table)

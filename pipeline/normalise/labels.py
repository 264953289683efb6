"""Resolve every distinct label in staging to an entity, and report what does not resolve.

Labels repeat thousands of times in a large build; each distinct one is resolved once. The result
is a table the core SQL joins against. Names in figures (providers, models, platforms) that do not
resolve block the build; catalogue entries keep the platform's own id and only gain a canonical
model where an alias matches, so an unmatched one is listed for information, not blocking.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

import duckdb
import pandas as pd

from pipeline.extract.staging import scope_build
from pipeline.normalise.entities import Resolver, alias_key
from pipeline.normalise.reviewed import Platform
from pipeline.normalise.variants import parse_variant

RESOLUTION_COLUMNS = [
    "kind",
    "label",
    "status",
    "entity_id",
    "precision",
    "service_tier",
    "reasoning_effort",
    "rule",
    "suggestions",
    "blocking",
    "sources",
    "uses",
]

# Unresolved names a build reports (blocking ones first), each with suggestions; the others are
# counted, and listed in staging.label_resolution without suggestions, which are costly.
REPORTED_NAMES = 200

# (kind, staged table, label column, blocking)
_LABEL_COLUMNS: tuple[tuple[str, str, str, bool], ...] = (
    ("provider", "aa_endpoints", "endpoint_label", True),
    ("provider", "compilation_figures", "provider_label", True),
    ("provider", "llmperf_runs", "framework", True),
    ("model", "aa_endpoints", "page_model", True),
    ("model", "compilation_figures", "model_label", True),
    ("model", "llmperf_runs", "model_label", True),
    ("platform", "compilation_platforms", "platform_label", True),
    ("catalogue_model", "catalogue_entries", "platform_model_id", False),
)


@dataclass(frozen=True)
class LabelReport:
    resolutions: pd.DataFrame  # RESOLUTION_COLUMNS, one row per (kind, label)

    @property
    def blocking(self) -> pd.DataFrame:
        table = self.resolutions
        return table[(table["status"] == "unresolved") & table["blocking"]]

    @property
    def unresolved(self) -> pd.DataFrame:
        """Names no reviewed alias resolves (catalogue entries are not names: see unmatched)."""
        return self.resolutions[self.resolutions["status"] == "unresolved"]

    @property
    def reported(self) -> pd.DataFrame:
        """The unresolved names a build reports, blocking ones first: those with suggestions."""
        return _reported(self.resolutions)

    @property
    def unmatched(self) -> pd.DataFrame:
        """Catalogue entries kept under the platform's own id, with no canonical model."""
        return self.resolutions[self.resolutions["status"] == "unmatched"]


def _labels(con: duckdb.DuckDBPyConnection, table: str, column: str) -> pd.DataFrame:
    """Distinct labels of one column, over the snapshots the build reads (`build_scope`)."""
    return con.execute(
        f"""
        SELECT t.{column} AS label,
               string_agg(DISTINCT t.source_id, ', ' ORDER BY t.source_id) AS sources,
               count(*) AS uses
        FROM staging.{table} AS t
        JOIN build_scope AS e ON e.snapshot_id = t.snapshot_id
        WHERE t.{column} IS NOT NULL
        GROUP BY t.{column}
        """
    ).df()


def _platform_resolution(
    label: str, platforms: tuple[Platform, ...]
) -> tuple[str | None, str | None]:
    key = alias_key(label)
    for platform in platforms:
        for alias in (platform.name, *platform.aliases):
            if alias_key(alias) == key:
                return platform.id, f"alias {alias!r}"
    return None, None


def resolve_labels(
    con: duckdb.DuckDBPyConnection,
    resolver: Resolver,
    platforms: tuple[Platform, ...],
    snapshot_ids: Iterable[str],
) -> LabelReport:
    """Resolve the labels of the build's snapshots (`snapshot_ids`: its inventory)."""
    scope_build(con, snapshot_ids)
    collected: dict[tuple[str, str], dict[str, object]] = {}
    for kind, table, column, blocking in _LABEL_COLUMNS:
        for row in _labels(con, table, column).itertuples(index=False):
            key = (kind, row.label)
            entry = collected.setdefault(key, {"sources": set(), "uses": 0, "blocking": blocking})
            entry["sources"].update(str(row.sources).split(", "))  # type: ignore[union-attr]
            entry["uses"] = int(entry["uses"]) + int(row.uses)  # type: ignore[call-overload]
    rows = []
    for (kind, label), entry in sorted(collected.items()):
        if kind == "platform":
            entity_id, rule = _platform_resolution(label, platforms)
            variant = parse_variant(label)
            resolution = {
                "status": "resolved" if entity_id else "unresolved",
                "entity_id": entity_id,
                "rule": rule,
                "suggestions": "[]",
                "precision": variant.precision,
                "service_tier": variant.service_tier,
                "reasoning_effort": variant.reasoning_effort,
            }
        else:
            result = resolver.resolve(_kind(kind), label, suggest=False)
            status = result.status
            if kind == "catalogue_model" and status == "unresolved":
                status = "unmatched"  # the entry keeps its platform id; only the link is missing
            resolution = {
                "status": status,
                "entity_id": result.entity_id,
                "rule": result.rule,
                "suggestions": json.dumps(list(result.suggestions)),
                "precision": result.precision,
                "service_tier": result.service_tier,
                "reasoning_effort": result.reasoning_effort,
            }
        rows.append(
            {
                "kind": kind,
                "label": label,
                **resolution,
                "blocking": bool(entry["blocking"]),
                "sources": ", ".join(sorted(entry["sources"])),  # type: ignore[arg-type]
                "uses": int(entry["uses"]),  # type: ignore[call-overload]
            }
        )
    table = pd.DataFrame(rows, columns=RESOLUTION_COLUMNS)
    # suggestions only for the names reported (difflib per name: 100,000 unmatched catalogue
    # entries took 101 s for suggestions nobody read)
    for index, row in _reported(table).iterrows():
        if row["kind"] != "platform":
            suggestions = resolver.suggest(_kind(row["kind"]), row["label"])
            table.at[index, "suggestions"] = json.dumps(list(suggestions))
    return LabelReport(table)


def _kind(kind: str) -> str:
    return "model" if kind == "catalogue_model" else kind


def _reported(resolutions: pd.DataFrame) -> pd.DataFrame:
    unresolved = resolutions[resolutions["status"] == "unresolved"]
    return unresolved.sort_values("blocking", ascending=False, kind="stable").head(REPORTED_NAMES)

"""Small hand-made warehouses for the rules in sql/mart: core tables filled with a few rows, then
the mart applied, so one rule can be pinned without a whole build. The mart's SQL is the same on
a lake and on a plain DuckDB database: these are plain ones, with core.observations (a view over
the facts in a build) a table of hand-made rows."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from pipeline.schema.core import CORE_TABLES, CORE_VIEWS, KEPT_TABLES
from pipeline.schema.ddl import create_table
from pipeline.support.settings import SQL_DIR
from pipeline.warehouse.connection import session
from pipeline.warehouse.core import BUILD_STATE_DDL
from pipeline.warehouse.marts import apply_marts

DAY = datetime(2026, 11, 29, tzinfo=UTC)
SOURCES = {  # id: (tier, kind, max_age_days)
    "bench-a": ("T1", "benchmark", 7),
    "bench-b": ("T1", "benchmark", 7),
    "compiled": ("T2", "compilation", 31),
    "catalogue": ("T1", "platform_doc", 7),
    "vendor": ("T2", "claim", 366),
    "press": ("T3", "claim", 366),
}


def snapshot_id(source: str, days_ago: int) -> str:
    return f"{source}/{days_ago}.html"


# How each origin's figures are measured in a real build (FormatSpec, the core SQL)
MEASUREMENT = {
    "aa_endpoints": ("fixed-workload probe", "median", 4320),
    "compilation_figures": ("fixed-workload probe", "median", 4320),  # a cited page's figure
    "llmperf_runs": ("one-off run", "p50", None),
    "openrouter_endpoints": ("percentiles of live routed traffic", "p50", 30),
    "claim_evidence": ("vendor record", None, None),
}


def observation(
    source: str,
    value: float,
    *,
    days_ago: int = 0,
    provider: str = "p",
    model: str = "m",
    precision: str = "unknown",
    service_tier: str = "standard",
    effort: str | None = None,
    scope: str = "live",
    role: str = "measured",
    origin: str = "aa_endpoints",
    qualifier: str | None = None,
    method: str | None = None,
    statistic: str | None = None,
    cited: str | None = None,
    lineage: str | None = None,
) -> dict[str, Any]:
    when = DAY - timedelta(days=days_ago)
    endpoint = f"{provider}/{model}/{precision}/{service_tier}/{effort or '-'}"
    measured_by, central, window = MEASUREMENT[origin]
    return {
        "observation_id": f"{source}|{endpoint}|{days_ago}|{role}|{scope}|{statistic}",
        "endpoint_id": endpoint,
        "provider_id": provider,
        "model_id": model,
        "precision": precision,
        "service_tier": service_tier,
        "reasoning_effort": effort,
        "metric": "output_tokens_per_s",
        "scope": scope,
        "value": value,
        "low": None,
        "high": None,
        "qualifier": qualifier,
        "unit": "tokens/s",
        "observed_at": when,
        "retrieved_at": when,
        "snapshot_id": snapshot_id(source, days_ago),
        "source_id": source,
        "tier": SOURCES[source][0],
        "origin": origin,
        "role": role,
        "quote": "q",
        "workload": None,
        "region": None,
        "endpoint_key": None,
        "observed_at_bound": "exact",
        "suspect": False,
        "suspect_reason": None,
        "method": method or measured_by,
        "statistic": statistic or central,
        "window_minutes": window,
        "cited_source_id": cited,
        "lineage": lineage or cited or source,
    }


@dataclass
class Snapshot:
    """A snapshot with no figures of its own (a catalogue, or one whose extraction failed)."""

    source: str
    days_ago: int
    status: str = "ok"  # ok, failed or damaged, as core.extractions records it
    rebuilt_from: str | None = None  # the snapshot id it was reconstructed from

    @property
    def id(self) -> str:
        return snapshot_id(self.source, self.days_ago)


@dataclass
class Warehouse:
    path: Path
    observations: list[dict[str, Any]] = field(default_factory=list)
    snapshots: list[Snapshot] = field(default_factory=list)
    confirmed: dict[str, datetime] = field(
        default_factory=dict
    )  # source: core.sources.confirmed_at
    as_of: datetime | None = None

    def build(self) -> duckdb.DuckDBPyConnection:
        con = session()
        con.execute(f"ATTACH '{self.path}' AS test_warehouse")
        con.execute("USE test_warehouse")
        con.execute("CREATE SCHEMA core")
        for name, model in {**CORE_TABLES, **KEPT_TABLES, **CORE_VIEWS}.items():
            con.execute(create_table(model, f"core.{name}"))
        con.execute(BUILD_STATE_DDL)
        # the shared macros (sql/core/00_macros.sql) and the fact-free part of the core SQL
        con.execute((SQL_DIR / "core" / "00_macros.sql").read_text(encoding="utf-8"))
        if self.observations:
            con.register("obs", pd.DataFrame(self.observations))
            con.execute("INSERT INTO core.observations BY NAME SELECT * FROM obs")
            con.unregister("obs")
        for sid, (tier, kind, days) in SOURCES.items():
            con.execute(
                "INSERT INTO core.sources BY NAME SELECT ? AS source_id, ? AS kind, "
                "? AS publisher, NULL AS title, 'https://example.org/' || ? AS url, ? AS tier, "
                "'aa_provider_page' AS format, 'weekly' AS cadence, ? AS max_age_minutes, "
                "? AS confirmed_at, 'unknown' AS license",
                # each source its own publisher: independent unless a figure repeats another
                [
                    sid,
                    kind,
                    f"publisher of {sid}",
                    sid,
                    tier,
                    days * 24 * 60,
                    self.confirmed.get(sid),
                ],
            )
        # every snapshot the observations cite was read fine; the others are listed explicitly
        listed = {s.id: s for s in self.snapshots}
        for o in self.observations:
            listed.setdefault(o["snapshot_id"], Snapshot(o["source_id"], _days(o["retrieved_at"])))
        for snap in listed.values():
            when = DAY - timedelta(days=snap.days_ago)
            in_scope = snap.status == "ok" and (self.as_of is None or when <= self.as_of)
            con.execute(
                "INSERT INTO core.snapshots BY NAME SELECT ? AS snapshot_id, ? AS source_id, "
                "'https://example.org/' || ? AS url, ? AS retrieved_at, repeat('0', 64) AS sha256, "
                "1 AS size_bytes, 'text/html' AS content_type, ? AS obtained_by, "
                "? AS reconstructed_from, ? AS reconstructed_from_snapshot_id, "
                "'exact' AS retrieved_at_bound, ? AS in_scope",
                [
                    snap.id,
                    snap.source,
                    snap.id,
                    when,
                    "reconstructed" if snap.rebuilt_from else "bundled",
                    "a document" if snap.rebuilt_from else None,
                    snap.rebuilt_from,
                    in_scope,
                ],
            )
            con.execute(
                "INSERT INTO core.extractions BY NAME SELECT ? AS snapshot_id, ? AS source_id, "
                "'aa_provider_page' AS format, '1' AS parser_version, ? AS status, ? AS error, "
                "0 AS rows_extracted",
                [snap.id, snap.source, snap.status, None if snap.status == "ok" else "broken"],
            )
        # as in a build: core.observations reads only the snapshots in the build's scope
        con.execute(
            "DELETE FROM core.observations WHERE snapshot_id NOT IN "
            "(SELECT snapshot_id FROM core.snapshots WHERE in_scope)"
        )
        # the current figures of the observations, as a build keeps them for its measured ones
        con.execute(
            "INSERT INTO core.current_measured BY NAME FROM core.current_of(['core.observations'])"
        )
        data_date = max(DAY - timedelta(days=s.days_ago) for s in listed.values())
        con.execute("INSERT INTO core.build_state VALUES (?, ?)", [self.as_of, data_date])
        apply_marts(con)
        return con


def _days(when: datetime) -> int:
    return (DAY - when).days


def rows(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None) -> list[dict]:
    cursor = con.execute(sql, params or [])
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

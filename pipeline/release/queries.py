"""Read what the exports need out of the warehouse, as plain records (lists of dicts).

Every query orders its rows fully, so the exports built from them are deterministic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import duckdb

Record = dict[str, Any]


def _records(
    con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None
) -> list[Record]:
    cursor = con.execute(sql, params or [])
    names = [d[0] for d in cursor.description]
    records = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    # NaN is a missing value, as None; only a float column can hold one (a value-by-value test
    # of every column took most of the time of reading the snapshots' 130,000 rows)
    for name, kind, *_ in cursor.description:
        if str(kind) in ("DOUBLE", "FLOAT"):
            for record in records:
                value = record[name]
                if value is not None and math.isnan(value):
                    record[name] = None
    return records


@dataclass(frozen=True)
class ExportInputs:
    """Everything the three exports are built from, read in one pass."""

    as_of: datetime | None
    data_date: datetime
    providers: list[Record]
    models: list[Record]
    sources: list[Record]
    # the snapshots the other inputs cite (cited_snapshot_ids), not the whole history
    snapshots: list[Record]
    headlines: list[Record]
    context: list[Record]
    live_figures: list[Record]
    claims: list[Record]
    claim_sources: list[Record]
    # one row per claim: the live medians beside it and their ratios (mart.peak_vs_live)
    peak_vs_live: list[Record]
    platforms: list[Record]
    platform_statements: list[Record]
    platform_models: list[Record]
    # each endpoint's listing in its source's newest usable snapshot (OpenRouter's endpoints)
    endpoint_prices: list[Record]
    # model-level figures: the newest per model, effort, metric and method (mart.model_figures)
    model_figures: list[Record]
    # platforms' listings in a catalogue of catalogues (models.dev), newest usable snapshot
    platform_offers: list[Record]


# What inference.json shows of a live figure (pipeline/release/exports.py, _figure_fields): at
# 90 days of polls 25,000 rows, of which the view's other columns (its quote, source URL and
# two more times) doubled the cost of reading them into Python
LIVE_FIGURE_COLUMNS = (
    "observation_id",
    "provider_id",
    "endpoint_id",
    "model_id",
    "precision",
    "service_tier",
    "reasoning_effort",
    "region",
    "metric",
    "scope",
    "method",
    "statistic",
    "window_minutes",
    "value",
    "low",
    "high",
    "qualifier",
    "unit",
    "observed_at",
    "stale",
    "tier",
    "source_id",
    "snapshot_id",
    "corroborated_by",
    "disputed_by",
)

CITED_SNAPSHOTS = """
SELECT * FROM core.snapshots
WHERE snapshot_id IN (SELECT unnest(?::VARCHAR[]))
ORDER BY snapshot_id
"""


def cited_snapshot_ids(inputs: dict[str, Any]) -> list[str]:
    """Every snapshot the records in `inputs` name in a `snapshot_id` column: the only ones the
    exports look up (each figure, claim and platform cites its snapshot that way)."""
    cited = {
        record["snapshot_id"]
        for records in inputs.values()
        if isinstance(records, list)
        for record in records
        if record.get("snapshot_id") is not None
    }
    return sorted(cited)


def read_inputs(con: duckdb.DuckDBPyConnection) -> ExportInputs:
    state = con.execute("SELECT as_of, data_date FROM core.build_state").fetchone()
    if state is None or state[1] is None:
        raise LookupError("the warehouse has no completed core build (core.build_state is empty)")
    cited = _cited_inputs(con)
    # core.snapshots holds the whole history (110,000 rows in the page benchmark, half of this
    # read); the exports need only the snapshots the other inputs cite
    snapshots = _records(con, CITED_SNAPSHOTS, [cited_snapshot_ids(cited)])
    return ExportInputs(as_of=state[0], data_date=state[1], snapshots=snapshots, **cited)


def _cited_inputs(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    """Every input but the snapshots, by field name."""
    return dict(
        providers=_records(con, "SELECT * FROM core.providers ORDER BY provider_id"),
        models=_records(con, "SELECT * FROM core.models ORDER BY model_id"),
        sources=_records(con, "SELECT * FROM core.sources ORDER BY source_id"),
        headlines=_records(con, "SELECT * FROM mart.provider_headline ORDER BY provider_id"),
        context=_records(
            con, "SELECT * FROM mart.headline_context ORDER BY provider_id, row_number, figure_text"
        ),
        live_figures=_records(
            con,
            f"""
            SELECT {", ".join(LIVE_FIGURE_COLUMNS)} FROM mart.current_figures
            WHERE scope = 'live_median'
            ORDER BY provider_id, model_id, endpoint_id, metric
            """,
        ),
        claims=_records(
            con,
            """
            SELECT c.* FROM core.claims AS c
            WHERE c.claim_id IN (
                SELECT claim_id FROM core.claim_evidence, core.build_state AS b
                WHERE b.as_of IS NULL OR retrieved_at <= b.as_of
            )
            ORDER BY c.provider_id, c.model_id, c.claim_id
            """,
        ),
        claim_sources=_records(
            con,
            """
            SELECT e.claim_id, e.source_id, e.tier, max(e.retrieved_at) AS retrieved_at,
                   arg_max(e.snapshot_id, e.retrieved_at) AS snapshot_id
            FROM core.claim_evidence AS e, core.build_state AS b
            WHERE b.as_of IS NULL OR e.retrieved_at <= b.as_of
            GROUP BY ALL
            ORDER BY e.claim_id, e.tier, e.source_id
            """,
        ),
        peak_vs_live=_records(con, "SELECT * FROM mart.peak_vs_live ORDER BY claim_id"),
        platforms=_records(con, "SELECT * FROM core.platforms ORDER BY platform_id"),
        # Which snapshot of a source is read (the newest usable one) is decided once, by
        # mart.latest_snapshots; these only select from the mart.
        platform_statements=_records(
            con,
            """
            SELECT p.platform_id, l.snapshot_id, l.source_id, l.retrieved_at
            FROM core.platforms AS p
            JOIN mart.latest_snapshots AS l ON l.source_id = p.doc_source_id
            ORDER BY p.platform_id
            """,
        ),
        platform_models=_records(
            con,
            "SELECT * FROM mart.platform_models "
            "ORDER BY platform_id, platform_model_id, snapshot_id",
        ),
        endpoint_prices=_records(
            con,
            """
            SELECT o.* FROM core.endpoint_offers AS o
            SEMI JOIN mart.latest_snapshots AS l ON l.snapshot_id = o.snapshot_id
            ORDER BY o.provider_id, o.endpoint_id, o.endpoint_tag, o.catalogue_model_id
            """,
        ),
        model_figures=_records(
            con,
            "SELECT * FROM mart.model_figures "
            "ORDER BY model_id, reasoning_effort NULLS FIRST, metric, method",
        ),
        platform_offers=_records(
            con,
            """
            SELECT platform_id, catalogue_model_id, model_id, source_id, snapshot_id
            FROM mart.model_offers
            WHERE platform_id IS NOT NULL AND offered_by_kind = 'provider'
            ORDER BY platform_id, catalogue_model_id, snapshot_id
            """,
        ),
    )

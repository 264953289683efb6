"""Read what the exports need out of the warehouse, as plain records (lists of dicts).

Every rule (which figure is current, which headline, which live figure stands beside a claim, how
endpoints rank, which listing is an endpoint's newest) is the mart's: these queries only select
from it. Every query orders its rows fully, so the exports built from them are deterministic.
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
    # NaN is a missing value, as None; only a float column can hold one
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
    # core.sources with each source's terms (license, terms_url, attribution_required)
    sources: list[Record]
    # the snapshots the other inputs cite (cited_snapshot_ids), not the whole history
    snapshots: list[Record]
    headlines: list[Record]
    context: list[Record]
    # every current measured figure (scope live or one_off) of every endpoint
    figures: list[Record]
    claims: list[Record]
    claim_sources: list[Record]
    # one row per claim: its own endpoint's live figure and the ratio (mart.peak_vs_live)
    peak_vs_live: list[Record]
    # each endpoint's own newest listing: prices, uptime, limits (mart.endpoint_offers)
    offers: list[Record]
    # output speed ranked per model, variant, method and statistic (mart.leaderboard)
    rankings: list[Record]
    platforms: list[Record]
    platform_statements: list[Record]
    platform_models: list[Record]
    # model-level figures: the newest per model, effort, metric and method (mart.model_figures)
    model_figures: list[Record]
    # platforms' listings in a catalogue of catalogues (models.dev), newest usable snapshot
    platform_offers: list[Record]


CITED_SNAPSHOTS = """
SELECT * FROM core.snapshots
WHERE snapshot_id IN (SELECT unnest(?::VARCHAR[]))
ORDER BY snapshot_id
"""
MEASURED = "('live', 'one_off')"  # the scopes of a measurement (claims are read apart)


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
    """The exports' inputs, from the build's core and mart."""
    state = con.execute("SELECT as_of, data_date FROM core.build_state").fetchone()
    if state is None or state[1] is None:
        raise LookupError("the warehouse has no completed core build (core.build_state is empty)")
    cited = _cited_inputs(con)
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
        figures=_records(
            con,
            f"""
            SELECT * EXCLUDE (quote, workload, source_url) FROM mart.current_figures
            WHERE scope IN {MEASURED}
            ORDER BY provider_id, model_id, endpoint_id, metric, method, statistic NULLS FIRST,
                     scope
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
        offers=_records(
            con, "SELECT * FROM mart.endpoint_offers ORDER BY provider_id, endpoint_id"
        ),
        rankings=_records(
            con,
            """
            SELECT * FROM mart.leaderboard
            ORDER BY model_id, precision, service_tier, reasoning_effort NULLS FIRST,
                     region NULLS FIRST, method, statistic NULLS FIRST, suspect, rank,
                     provider_id, endpoint_id
            """,
        ),
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
        model_figures=_records(
            con,
            "SELECT * FROM mart.model_figures "
            "ORDER BY model_id, reasoning_effort NULLS FIRST, metric, method",
        ),
        platform_offers=_records(
            con,
            """
            SELECT platform_id, catalogue_model_id, model_id, source_id, snapshot_id,
                   price_input_usd_per_mtok, price_output_usd_per_mtok,
                   price_cache_read_usd_per_mtok, price_cache_write_usd_per_mtok
            FROM mart.model_offers
            WHERE platform_id IS NOT NULL AND offered_by_kind = 'provider'
            ORDER BY platform_id, catalogue_model_id, snapshot_id
            """,
        ),
    )

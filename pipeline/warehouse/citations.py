"""How many rows of the history cite each provider and model, kept up to date by each build from
what it adds.

`mart.unreviewed_entities` lists the entities no reviewer has confirmed yet, most cited first; a
release writes it to Parquet. Counting the citations of every figure and offer of the history
took 1.1 s of every poll at a quarter of half-hourly polls (110 million rows).
`staging.entity_citations` keeps the counts over the tables that grow per snapshot (PER_SNAPSHOT);
the view adds the catalogue entries (core.platform_models, small and rebuilt by every build). A
build that only appended rows adds the counts of the snapshots it brought; any other build counts
afresh, as does a warehouse without the table.
"""

from __future__ import annotations

import duckdb

from pipeline.warehouse.appended import Appended
from pipeline.warehouse.connection import table_exists

CITATIONS = "staging.entity_citations"
# every column of the per-snapshot tables that names a provider or a model
_CITING = {
    "provider": ("observations", "endpoint_offers", "catalogue_offers"),
    "model": ("observations", "endpoint_offers", "catalogue_offers", "model_figures"),
}


def citation_counts(added: Appended | None) -> str:
    """SQL for (kind, entity_id, citations) over the per-snapshot tables, or over the rows
    `added` marks."""
    parts = [
        f"SELECT '{kind}' AS kind, {kind}_id AS entity_id "
        f"FROM {added.rows(table) if added else f'core.{table}'}"
        for kind, tables in _CITING.items()
        for table in tables
    ]
    return (
        "SELECT kind, entity_id, count(*) AS citations FROM ("
        + " UNION ALL ".join(parts)
        + ") WHERE entity_id IS NOT NULL GROUP BY ALL"
    )


def ensure_citations(con: duckdb.DuckDBPyConnection) -> None:
    """Create the table when the warehouse has none, from the whole history."""
    if not table_exists(con, CITATIONS):
        _count_afresh(con)


def refresh_citations(con: duckdb.DuckDBPyConnection, added: Appended | None) -> None:
    """Bring the counts up to date with the core tables. `added` marks the rows that were only
    added since the counts were last brought up to date; None when anything else changed
    (counted afresh). Runs inside the caller's transaction."""
    if added is None or not table_exists(con, CITATIONS):
        _count_afresh(con)
        return
    con.execute(
        f"CREATE OR REPLACE TABLE {CITATIONS} AS "
        "SELECT kind, entity_id, sum(citations)::BIGINT AS citations FROM ("
        f"SELECT * FROM {CITATIONS} UNION ALL {citation_counts(added)}) GROUP BY ALL"
    )


def _count_afresh(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("CREATE SCHEMA IF NOT EXISTS staging")  # a warehouse made by hand has none
    con.execute(f"CREATE OR REPLACE TABLE {CITATIONS} AS {citation_counts(None)}")

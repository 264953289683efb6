"""Which sources report each measurement, kept up to date by each build from what it adds.

`core.measurement_sources` has one row per measurement (provider, model, service tier, region,
metric, scope, method and statistic) and source that reports it anywhere in the history. A
current figure can be corroborated or disputed only by another source's figure of the same
measurement (sql/mart/10_current_figures.sql), so the mart looks a figure up in the history only
when this table names another source for it: with one source per measurement, as in a history of
OpenRouter polls alone, the history is not read at all.

It covers the whole history whatever the build's as-of time: a superset of the sources up to that
time, which only lets a figure be looked up that then finds no pair. A build that only appended
observations adds the measurements it brought; any other build computes it afresh, as does a
warehouse without the table.
"""

from __future__ import annotations

import duckdb

from pipeline.warehouse.appended import Appended
from pipeline.warehouse.comments import inherit_comments
from pipeline.warehouse.connection import quote_literal, table_exists

MEASUREMENT_SOURCES = "core.measurement_sources"
COLUMNS = "provider_id, model_id, service_tier, region, metric, scope, method, statistic, source_id"
COMMENT = (
    "Every source that reports each measurement (provider, model, service tier, region, metric, "
    "scope, method and statistic) anywhere in the history, whatever the as-of time: where a "
    "current figure can find corroboration; kept by each build from the observations it adds."
)


def ensure_measurement_sources(con: duckdb.DuckDBPyConnection) -> None:
    """Create the table when the warehouse has none, from the whole history."""
    if not table_exists(con, MEASUREMENT_SOURCES):
        _compute_afresh(con)


def refresh_measurement_sources(con: duckdb.DuckDBPyConnection, added: Appended | None) -> None:
    """Bring the table up to date with core.observations. `added` marks the observations that
    were only added since it was last brought up to date; None when anything else changed
    (computed afresh). Runs inside the caller's transaction."""
    if added is None or not table_exists(con, MEASUREMENT_SOURCES):
        _compute_afresh(con)
        return
    con.execute(
        f"INSERT INTO {MEASUREMENT_SOURCES} "
        f"SELECT DISTINCT {COLUMNS} FROM {added.rows('observations')} "
        f"EXCEPT SELECT {COLUMNS} FROM {MEASUREMENT_SOURCES}"
    )


def _compute_afresh(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(
        f"CREATE OR REPLACE TABLE {MEASUREMENT_SOURCES} AS "
        f"SELECT DISTINCT {COLUMNS} FROM core.observations"
    )
    con.execute(f"COMMENT ON TABLE {MEASUREMENT_SOURCES} IS {quote_literal(COMMENT)}")
    inherit_comments(con, MEASUREMENT_SOURCES, "core.observations")

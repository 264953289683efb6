"""The warehouse as Parquet in every release, for engines beyond one machine (Spark, Trino,
BigQuery, DuckDB) and for people who want the history without the lake.

Layout under the folder given:

    core/<table>.parquet          every core table (entities, endpoints, sources, snapshots, ...)
    mart/<view>.parquet           the mart's views and tables as of the build (not those that
                                  restate the history row by row: HISTORY)
    history/endpoint_figures.parquet   every figure of every endpoint, snapshot by snapshot
                                  (mart.endpoint_stats: the whole series)
    history/latest_figures.parquet     each endpoint's current figures (mart.current_figures)

Rows are sorted on every column (the history by endpoint, metric, statistic, time), so the same
warehouse gives the same files, byte for byte, for the same DuckDB version (which the files name
in their `created_by`). Timestamps are written as UTC instants.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from pipeline.schema.core import CORE_TABLES
from pipeline.schema.mart import MART_VIEWS
from pipeline.support.duck import quote_literal

COPY_OPTIONS = "(FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1)"
# The mart's relations that restate the history row by row: published once, as history/.
HISTORY = ("observations_as_of", "endpoint_stats", "figure_history", "current_pairs")
HISTORY_FILES = {
    "endpoint_figures": (
        "mart.endpoint_stats",
        "endpoint_id, metric, scope, method, statistic, observed_at, snapshot_id, observation_id",
    ),
    "latest_figures": ("mart.current_figures", "ALL"),
}


def _copy(con: duckdb.DuckDBPyConnection, relation: str, path: Path, order: str = "ALL") -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    query = f"SELECT * FROM {relation} ORDER BY {order}"
    # COPY answers the rows it wrote: the relation is computed once, not counted first
    written = con.execute(f"COPY ({query}) TO {quote_literal(str(path))} {COPY_OPTIONS}")
    return int(written.fetchone()[0])  # type: ignore[index]


def write_parquet(con: duckdb.DuckDBPyConnection, folder: Path) -> dict[str, int]:
    """Write the layout above under `folder`; returns the rows of each file, by its path
    relative to `folder`."""
    rows: dict[str, int] = {}
    for name in CORE_TABLES:
        rows[f"core/{name}.parquet"] = _copy(
            con, f"core.{name}", folder / "core" / f"{name}.parquet"
        )
    for name in MART_VIEWS:
        if name not in HISTORY:
            target = folder / "mart" / f"{name}.parquet"
            rows[f"mart/{name}.parquet"] = _copy(con, f"mart.{name}", target)
    for name, (relation, order) in HISTORY_FILES.items():
        target = folder / "history" / f"{name}.parquet"
        rows[f"history/{name}.parquet"] = _copy(con, relation, target, order)
    return rows

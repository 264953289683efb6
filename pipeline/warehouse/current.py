"""The current observations, kept up to date by each build instead of recomputed from history.

`core.current_observations` holds the observation chosen as current for each endpoint, metric,
scope, method and statistic (the rule is `core.current_of`, sql/core/00_macros.sql). A build that
only appended observations merges what it added: the current figure of a key is the better of
the one kept and the best new one, so the work follows the new snapshots, not the history. A
build that removed or derived again any observation (a snapshot no longer usable, a parser
upgrade, a changed alias or tier) computes the table afresh from the whole history, as does a
warehouse without the table.
"""

from __future__ import annotations

import duckdb

from pipeline.warehouse.appended import Appended
from pipeline.warehouse.comments import inherit_comments
from pipeline.warehouse.connection import table_exists

CURRENT = "core.current_observations"
COMMENT = (
    "The current observation per endpoint, metric, scope, method and statistic (best tier, then "
    "newest, then source and id: core.current_of), up to the build's as-of time; kept by each "
    "build from the observations it adds, computed afresh when any was removed."
)


def ensure_current(con: duckdb.DuckDBPyConnection) -> None:
    """Create CURRENT when the warehouse has none (a new one, or one of a build before it
    existed): computed afresh, so that a build that then only appends merges into the truth."""
    if not table_exists(con, CURRENT):
        _compute_afresh(con)


def _compute_afresh(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(f"CREATE OR REPLACE TABLE {CURRENT} AS FROM core.current_of('core.observations')")
    _describe(con)


def _describe(con: duckdb.DuckDBPyConnection) -> None:
    text = COMMENT.replace("'", "''")
    con.execute(f"COMMENT ON TABLE {CURRENT} IS '{text}'")
    inherit_comments(con, CURRENT, "core.observations")


def refresh_current(con: duckdb.DuckDBPyConnection, added: Appended | None) -> int:
    """Bring CURRENT up to date with core.observations; returns the rows considered. `added`
    marks the observations that were only added since CURRENT was last brought up to date; None
    when anything else changed (CURRENT is computed afresh). Runs inside the caller's
    transaction, after core.build_state is written."""
    if added is None or not table_exists(con, CURRENT):
        _compute_afresh(con)
        rows = con.execute("SELECT count(*) FROM core.observations").fetchall()
    else:
        con.execute(
            "CREATE OR REPLACE TEMP VIEW current_candidates AS "
            f"FROM {CURRENT} UNION ALL BY NAME "
            f"FROM {added.rows('observations')}"
        )
        rows = con.execute("SELECT count(*) FROM current_candidates").fetchall()
        con.execute(
            f"CREATE OR REPLACE TABLE {CURRENT} AS FROM core.current_of('current_candidates')"
        )
        con.execute("DROP VIEW current_candidates")
        _describe(con)
    return int(rows[0][0])

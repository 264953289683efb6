"""Every figure of core.observations is on the endpoint its parts name.

Each branch of the view (sql/core/10_observations.sql, one per staged frame, and the derived
figures of sql/core/30_cited_observations.sql) takes its endpoint id and parts from one row of
core.endpoint_keys or computes them together, and core.endpoints is those rows: a figure can land
on another endpoint's id only when the SQL goes wrong (a staged column shadowing the key's when a
branch selects both). That is a property of the code, so it is checked here, on a build of the
bundled corpus, and not by every build over the whole history (a scan of every figure: 9 s of a
poll build at 4 days of half-hourly polls, and growing with the history)."""

from __future__ import annotations

from pipeline.support.settings import Settings
from pipeline.warehouse.connection import connect

MISPLACED = """
SELECT origin, endpoint_id, count(*) AS figures
FROM core.observations AS o
ANTI JOIN core.endpoints AS e
  ON e.endpoint_id = o.endpoint_id AND e.provider_id = o.provider_id
 AND e.model_id = o.model_id AND e.precision = o.precision AND e.service_tier = o.service_tier
 AND e.reasoning_effort IS NOT DISTINCT FROM o.reasoning_effort
 AND e.region IS NOT DISTINCT FROM o.region
 AND e.endpoint_key IS NOT DISTINCT FROM o.endpoint_key
GROUP BY ALL ORDER BY figures DESC, origin, endpoint_id
"""
# The branches with rows in the bundled corpus: each is checked by the query above.
BRANCHES_BUNDLED = {
    "aa_endpoints",
    "llmperf_runs",
    "openrouter_endpoints",
    "openrouter_frontend_stats",
    "openrouter_frontend_daily",
    "compilation_figures",
}


def test_every_figure_is_on_the_endpoint_its_parts_name(built: Settings):
    with connect(built, read_only=True) as con:
        misplaced = con.execute(MISPLACED).fetchall()
        origins = {
            row[0]
            for row in con.execute("SELECT DISTINCT origin FROM core.observations").fetchall()
        }
    assert misplaced == []
    assert origins >= BRANCHES_BUNDLED, "a branch has no figure in the bundled build to check"


def test_a_figure_shadowed_onto_another_endpoint_is_found(built: Settings):
    """The query finds the defect it is for: a figure whose parts name another endpoint."""
    with connect(built, read_only=True) as con:
        con.execute(
            "CREATE TEMP VIEW shadowed AS SELECT * REPLACE ('fp4' AS precision) "
            "FROM core.observations WHERE origin = 'openrouter_endpoints' "
            "AND precision <> 'fp4' LIMIT 3"
        )
        found = con.execute(MISPLACED.replace("core.observations", "temp.shadowed")).fetchall()
    assert sum(row[2] for row in found) == 3

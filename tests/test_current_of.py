"""core.current_of (sql/core/00_macros.sql) over many figures in a small memory budget: a full
build takes the current figure of every measured figure in one statement (27 million at 30 days
of half-hourly polls), inside DuckDB's budget of the build (512 MB). Keeping each group's whole
row in the aggregate ran out of it there; here 1,000,000 figures in 64 MB did the same."""

import duckdb

from pipeline.support.settings import SQL_DIR

FIGURES = 1_000_000
GROUPS = 60_000  # endpoints x metrics, each with its figures at successive times

SYNTHETIC = f"""
CREATE TABLE core.figures AS
SELECT md5(i::VARCHAR) AS observation_id,
       'provider-' || (i % 400) || '/model-' || (i % 20000 // 400) || '/unknown/standard/-'
           AS endpoint_id,
       'metric_' || (i % 3) AS metric, 'live' AS scope, 'routed traffic' AS method,
       'p50' AS statistic, CASE WHEN i % 7 = 0 THEN 'T1' ELSE 'T2' END AS tier,
       TIMESTAMPTZ '2026-01-01' + to_seconds(i // 20000 * 1800) AS observed_at,
       'source-' || (i % 5) AS source_id, 'a quote of the figure ' || repeat('q', 60) || i AS quote,
       i::DOUBLE AS value, 'snapshot-' || (i // 20000) AS snapshot_id
FROM range({FIGURES}) AS t(i)
"""
# the same choice as a window over every figure, with memory to spare
EXPECTED = """
SELECT * FROM core.figures
QUALIFY row_number() OVER (PARTITION BY endpoint_id, metric, scope, method, statistic
                           ORDER BY tier, observed_at DESC, source_id, observation_id) = 1
"""


def test_the_current_figures_of_many_fit_a_small_budget():
    with duckdb.connect(config={"threads": 2}) as con:
        con.execute("SET TimeZone = 'UTC'")
        con.execute("CREATE SCHEMA core")
        con.execute((SQL_DIR / "core" / "00_macros.sql").read_text(encoding="utf-8"))
        con.execute(SYNTHETIC)
        expected = con.execute(
            f"SELECT count(*), sum(value), min(observation_id), max(observation_id) "
            f"FROM ({EXPECTED})"
        ).fetchone()
        con.execute("SET memory_limit = '64MB'")
        got = con.execute(
            "SELECT count(*), sum(value), min(observation_id), max(observation_id) "
            "FROM core.current_of(['core.figures'])"
        ).fetchone()
    assert got == expected and got[0] == GROUPS

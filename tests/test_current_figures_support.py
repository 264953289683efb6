"""The current figures' support (corroborated and disputed by) is what the pairs of the whole
history give them: the mart looks a figure up only where another source reports its measurement
(core.measurement_sources), and that shortcut must never lose a pair."""

import random

from mart_warehouse import Warehouse, observation

# the reference: every pair of the whole history (mart.observation_pairs) of each current figure
FROM_PAIRS = """
WITH support AS (
    SELECT a_id,
           count(DISTINCT b_source_id) FILTER (WHERE NOT disagree) AS corroborating_sources,
           list(DISTINCT b_source_id ORDER BY b_source_id) FILTER (WHERE NOT disagree)
               AS corroborated_by,
           list(DISTINCT b_source_id ORDER BY b_source_id) FILTER (WHERE disagree) AS disputed_by
    FROM mart.observation_pairs
    WHERE same_measurement AND independent
    GROUP BY a_id
)
SELECT f.observation_id, coalesce(s.corroborating_sources, 0),
       coalesce(s.corroborated_by, []), coalesce(s.disputed_by, [])
FROM mart.current_figures AS f LEFT JOIN support AS s ON s.a_id = f.observation_id
ORDER BY 1
"""
KEPT = """
SELECT observation_id, corroborating_sources, corroborated_by, disputed_by
FROM mart.current_figures ORDER BY 1
"""


def mixed_history(seed: int) -> list[dict]:
    """Figures of a few endpoints from several sources, methods, regions and precisions, some
    near each other in time and value and some not, and measurements only one source reports."""
    rng = random.Random(seed)
    rows = []
    for index in range(160):
        row = observation(
            rng.choice(["bench-a", "bench-b", "compiled", "vendor"]),
            rng.choice([280, 300, 310, 330, 360]),
            days_ago=rng.randrange(0, 30),
            provider=rng.choice(["p", "q"]),
            model=rng.choice(["m", "n"]),
            precision=rng.choice(["unknown", "fp8", "bf16"]),
            origin=rng.choice(["aa_endpoints", "aa_endpoints", "openrouter_endpoints"]),
            qualifier=rng.choice([None, None, None, "approx", "upper_bound"]),
        )
        row["observation_id"] += f"|{index}"
        if rng.random() < 0.2:
            row["region"] = "eu-west-1"
            row["endpoint_id"] += "@eu-west-1"
        rows.append(row)
    # a measurement only one source reports, with a long history of its own
    for days in range(30):
        row = observation("bench-a", 500 + days, days_ago=days, provider="solo")
        rows.append(row)
    return rows


def test_the_current_figures_support_is_that_of_every_pair_in_the_history(tmp_path):
    with Warehouse(tmp_path / "support.duckdb", mixed_history(0)).build() as con:
        kept = con.execute(KEPT).fetchall()
        assert kept == con.execute(FROM_PAIRS).fetchall()
        # not vacuous: figures are corroborated and disputed, and some are neither
        assert any(count > 0 for _, count, _, _ in kept)
        assert any(disputed for _, _, _, disputed in kept)
        assert any(count == 0 and not disputed for _, count, _, disputed in kept)
        # a figure whose measurement one source reports has no support
        (row,) = con.execute(
            "SELECT value, corroborating_sources, disputed_by FROM mart.current_figures "
            "WHERE provider_id = 'solo'"
        ).fetchall()
        assert row == (500, 0, [])
        sources = con.execute(
            "SELECT source_id FROM core.measurement_sources WHERE provider_id = 'solo'"
        ).fetchall()
        assert sources == [("bench-a",)]

"""The current figures' support (corroborated and disputed by), against a reference written
in Python from the rule's words: the other sources' current figures of the same measurement on
comparable endpoints, point figures observed within 7 days, agreeing within 10% or not."""

import random
from datetime import timedelta

import pytest
from mart_warehouse import Warehouse, observation, rows

KEPT = """
SELECT observation_id, corroborating_sources, corroborated_by, disputed_by
FROM mart.current_figures ORDER BY 1
"""
FAMILY = {"percentiles of live gateway traffic": "percentiles of live traffic"}
FAMILY["percentiles of live routed traffic"] = FAMILY["percentiles of live gateway traffic"]


def comparable(a: dict, b: dict) -> bool:
    same = ("provider_id", "model_id", "service_tier", "region", "metric", "scope")
    return (
        all(a[k] == b[k] for k in same)
        and (a["precision"] == b["precision"] or "unknown" in (a["precision"], b["precision"]))
        and (
            a["reasoning_effort"] in (None, b["reasoning_effort"]) or b["reasoning_effort"] is None
        )
    )


def point(figure: dict) -> bool:
    return figure["value"] is not None and figure["qualifier"] in (None, "approx")


def reference(figures: list[dict]) -> list[tuple]:
    """Each current figure's support; every source here is its own publisher and lineage, so two
    figures are independent exactly when their sources differ."""
    support = []
    for a in figures:
        agree, differ = set(), set()
        for b in figures:
            if (
                b["source_id"] != a["source_id"]
                and point(a)
                and point(b)
                and not (a["suspect"] or b["suspect"])
                and comparable(a, b)
                and FAMILY.get(a["method"], a["method"]) == FAMILY.get(b["method"], b["method"])
                and a["statistic"] == b["statistic"]
                and abs(a["observed_at"] - b["observed_at"]) <= timedelta(days=7)
            ):
                low, high = sorted((a["value"], b["value"]))
                (differ if high > 1.10 * low else agree).add(b["source_id"])
        support.append((a["observation_id"], len(agree), sorted(agree), sorted(differ)))
    return sorted(support)


def mixed_history(seed: int) -> list[dict]:
    """Figures of a few endpoints from several sources, methods, regions and precisions, some
    near each other in time and value and some not, and measurements only one source reports."""
    rng = random.Random(seed)
    history = []
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
        history.append(row)
    # a measurement only one source reports, with a long history of its own
    for days in range(30):
        row = observation("bench-a", 500 + days, days_ago=days, provider="solo")
        history.append(row)
    return history


@pytest.mark.parametrize("seed", [0, 1])
def test_the_current_figures_support_follows_the_rule(tmp_path, seed):
    with Warehouse(tmp_path / "support.duckdb", mixed_history(seed)).build() as con:
        kept = con.execute(KEPT).fetchall()
        assert kept == reference(rows(con, "SELECT * FROM mart.current_figures"))
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

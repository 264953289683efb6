"""The selection rules in sql/mart, on small hand-made warehouses: tier and date precedence,
corroboration and disagreement, staleness, and the headline rule."""

from datetime import datetime, timedelta

import pytest
from mart_warehouse import DAY, Warehouse, observation


@pytest.fixture
def warehouse(tmp_path):
    def make(observations: list[dict], as_of: datetime | None = None):
        return Warehouse(tmp_path / "rules.duckdb", observations, as_of=as_of).build()

    return make


AA_METHOD = "; method: fixed-workload probe (median)"  # the rule names the method


def current(con, endpoint="p/m/unknown/standard/-", scope="live"):
    return con.execute(
        "SELECT source_id, value, corroborating_sources, corroborated_by, disputed_by, stale "
        "FROM mart.current_figures WHERE endpoint_id = ? AND scope = ?",
        [endpoint, scope],
    ).fetchone()


def test_tier_beats_date_and_date_breaks_ties(warehouse):
    con = warehouse(
        [
            observation("bench-a", 300, days_ago=3),
            observation("compiled", 320, days_ago=0),  # newer, but T2
            observation("bench-b", 310, days_ago=1),  # newest T1 wins
        ]
    )
    assert current(con)[:2] == ("bench-b", 310)


def test_corroboration_and_disagreement_windows(warehouse):
    """Each endpoint has one current figure per measurement; current figures of comparable
    endpoints (a precision or an effort stated on one side only) are compared."""
    con = warehouse(
        [
            observation("bench-a", 300, days_ago=0),
            # within 10% and 7 days: corroborates
            observation("compiled", 320, days_ago=2, effort="high"),
            # 13% above, within 7 days: disputes
            observation("bench-b", 340, days_ago=6, precision="fp8"),
            # over 7 days from all: not compared
            observation("vendor", 400, days_ago=20, effort="low", role="row"),
        ]
    )
    source, value, count, corroborated, disputed, _stale = current(con)
    assert (source, value) == ("bench-a", 300)
    assert (count, corroborated, disputed) == (1, ["compiled"], ["bench-b"])
    pairs = con.execute(
        "SELECT a_source_id, b_source_id, disagree FROM mart.current_pairs ORDER BY 1, 2"
    ).fetchall()
    assert pairs == [  # 340 vs 320 is within 10%; the vendor's figure pairs with none
        ("bench-a", "bench-b", True),
        ("bench-a", "compiled", False),
        ("bench-b", "bench-a", True),
        ("bench-b", "compiled", False),
        ("compiled", "bench-a", False),
        ("compiled", "bench-b", False),
    ]


def test_one_endpoint_has_one_current_figure_per_measurement(warehouse):
    """Figures of one endpoint, method and statistic are one current figure (the best tier, then
    the newest): the others are history, never compared with it."""
    con = warehouse(
        [
            observation("bench-a", 300, days_ago=0),
            observation("bench-b", 400, days_ago=1),
            observation("compiled", 300, days_ago=0),
        ]
    )
    assert current(con)[:5] == ("bench-a", 300, 0, [], [])
    assert con.execute("SELECT count(*) FROM mart.current_pairs").fetchone()[0] == 0


def test_scopes_are_never_compared(warehouse):
    con = warehouse(
        [
            observation("bench-a", 300),
            observation("vendor", 3000, scope="peak_per_user", role="claim"),
            observation("press", 72000, scope="aggregate", role="claim"),
        ]
    )
    assert current(con)[2:5] == (0, [], [])
    assert current(con, scope="peak_per_user")[:2] == ("vendor", 3000)
    assert con.execute("SELECT count(*) FROM mart.current_pairs").fetchone()[0] == 0


def test_unstated_variant_parts_are_comparable_but_not_merged(warehouse):
    con = warehouse(
        [
            observation("bench-a", 690, effort="high"),
            observation(
                "compiled", 700, role="row"
            ),  # no effort stated: compared, not the same key
            observation("bench-b", 690, service_tier="turbo"),  # another service tier: not compared
        ]
    )
    assert current(con, "p/m/unknown/standard/high")[2:4] == (1, ["compiled"])
    assert current(con, "p/m/unknown/standard/-")[:2] == ("compiled", 700)
    assert current(con, "p/m/unknown/turbo/-")[2] == 0


def test_stale_against_cadence_measured_from_the_data_date(warehouse):
    con = warehouse(
        [
            observation("bench-a", 300, days_ago=8, model="old"),
            observation("bench-b", 100, days_ago=0, model="new"),
        ]
    )
    assert current(con, "p/old/unknown/standard/-")[5] is True
    assert current(con, "p/new/unknown/standard/-")[5] is False


def headline(con, provider="p"):
    return con.execute(
        "SELECT model_id, value, stale, headline_rule FROM mart.provider_headline "
        "WHERE provider_id = ?",
        [provider],
    ).fetchone()


def test_headline_uses_the_compilation_reference_model_even_when_another_is_faster(warehouse):
    con = warehouse(
        [
            observation("bench-a", 300, model="llama"),
            observation("bench-b", 900, model="small"),
            observation(
                "compiled", 310, model="llama", role="headline", origin="compilation_figures"
            ),
        ]
    )
    assert headline(con)[:3] == ("llama", 300, False)
    assert headline(con)[3].startswith("reference model")


def test_headline_without_reference_is_the_fastest_fresh_t1(warehouse):
    con = warehouse(
        [observation("bench-a", 300, model="llama"), observation("bench-b", 900, model="small")]
    )
    assert headline(con)[:2] == ("small", 900)


def test_a_fresh_t1_figure_beats_a_stale_one_even_on_the_reference_model(warehouse):
    con = warehouse(
        [
            observation("bench-a", 500, model="llama", days_ago=30),  # stale
            observation("bench-b", 200, model="kimi", days_ago=0),
            observation(
                "compiled", 510, model="llama", role="headline", origin="compilation_figures"
            ),
        ]
    )
    assert headline(con)[:3] == ("kimi", 200, False)


def test_stale_only_provider_gets_a_flagged_headline_and_the_press_alone_gets_none(warehouse):
    """Benchmarks (T1) and compilations (T2) give headlines, each labelled with its tier; the
    press (T3) never does."""
    con = warehouse(
        [
            observation("bench-a", 50, provider="old", days_ago=400),
            observation("bench-a", 60, provider="old", model="m2", days_ago=410),
            observation("bench-b", 100, provider="fresh"),
            observation(
                "compiled", 999, provider="t2only", role="row", origin="compilation_figures"
            ),
            observation("press", 500, provider="t3only"),
        ]
    )
    assert headline(con, "old") == (
        "m",
        50,
        True,
        "stale: no fresh figure, the newest one; T1" + AA_METHOD,
    )
    assert headline(con, "t2only") == ("m", 999, False, "fastest fresh figure; T2" + AA_METHOD)
    assert headline(con, "t3only") is None


def test_as_of_hides_later_snapshots(warehouse):
    con = warehouse(
        [observation("bench-a", 300, days_ago=10), observation("bench-a", 320, days_ago=0)],
        as_of=DAY - timedelta(days=5),
    )
    assert current(con)[:2] == ("bench-a", 300)

"""The headline rule with fresh and stale figures (sql/mart/20_provider_headline.sql): among
fresh T1 figures the compilation's reference model wins; with only stale figures the newest
wins, whatever its model, and the reference model only breaks a tie on the date; a fresh T2
figure comes before every stale one. The rule's text names the step, the tier and the method."""

from __future__ import annotations

from pathlib import Path

import duckdb
from mart_warehouse import Warehouse, observation, rows

REFERENCE = observation(
    "compiled", 510, model="llama", role="headline", origin="compilation_figures", days_ago=1
)


AA_METHOD = "; method: fixed-workload probe (median)"  # the rule names the method


def headline(con: duckdb.DuckDBPyConnection) -> tuple:
    (row,) = rows(
        con,
        "SELECT model_id, value, stale, headline_rule FROM mart.provider_headline "
        "WHERE provider_id = 'p'",
    )
    return tuple(row.values())


def test_with_only_stale_figures_the_newest_wins_over_the_reference_model(tmp_path: Path):
    con = Warehouse(
        tmp_path / "w.duckdb",
        observations=[
            observation("bench-a", 500, model="llama", days_ago=400),  # reference, but old
            observation("bench-b", 200, model="kimi", days_ago=30),  # stale, and newer
            REFERENCE,  # fresh, but its endpoint's current figure is bench-a's (T1 first)
        ],
    ).build()
    assert headline(con) == (
        "kimi",
        200,
        True,
        "stale: no fresh figure, the newest one; T1" + AA_METHOD,
    )


def test_with_only_stale_figures_of_one_date_the_reference_model_wins(tmp_path: Path):
    con = Warehouse(
        tmp_path / "w.duckdb",
        observations=[
            observation("bench-a", 500, model="llama", days_ago=30),
            observation("bench-b", 900, model="kimi", days_ago=30),  # faster, same date
            REFERENCE,
        ],
    ).build()
    assert headline(con)[:3] == ("llama", 500, True)


def test_among_fresh_figures_the_reference_model_wins_over_a_newer_one(tmp_path: Path):
    con = Warehouse(
        tmp_path / "w.duckdb",
        observations=[
            observation("bench-a", 300, model="llama", days_ago=5),
            observation("bench-b", 900, model="kimi", days_ago=0),  # newer and faster
            observation("bench-b", 800, model="qwen", days_ago=100),  # stale: never first
            REFERENCE,
        ],
    ).build()
    assert headline(con) == (
        "llama",
        300,
        False,
        "reference model named by the newest compilation; T1" + AA_METHOD,
    )


def test_a_fresh_t2_figure_comes_before_stale_t1_figures(tmp_path: Path):
    con = Warehouse(
        tmp_path / "w.duckdb",
        observations=[
            observation("bench-a", 500, model="llama", days_ago=400),  # stale T1
            observation("bench-b", 200, model="kimi", days_ago=30),  # stale T1
            observation("compiled", 450, model="qwen", days_ago=1, origin="compilation_figures"),
            REFERENCE,
        ],
    ).build()
    assert headline(con) == ("qwen", 450, False, "fastest fresh figure; T2" + AA_METHOD)

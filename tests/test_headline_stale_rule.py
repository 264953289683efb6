"""The headline rule with fresh and stale figures (sql/mart/20_provider_headline.sql): among
fresh T1 figures the compilation's reference model wins; with only stale T1 figures the newest
wins, whatever its model, and the reference model only breaks a tie on the date."""

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
            REFERENCE,
        ],
    ).build()
    assert headline(con) == ("kimi", 200, True, "stale: no fresh T1 figure" + AA_METHOD)


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
        "reference model named by the newest compilation" + AA_METHOD,
    )

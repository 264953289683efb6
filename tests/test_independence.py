"""Corroboration and disputes count only independent sources of the same measurement (issue 16
item 1, issue 13 item 3), pinned on small hand-made warehouses: one rule per test."""

from __future__ import annotations

from pathlib import Path

from mart_warehouse import Snapshot, Warehouse, observation, rows, snapshot_id

from pipeline.warehouse.marts import apply_marts

# bench-a, bench-b: T1 benchmarks of different publishers; compiled: a T2 compilation;
# vendor: a vendor's claim page; press: a T3 article (tests/mart_warehouse.py SOURCES)
# One endpoint has one current figure per measurement, so the second source's figure sits on a
# comparable endpoint of its own: a precision (fp8) or an effort (high) the first leaves unstated.


def current(con, source: str) -> dict:
    (row,) = rows(
        con,
        "SELECT corroborated_by, corroborating_sources, disputed_by FROM mart.current_figures "
        "WHERE source_id = ? AND scope = 'live'",
        [source],
    )
    return row


def test_two_independent_sources_of_one_measurement_corroborate_by_name(tmp_path: Path):
    con = Warehouse(
        tmp_path / "w.duckdb",
        [observation("bench-a", 300), observation("bench-b", 310, days_ago=2, precision="fp8")],
    ).build()
    assert current(con, "bench-a") == {
        "corroborated_by": ["bench-b"],
        "corroborating_sources": 1,
        "disputed_by": [],
    }


def test_a_compilation_citing_the_page_never_corroborates_it(tmp_path: Path):
    con = Warehouse(
        tmp_path / "w.duckdb",
        [
            observation("bench-a", 300),
            observation(
                "compiled", 300, effort="high", origin="compilation_figures", cited="bench-a"
            ),
        ],
    ).build()
    assert current(con, "bench-a")["corroborated_by"] == []
    (pair,) = rows(con, "SELECT * FROM mart.current_pairs WHERE a_source_id = 'bench-a'")
    assert pair["same_measurement"] and not pair["independent"]


def test_a_figure_repeating_one_page_is_not_independent_of_another_page_of_that_publisher(
    tmp_path: Path,
):
    """The fieldbook cites Artificial Analysis's Kimi page for a Llama figure: it still repeats
    Artificial Analysis, so it does not corroborate Artificial Analysis's Llama page."""
    con = Warehouse(
        tmp_path / "w.duckdb",
        [
            observation("bench-a", 300),
            observation("bench-b", 900, model="other"),
            observation(
                "compiled", 300, effort="high", origin="compilation_figures", cited="bench-b"
            ),
        ],
    ).build()
    assert current(con, "bench-a")["corroborated_by"] == ["compiled"]  # two publishers so far
    con.execute("UPDATE core.sources SET publisher = 'One Benchmark' WHERE source_id LIKE 'bench%'")
    apply_marts(con)  # the mart's tables again, on the sources as they are now
    assert current(con, "bench-a")["corroborated_by"] == []


def test_the_press_repeating_a_claim_is_one_claim(tmp_path: Path):
    claim = {"scope": "peak_per_user", "role": "claim", "origin": "claim_evidence"}
    con = Warehouse(
        tmp_path / "w.duckdb",
        [
            observation("vendor", 1000, lineage="claim:record", **claim),
            observation("press", 1000, lineage="claim:record", precision="fp8", **claim),
        ],
    ).build()
    (row,) = rows(
        con,
        "SELECT corroborated_by FROM mart.current_figures WHERE source_id = 'vendor'",
    )
    assert row["corroborated_by"] == []
    (pair,) = rows(con, "SELECT * FROM mart.current_pairs WHERE a_source_id = 'vendor'")
    assert pair["same_measurement"] and not pair["independent"]


def test_a_reconstructed_snapshot_never_corroborates_its_document(tmp_path: Path):
    rebuilt_from = snapshot_id("compiled", 0)
    con = Warehouse(
        tmp_path / "w.duckdb",
        [
            observation("bench-a", 300),
            observation("compiled", 300, effort="high", origin="compilation_figures"),
        ],
        snapshots=[Snapshot("bench-a", 0, rebuilt_from=rebuilt_from)],
    ).build()
    assert current(con, "bench-a")["corroborated_by"] == []
    independent = rows(
        con, "SELECT independent FROM mart.current_pairs WHERE a_source_id = 'bench-a'"
    )
    assert independent == [{"independent": False}]


def test_figures_of_different_methods_are_a_gap_not_a_dispute(tmp_path: Path):
    con = Warehouse(
        tmp_path / "w.duckdb",
        [
            observation("bench-a", 300),  # a 72-hour probe median
            observation("bench-b", 100, origin="openrouter_endpoints"),  # a 30-min p50
        ],
    ).build()
    assert rows(con, "SELECT * FROM mart.disagreements") == []
    assert current(con, "bench-a")["disputed_by"] == []
    (gap,) = rows(con, "SELECT * FROM mart.method_gaps")
    assert (gap["a_method"], gap["b_method"]) == (
        "fixed-workload probe",
        "percentiles of live routed traffic",
    )
    assert (gap["a_value"], gap["b_value"]) == (300.0, 100.0)


def test_the_same_method_far_apart_is_a_dispute_naming_the_source(tmp_path: Path):
    con = Warehouse(
        tmp_path / "w.duckdb",
        [observation("bench-a", 300), observation("bench-b", 100, days_ago=1, precision="fp8")],
    ).build()
    assert current(con, "bench-a")["disputed_by"] == ["bench-b"]
    (dispute,) = rows(
        con,
        "SELECT * FROM mart.current_pairs WHERE disagree AND same_measurement "
        "AND independent AND a_source_id = 'bench-a'",
    )
    assert (dispute["a_method"], dispute["a_statistic"]) == ("fixed-workload probe", "median")


def test_percentiles_of_one_endpoint_are_separate_current_figures(tmp_path: Path):
    stats = {"origin": "openrouter_endpoints"}
    con = Warehouse(
        tmp_path / "w.duckdb",
        [
            observation("bench-b", 40, statistic="p50", **stats),
            observation("bench-b", 90, statistic="p90", **stats),
        ],
    ).build()
    figures = rows(con, "SELECT statistic, value FROM mart.current_figures ORDER BY statistic")
    assert figures == [{"statistic": "p50", "value": 40.0}, {"statistic": "p90", "value": 90.0}]

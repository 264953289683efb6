"""The benchmark at a tiny size, as a smoke test: it must run end to end and report every
figure the README quotes. No timing is asserted here (tests stay fast and the machine is shared)."""

import json

import duckdb

REQUIRED = {
    "pages",
    "observations",
    "full_build_s",
    "incremental_build_s",
    "noop_build_s",
    "extract_pages_per_s",
    "floor_parse_pages_per_s",
    "peak_rss_mib",
    "latest_query_s",
}
STAGES = {"inventory", "extract", "validate", "normalise", "load", "sql", "export"}


def test_bench_runs_at_a_small_size(cli, tmp_path):
    output, workdir = tmp_path / "bench.json", tmp_path / "work"
    result = cli(
        "bench", "--models", "5", "--providers", "3", "--days", "3",
        "--json", str(output), "--workdir", str(workdir), "--keep",
    )  # fmt: skip
    assert result.status == 0, result.err
    figures = json.loads(output.read_text())
    assert set(figures) >= REQUIRED
    # The keys alone pass with the measuring broken (no build report read, no memory sampled):
    # every stage was timed, the incremental build too, and memory was seen.
    assert set(figures["stages_full_s"]) >= STAGES, figures["stages_full_s"]
    assert figures["stages_incremental_s"], "the one-more-day build reported no stage times"
    assert figures["extract_pages_per_s"] is not None
    assert figures["peak_rss_mib"] > 0
    assert figures["pages"] == 15 and figures["incremental_pages"] == 5
    assert figures["statuses"] == [0, 0, 0]
    assert figures["noop_skipped"] is True
    assert "full build" in result.out and "lxml.html alone" in result.out
    with duckdb.connect(str(workdir / "corpus" / "speedbook.duckdb"), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM core.observations").fetchone() == (
            figures["observations_after_day"],
        )
        # every page lists every provider's speed: 5 models x 4 days (3 + the added one) x 3
        speeds = con.execute(
            "SELECT count(DISTINCT snapshot_id), count(*) FROM core.observations "
            "WHERE source_id LIKE 'bench-aa-%' AND metric = 'output_tokens_per_s'"
        ).fetchone()
        assert speeds == (5 * 4, 5 * 4 * 3)
        # the added day's rows are exactly what the one-more-day build appended
        (day_rows,) = con.execute(
            "SELECT count(*) FROM core.observations WHERE source_id LIKE 'bench-aa-%' AND "
            "CAST(observed_at AS DATE) = (SELECT max(CAST(observed_at AS DATE)) "
            "FROM core.observations WHERE source_id LIKE 'bench-aa-%')"
        ).fetchone()
    assert day_rows >= 5 * 3  # speeds, plus the latencies and prices the pages list
    assert figures["observations_after_day"] - figures["observations"] == day_rows

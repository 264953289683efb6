"""The benchmark at a tiny size, as a smoke test: it must run end to end and report every
figure the README quotes. No timing is asserted here (tests stay fast and the machine is shared)."""

import json

import duckdb
import pytest

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
SWAP = {"warehouse_copy", "warehouse_commit"}  # the working copy's two steps, beside the run


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


POLL_FIELDS = {
    "scenario",
    "full_build_s",
    "poll_build_s",
    "noop_build_s",
    "floor_read_json_s",
    "stored_bytes",
    "received_bytes",
    "peak_rss_mib",
}


def test_the_poll_scenario_runs_at_a_small_size(cli, tmp_path):
    from pipeline.bench.poll_corpus import SOURCE
    from pipeline.raw.bundle import read_bundle
    from pipeline.raw.snapshots import SnapshotStore

    output, workdir = tmp_path / "bench.json", tmp_path / "work"
    result = cli(
        "bench", "--scenario", "openrouter", "--models", "5", "--days", "1",
        "--polls-per-day", "4", "--json", str(output), "--workdir", str(workdir),
    )  # fmt: skip
    assert result.status == 0, result.err
    figures = json.loads(output.read_text())
    assert set(figures) >= POLL_FIELDS and figures["scenario"] == "openrouter"
    assert figures["statuses"] == [0, 0, 0] and figures["noop_skipped"] is True
    assert figures["stages_full_s"].keys() >= STAGES | SWAP
    assert (
        figures["stages_poll_s"].keys() >= SWAP and figures["stages_poll_s"]["warehouse_commit"] > 0
    )
    assert figures["floor_read_json_s"] > 0 and figures["floor_read_json_rows"] == 4 * 5
    assert (figures["polls"], figures["responses"]) == (4, 20)
    # the build read every poll: one observation per percentile figure generated
    assert figures["observations"] == figures["generated_statistics"] > 0
    assert figures["observations_after_poll"] == figures["generated_statistics_after_poll"]
    assert figures["observations_after_poll"] > figures["observations"]
    store = SnapshotStore(workdir / "corpus" / "raw")
    polls = store.list(SOURCE)
    assert len(polls) == 5  # the history and the one more poll
    assert figures["received_bytes"] == sum(meta.size for meta in polls)
    on_disk = sum(p.stat().st_size for p in (workdir / "corpus" / "raw").rglob("*") if p.is_file())
    assert figures["stored_bytes"] == on_disk
    members = read_bundle(store.read(polls[-1]))
    assert [m.url.rsplit("/", 2)[-2] for m in members] == [f"model-{n}" for n in range(1, 6)]
    with duckdb.connect(str(workdir / "corpus" / "speedbook.duckdb"), read_only=True) as con:
        snapshots, statistics = con.execute(
            "SELECT count(DISTINCT snapshot_id), count(DISTINCT statistic) FROM core.observations "
            "WHERE source_id = ?",
            [SOURCE],
        ).fetchone()
    assert (snapshots, statistics) == (5, 4)
    assert "one more poll" in result.out and "read_json floor" in result.out
    # then two more rounds on the kept corpus (python -m pipeline.bench.repeat_polls)
    from pipeline.bench.repeat_polls import main as repeat_polls

    repeated = tmp_path / "repeat.json"
    assert repeat_polls(
        [str(workdir), "--models", "5", "--days", "1", "--polls-per-day", "4", "--rounds", "2",
         "--json", str(repeated)]
    ) == 0  # fmt: skip
    rounds = json.loads(repeated.read_text())
    assert rounds["polls_before"] == 5 and len(rounds["poll_build_s"]) == 2
    # a floor before each round, on the last day of the history's polls
    assert len(rounds["floor_read_json_s"]) == 2 and all(s > 0 for s in rounds["floor_read_json_s"])
    assert rounds["poll_to_floor_ratio"] == round(
        rounds["poll_build_median_s"] / rounds["floor_read_json_median_s"], 2
    )
    assert all(noop["skipped"] for noop in rounds["noops"])
    # each poll after the first took the spare as the update after the build before left it,
    # and the bench waited for that update before measuring on
    assert figures["spare_update_after_poll_s"] >= 0
    assert all("warehouse_copy_ahead" in poll["stages"] for poll in rounds["polls"])
    assert all(poll["spare_update_s"] >= 0 for poll in rounds["polls"])
    assert len(store.list(SOURCE)) == 7
    with duckdb.connect(str(workdir / "corpus" / "speedbook.duckdb"), read_only=True) as con:
        snapshots = con.execute(
            "SELECT count(DISTINCT snapshot_id) FROM core.observations WHERE source_id = ?",
            [SOURCE],
        ).fetchone()[0]
    assert snapshots == 7
    # what writing the published observations costs by itself, on the same kept corpus
    from pipeline.bench.write_floor import main as write_floor

    floors = tmp_path / "write-floor.json"
    assert write_floor([str(workdir), "--json", str(floors)]) == 0
    written = json.loads(floors.read_text())
    with duckdb.connect(str(workdir / "corpus" / "speedbook.duckdb"), read_only=True) as con:
        assert (
            written["observations"]
            == con.execute("SELECT count(*) FROM core.observations").fetchone()[0]
        )
    everything = written["observations"]  # both copies hold every row
    assert written["rows_written"] == {"table": everything, "parquet": everything}
    assert written["floor_read_json_rows"] == 4 * 5  # the history's responses, as the bench's
    assert written["write_table_s"] > 0 and written["write_parquet_s"] > 0
    for copy in ("table", "parquet"):
        assert written[f"{copy}_to_floor_ratio"] == round(
            written[f"write_{copy}_s"] / written["floor_read_json_s"], 2
        )
    # its scratch files are gone
    assert not list(workdir.glob("write-floor*"))


def test_write_floor_refuses_a_folder_without_a_built_corpus(tmp_path):
    from pipeline.bench.write_floor import main as write_floor

    with pytest.raises(SystemExit, match="no built warehouse"):
        write_floor([str(tmp_path)])
    # a warehouse, but not the bench's floor files beside it: nothing to compare with
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "speedbook.duckdb").touch()
    with pytest.raises(SystemExit, match="no floor files"):
        write_floor([str(tmp_path)])


def test_repeat_polls_refuses_a_folder_without_a_built_corpus(tmp_path):
    from pipeline.bench.repeat_polls import main as repeat_polls

    with pytest.raises(SystemExit, match="no built warehouse"):
        repeat_polls([str(tmp_path)])

"""The benchmark at a tiny size, as a smoke test (end-to-end tier): each scenario runs end to end
against the lake and reports every figure docs/performance.md quotes. No timing is asserted
(the machine is shared)."""

import json

import pytest

from benchmarks.__main__ import main
from benchmarks.measure import Place, scalar
from benchmarks.poll_corpus import SOURCE
from pipeline.raw.store import open_store

pytestmark = pytest.mark.e2e

STAGES = {"inventory", "extract", "normalise", "load", "sql", "export"}


def test_the_poll_scenario_runs_at_a_tiny_size(tmp_path):
    output, workdir = tmp_path / "bench.json", tmp_path / "work"
    args = ["poll", "--models", "3", "--days", "1", "--polls-per-day", "2", "--rounds", "1"]
    args += ["--release-cadence", "daily"]  # the poll's build publishes no release
    assert main([*args, "--json", str(output), "--workdir", str(workdir)]) == 0
    figures = json.loads(output.read_text())
    assert figures["release_cadence"] == "daily"
    releases = sorted(p.name for p in (workdir / "exports-lake-0").iterdir())
    assert len(releases) == 2 and releases[-1] == "latest", releases  # the full build's only
    assert figures["stages_full_s"].keys() >= STAGES
    assert figures["stages_first_poll_s"], "the one-more-poll build reported no stage times"
    assert figures["noop_skipped"] is True and len(figures["noop_build_s"]) == 1
    assert figures["floor_read_json_median_s"] > 0 and figures["full_to_floor_ratio"] > 0
    assert figures["peak_rss_mib"] > 0 and figures["full_build_cpu_s"][0] > 0
    # the store's bytes against the bytes received, taken after the full build: the history's
    lake = workdir / "lake-0"
    polls = open_store(lake / "raw").list(SOURCE)  # the history and the one more poll
    assert len(polls) == 3 and figures["received_bytes"] == sum(m.size for m in polls[:2])
    on_disk = sum(p.stat().st_size for p in (lake / "raw").rglob("*") if p.is_file())
    assert 0 < figures["stored_bytes"] < on_disk  # the one more poll came after
    # the lake read every poll, the one more included (in no release yet)
    place = Place(
        lake, workdir / "corpus" / "registry.toml", workdir / "corpus" / "metadata", tmp_path
    )
    read = scalar(place, f"SELECT count(DISTINCT snapshot_id) FROM core.observations "
                         f"WHERE source_id = '{SOURCE}'")  # fmt: skip
    assert read == 3
    assert len(figures["mart_state_after_full"]) == 3


def test_the_page_scenario_runs_at_a_tiny_size(tmp_path):
    output, workdir = tmp_path / "bench.json", tmp_path / "work"
    args = ["pages", "--models", "3", "--providers", "2", "--days", "2"]
    assert main([*args, "--json", str(output), "--workdir", str(workdir)]) == 0
    figures = json.loads(output.read_text())
    assert (figures["pages"], figures["day_pages"]) == (6, 3)
    assert figures["stages_full_s"].keys() >= STAGES and figures["stages_day_s"]
    assert figures["noop_skipped"] is True
    assert figures["extract_pages_per_s"] and figures["floor_lxml_pages_per_s"] > 0
    assert figures["latest_kept_query_s"] >= 0 and figures["latest_from_history_query_s"] >= 0

"""Whole builds: failures that must stop a release while losing nothing."""

import gc
import json
import os
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime

import pytest

from pipeline.dagster.envelope import execute
from pipeline.raw.snapshots import SnapshotStore
from pipeline.sources.registry import load_registry
from pipeline.support.settings import Settings
from pipeline.warehouse.connection import connect

EXPORTS = ("inference.json", "model_platforms.json", "inference_catalog.json", "datapackage.json")


def copy_of(built: Settings, tmp_path) -> Settings:
    shutil.copytree(built.warehouse, tmp_path / "warehouse", symlinks=True)
    shutil.copytree(built.exports, tmp_path / "exports", symlinks=True)
    return Settings.resolve(built.registry, tmp_path / "warehouse", tmp_path / "exports")


def release_bytes(settings: Settings) -> dict[str, bytes]:
    return {name: (settings.exports / "latest" / name).read_bytes() for name in EXPORTS}


# Same snapshots, another warehouse built from scratch (as the UI runs it): byte-identical
# release files and no new version, in tests/test_dagster_state.py.


def add_page(settings: Settings, source_id: str, html: str, when: datetime) -> None:
    source = load_registry(settings.registry)[source_id]
    SnapshotStore(settings.raw_dir).add(
        source_id,
        html.encode(),
        url=source.url,
        retrieved_at=when,
        content_type="text/html",
        obtained_by="manual",
        extension="html",
    )


PAGE_TIME = datetime(2026, 11, 29, 6, tzinfo=UTC)


def add_kimi_page(settings: Settings, when: datetime = PAGE_TIME) -> None:
    """One more Artificial Analysis page (Kimi K2.6, one Cerebras endpoint at 990 tokens/s)."""
    add_page(settings, "aa-kimi-k2-6", AA_PAGE.format(label="Cerebras", speed="990"), when)


AA_PAGE = """<html><head><title>Kimi K2.6: API Provider Benchmarking &amp; Analysis</title></head>
<body><h1>Kimi K2.6 API Provider Benchmarking &amp; Analysis</h1><table>
<thead><tr><th>API Provider</th><th>Output Speed (tokens/s)</th><th>Latency (TTFT)</th>
<th>Blended Price ($/M tokens)</th></tr></thead>
<tbody><tr><td>{label}</td><td>{speed}</td><td>0.5</td><td>—</td></tr></tbody></table>
</body></html>"""


def test_an_unknown_name_in_a_page_holds_back_its_figures_and_the_rest_publishes(built, tmp_path):
    """A label from a page that no reviewed alias resolves never stops the release: its figure
    is held back (reported, never guessed), everything else goes out."""
    settings = copy_of(built, tmp_path)
    add_page(
        settings,
        "aa-kimi-k2-6",
        AA_PAGE.format(label="Mystery Cloud", speed="410"),
        datetime(2026, 11, 29, 6, tzinfo=UTC),
    )
    outcome = execute(settings)
    assert outcome.success, outcome.failures + outcome.failed_checks
    released = (settings.exports / "latest" / "inference.json").read_text(encoding="utf-8")
    assert "Mystery Cloud" not in released and "410.0" not in released
    assert json.loads(released)["providers"]  # the rest went out
    with connect(settings.database, read_only=True) as con:
        held = con.execute(
            "SELECT status, held_back, suggestions FROM staging.label_resolution "
            "WHERE kind = 'provider' AND label = 'Mystery Cloud'"
        ).fetchall()
        figures = con.execute(
            "SELECT count(*) FROM core.observations WHERE quote LIKE 'Mystery Cloud%'"
        ).fetchone()[0]
    assert [(status, back) for status, back, _ in held] == [("unresolved", True)]
    assert figures == 0


def test_a_schema_failure_stops_the_release(built, tmp_path, monkeypatch):
    import pipeline.release.exports as exports

    settings = copy_of(built, tmp_path)
    before = release_bytes(settings)
    add_kimi_page(settings)
    original = exports.build_catalog

    def broken(inputs, info):
        document = original(inputs, info)
        document["total"] = "seventy-five"
        return document

    monkeypatch.setitem(exports.BUILDERS, "inference_catalog.json", broken)
    outcome = execute(settings)
    assert not outcome.success
    assert "out_inference_catalog.matches_json_schema" in outcome.failed_checks
    assert release_bytes(settings) == before
    assert sorted(p.name for p in settings.exports.iterdir()) == ["2026.11.29", "latest"]


@pytest.mark.parametrize(
    "label", ["<script>alert(1)</script>Cerebras", "Cere<b onmouseover=x>bras"]
)
def test_markup_in_a_label_never_reaches_an_export(built, tmp_path, label):
    settings = copy_of(built, tmp_path)
    add_page(
        settings,
        "aa-kimi-k2-6",
        AA_PAGE.format(label=label, speed="990"),
        datetime(2026, 11, 29, 6, tzinfo=UTC),
    )
    assert execute(settings).success
    text = (settings.exports / "latest" / "inference.json").read_text()
    assert "<script" not in text and "onmouseover" not in text and "alert(1)" not in text


@pytest.mark.parametrize("history", ["appended", "from scratch"])
def test_a_repeated_observation_key_stops_the_release(built, tmp_path, monkeypatch, history):
    """The observations' key is checked a batch of snapshots at a time (a distinct count over a
    quarter of half-hourly polls ran out of memory): a key seen twice within the snapshots a
    build derived still stops the release, appended or derived from scratch."""
    import pipeline.dagster.assets.core as core_assets

    settings = copy_of(built, tmp_path)
    if history == "from scratch":
        settings.database.unlink()
    before = release_bytes(settings)
    add_kimi_page(settings)
    original = core_assets.build_core

    def repeating(con, **kwargs):
        loaded = original(con, **kwargs)
        con.execute(
            "INSERT INTO core.observations SELECT * FROM core.observations "
            "WHERE snapshot_id LIKE 'aa-kimi-k2-6/%' ORDER BY snapshot_id DESC LIMIT 1"
        )
        return loaded

    monkeypatch.setattr(core_assets, "build_core", repeating)
    outcome = execute(settings)
    assert not outcome.success
    assert "core_observations.matches_schema" in outcome.failed_checks
    assert release_bytes(settings) == before


def test_a_build_with_nothing_new_answers_without_importing_dagster(built):
    """Half-hourly ticks mostly find nothing new: that answer must not wait on Dagster's import
    (about a second of the two the bench measured)."""
    program = (
        "import json, sys\n"
        "from pipeline.cli import main\n"
        "status = main(['build'])\n"
        "print(json.dumps([status, sorted({m.split('.')[0] for m in sys.modules} & HEAVY)]))\n"
    ).replace("HEAVY", repr({"dagster", "pandas", "pandera"}))
    environ = os.environ | {
        "SPEEDBOOK_REGISTRY": str(built.registry),
        "SPEEDBOOK_WAREHOUSE": str(built.warehouse),
        "SPEEDBOOK_EXPORTS": str(built.exports),
    }
    done = subprocess.run(
        [sys.executable, "-c", program], env=environ, capture_output=True, text=True, check=True
    )
    lines = done.stdout.splitlines()
    assert lines[0].startswith("nothing new:"), done.stdout
    assert json.loads(lines[-1]) == [0, []]


def test_a_build_in_process_leaves_the_collector_as_it_found_it(built, tmp_path, monkeypatch):
    """A build freezes what it sets its run up with (pipeline/support/bulk.py), and its steps run
    with it frozen; a process that runs many builds (the tests, a notebook) gets the collector
    back enabled and nothing frozen."""
    from pipeline.dagster.assets import release

    settings = copy_of(built, tmp_path)
    add_kimi_page(settings)
    frozen_in_steps: list[int] = []
    publish = release.publish_release

    def publishing(*args, **kwargs):
        frozen_in_steps.append(gc.get_freeze_count())
        return publish(*args, **kwargs)

    monkeypatch.setattr(release, "publish_release", publishing)
    assert execute(settings).success
    assert frozen_in_steps and frozen_in_steps[0] > 100_000  # modules, definitions, instance
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_a_working_copy_slower_than_dagsters_start_is_whole_before_the_first_step(
    built, tmp_path, monkeypatch
):
    """`speedbook build` makes the working copy while Dagster starts; a copy that takes longer
    than that start must still be complete before any step opens it."""
    from pipeline.warehouse import swap

    settings = copy_of(built, tmp_path)
    with connect(settings.database, read_only=True) as con:
        before = con.execute("SELECT count(*) FROM core.snapshots").fetchone()[0]
    add_kimi_page(settings)
    original = swap._copy

    def slow(source, destination, spare, stop=None):
        time.sleep(3)  # Dagster is imported already in this process: its start takes less
        return original(source, destination, spare, stop)

    monkeypatch.setattr(swap, "_copy", slow)
    outcome = execute(settings)
    assert outcome.success, outcome.problems
    assert outcome.warehouse_copy_seconds >= 3 and outcome.warehouse_copy_waited_seconds > 0
    with connect(settings.database, read_only=True) as con:
        assert con.execute("SELECT count(*) FROM core.snapshots").fetchone()[0] == before + 1

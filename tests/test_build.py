"""Whole builds: failures that must stop a release while losing nothing."""

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pipeline.dagster.envelope import execute
from pipeline.raw.snapshots import SnapshotStore
from pipeline.sources.registry import load_registry
from pipeline.support.settings import Settings
from pipeline.warehouse.connection import connect, lake_of

EXPORTS = ("inference.json", "model_platforms.json", "inference_catalog.json", "datapackage.json")


def copy_of(built: Settings, root: Path, registry: Path | None = None) -> Settings:
    """A private, writable copy of a built warehouse and its releases under `root`. The lake's
    catalog names its data folder by absolute path: the copy's catalog is pointed at the copy's
    data folder, as a release's published catalog is at its own (pipeline/release/remote.py)."""
    shutil.copytree(built.warehouse, root / "warehouse", symlinks=True)
    shutil.copytree(built.exports, root / "exports", symlinks=True)
    settings = Settings.resolve(registry or built.registry, root / "warehouse", root / "exports")
    lake = lake_of(settings)
    assert lake.kind == "sqlite", lake.describe()
    with contextlib.closing(sqlite3.connect(lake.target)) as catalog, catalog:
        moved = catalog.execute(
            "UPDATE ducklake_metadata SET value = ? WHERE key = 'data_path' AND scope IS NULL",
            [lake.data_path],
        ).rowcount
    assert moved == 1, lake.describe()
    return settings


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


def test_labels_of_a_new_page_never_carry_markup_and_an_unknown_one_is_held_back(built, tmp_path):
    """One page, three rows, one build: markup in a label never reaches an export (both rows are
    read as text and their figures published); a label no reviewed alias resolves never stops
    the release: its figure is held back (reported, never guessed), everything else goes out."""
    settings = copy_of(built, tmp_path)
    row = AA_PAGE[AA_PAGE.index("<tr><td>{label}") : AA_PAGE.index("</tbody>")]
    rows = (
        row.format(label="<script>alert(1)</script>Cerebras", speed="990")
        + row.format(label="Fire<b onmouseover=x>works", speed="980")
        + row.format(label="Mystery Cloud", speed="410")
    )
    page = AA_PAGE.replace(row, "{rows}").format(rows=rows)
    add_page(settings, "aa-kimi-k2-6", page, datetime(2026, 11, 29, 6, tzinfo=UTC))
    outcome = execute(settings)
    assert outcome.success, outcome.failures + outcome.failed_checks
    with connect(settings, read_only=True) as con:
        staged = con.execute(
            "SELECT list(endpoint_label ORDER BY endpoint_label) FROM staging.aa_endpoints "
            "WHERE snapshot_id LIKE 'aa-kimi-k2-6/20261129T060000Z-%'"
        ).fetchone()
        held = con.execute(
            "SELECT status, held_back FROM core.labels "
            "WHERE kind = 'provider' AND label = 'Mystery Cloud'"
        ).fetchall()
        figures = con.execute(
            "SELECT count(*) FROM core.observations WHERE quote LIKE 'Mystery Cloud%'"
        ).fetchone()[0]
    assert staged == (["Cerebras", "Fireworks", "Mystery Cloud"],)  # all rows read, as text
    text = (settings.exports / "latest" / "inference.json").read_text(encoding="utf-8")
    assert "<script" not in text and "onmouseover" not in text and "alert(1)" not in text
    assert "990.0" in text and "980.0" in text  # their figures went out
    assert held == [("unresolved", True)] and figures == 0
    assert "Mystery Cloud" not in text and "410.0" not in text
    assert json.loads(text)["providers"]  # the rest went out


@pytest.mark.parametrize("history", ["appended", "from scratch"])
def test_a_repeated_observation_key_stops_the_release(built, tmp_path, monkeypatch, history):
    """The core is loaded and checked in one transaction (pipeline/warehouse/core.py): a figure
    key seen twice in a core table stops the release and commits nothing, on a lake with a
    history or on one built from scratch."""
    import pipeline.warehouse.core as warehouse_core

    settings = copy_of(built, tmp_path)
    if history == "from scratch":
        lake = lake_of(settings)
        Path(lake.target).unlink()
        shutil.rmtree(lake.data_path)
    before = release_bytes(settings)
    add_kimi_page(settings)
    original = warehouse_core.apply_marts

    def repeating(con):
        con.execute(
            "INSERT INTO core.cited_observations "
            "SELECT * FROM core.cited_observations ORDER BY observation_id LIMIT 1"
        )
        return original(con)

    monkeypatch.setattr(warehouse_core, "apply_marts", repeating)
    outcome = execute(settings)
    assert not outcome.success
    assert "core_tables.matches_schema" in outcome.failed_checks
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

"""Which snapshot of a source the build reads: the newest one whose extraction succeeded
(mart.latest_snapshots). A damaged or rejected newer snapshot is reported and skipped, so the
source keeps its last good snapshot: in the freshness rule, the catalogue listings, the platform
documentation the exports cite, and mart.source_health. Hand-made warehouses pin the rule; a
real build with a damaged catalogue snapshot checks the release."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from mart_warehouse import DAY, Snapshot, Warehouse, observation, rows, snapshot_id
from test_build import copy_of

from pipeline.dagster.envelope import execute
from pipeline.raw.snapshots import SnapshotMeta, SnapshotStore
from pipeline.release.queries import read_inputs
from pipeline.sources.registry import load_registry
from pipeline.support.settings import Settings
from pipeline.warehouse.connection import connect

CLOUDFLARE = "cloudflare-workers-ai"


# --- the rule, on hand-made warehouses ------------------------------------------------------


def test_a_failed_or_damaged_newer_snapshot_is_skipped(tmp_path: Path) -> None:
    con = Warehouse(
        tmp_path / "w.duckdb",
        observations=[observation("bench-a", 300, days_ago=3)],
        snapshots=[
            Snapshot("bench-a", 1, status="failed"),
            Snapshot("bench-a", 0, status="damaged"),
            Snapshot("bench-b", 2),
        ],
    ).build()
    latest = {r["source_id"]: r for r in rows(con, "FROM mart.latest_snapshots")}
    assert set(latest) == {"bench-a", "bench-b"}  # a source with no usable snapshot has no row
    assert latest["bench-a"]["snapshot_id"] == snapshot_id("bench-a", 3)
    assert (latest["bench-a"]["is_newest"], latest["bench-a"]["newer_unusable"]) == (False, 2)
    assert (latest["bench-b"]["is_newest"], latest["bench-b"]["newer_unusable"]) == (True, 0)
    (fresh,) = rows(con, "FROM mart.source_freshness WHERE source_id = 'bench-a'")
    assert fresh["latest_snapshot_id"] == snapshot_id("bench-a", 3)
    assert fresh["latest_retrieved_at"] == DAY - timedelta(days=3)


def test_the_as_of_bound_applies_before_the_newest_usable_snapshot_is_picked(
    tmp_path: Path,
) -> None:
    con = Warehouse(
        tmp_path / "w.duckdb",
        observations=[
            observation("bench-a", 300, days_ago=9),
            observation("bench-a", 320, days_ago=0),
        ],
        snapshots=[Snapshot("bench-a", 5, status="damaged")],
        as_of=DAY - timedelta(days=2),
    ).build()
    (latest,) = rows(con, "FROM mart.latest_snapshots")
    assert (latest["snapshot_id"], latest["newer_unusable"]) == (snapshot_id("bench-a", 9), 1)


def test_a_confirmation_of_an_unusable_newest_snapshot_does_not_refresh_the_older_one(
    tmp_path: Path,
) -> None:
    # A fetch found the live page identical to the newest snapshot (which is damaged on disk):
    # that says nothing about the 10-day-old snapshot the figures come from.
    figures = [
        observation("bench-a", 300, days_ago=10),
        observation("bench-b", 200, days_ago=10, provider="q"),
    ]
    con = Warehouse(
        tmp_path / "w.duckdb",
        observations=figures,
        snapshots=[Snapshot("bench-a", 0, status="damaged")],
        confirmed={"bench-a": DAY, "bench-b": DAY},
    ).build()
    freshness = {r["source_id"]: r for r in rows(con, "FROM mart.source_freshness")}
    assert freshness["bench-a"]["confirmed_at"] is None
    assert freshness["bench-b"]["confirmed_at"] == DAY  # its newest snapshot is the one in use
    stale = {
        r["source_id"]: r["stale"]
        for r in rows(con, "SELECT source_id, stale FROM mart.current_figures")
    }
    assert stale == {"bench-a": True, "bench-b": False}


def test_source_health_reports_the_newest_snapshot_and_judges_the_one_in_use(
    tmp_path: Path,
) -> None:
    con = Warehouse(
        tmp_path / "w.duckdb",
        observations=[
            observation("bench-a", 300, days_ago=3),
            observation("bench-b", 200, days_ago=10, provider="q"),
        ],
        snapshots=[Snapshot("bench-a", 0, status="damaged"), Snapshot("compiled", 1, "failed")],
        confirmed={"bench-b": DAY - timedelta(days=1)},
    ).build()
    health = {r["source_id"]: r for r in rows(con, "FROM mart.source_health")}
    a = health["bench-a"]
    assert (a["latest_snapshot_id"], a["extraction_status"], a["status"]) == (
        snapshot_id("bench-a", 0),
        "damaged",
        "extraction_failed",
    )
    assert (a["used_snapshot_id"], a["age_days"], a["stale"]) == (
        snapshot_id("bench-a", 3),
        3.0,
        False,
    )
    # re-confirmed a day ago: fresh, by the same rule as its figures
    b = health["bench-b"]
    assert (b["used_snapshot_id"], b["stale"], b["status"]) == (
        snapshot_id("bench-b", 10),
        False,
        "ok",
    )
    (figure,) = rows(con, "SELECT stale FROM mart.current_figures WHERE source_id = 'bench-b'")
    assert figure["stale"] is False
    compiled = health["compiled"]  # nothing usable at all
    assert (compiled["used_snapshot_id"], compiled["stale"], compiled["status"]) == (
        None,
        None,
        "extraction_failed",
    )
    assert health["catalogue"]["status"] == "no_snapshot"


def test_source_health_staleness_is_the_figures_rule_on_the_retrieval_time(
    tmp_path: Path,
) -> None:
    # Without a re-confirmation a source is stale exactly when a figure observed at its
    # snapshot's retrieval time would be (mart.is_stale); with one, both move together.
    con = Warehouse(
        tmp_path / "w.duckdb",
        observations=[
            observation("bench-a", 300, days_ago=8),  # cadence 7 days: stale
            observation("bench-b", 200, days_ago=8, provider="q"),
        ],
        snapshots=[Snapshot("compiled", 0)],  # the data date
        confirmed={"bench-b": DAY - timedelta(days=2)},
    ).build()
    health = {r["source_id"]: r["stale"] for r in rows(con, "FROM mart.source_health")}
    figures = {
        r["source_id"]: r["stale"]
        for r in rows(con, "SELECT source_id, stale FROM mart.current_figures")
    }
    assert figures == {"bench-a": True, "bench-b": False}
    assert {k: health[k] for k in figures} == figures


# --- a real build: two catalogue snapshots, the newer one damaged on disk --------------------


def _latest(settings: Settings, name: str) -> dict:
    return json.loads((settings.exports / "latest" / name).read_text(encoding="utf-8"))


def _health(settings: Settings) -> dict:
    with connect(settings, read_only=True) as con:
        (row,) = rows(con, "FROM mart.source_health WHERE source_id = ?", [CLOUDFLARE])
    return row


def _cloudflare_listing(settings: Settings) -> tuple[int, list[str]]:
    catalog = _latest(settings, "inference_catalog.json")
    (platform,) = [
        p for p in _latest(settings, "model_platforms.json")["platforms"] if p["id"] == CLOUDFLARE
    ]
    listed = platform["listed_models"]
    assert listed is not None and listed["count"] == catalog["total"]
    snapshots = [s["snapshot"] for s in catalog["catalogue_snapshots"]]
    assert [s["snapshot"] for s in listed["sources"]] == snapshots
    return catalog["total"], snapshots


def test_a_damaged_newest_catalogue_snapshot_keeps_the_last_good_listing(
    built: Settings, tmp_path: Path
) -> None:
    settings = copy_of(built, tmp_path)
    store = SnapshotStore(settings.raw_dir)
    (good,) = store.list(CLOUDFLARE)
    assert _cloudflare_listing(settings) == (75, [good.snapshot_id])

    # a newer catalogue, one model shorter, is read like any other
    catalogue = json.loads(store.read(good))
    catalogue["result"] = catalogue["result"][:-1]
    catalogue["result_info"] |= {"count": 74, "total_count": 74}
    store.add(
        CLOUDFLARE,
        json.dumps(catalogue).encode(),
        url=load_registry(settings.registry)[CLOUDFLARE].url.replace("ACCOUNT_ID", "abc"),
        retrieved_at=datetime(2026, 11, 29, 12, tzinfo=UTC),
        content_type="application/json",
        obtained_by="manual",
        extension="json",
    )
    (newer,) = [m for m in store.list(CLOUDFLARE) if m.snapshot_id != good.snapshot_id]
    outcome = execute(settings)
    assert outcome.success, outcome.failures + outcome.failed_checks
    assert _cloudflare_listing(settings) == (74, [newer.snapshot_id])

    # its bytes are then damaged on disk: it is reported and not used, the last good stays
    _damage(store, newer)
    outcome = execute(settings, force=True)
    assert outcome.success, outcome.failures + outcome.failed_checks
    assert _cloudflare_listing(settings) == (75, [good.snapshot_id])
    catalog = _latest(settings, "inference_catalog.json")
    assert sum(t["count"] for t in catalog["tasks"]) == 75 and len(catalog["tasks"]) == 12

    health = _health(settings)
    assert (health["latest_snapshot_id"], health["extraction_status"], health["status"]) == (
        newer.snapshot_id,
        "damaged",
        "extraction_failed",
    )
    assert "sha256 mismatch" in health["extraction_error"]
    assert health["used_snapshot_id"] == good.snapshot_id
    # every earlier snapshot stays, and every release is still there
    assert {m.snapshot_id for m in store.list(CLOUDFLARE)} == {good.snapshot_id, newer.snapshot_id}
    assert len([p for p in settings.exports.iterdir() if p.name[0].isdigit()]) == 3


def _damage(store: SnapshotStore, meta: SnapshotMeta) -> None:
    path = store.path_of(meta)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("status", ["failed", "damaged"])
def test_platform_documentation_is_cited_from_its_last_good_snapshot(
    tmp_path: Path, status: str
) -> None:
    con = Warehouse(
        tmp_path / "w.duckdb",
        snapshots=[Snapshot("catalogue", 4), Snapshot("catalogue", 0, status=status)],
    ).build()
    con.execute(
        "INSERT INTO core.platforms (platform_id, name, owner, kind, stated_count, notable, "
        "doc_source_id) VALUES ('edge', 'Edge', 'x', 'edge_hosted', '75 models', NULL, "
        "'catalogue')"
    )
    statements = read_inputs(con).platform_statements
    assert [(s["platform_id"], s["snapshot_id"]) for s in statements] == [
        ("edge", snapshot_id("catalogue", 4))
    ]

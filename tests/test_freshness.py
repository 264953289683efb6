"""Freshness from retrieval time: the Dagster check on each raw asset, `speedbook sources` and
mart.source_health agree, measured from when the snapshot in use was retrieved (or re-confirmed
by a fetch), against the source's cadence: never from when a build ran."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import dagster as dg
import pytest
from conftest import CliResult, build_into
from test_build import copy_of

from pipeline.cli.sources import source_rows, unusable_snapshots
from pipeline.dagster.assets.freshness import CHECK
from pipeline.dagster.assets.raw import raw_asset_key
from pipeline.dagster.graph import BUILD_JOB, build_definitions
from pipeline.dagster.runner import dagster_instance
from pipeline.raw.freshness import confirmation, freshness
from pipeline.raw.outcomes import OutcomeRecord, record_outcome
from pipeline.raw.snapshots import SnapshotMeta, format_utc
from pipeline.sources.registry import load_registry
from pipeline.support.settings import Settings
from pipeline.warehouse.connection import connect, lake_of

Cli = Callable[..., CliResult]
DAY = datetime(2026, 11, 29, tzinfo=UTC)
WEEK = timedelta(days=7)


def meta(name: str, retrieved: datetime) -> SnapshotMeta:
    stamp = format_utc(retrieved)
    return SnapshotMeta(
        source_id="example",
        url="https://example.org/",
        retrieved_at=stamp,
        sha256="0" * 64,
        size=1,
        content_type="text/html",
        obtained_by="manual",
        file=name,
    )


# --- the rule ---------------------------------------------------------------------------------


def test_fresh_as_of_the_retrieval_stale_beyond_the_cadence():
    snapshot = meta("a.html", DAY - WEEK)
    assert not freshness(snapshot, snapshot, None, WEEK, DAY).stale  # exactly the cadence
    late = freshness(snapshot, snapshot, None, WEEK, DAY + timedelta(seconds=1))
    assert late.stale and late.fresh_as_of == DAY - WEEK and late.age == WEEK + timedelta(seconds=1)


def test_a_fetch_that_found_the_newest_snapshot_unchanged_re_confirms_it():
    snapshot = meta("a.html", DAY - 3 * WEEK)
    confirmed = freshness(snapshot, snapshot, DAY - timedelta(days=1), WEEK, DAY)
    assert not confirmed.stale and confirmed.fresh_as_of == DAY - timedelta(days=1)
    assert confirmed.age == 3 * WEEK  # the snapshot is as old as it is
    # a confirmation of the newest snapshot says nothing of an older one in use (the newest is
    # damaged or unparseable)
    older, newest = meta("old.html", DAY - 3 * WEEK), meta("new.html", DAY - 2 * WEEK)
    result = freshness(older, newest, DAY, WEEK, DAY)
    assert result.stale and result.confirmed_at is None and result.fresh_as_of == older.retrieved


@pytest.mark.parametrize(
    ("outcome", "file", "confirms"),
    [
        ("unchanged", "a.html", True),
        ("not_modified", "a.html", True),
        ("new", "a.html", False),  # a new snapshot is its own retrieval
        ("failed", "a.html", False),
        ("unchanged", "other.html", False),  # it re-confirmed another snapshot
    ],
)
def test_only_an_unchanged_or_not_modified_fetch_of_that_snapshot_confirms(outcome, file, confirms):
    record = OutcomeRecord("example", outcome, "", "2026-11-28T10:00:00Z", snapshot=file)
    expected = datetime(2026, 11, 28, 10, tzinfo=UTC) if confirms else None
    assert confirmation(record, meta("a.html", DAY - WEEK)) == expected
    assert confirmation(None, meta("a.html", DAY)) is None
    assert confirmation(record, None) is None


# --- the Dagster check, after a real build ----------------------------------------------------


def check_results(settings: Settings) -> dict[str, dg.AssetCheckEvaluation]:
    """The newest evaluation of every source's freshness check on the build's instance."""
    found = {}
    with dagster_instance(settings) as instance:
        for source_id in load_registry(settings.registry):
            key = dg.AssetCheckKey(raw_asset_key(source_id), CHECK)
            record = instance.get_latest_asset_check_evaluation_record(key)
            assert record is not None and record.event is not None, source_id
            found[source_id] = record.event.dagster_event.asset_check_evaluation_data
    return found


def source_health(settings: Settings) -> dict[str, dict[str, object]]:
    with connect(settings, read_only=True) as con:
        cursor = con.execute("FROM mart.source_health")
        names = [d[0] for d in cursor.description]
        return {row[0]: dict(zip(names, row, strict=True)) for row in cursor.fetchall()}


def test_the_check_agrees_with_source_health_row_for_row_and_llmperf_fails(built: Settings):
    checks = check_results(built)
    health = source_health(built)
    assert set(checks) == set(health)
    for source_id, evaluation in checks.items():
        row = health[source_id]
        assert evaluation.passed == (row["stale"] is False), source_id
        assert evaluation.severity == dg.AssetCheckSeverity.WARN
        metadata = evaluation.metadata
        assert metadata["status"].value == row["status"]
        assert metadata["snapshot_used"].value == (row["used_snapshot_id"] or "none")
        assert metadata["cadence"].value == row["cadence"]
        if row["used_retrieved_at"] is None:  # no snapshot (Vercel's, none bundled): not fresh
            assert not evaluation.passed and metadata["age_days"].value is None
            continue
        assert metadata["age_days"].value == pytest.approx(row["age_days"])
        assert metadata["retrieved_at"].value == row["used_retrieved_at"].timestamp()
    llmperf = {sid: e for sid, e in checks.items() if sid.startswith("llmperf-")}
    assert len(llmperf) == 19 and not any(e.passed for e in llmperf.values())
    groq = llmperf["llmperf-groq-70b"].metadata
    assert groq["retrieved_at"].value == datetime(2024, 1, 10, 1, 55, 4, tzinfo=UTC).timestamp()
    assert groq["age_days"].value > 1000 and groq["cadence"].value == "yearly"
    # the November pages pass: measured from their retrieval at the data date, not the clock
    assert checks["aa-kimi-k2-6"].passed
    passing = sum(e.passed for e in checks.values())
    assert 0 < passing < len(checks)


def test_the_raw_assets_carry_no_freshness_policy_and_one_warning_check_each(settings: Settings):
    defs = build_definitions(settings)
    graph = defs.resolve_asset_graph()
    job = defs.resolve_job_def(BUILD_JOB)
    in_job = job.asset_layer.asset_graph.asset_check_keys
    for source_id in load_registry(settings.registry):
        node = graph.get(raw_asset_key(source_id))
        assert node.freshness_policy is None, source_id  # it would count from the build
        key = dg.AssetCheckKey(raw_asset_key(source_id), CHECK)
        spec = graph.get_check_spec(key)
        assert spec.blocking is False and key in in_job
        assert dg.AssetKey("mart_views") in {dep.asset_key for dep in spec.additional_deps}


@pytest.mark.e2e
def test_a_fetch_re_confirming_an_old_snapshot_makes_the_source_pass(built, tmp_path: Path):
    """Hand-made: a fetch at the data date found LLMPerf's Groq summary unchanged; the check
    passes with the re-confirmation, exactly as mart.source_health counts it fresh."""
    settings = copy_of(built, tmp_path / "first")  # built as build_into builds it
    record_outcome(
        settings.raw_dir,
        "llmperf-groq-70b",
        "unchanged",
        at=datetime(2026, 11, 28, tzinfo=UTC),
        snapshot="20240110T015504Z-09de95de0eb3.json",
    )
    build_into(tmp_path / "first")  # the fetch log grew: the build runs again
    checks, health = check_results(settings), source_health(settings)
    assert health["llmperf-groq-70b"]["stale"] is False
    groq = checks["llmperf-groq-70b"]
    assert groq.passed
    assert groq.metadata["confirmed_at"].value == datetime(2026, 11, 28, tzinfo=UTC).timestamp()
    assert groq.metadata["fresh_as_of"].value == groq.metadata["confirmed_at"].value
    assert not checks["llmperf-lepton-7b"].passed  # the others are as old as they were
    for source_id, evaluation in checks.items():
        assert evaluation.passed == (health[source_id]["stale"] is False), source_id


# --- speedbook sources ------------------------------------------------------------------------


def test_sources_at_the_data_date_agrees_with_source_health_row_for_row(built: Settings):
    """One rule: measured at the build's data date, `sources` says what the mart says."""
    health = source_health(built)
    data_floor = datetime(1990, 1, 1, tzinfo=UTC)  # a source with no snapshot dates nothing
    data_date = max(row["used_retrieved_at"] or data_floor for row in health.values())
    rows = source_rows(built, now=data_date, unusable=unusable_snapshots(built))
    assert {row["id"]: row["stale"] for row in rows} == {
        sid: row["stale"] for sid, row in health.items()
    }
    assert {row["id"]: row["used_snapshot"] for row in rows} == {
        sid: row["used_snapshot_id"] for sid, row in health.items()
    }


def test_sources_measures_from_now_and_counts_a_re_confirming_fetch(settings: Settings):
    now = datetime(2026, 12, 1, tzinfo=UTC)
    rows = {row["id"]: row for row in source_rows(settings, now=now)}
    assert rows["aa-kimi-k2-6"]["stale"] is False  # weekly, retrieved two days before now
    assert rows["llmperf-groq-70b"]["stale"] is True
    later = {r["id"]: r for r in source_rows(settings, now=now + timedelta(days=6))}
    assert later["aa-kimi-k2-6"]["stale"] is True  # the week is up
    record_outcome(
        settings.raw_dir,
        "aa-kimi-k2-6",
        "not_modified",
        at=now + timedelta(days=5),
        snapshot="20261129T000000Z-efaf056cfc4d.html",
    )
    again = {r["id"]: r for r in source_rows(settings, now=now + timedelta(days=6))}
    assert again["aa-kimi-k2-6"]["stale"] is False
    assert again["aa-kimi-k2-6"]["confirmed_at"] == "2026-12-06T00:00:00Z"
    assert again["aa-kimi-k2-6"]["fresh_as_of"] == "2026-12-06T00:00:00Z"


def test_sources_measures_from_the_newest_usable_snapshot(settings: Settings):
    source = "aa-llama-3-3-instruct-70b"
    rows = {row["id"]: row for row in source_rows(settings, now=DAY)}
    newest = rows[source]["latest_snapshot"]
    assert rows[source]["stale"] is False
    # the last build could not use the November page: the June one is 154 days old
    unusable = {r["id"]: r for r in source_rows(settings, now=DAY, unusable={newest})}
    assert unusable[source]["used_snapshot"] != newest
    assert unusable[source]["used_snapshot"].startswith(f"{source}/20260628")
    assert unusable[source]["stale"] is True


def test_sources_shows_cadence_newest_snapshot_and_stale(settings: Settings, cli: Cli):
    result = cli("sources")
    assert result.status == 0, result.err
    header, _, *lines = result.out.splitlines()
    for column in ("cadence", "newest", "retrieved_at", "age_days", "stale", "last_fetch"):
        assert column in header.split(), column
    groq = next(line for line in lines if line.startswith("llmperf-groq-70b "))
    assert "yearly" in groq and "20240110T015504Z-09de95de0eb3.json" in groq
    assert groq.split()[header.split().index("stale")] == "yes"
    stale = sum(1 for row in json.loads(cli("sources", "--json").out) if row["stale"])
    assert f"with a snapshot, {stale} stale" in result.out
    # no warehouse yet: every stored snapshot counts as usable, and nothing is said about it
    assert "busy" not in result.err


def test_sources_says_so_when_the_warehouse_cannot_be_read(settings: Settings, cli: Cli):
    catalog = Path(lake_of(settings).target)  # the lake's catalog, a SQLite file here
    catalog.parent.mkdir(parents=True, exist_ok=True)
    catalog.write_bytes(b"not a catalog")
    result = cli("sources")
    assert result.status == 0
    assert "note: the warehouse is busy or has no build yet" in result.err


def test_sources_reports_a_newest_snapshot_the_last_build_could_not_use(
    built: Settings, tmp_path: Path, cli: Cli
):
    warehouse = copy_of(built, tmp_path).warehouse  # a copy whose lake writes stay its own
    with connect(Settings.resolve(warehouse=warehouse)) as con:  # core.extractions reads it
        con.execute(
            "UPDATE staging.extractions SET status = 'damaged' "
            "WHERE snapshot_id = 'aa-kimi-k2-6/20261129T000000Z-efaf056cfc4d.html'"
        )
    result = cli("sources", "--warehouse", str(warehouse))
    assert result.status == 0, result.err
    assert "aa-kimi-k2-6: the last build could not use its newest snapshot; fresh from none" in (
        result.out
    )

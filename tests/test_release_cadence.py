"""The release cadence: a build sooner than the cadence after the last release commits the lake
and publishes nothing, says when the next release is due, and the first build after that time
publishes (pipeline/release/cadence.py)."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime, timedelta

import pytest
from conftest import BUNDLED_RAW
from test_build import PAGE_TIME, add_kimi_page, add_page, copy_of, release_bytes

from pipeline.dagster.envelope import REPORT_FILE, _nothing_new, execute
from pipeline.dagster.fingerprint import build_fingerprint
from pipeline.release.cadence import ReleaseCadenceError, next_release_at, release_interval
from pipeline.support.settings import ENV_RELEASE_CADENCE, Settings
from pipeline.warehouse.connection import connect

NOON = datetime(2026, 12, 1, 12, tzinfo=UTC)
HOUR = timedelta(hours=1)


def test_the_cadence_is_a_name_of_the_registrys_vocabulary():
    assert release_interval("") is None  # a release from every build
    assert release_interval("daily") == timedelta(days=1)
    assert release_interval("half_hourly") == timedelta(minutes=30)
    for wrong in ("1d", "Daily", "daily ", "weekly2"):
        with pytest.raises(ReleaseCadenceError) as raised:
            release_interval(wrong)
        assert ENV_RELEASE_CADENCE in str(raised.value) and "hourly, daily" in str(raised.value)


@pytest.mark.parametrize(
    ("last", "interval", "due"),
    [
        (None, timedelta(days=1), None),  # no release yet: due now
        (NOON, None, None),  # no cadence: every build
        (NOON - timedelta(days=1), timedelta(days=1), None),  # exactly a day: due
        (NOON - timedelta(hours=2), timedelta(days=1), NOON + timedelta(hours=22)),
        (NOON - timedelta(minutes=29), timedelta(minutes=30), NOON + timedelta(minutes=1)),
    ],
)
def test_the_next_release_is_due_a_cadence_after_the_last(last, interval, due):
    assert next_release_at(last, interval, NOON) == due


def _report(tmp_path, **fields) -> tuple[Settings, dict]:
    settings = Settings.resolve(warehouse=tmp_path / "warehouse", exports=tmp_path / "exports")
    (settings.exports / "2026.12.01").mkdir(parents=True)
    (settings.exports / "2026.12.01" / "datapackage.json").write_text("{}")
    (settings.exports / "latest").mkdir()
    last = {"success": True, "fingerprint": "f", "release": "2026.12.01", **fields}
    return settings, last


def test_a_build_with_nothing_new_runs_when_the_release_it_did_not_publish_is_due(tmp_path):
    settings, last = _report(tmp_path)
    assert _nothing_new(settings, last, "f", NOON)  # no release owed
    last["release_due_at"] = "2026-12-01T18:00:00Z"
    assert _nothing_new(settings, last, "f", NOON)  # owed, not due yet: nothing to do
    assert not _nothing_new(settings, last, "f", NOON + timedelta(hours=6))  # due: build
    last["release_due_at"] = "tomorrow"  # a report edited by hand: build rather than guess
    assert not _nothing_new(settings, last, "f", NOON)


def test_another_cadence_is_another_build(tmp_path):
    settings = Settings.resolve(warehouse=tmp_path / "warehouse", exports=tmp_path / "exports")
    fingerprints = {
        build_fingerprint(dataclasses.replace(settings, release_cadence=cadence), None)
        for cadence in ("", "daily", "hourly")
    }
    assert len(fingerprints) == 3


def test_a_cadence_that_is_no_cadence_refuses_the_build(cli, tmp_path, monkeypatch):
    monkeypatch.setenv(ENV_RELEASE_CADENCE, "fortnightly")
    monkeypatch.setenv("SPEEDBOOK_WAREHOUSE", str(tmp_path / "warehouse"))
    monkeypatch.setenv("SPEEDBOOK_EXPORTS", str(tmp_path / "exports"))
    monkeypatch.setenv("SPEEDBOOK_SNAPSHOTS", str(BUNDLED_RAW))  # something to build
    result = cli("build")
    assert result.status == 2, result
    assert "SPEEDBOOK_RELEASE_CADENCE='fortnightly' is not a cadence" in result.err
    assert not (tmp_path / "exports").exists() and not (tmp_path / "warehouse").exists()


def test_a_build_before_the_release_is_due_commits_the_lake_and_publishes_nothing(built, tmp_path):
    settings = dataclasses.replace(copy_of(built, tmp_path), release_cadence="daily")
    before = release_bytes(settings)
    with connect(settings, read_only=True) as con:
        (published_at,) = con.execute("SELECT max(built_at) FROM history.releases").fetchone()
    add_kimi_page(settings)
    # and a newer page its parser rejects: reported as a release's step reports it
    add_page(settings, "aa-kimi-k2-6", "<html><body>no table</body></html>", PAGE_TIME + HOUR)
    outcome = execute(settings)
    assert outcome.success and not outcome.published, outcome
    assert outcome.not_used == 1 and outcome.notes[0].startswith("aa-kimi-k2-6: snapshot ")
    assert outcome.release == "2026.11.29"  # the release that stands
    due = datetime.fromisoformat(outcome.release_due_at)
    assert due == (published_at + timedelta(days=1)).replace(microsecond=0)
    assert outcome.message.startswith("no release: the next is due at ")
    # the lake has the new page; the releases are as they were
    with connect(settings, read_only=True) as con:
        (cerebras,) = con.execute(
            "SELECT count(*) FROM core.observations WHERE value = 990 "
            "AND metric = 'output_tokens_per_s'"
        ).fetchone()
    assert cerebras == 1
    assert release_bytes(settings) == before
    assert sorted(p.name for p in settings.exports.iterdir()) == ["2026.11.29", "latest"]
    report = json.loads((settings.warehouse / REPORT_FILE).read_text())
    assert report["release_due_at"] == outcome.release_due_at and report["success"] is True
    # nothing new before it is due: no run at all
    assert execute(settings).skipped
    # once the last release is a day old, the build publishes what the lake holds
    with connect(settings) as con:
        con.execute("UPDATE history.releases SET built_at = built_at - INTERVAL 2 DAY")
    outcome = execute(settings, force=True)
    assert outcome.success and outcome.published and outcome.release_due_at is None, outcome
    assert outcome.release != "2026.11.29"
    latest = json.loads((settings.exports / "latest" / "inference.json").read_bytes())
    speeds = [
        figure["value"]
        for model in latest["models"]
        for endpoint in model["endpoints"]
        for figure in endpoint["figures"]
        if figure["metric"] == "output_tokens_per_s"
    ]
    assert 990 in speeds

"""Retrieval times: always stored with a four-digit year, none before 1990; and a metadata record
that cannot be read skips only its snapshot, also for `snapshot add` and `fetch`."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from http_fixtures import FaultServer, ok

from pipeline.fetch import FetchOptions, fetch_sources
from pipeline.raw.snapshots import (
    META_SUFFIX,
    SnapshotError,
    SnapshotStore,
    format_utc,
    parse_utc,
    snapshot_file_name,
)
from pipeline.support.settings import Settings

WHEN = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
SOURCE = "aa-kimi-k2-6"
PAGE = (Path(__file__).parent / "fixtures" / "aa_kimi_page.html").read_text()  # parses


def test_years_are_always_four_digits():
    assert format_utc(datetime(1, 1, 1, tzinfo=UTC)) == "0001-01-01T00:00:00Z"
    assert format_utc(datetime(999, 12, 31, 23, 59, 59, tzinfo=UTC)) == "0999-12-31T23:59:59Z"
    assert parse_utc(format_utc(datetime(5, 6, 7, tzinfo=UTC))) == datetime(5, 6, 7, tzinfo=UTC)
    name = snapshot_file_name(datetime(42, 1, 2, 3, 4, 5, tzinfo=UTC), "ab" * 32, "html")
    assert name == "00420102T030405Z-abababababab.html"


@pytest.mark.parametrize("text", ["0001-01-01", "0999-12-31T23:59:59Z", "1989-12-31T23:59:59Z"])
def test_snapshot_add_refuses_a_retrieval_before_1990(settings, cli, tmp_path, text):
    page = tmp_path / "page.html"
    page.write_text("<html>captured</html>")
    before = sorted(settings.raw_dir.rglob("*"))
    result = cli("snapshot", "add", SOURCE, str(page), "--retrieved-at", text)
    assert result.status == 2
    assert result.err.strip() == (
        f"speedbook snapshot: error: --retrieved-at {text!r} is before 1990-01-01: "
        "no page was captured that early (a typo?)"
    )
    assert sorted(settings.raw_dir.rglob("*")) == before


def test_the_first_day_of_1990_is_accepted_and_the_source_takes_later_snapshots(
    settings, cli, tmp_path
):
    page = tmp_path / "page.html"
    page.write_text(PAGE.replace("{speed}", "101"))
    result = cli("snapshot", "add", SOURCE, str(page), "--retrieved-at", "1990-01-01")
    assert result.status == 0, result.err
    assert f"stored {SOURCE}/19900101T000000Z-" in result.out
    page.write_text(PAGE.replace("{speed}", "102"))
    result = cli("snapshot", "add", SOURCE, str(page), "--retrieved-at", "2026-11-29")
    assert result.status == 0, result.err
    listing = cli("snapshot", "list", SOURCE)
    assert listing.status == 0, listing.err
    assert "1990-01-01T00:00:00Z" in listing.out


def test_the_store_refuses_a_retrieval_before_1990_from_any_writer(tmp_path: Path):
    store = SnapshotStore(tmp_path)
    with pytest.raises(SnapshotError, match="before 1990-01-01"):
        store.add(
            "example-page",
            b"x",
            url="https://example.org/",
            retrieved_at=datetime(1, 1, 1, tzinfo=UTC),
            content_type="text/html",
            obtained_by="manual",
            extension="html",
        )
    assert not tmp_path.exists() or not any(tmp_path.rglob("*.html"))


# --- one unreadable record skips that snapshot only ----------------------------------------------

# What the previous version wrote for --retrieved-at 0001-01-01: an unpadded year no parser reads.
UNPADDED = "10101T000000Z-aaaaaaaaaaaa.html"


def _unreadable_record(folder: Path, kind: str) -> Path:
    path = folder / (UNPADDED + META_SUFFIX)
    if kind == "unpadded year":
        record = {
            "source_id": folder.name,
            "url": "https://example.org/page",
            "retrieved_at": "1-01-01T00:00:00Z",
            "sha256": "a" * 64,
            "size": 1,
            "content_type": "text/html",
            "obtained_by": "manual",
            "file": UNPADDED,
            "note": "",
            "http": {},
        }
        path.write_text(json.dumps(record))
    else:
        path.write_text("{not json")
    return path


@pytest.mark.parametrize("kind", ["unpadded year", "not json"])
def test_snapshot_add_skips_an_unreadable_record_with_a_warning(settings, cli, tmp_path, kind):
    bad = _unreadable_record(settings.raw_dir / SOURCE, kind)
    page = tmp_path / "page.html"
    page.write_text(PAGE.replace("{speed}", "103"))
    result = cli("snapshot", "add", SOURCE, str(page), "--retrieved-at", "2026-11-29T08:00:00Z")
    assert result.status == 0, result.err
    assert f"stored {SOURCE}/20261129T080000Z-" in result.out
    assert result.err.startswith(f"warning: snapshot skipped: {bad}: ")
    newest = SnapshotStore(settings.raw_dir).list(SOURCE, errors=[])[-1]
    assert newest.retrieved_at == "2026-11-29T08:00:00Z" and newest.obtained_by == "manual"
    assert bad.read_text()  # the bad record is left for a maintainer to look at


def test_fetch_skips_an_unreadable_record_and_stores_the_new_bytes(tmp_path, monkeypatch):
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    body = b'{"success": true, "result": []}'
    with FaultServer() as server:
        path = server.route("/catalogue", ok(body))
        registry = tmp_path / "sources.toml"
        registry.write_text(
            '[[source]]\nid = "catalogue"\nkind = "platform_doc"\npublisher = "Test"\n'
            f'url = "{server.url(path)}"\ntier = "T1"\nformat = "cloudflare_models"\n'
            'cadence = "daily"\n'
        )
        settings = Settings.resolve(registry, tmp_path / "warehouse", tmp_path / "exports")
        store = SnapshotStore(settings.raw_dir)
        store.add(
            "catalogue",
            b'{"old": true}',
            url="https://example.org/",
            retrieved_at=WHEN,
            content_type="application/json",
            obtained_by="manual",
            extension="json",
        )
        _unreadable_record(settings.raw_dir / "catalogue", "unpadded year")
        report = fetch_sources(settings, options=FetchOptions(max_attempts=1, trust_env=False))
    (record,) = report.records
    assert record.outcome == "new", record.label
    newest = store.list("catalogue", errors=[])[-1]
    assert store.read(newest) == body


def test_a_new_record_never_replaces_an_unreadable_one_of_the_same_name(tmp_path: Path):
    store = SnapshotStore(tmp_path)
    data = b"<html>x</html>"
    name = snapshot_file_name(WHEN, hashlib.sha256(data).hexdigest(), "html")
    folder = tmp_path / "example-page"
    folder.mkdir()
    (folder / (name + META_SUFFIX)).write_text("{damaged")
    with pytest.raises(SnapshotError, match="exists but cannot be read"):
        store.add(
            "example-page",
            data,
            url="https://example.org/",
            retrieved_at=WHEN,
            content_type="text/html",
            obtained_by="manual",
            extension="html",
        )
    assert (folder / (name + META_SUFFIX)).read_text() == "{damaged"

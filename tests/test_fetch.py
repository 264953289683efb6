"""Live fetching against a real, misbehaving HTTP server on 127.0.0.1 (never the internet).

Every fault test checks the outcome AND that nothing was lost: earlier snapshots unchanged, no
partial files, and a healthy source fetched in the same run still succeeds.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
import time
import tracemalloc
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from http_fixtures import (
    FaultServer,
    conditional,
    drip,
    gzip_bomb,
    gzipped,
    hang,
    ok,
    redirect,
    reset,
    slow,
    status,
    truncated,
    unsized,
)

from pipeline.fetch import USER_AGENT, FetchError, FetchOptions, FetchReport, fetch_sources
from pipeline.fetch.policy import (
    backoff_delay,
    media_type,
    parse_retry_after,
    redirect_refusal,
    shown,
)
from pipeline.raw import outcomes, snapshots
from pipeline.raw.outcomes import (
    OLD_LOG_NAME,
    latest_outcomes,
    log_path,
    old_log_path,
    read_outcomes,
    record_outcome,
)
from pipeline.raw.snapshots import SnapshotMeta, SnapshotStore
from pipeline.support.settings import Settings
from pipeline.support.sizes import format_size

# Small timeouts and delays keep the whole file fast; the defaults are for the real web.
FAST = FetchOptions(
    connect_timeout=1.0,
    read_timeout=0.3,
    total_timeout=5.0,
    backoff_base=0.01,
    backoff_max=0.05,
    retry_after_max=2.0,
    trust_env=False,
)
OLD = datetime(2026, 1, 1, tzinfo=UTC)
CATALOGUE = b'{"success": true, "result": [{"name": "@cf/meta/llama-3.1-8b-instruct"}]}'
PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


@dataclass
class World:
    """A tmp registry whose sources point at the fault server, and a tmp warehouse."""

    tmp: Path
    server: FaultServer
    monkeypatch: pytest.MonkeyPatch
    entries: list[str] = field(default_factory=list)

    def source(
        self, source_id: str, *responders, fmt: str = "cloudflare_models", host=None, url=None
    ):
        path = self.server.route(f"/{source_id}", *responders)
        url = url or self.server.url(path, host or "127.0.0.1")
        self.entries.append(
            f'[[source]]\nid = "{source_id}"\nkind = "platform_doc"\npublisher = "Test"\n'
            f'url = "{url}"\ntier = "T1"\nformat = "{fmt}"\ncadence = "daily"\n'
        )
        return path

    @property
    def settings(self) -> Settings:
        registry = self.tmp / "sources.toml"
        registry.write_text("\n".join(self.entries), encoding="utf-8")
        self.monkeypatch.setenv("SPEEDBOOK_REGISTRY", str(registry))
        self.monkeypatch.setenv("SPEEDBOOK_WAREHOUSE", str(self.tmp / "warehouse"))
        self.monkeypatch.setenv("SPEEDBOOK_EXPORTS", str(self.tmp / "exports"))
        return Settings.resolve()

    @property
    def store(self) -> SnapshotStore:
        return SnapshotStore(self.tmp / "warehouse" / "raw")

    def seed(self, source_id: str, data: bytes = b'{"old": true}') -> SnapshotMeta:
        return self.store.add(
            source_id,
            data,
            url="https://example.org/captured-by-hand",
            retrieved_at=OLD,
            content_type="application/json",
            obtained_by="manual",
            extension="json",
        ).meta

    def fetch(self, *source_ids: str, strict: bool = False, **overrides) -> FetchReport:
        options = replace(FAST, **overrides)
        return fetch_sources(self.settings, source_ids or None, strict=strict, options=options)

    def files(self) -> dict[str, bytes]:
        """Every file of the snapshot store but its listing cache (the outcome logs are kept
        beside the store, so a fetch that stores nothing leaves these as they were)."""
        raw = self.tmp / "warehouse" / "raw"
        return {
            str(p.relative_to(raw)): p.read_bytes()
            for p in sorted(raw.rglob("*"))
            if p.is_file() and p.name != ".snapshot-index.json"
        }


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    for name in PROXY_VARS:  # 127.0.0.1 must never go through a proxy
        monkeypatch.delenv(name, raising=False)
    with FaultServer() as server:
        yield World(tmp_path, server, monkeypatch)


def run_fault(world: World, *responders, url=None, **overrides):
    """Fetch a seeded source served by ``responders`` next to a healthy one; check that nothing
    was lost and that the healthy source was stored. Returns the faulty source's record."""
    world.source("faulty", *responders, url=url)
    world.source("healthy", ok(CATALOGUE))
    settings = world.settings
    kept = world.seed("faulty")
    before = world.files()
    report = world.fetch(**overrides)
    after = world.files()
    assert {name: after[name] for name in before} == before, "an earlier file changed"
    assert not [name for name in after if "/.tmp-" in name or name.startswith(".tmp-")]
    assert report.get("healthy").outcome == "new"
    assert world.store.read(world.store.latest("healthy")) == CATALOGUE
    record = report.get("faulty")
    if record.failed:
        stored = world.store.latest("healthy").file
        assert set(after) - set(before) == {f"healthy/{stored}", f"healthy/{stored}.meta.json"}
        assert world.store.latest("faulty") == kept, "a failed source lost its last good snapshot"
    assert latest_outcomes(settings.raw_dir)["faulty"] == record
    return record


# --- the happy path -------------------------------------------------------------------------------


def test_fetch_stores_a_new_snapshot_that_latest_returns(world):
    world.source("catalogue", ok(CATALOGUE, "application/json; charset=utf-8", {"ETag": '"v1"'}))
    world.seed("catalogue")
    report = world.fetch()
    record = report.get("catalogue")
    assert record.outcome == "new" and report.ok
    latest = world.store.latest("catalogue")
    assert latest.obtained_by == "fetched"
    assert latest.file == record.snapshot and record.detail == f"stored {latest.file}"
    assert latest.url == world.server.url("/catalogue")
    assert latest.content_type == "application/json; charset=utf-8"
    assert latest.http == {"etag": '"v1"'}
    assert world.store.read(latest) == CATALOGUE
    assert (record.http_status, record.bytes, record.attempts) == (200, len(CATALOGUE), 1)
    headers = world.server.requests("/catalogue")[0].headers
    assert headers["user-agent"] == USER_AGENT and USER_AGENT.startswith("Speedbook/")
    assert "application/json" in headers["accept"]
    assert "if-none-match" not in headers  # the newest snapshot (manual) has no validators


def test_identical_bytes_on_a_second_200_are_unchanged(world):
    world.source("catalogue", ok(CATALOGUE))
    first = world.fetch().get("catalogue")
    before = world.files()
    second = world.fetch().get("catalogue")
    assert (first.outcome, second.outcome) == ("new", "unchanged")
    assert second.snapshot == first.snapshot and first.snapshot in second.detail
    assert world.files() == before
    assert [r.outcome for r in read_outcomes(world.settings.raw_dir, "catalogue")] == [
        "new",
        "unchanged",
    ]


def test_304_with_etag_is_not_modified_and_stores_nothing(world):
    world.source("catalogue", conditional(CATALOGUE, '"abc"'))
    first = world.fetch().get("catalogue")
    assert first.outcome == "new"
    assert world.store.latest("catalogue").http["etag"] == '"abc"'
    before = world.files()
    second = world.fetch().get("catalogue")
    assert second.outcome == "not_modified" and second.http_status == 304
    assert second.snapshot == first.snapshot
    assert world.server.requests("/catalogue")[1].headers["if-none-match"] == '"abc"'
    assert world.files() == before
    assert world.store.latest("catalogue").file == first.snapshot


def test_last_modified_is_sent_back_as_if_modified_since(world):
    stamp = "Wed, 25 Nov 2026 10:00:00 GMT"
    world.source("catalogue", ok(CATALOGUE, headers={"Last-Modified": stamp}), status(304))
    assert world.fetch().get("catalogue").outcome == "new"
    assert world.store.latest("catalogue").http == {"last-modified": stamp}
    second = world.fetch().get("catalogue")
    assert second.outcome == "not_modified" and "If-Modified-Since" in second.detail
    assert world.server.requests("/catalogue")[1].headers["if-modified-since"] == stamp


def test_a_304_to_an_unconditional_request_fails(world):
    record = run_fault(world, status(304))
    assert record.label == "failed: HTTP 304 to an unconditional request"


def test_gzip_body_is_stored_decoded(world):
    world.source("catalogue", gzipped(gzip.compress(CATALOGUE)))
    assert world.fetch().get("catalogue").outcome == "new"
    assert world.store.read(world.store.latest("catalogue")) == CATALOGUE


# --- retries -----------------------------------------------------------------------------------


def test_429_with_retry_after_is_honoured_then_new(world):
    record = run_fault(world, status(429, {"Retry-After": "1"}), ok(b'{"fresh": 1}'))
    assert record.outcome == "new" and record.attempts == 2
    first, second = world.server.requests("/faulty")
    assert second.at - first.at >= 0.95, "the Retry-After wait was not honoured"


def test_retry_after_is_capped(world):
    record = run_fault(
        world, status(503, {"Retry-After": "3600"}), ok(b'{"fresh": 1}'), retry_after_max=0.1
    )
    assert record.outcome == "new"
    first, second = world.server.requests("/faulty")
    assert 0.09 <= second.at - first.at < 1.0


def test_500_then_200_is_new_after_a_retry(world):
    record = run_fault(world, status(500), ok(b'{"fresh": 1}'))
    assert record.outcome == "new" and record.attempts == 2


def test_500_forever_fails_after_the_attempt_limit(world):
    record = run_fault(world, status(500))
    assert record.label == "failed: HTTP 500 after 4 attempts"
    assert record.http_status == 500 and record.attempts == 4
    assert len(world.server.requests("/faulty")) == 4


def test_404_is_not_retried(world):
    record = run_fault(world, status(404))
    assert record.label == "failed: HTTP 404"
    assert len(world.server.requests("/faulty")) == 1


def test_a_server_that_never_answers_times_out(world):
    record = run_fault(world, hang(), max_attempts=2)
    assert record.label == "failed: timeout after 2 attempts"
    assert len(world.server.requests("/faulty")) == 2


def test_a_slow_drip_is_stopped_by_the_total_timeout(world):
    record = run_fault(world, drip(2.0), read_timeout=0.3, total_timeout=0.4, max_attempts=1)
    assert record.label == "failed: timeout (no complete response within 0.4 s)"


def test_a_snapshot_that_cannot_be_stored_fails_that_source_only(world, monkeypatch):
    world.source("faulty", ok(b'{"fresh": 1}'))
    world.source("healthy", ok(CATALOGUE))
    world.settings  # noqa: B018 - writes the registry
    kept = world.seed("faulty")
    real_write = snapshots._atomic_write

    def disk_full(path, *args, **kwargs):  # the faulty source's folder is on a full disk
        if path.parent.name == "faulty":
            raise OSError(28, "No space left on device")
        return real_write(path, *args, **kwargs)

    monkeypatch.setattr(snapshots, "_atomic_write", disk_full)
    report = world.fetch()
    assert report.get("faulty").label == (
        "failed: cannot store snapshot ([Errno 28] No space left on device)"
    )
    assert report.get("healthy").outcome == "new"
    assert world.store.list("faulty", errors=[]) == [kept]


def test_a_connection_reset_fails(world):
    record = run_fault(world, reset(), max_attempts=2)
    assert record.label == "failed: connection reset after 2 attempts"


def test_a_refused_connection_fails(world):
    with socket.socket() as probe:  # a port nobody listens on once the probe is closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    record = run_fault(world, url=f"http://127.0.0.1:{port}/x", max_attempts=2)
    assert record.label == "failed: connection refused after 2 attempts"


def test_a_truncated_body_fails_and_stores_nothing(world):
    record = run_fault(world, truncated(b'{"half": ', declared=1000), max_attempts=1)
    assert record.label == "failed: truncated body"


def test_a_truncated_gzip_stream_fails(world):
    compressed = gzip.compress(CATALOGUE * 50)
    record = run_fault(world, gzipped(compressed[: len(compressed) // 2]), max_attempts=1)
    assert record.label == "failed: truncated body"


# --- limits and checks --------------------------------------------------------------------------


def test_a_gzip_bomb_is_stopped_at_the_cap_without_inflating_it(world):
    bomb = gzip_bomb(100 << 20)  # 100 MiB of zeros in about 100 kB
    assert len(bomb) < 1 << 20
    tracemalloc.start()
    try:
        record = run_fault(world, gzipped(bomb), max_bytes=1_000_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert record.label == "failed: body exceeds 1 MB"
    assert peak < 16 << 20, f"fetching the bomb peaked at {peak / 1e6:.0f} MB"


def test_a_declared_length_over_the_cap_fails_before_reading(world):
    record = run_fault(world, ok(b"x" * 2000), max_bytes=1000)
    assert record.label == "failed: body exceeds 1 kB"


def test_an_undeclared_body_over_the_cap_fails_while_streaming(world):
    record = run_fault(world, unsized(b"[" + b"1," * 3000 + b"1]"), max_bytes=1000)
    assert record.label == "failed: body exceeds 1 kB"


def test_an_unsupported_content_encoding_fails(world):
    record = run_fault(world, ok(b"\x1b\x00", headers={"Content-Encoding": "br"}))
    assert record.label == "failed: unsupported content encoding br"


def test_a_wrong_content_type_fails(world):
    record = run_fault(world, ok(b"<html>login</html>", "text/html; charset=utf-8"))
    assert record.label == "failed: content type text/html not expected for cloudflare_models"


def test_a_redirect_to_another_host_is_refused(world):
    record = run_fault(world, redirect("http://evil.example/models"))
    assert record.label == "failed: redirect to other host evil.example"
    assert len(world.server.requests("/faulty")) == 1


def test_a_redirect_to_a_non_http_scheme_is_refused(world):
    record = run_fault(world, redirect("ftp://127.0.0.1/models"))
    assert record.label == "failed: redirect to non-http(s) URL scheme ftp"


def test_a_redirect_on_the_same_host_is_followed(world):
    world.server.route("/moved/here", ok(b'{"moved": true}'))
    record = run_fault(world, redirect("/moved/here", 301))
    assert record.outcome == "new"
    latest = world.store.latest("faulty")
    assert world.store.read(latest) == b'{"moved": true}'
    assert latest.url == world.server.url("/faulty")
    assert latest.http["final-url"] == world.server.url("/moved/here")


def test_a_redirect_loop_is_bounded(world):
    record = run_fault(world, redirect("/faulty"), max_redirects=3)
    assert record.label == "failed: more than 3 redirects"
    assert len(world.server.requests("/faulty")) == 4


def test_at_most_two_requests_per_host_at_a_time(world):
    ids = [f"slow-{n}" for n in range(6)]
    for n, source_id in enumerate(ids):
        world.source(source_id, slow(0.15, b'{"n": %d}' % n), host="127.0.0.1")
        world.source(f"{source_id}-b", slow(0.15, b'{"n": %d}' % n), host="localhost")
    report = world.fetch()
    assert report.ok, report.failed
    assert world.server.peak["127.0.0.1"] == 2
    assert world.server.peak["localhost"] == 2
    assert world.server.peak_total > 2, "hosts should be fetched in parallel"


def test_overall_concurrency_is_bounded(world):
    for n in range(4):
        world.source(f"slow-{n}", slow(0.1, b"{}"), host="127.0.0.1")
        world.source(f"slow-{n}-b", slow(0.1, b"{}"), host="localhost")
    assert world.fetch(concurrency=3).ok
    assert world.server.peak_total == 3


# --- strict mode ---------------------------------------------------------------------------------


def test_strict_skips_the_rest_after_the_first_failure(world, monkeypatch):
    world.source("first", status(404))
    world.source("second", ok(CATALOGUE))
    world.source("third", ok(CATALOGUE))
    listing = SnapshotStore.list

    def slow_for_first(store: SnapshotStore, source_id: str | None = None, **kwargs):
        if source_id == "first":  # its listing used to finish last and let "second" go first
            time.sleep(0.3)
        return listing(store, source_id, **kwargs)

    monkeypatch.setattr(SnapshotStore, "list", slow_for_first)
    report = world.fetch(strict=True, concurrency=1)
    assert [r.label for r in report.records] == [
        "failed: HTTP 404",
        "failed: skipped (--strict)",
        "failed: skipped (--strict)",
    ]
    assert not world.server.requests("/second") and not world.server.requests("/third")
    assert latest_outcomes(world.settings.raw_dir)["third"].label == "failed: skipped (--strict)"
    keep_going = world.fetch(concurrency=1)
    assert [r.outcome for r in keep_going.records] == ["failed", "new", "new"]


def test_unknown_source_ids_are_refused_before_any_request(world):
    world.source("catalogue", ok(CATALOGUE))
    with pytest.raises(FetchError, match="unknown source id"):
        world.fetch("catalogue", "nope")
    assert not world.server.requests("/catalogue")


# --- the command line ----------------------------------------------------------------------------


def test_cli_fetch_prints_a_table_and_exits_0(world, cli):
    world.source("catalogue", ok(CATALOGUE))
    world.source("docs", ok(b"<html>docs</html>", "text/html"), fmt="platform_doc")
    settings = world.settings
    result = cli("fetch", "--keep-going")
    assert result.status == 0, result.out + result.err
    lines = result.out.splitlines()
    assert lines[0].split() == ["source", "outcome", "detail"]
    assert any(line.split()[:2] == ["catalogue", "new"] for line in lines)
    assert "2 sources in" in result.out and "2 new" in result.out
    latest = SnapshotStore(settings.raw_dir).latest("catalogue")
    assert latest.obtained_by == "fetched"
    assert SnapshotStore(settings.raw_dir).read(latest) == CATALOGUE
    again = cli("fetch", "catalogue")
    assert again.status == 0 and "unchanged" in again.out and "1 source in" in again.out


def test_cli_fetch_exits_1_when_a_source_failed(world, cli):
    world.source("catalogue", ok(CATALOGUE))
    world.source("broken", status(404))
    world.settings  # noqa: B018 - writes the registry
    result = cli("fetch")
    assert result.status == 1
    assert any(
        line.split()[:4] == ["broken", "failed", "HTTP", "404"] for line in result.out.splitlines()
    )
    assert "1 new, 1 failed" in result.out


def test_cli_fetch_strict_and_bad_arguments(world, cli):
    world.source("broken", status(404))
    world.source("catalogue", ok(CATALOGUE))
    world.settings  # noqa: B018 - writes the registry
    conflict = cli("fetch", "--strict", "--keep-going")
    assert conflict.status == 2 and "not allowed with" in conflict.err
    unknown = cli("fetch", "nope")
    assert unknown.status == 2
    assert unknown.err.strip() == (
        "speedbook fetch: error: unknown source id 'nope'; see `speedbook sources`"
    )
    assert not world.server.requests("/broken")


def test_sources_shows_the_last_fetch_outcome(world, cli):
    world.source("catalogue", ok(CATALOGUE))
    world.source("broken", status(500))
    world.source("never", ok(CATALOGUE))
    world.fetch("catalogue", "broken", max_attempts=2)
    table = cli("sources")
    assert table.status == 0
    header = table.out.splitlines()[0].split()
    assert header[-1] == "last_fetch"
    rows = {line.split()[0]: line for line in table.out.splitlines()[2:] if line.strip()}
    assert rows["catalogue"].split()[-2] == "new"
    assert rows["broken"].split()[-2] == "failed"
    assert rows["never"].split()[-1] == "-"
    assert "last fetch failed: HTTP 500 after 2 attempts (broken, " in table.out
    listing = {row["id"]: row for row in json.loads(cli("sources", "--json").out)}
    assert listing["catalogue"]["last_outcome"] == "new"
    assert listing["broken"]["last_outcome"] == "failed: HTTP 500 after 2 attempts"
    assert listing["broken"]["last_outcome_at"].endswith("Z")
    assert listing["never"]["last_outcome"] is None and listing["never"]["last_outcome_at"] is None


# --- the outcome log -----------------------------------------------------------------------------


def test_outcome_log_is_append_only_and_tolerates_a_torn_line(tmp_path):
    raw = tmp_path / "raw"
    record_outcome(raw, "alpha", "new", "stored a.json", snapshot="a.json", size=3)
    second = record_outcome(raw, "alpha", "failed", "timeout", attempts=4)
    log = log_path(raw, "alpha")
    assert log == tmp_path / "state" / "fetch" / "alpha.jsonl"  # beside the store, not in it
    assert not raw.exists()
    assert len(log.read_text().splitlines()) == 2
    with log.open("ab") as handle:  # a writer killed mid-line
        handle.write(b'{"source_id": "alpha", "outcome": "ne')
    assert latest_outcomes(raw) == {"alpha": second}
    third = record_outcome(raw, "alpha", "unchanged", "same bytes as a.json")
    assert [r.outcome for r in read_outcomes(raw, "alpha")] == ["new", "failed", "unchanged"]
    assert latest_outcomes(raw)["alpha"] == third
    assert third.label == "unchanged" and second.label == "failed: timeout"
    assert json.loads(log.read_text().splitlines()[-1])["source_id"] == "alpha"


@pytest.mark.parametrize("at", ["0001-01-01T00:00:00+05:00", 20261129, None, "yesterday"], ids=repr)
def test_a_hand_edited_outcome_line_is_skipped_not_fatal(tmp_path, at):
    raw = tmp_path / "raw"
    first = record_outcome(raw, "alpha", "new", "stored a.json", snapshot="a.json")
    bad = {"source_id": "alpha", "outcome": "failed", "detail": "x", "at": at}
    with log_path(raw, "alpha").open("a") as handle:
        handle.write(json.dumps(bad) + "\n")
    assert read_outcomes(raw, "alpha") == [first]
    assert latest_outcomes(raw) == {"alpha": first}


def test_record_outcome_refuses_bad_input(tmp_path):
    raw = tmp_path / "raw"
    with pytest.raises(ValueError, match="outcome must be one of"):
        record_outcome(raw, "alpha", "maybe")
    with pytest.raises(ValueError, match="not a source id"):
        record_outcome(raw, "../escape", "new")
    with pytest.raises(ValueError, match="not a source id"):
        record_outcome(raw, "alpha\n", "new")  # `$` in re.match allowed a final newline
    assert not any(tmp_path.iterdir())


def _old_log(raw: Path, source_id: str, *details: str) -> list[str]:
    """A log where an older version kept it, in the store's source folder; its lines."""
    lines = [
        json.dumps(
            {
                "source_id": source_id,
                "outcome": "failed",
                "detail": d,
                "at": f"2026-0{n}-01T00:00:00Z",
            }
        )
        for n, d in enumerate(details, start=1)
    ]
    path = old_log_path(raw, source_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines))
    return lines


def test_a_log_left_in_the_store_is_adopted_once_and_nothing_is_lost(tmp_path):
    """Logs were kept in the store (raw/<source>/_outcomes.jsonl): the first read or write of a
    source's log moves its lines into state/fetch, oldest first, none twice, and removes it."""
    raw = tmp_path / "raw"
    old = _old_log(raw, "alpha", "HTTP 500", "timeout")
    assert [r.detail for r in read_outcomes(raw, "alpha")] == ["HTTP 500", "timeout"]
    assert not old_log_path(raw, "alpha").exists()
    assert log_path(raw, "alpha").read_text().splitlines() == old
    record_outcome(raw, "alpha", "new", "stored a.json")
    assert [r.detail for r in read_outcomes(raw, "alpha")] == [
        "HTTP 500",
        "timeout",
        "stored a.json",
    ]

    # an adoption cut short after the rename (the old file still there) runs again: no line twice
    _old_log(raw, "beta", "HTTP 500", "timeout")
    outcomes.adopt_old_log(raw, "beta")
    _old_log(raw, "beta", "HTTP 500", "timeout")
    record_outcome(raw, "beta", "unchanged", "same bytes")  # a write adopts too
    assert [r.detail for r in read_outcomes(raw, "beta")] == ["HTTP 500", "timeout", "same bytes"]
    assert not old_log_path(raw, "beta").exists()

    # a source whose only log is still at the old place is listed
    _old_log(raw, "gamma", "HTTP 404")
    assert latest_outcomes(raw)["gamma"].detail == "HTTP 404"
    assert sorted(latest_outcomes(raw)) == ["alpha", "beta", "gamma"]


def test_a_log_left_in_a_store_that_cannot_be_written_is_still_read(tmp_path, monkeypatch):
    raw = tmp_path / "raw"
    record_outcome(raw, "alpha", "new", "stored a.json")
    _old_log(raw, "alpha", "HTTP 500")

    def cannot(*args: object) -> bool:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(outcomes, "adopt_old_log", cannot)
    assert [r.detail for r in read_outcomes(raw, "alpha")] == ["HTTP 500", "stored a.json"]
    assert old_log_path(raw, "alpha").exists()


def test_a_fetch_leaves_nothing_in_the_store_but_snapshots(world):
    """Every fetch left an untracked _outcomes.jsonl in the committed corpus."""
    world.source("catalogue", ok(CATALOGUE))
    settings = world.settings
    old = _old_log(settings.raw_dir, "catalogue", "HTTP 503")
    report = world.fetch()
    assert report.get("catalogue").outcome == "new"
    raw = settings.raw_dir
    assert not [p for p in raw.rglob("*") if p.name == OLD_LOG_NAME]
    assert all(p.name.endswith((".meta.json", ".json")) for p in raw.rglob("*") if p.is_file())
    log = settings.warehouse / "state" / "fetch" / "catalogue.jsonl"
    assert log.read_text().splitlines()[:1] == old and len(log.read_text().splitlines()) == 2


def test_the_client_lists_stored_snapshots_off_the_event_loop(world, monkeypatch):
    """Listing reads every metadata record and may rewrite the index: never on the loop."""
    on_loop: list[str | None] = []
    original = SnapshotStore.list

    def spy(self, source_id=None, **kwargs):
        try:
            asyncio.get_running_loop()
            on_loop.append(source_id)
        except RuntimeError:  # no loop in this thread: a worker thread, or outside the fetch
            pass
        return original(self, source_id, **kwargs)

    monkeypatch.setattr(SnapshotStore, "list", spy)
    world.source("catalogue", ok(CATALOGUE))
    world.seed("catalogue")
    assert world.fetch().get("catalogue").outcome == "new"
    assert on_loop == []


def test_the_client_writes_its_outcomes_through_record_outcome(world, monkeypatch):
    """One writer of outcome lines: the client's records are record_outcome's."""
    from pipeline.fetch import client

    written = []
    original = client.record_outcome

    def spy(*args, **kwargs):
        written.append(original(*args, **kwargs))
        return written[-1]

    monkeypatch.setattr(client, "record_outcome", spy)
    world.source("catalogue", ok(CATALOGUE))
    world.source("missing", status(404))
    report = world.fetch()
    assert sorted(r.source_id for r in written) == ["catalogue", "missing"]
    assert {r.source_id: r for r in written} == {r.source_id: r for r in report.records}
    assert read_outcomes(world.settings.raw_dir, "catalogue") == [report.get("catalogue")]


def test_an_outcome_that_cannot_be_logged_is_still_reported(world):
    """The log is a folder where the file should be: the append fails with an OSError, the
    snapshot is still stored and the report says the log missed the outcome."""
    world.source("catalogue", ok(CATALOGUE))
    world.source("healthy", ok(CATALOGUE))
    world.settings  # noqa: B018 - writes the registry
    log_path(world.settings.raw_dir, "catalogue").mkdir(parents=True)
    report = world.fetch()
    record = report.get("catalogue")
    assert record.outcome == "new"
    assert record.detail.startswith("stored ") and "(not logged: " in record.detail
    assert world.store.read(world.store.latest("catalogue")) == CATALOGUE
    assert report.get("healthy").outcome == "new"
    assert read_outcomes(world.settings.raw_dir, "healthy") == [report.get("healthy")]


def test_outcome_log_does_not_disturb_the_snapshot_store(tmp_path):
    store = SnapshotStore(tmp_path / "raw")
    store.add(
        "alpha",
        b"x",
        url="https://example.org/",
        retrieved_at=OLD,
        content_type="text/plain",
        obtained_by="manual",
        extension="txt",
    )
    record_outcome(tmp_path / "raw", "alpha", "failed", "HTTP 500")
    assert len(store.list("alpha")) == 1 and len(store.list()) == 1


# --- policy, without a server ------------------------------------------------------------------


def test_retry_after_parsing():
    now = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after("7", now) == 7.0
    assert parse_retry_after("Sun, 29 Nov 2026 12:00:30 GMT", now) == 30.0
    assert parse_retry_after("Sun, 29 Nov 2026 11:00:00 GMT", now) == 0.0
    assert parse_retry_after("soon", now) is None
    assert parse_retry_after(None, now) is None


def test_backoff_grows_with_jitter_and_is_capped():
    options = FetchOptions(backoff_base=1.0, backoff_max=5.0)
    for retry, ceiling in ((1, 1.0), (2, 2.0), (3, 4.0), (4, 5.0), (9, 5.0)):
        delay = backoff_delay(retry, options)
        assert ceiling / 2 <= delay <= ceiling


def test_small_policy_helpers():
    assert media_type("Application/JSON; charset=utf-8") == "application/json"
    assert media_type(None) == ""
    assert format_size(25_000_000) == "25 MB" and format_size(1500) == "1.5 kB"
    assert format_size(12) == "12 bytes"
    assert redirect_refusal("https://a.example/x", "https://A.example:8443/y", "a.example") is None
    assert redirect_refusal("https://a.example/x", "http://a.example/y", "a.example") == (
        "redirect from https down to http"
    )
    assert shown("text/html\x1b[31m\n") == "text/html?[31m?"
    with pytest.raises(ValueError, match="max_attempts"):
        FetchOptions(max_attempts=0)


def test_an_outcome_logged_beside_the_store_changes_the_build_fingerprint(tmp_path):
    """A fetch that stores nothing still confirms snapshots and adds a core.fetch_outcomes row:
    the build must not skip it as nothing new now that the log is outside the store."""
    from pipeline.dagster.fingerprint import build_fingerprint

    settings = Settings.resolve(warehouse=tmp_path / "warehouse", exports=tmp_path / "exports")
    settings.raw_dir.mkdir(parents=True)
    before = build_fingerprint(settings, None)
    record_outcome(settings.raw_dir, "openrouter", "unchanged", "same bytes as x.json")
    assert build_fingerprint(settings, None) != before
    again = build_fingerprint(settings, None)
    record_outcome(settings.raw_dir, "openrouter", "not_modified", "HTTP 304")
    assert build_fingerprint(settings, None) != again

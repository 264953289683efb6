"""A slow drip cannot hold a source, nor the warehouse: each attempt has a wall-clock deadline over
the whole response, a source's attempts together have one too, and `build --live` fetches before
it takes the warehouse lock. Real servers on 127.0.0.1 that drip."""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

import pytest
from http_fixtures import FaultServer, Handler, ok, slow_body

from pipeline.fetch import DEFAULT_OPTIONS, FetchOptions, fetch_sources
from pipeline.raw.snapshots import SnapshotStore
from pipeline.support.locking import warehouse_lock
from pipeline.support.settings import Settings

CATALOGUE = b'{"success": true, "result": [{"name": "@cf/meta/llama-3.1-8b-instruct"}]}'
PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


def _entry(source_id: str, url: str) -> str:
    return (
        f'[[source]]\nid = "{source_id}"\nkind = "platform_doc"\npublisher = "Test"\n'
        f'url = "{url}"\ntier = "T1"\nformat = "cloudflare_models"\ncadence = "daily"\n'
    )


@pytest.fixture
def server(monkeypatch):
    for name in PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
    with FaultServer() as running:
        yield running


def _settings(tmp_path: Path, server: FaultServer, monkeypatch, **routes) -> Settings:
    registry = tmp_path / "sources.toml"
    entries = []
    for source_id, responder in routes.items():
        entries.append(_entry(source_id, server.url(server.route(f"/{source_id}", responder))))
    registry.write_text("\n".join(entries))
    monkeypatch.setenv("SPEEDBOOK_REGISTRY", str(registry))
    monkeypatch.setenv("SPEEDBOOK_WAREHOUSE", str(tmp_path / "warehouse"))
    monkeypatch.setenv("SPEEDBOOK_EXPORTS", str(tmp_path / "exports"))
    return Settings.resolve()


def test_the_defaults_give_an_attempt_a_minute_and_a_source_two():
    assert DEFAULT_OPTIONS.total_timeout == 60.0
    assert DEFAULT_OPTIONS.source_timeout == 120.0
    assert DEFAULT_OPTIONS.read_timeout == 30.0  # per read: a drip never trips it
    with pytest.raises(ValueError, match="source_timeout"):
        FetchOptions(source_timeout=0)


@pytest.mark.timeout(60)
def test_a_drip_is_cut_per_attempt_and_per_source(tmp_path, server, monkeypatch):
    # 200 bytes at one byte every 0.05 s: a complete response after 10 s, each read well within
    # the read timeout. Attempts may take 0.5 s, the source 1.2 s: three attempts, the third cut.
    settings = _settings(
        tmp_path,
        server,
        monkeypatch,
        drip=slow_body(b" " * 200, every=0.05),
        healthy=ok(CATALOGUE),
    )
    options = FetchOptions(
        read_timeout=0.3,
        total_timeout=0.5,
        source_timeout=1.2,
        max_attempts=4,
        backoff_base=0.01,
        backoff_max=0.02,
        trust_env=False,
    )
    started = time.monotonic()
    report = fetch_sources(settings, options=options)
    elapsed = time.monotonic() - started
    record = report.get("drip")
    assert record.label == (
        "failed: timeout (no complete response within 0.5 s) after 3 attempts "
        "(the source's 1.2 s were used up)"
    )
    assert record.attempts == 3 and len(server.requests("/drip")) == 3
    assert elapsed < 3.0  # 4 attempts of 0.5 s each, plus waits, before the source deadline
    assert report.get("healthy").outcome == "new"
    assert SnapshotStore(settings.raw_dir).list("drip") == []


@pytest.mark.timeout(60)
def test_a_response_within_the_deadlines_is_stored(tmp_path, server, monkeypatch):
    body = b'{"success": true, "result": []}'
    settings = _settings(tmp_path, server, monkeypatch, dripping=slow_body(body, every=0.01))
    options = FetchOptions(read_timeout=0.3, total_timeout=5.0, source_timeout=6.0, trust_env=False)
    record = fetch_sources(settings, options=options).get("dripping")
    assert record.outcome == "new", record.label
    store = SnapshotStore(settings.raw_dir)
    assert store.read(store.list("dripping")[-1]) == body


# --- build --live and the warehouse lock ---------------------------------------------------------


def _lock_is_free(path: Path) -> bool:
    handle = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(handle)


@pytest.mark.timeout(60)
def test_build_live_fetches_before_it_takes_the_warehouse_lock(tmp_path, server, monkeypatch, cli):
    seen: list[bool] = []

    def check_the_lock(handler: Handler) -> None:
        seen.append(_lock_is_free(lock_file))
        handler.send(404, b"gone", {"Content-Type": "text/plain"})

    settings = _settings(tmp_path, server, monkeypatch, slow=check_the_lock)
    lock_file = settings.lock_file
    result = cli("build", "--live", "--strict")
    assert result.status == 1
    assert "not building: a source failed to fetch (--strict)" in result.out
    assert seen and all(seen), "the warehouse was locked while the fetch ran"


@pytest.mark.timeout(60)
def test_build_live_does_not_fetch_while_another_build_runs(tmp_path, server, monkeypatch, cli):
    settings = _settings(tmp_path, server, monkeypatch, catalogue=ok(CATALOGUE))
    with warehouse_lock(settings.lock_file):
        result = cli("build", "--live")
    assert result.status == 3
    assert "another build holds" in result.err
    assert server.requests("/catalogue") == []

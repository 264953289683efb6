"""An unreachable network: `speedbook fetch` offline took 159 s and 1,286 lines of stderr to find
48 sources unreachable (four attempts each, a line per retry, a poll's hundreds of requests one by
one). Now it says once that the network looks unreachable, one line per source, and ends in
seconds, while a host that answers keeps the usual retries for everyone else.

Never the internet: ports on 127.0.0.1 where nothing listens, and names under `.invalid` whose
lookup is made to fail here (socket.getaddrinfo monkeypatched: a real resolver might be asked)."""

from __future__ import annotations

import re
import socket
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from api_world import BUNDLED, entry_fields, toml_entry
from conftest import progress_lines
from http_fixtures import FaultServer, slow

from pipeline.fetch import DEFAULT_OPTIONS, fetch_sources
from pipeline.fetch.reach import Reachability, endpoint
from pipeline.raw.outcomes import read_outcomes
from pipeline.support.settings import Settings

CATALOGUE = b'{"success": true, "result": [{"name": "@cf/meta/llama-3.1-8b-instruct"}]}'
PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
POLL = "openrouter-endpoints"
# the real retry timing (1 s, then 2 s, then 4 s between four attempts), short connects
REAL_RETRIES = replace(DEFAULT_OPTIONS, connect_timeout=1.0, trust_env=False)


def closed_port() -> int:
    """A port nobody listens on once the probe is closed."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def page(source_id: str, url: str) -> str:
    return (
        f'[[source]]\nid = "{source_id}"\nkind = "platform_doc"\npublisher = "Test"\n'
        f'url = "{url}"\ntier = "T1"\nformat = "cloudflare_models"\ncadence = "daily"\n'
    )


@pytest.fixture
def no_resolver(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every lookup of a name under .invalid fails as an offline resolver fails (EAI_AGAIN, which
    a retry might cure: the harder case); returns the names asked for."""
    asked: list[str] = []
    real = socket.getaddrinfo

    def getaddrinfo(host, *args, **kwargs):  # type: ignore[no-untyped-def]
        name = host.decode() if isinstance(host, bytes) else str(host)
        if name.endswith(".invalid"):
            asked.append(name)
            raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return asked


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Registry entries (appended by the test) and a tmp warehouse; no proxy."""
    for name in PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
    entries: list[str] = []
    yield entries


def settings_of(tmp_path: Path, entries: list[str], monkeypatch: pytest.MonkeyPatch) -> Settings:
    path = tmp_path / "sources.toml"
    path.write_text("\n".join(entries), encoding="utf-8")
    monkeypatch.setenv("SPEEDBOOK_REGISTRY", str(path))
    monkeypatch.setenv("SPEEDBOOK_WAREHOUSE", str(tmp_path / "warehouse"))
    monkeypatch.setenv("SPEEDBOOK_EXPORTS", str(tmp_path / "exports"))
    return Settings.resolve()


def poll_entry(url: str, models: int) -> str:
    """openrouter-endpoints as the bundled registry has it, polling `models` models at `url`."""
    names = [f"acme/model-{n}" for n in range(models)]
    return toml_entry(entry_fields(BUNDLED[POLL], url=url, models=names, models_from=None))


def test_offline_says_so_once_one_line_per_source_and_ends_in_seconds(
    tmp_path, registry, monkeypatch, no_resolver
):
    refused = [f"refused-{n}" for n in range(3)]
    unresolved = [f"unresolved-{n}" for n in range(3)]
    for source_id in refused:
        registry.append(page(source_id, f"http://127.0.0.1:{closed_port()}/{source_id}"))
    for source_id in unresolved:
        registry.append(page(source_id, f"http://{source_id}.speedbook.invalid/models"))
    registry.append(poll_entry(f"http://127.0.0.1:{closed_port()}/api/v1/models", 300))
    settings = settings_of(tmp_path, registry, monkeypatch)

    started = time.monotonic()
    with progress_lines() as lines:
        report = fetch_sources(settings, options=REAL_RETRIES)
    elapsed = time.monotonic() - started

    # before: 3.5 s at least for each source's four attempts, and 150 rounds of the poll
    assert elapsed < 3.0, lines
    everyone = [*refused, *unresolved, POLL]
    assert [r.source_id for r in report.records] == everyone
    assert all(r.failed for r in report.records)
    said = [line for line in lines if "fetch: the network looks unreachable" in line]
    assert len(said) == 1, lines
    assert re.search(r"none of [4-7] hosts could be reached and none answered \(", said[0])
    assert not [line for line in lines if "attempt 2 of" in line], lines
    for source_id in everyone:  # one line each, the outcome
        assert len([line for line in lines if f"fetch {source_id}:" in line]) <= 2
        assert len([line for line in lines if f"fetch {source_id}: failed" in line]) == 1
    assert len(lines) <= 2 + len(everyone) + 1  # the header, the poll's start, the verdict
    # each says why: its own failure (not retried once the verdict is in), or not requested
    not_requested = "failed: not requested: the network looks unreachable"
    for source_ids, own in ((refused, "connection refused"), (unresolved, "host name lookup")):
        for source_id in source_ids:
            label = report.get(source_id).label
            assert label.startswith(f"failed: {own}") or label == not_requested, label
            assert read_outcomes(settings.raw_dir, source_id)[-1].label == label  # logged
    assert set(no_resolver) <= {f"{s}.speedbook.invalid" for s in unresolved}
    assert len(no_resolver) <= 2 * len(unresolved)  # at most one retry before the verdict
    poll = report.get(POLL).label
    assert poll.startswith("failed: ") and "300 failed" in poll, poll
    assert "the network looks unreachable" in poll or "could not be reached" in poll


def test_a_host_that_answers_keeps_retries_for_the_others(tmp_path, registry, monkeypatch):
    """One host answering (here slowly, so it is still under way when the others fail) shows the
    network works: the unreachable sources are retried as before, and nothing is said of it."""
    with FaultServer() as server:
        path = server.route("/healthy", slow(0.3, CATALOGUE))
        registry.append(page("healthy", server.url(path, "127.0.0.1")))
        ports = [closed_port() for _ in range(4)]
        for n, port in enumerate(ports):
            registry.append(page(f"refused-{n}", f"http://127.0.0.1:{port}/x"))
        settings = settings_of(tmp_path, registry, monkeypatch)
        options = replace(REAL_RETRIES, backoff_base=0.2, backoff_max=0.4, max_attempts=3)
        with progress_lines() as lines:
            report = fetch_sources(settings, options=options)
    assert report.get("healthy").outcome == "new"
    for n in range(4):
        assert report.get(f"refused-{n}").label == "failed: connection refused after 3 attempts"
    assert not [line for line in lines if "unreachable" in line], lines


def test_a_host_that_cannot_be_reached_is_not_asked_again_in_the_run(
    tmp_path, registry, monkeypatch
):
    """A poll's 60 requests to a refused port: after the first two gave up, the other 58 are not
    made (before: each tried its own four times, two at a time)."""
    url = f"http://127.0.0.1:{closed_port()}/api/v1/models"
    registry.append(poll_entry(url, 60))
    settings = settings_of(tmp_path, registry, monkeypatch)
    options = replace(REAL_RETRIES, backoff_base=0.05, backoff_max=0.1, max_attempts=3)
    report = fetch_sources(settings, options=options)
    record = report.get(POLL)
    assert record.failed and record.attempts <= 2 * 3, record
    assert "could not be reached earlier in this run (connection refused)" in record.detail
    assert "60 models: 0 responses; 60 failed" in record.detail


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://127.0.0.1:8080/x", "127.0.0.1:8080"),
        ("https://API.example.org/v1", "api.example.org"),
        ("http://[::1]:99/", "::1:99"),
        ("http://host:notaport/", "host"),
    ],
)
def test_an_endpoint_is_the_host_and_port_a_url_connects_to(url, expected):
    assert endpoint(url) == expected


def test_the_network_looks_unreachable_only_when_nothing_answered_or_is_under_way():
    hosts = frozenset(f"h{n}" for n in range(8))
    reach = Reachability(hosts)
    for n in range(3):  # at least three, and half of the run's eight hosts
        assert reach.not_reached(f"http://h{n}/", "connection refused") is None
    reach.in_flight = 1  # an attempt that may still answer
    assert reach.not_reached("http://h3/", "host name lookup failed") is None
    reach.in_flight = 0
    said = reach.not_reached("http://h3/", "connection refused")
    assert said is not None and said.startswith("the network looks unreachable: none of 4 hosts")
    assert "h0: connection refused; h1: connection refused; h2: connection refused; 1 more" in said
    assert reach.not_reached("http://h4/", "connection refused") is None  # said once
    assert reach.blocked("http://h7/") == "the network looks unreachable"

    answered = Reachability(hosts)
    answered.reached("http://h7/")
    for n in range(7):
        assert answered.not_reached(f"http://h{n}/", "connection refused") is None
    assert answered.blocked("http://h0/") is None
    answered.give_up("http://h0/", "connection refused")
    assert answered.blocked("http://h0/x") == (
        "h0 could not be reached earlier in this run (connection refused)"
    )
    assert answered.blocked("http://h1/") is None

    few = Reachability(frozenset({"a", "b"}))  # two hosts down is not a network down
    assert few.not_reached("http://a/", "x") is None and few.not_reached("http://b/", "x") is None


def test_a_name_that_does_not_exist_is_not_retried(tmp_path, registry, monkeypatch):
    def getaddrinfo(host, *args, **kwargs):  # type: ignore[no-untyped-def]
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    registry.append(page("nowhere", "http://nowhere.speedbook.invalid/models"))
    settings = settings_of(tmp_path, registry, monkeypatch)
    record = fetch_sources(settings, options=REAL_RETRIES).get("nowhere")
    assert record.label == "failed: host name lookup failed (no such name)"
    assert record.attempts == 1

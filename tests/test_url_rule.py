"""One URL rule (pipeline.support.text.url_problem) for every URL that can reach an export: the
registry, `snapshot add`, a metadata record read from disk, a fetch's redirects, and safe_url in
the exports. A URL it refuses never gets stored, so no later release fails on it; a URL holding a
user name or password is refused everywhere and its password is never echoed."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from http_fixtures import FaultServer, ok, redirect

from pipeline.fetch import FetchOptions, fetch_sources
from pipeline.raw.snapshots import META_SUFFIX, SnapshotError, SnapshotStore
from pipeline.release.exports import sanitise
from pipeline.sources.registry import RegistryError, load_registry
from pipeline.support.settings import Settings
from pipeline.support.text import safe_url, url_problem

WHEN = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
SECRET = "s3cr3t-pw"
REFUSED = {
    'https://example.com/a"><script>': "'\"'",
    "https://example.com/a b": "whitespace",
    "https://example.com/a\tb": "whitespace",
    "https://example.com/<x>": "'<'",
    f"https://user:{SECRET}@example.com/": "a user name or password",
    "https://token@example.com/": "a user name or password",
    f"https://:{SECRET}@example.com/": "a user name or password",
    "javascript:alert(1)": "not an http(s) URL",
    "https://": "not an http(s) URL",
    "http://example.org:99999/": "port",
    "https://example.org/" + "a" * 3000: "longer than 2,048 characters",
}


@pytest.mark.parametrize(("url", "reason"), REFUSED.items())
def test_the_rule_says_why_and_safe_url_follows_it(url: str, reason: str) -> None:
    problem = url_problem(url)
    assert problem is not None and reason in problem
    assert SECRET not in problem  # a password is never echoed
    assert len(problem) < 200  # a 3,000-character URL is shortened in the message
    assert safe_url(url) is None


def test_safe_url_is_the_rule_on_the_stripped_value() -> None:
    assert url_problem("https://example.org/a?b=1#c") is None
    assert safe_url("  https://example.org/a?b=1#c  ") == "https://example.org/a?b=1#c"
    assert url_problem("  https://example.org/  ") is not None  # stored values are exact


def test_no_credential_reaches_an_export() -> None:
    document = {"url": f"https://user:{SECRET}@example.com/x", "source_url": "https://ok.example/"}
    assert sanitise(document) == {"url": None, "source_url": "https://ok.example/"}


# --- snapshot add ----------------------------------------------------------------------------


def _stored(settings: Settings) -> list[Path]:
    return sorted(p for p in settings.raw_dir.rglob("*") if p.is_file())


@pytest.mark.parametrize(("url", "reason"), REFUSED.items())
def test_snapshot_add_refuses_the_url_and_writes_nothing(settings, cli, tmp_path, url, reason):
    page = tmp_path / "page.html"
    page.write_text("<html>captured</html>")
    before = _stored(settings)
    result = cli("snapshot", "add", "aa-kimi-k2-6", str(page), "--url", url)
    assert result.status == 2
    assert result.err.startswith("speedbook snapshot: error: --url ")
    assert reason in result.err
    assert SECRET not in result.err
    assert len(result.err.strip().splitlines()) == 1
    assert _stored(settings) == before


def test_the_store_refuses_such_a_url_from_any_writer(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    with pytest.raises(SnapshotError, match=r"example-page: url .*a user name or password"):
        store.add(
            "example-page",
            b"<html>x</html>",
            url=f"https://user:{SECRET}@example.com/",
            retrieved_at=WHEN,
            content_type="text/html",
            obtained_by="manual",
            extension="html",
        )
    assert not any(tmp_path.rglob("*.html"))


# --- a metadata record read from disk ------------------------------------------------------------


@pytest.mark.parametrize(("url", "reason"), REFUSED.items())
def test_a_stored_record_with_such_a_url_is_skipped_naming_its_file(tmp_path, url, reason):
    store = SnapshotStore(tmp_path)
    good = store.add(
        "example-page",
        b"<html>good</html>",
        url="https://example.org/page",
        retrieved_at=WHEN,
        content_type="text/html",
        obtained_by="manual",
        extension="html",
    ).meta
    record = json.loads(good.to_json()) | {"url": url, "file": "20261130T000000Z-aaaaaaaaaaaa.html"}
    path = tmp_path / "example-page" / ("20261130T000000Z-aaaaaaaaaaaa.html" + META_SUFFIX)
    path.write_text(json.dumps(record))
    errors: list[str] = []
    assert store.list(errors=errors) == [good]
    (error,) = errors
    assert error.startswith(f"{path}: invalid snapshot metadata: url ")
    assert reason in error and SECRET not in error


def test_a_cache_of_records_checked_by_the_older_rule_is_not_trusted(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    good = store.add(
        "example-page",
        b"<html>good</html>",
        url="https://example.org/page",
        retrieved_at=WHEN,
        content_type="text/html",
        obtained_by="manual",
        extension="html",
    ).meta
    name = "20261130T000000Z-aaaaaaaaaaaa.html"
    record = json.loads(good.to_json()) | {"url": "https://example.com/a b", "file": name}
    (tmp_path / "example-page" / (name + META_SUFFIX)).write_text(json.dumps(record))
    # what the previous version cached: the record passed its checks then
    entries = {"example-page": {name + META_SUFFIX: record | {"bytes_file": ""}}}
    (tmp_path / ".snapshot-index.json").write_text(json.dumps({"version": 2, "entries": entries}))
    errors: list[str] = []
    assert store.list(errors=errors) == [good] and "whitespace" in errors[0]


# --- the registry --------------------------------------------------------------------------------

ENTRY = """
[[source]]
id = "example-page"
kind = "benchmark"
publisher = "Example"
url = "{url}"
tier = "T1"
format = "aa_provider_page"
cadence = "weekly"
"""


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        (f"https://user:{SECRET}@example.com/", "a user name or password"),
        ('https://example.com/a\\"><script>', "'\"'"),
        ("https://example.com/a b", "whitespace"),
    ],
)
def test_a_registry_url_breaking_the_rule_is_refused_naming_the_entry(tmp_path, url, reason):
    path = tmp_path / "sources.toml"
    path.write_text(ENTRY.format(url=url))
    with pytest.raises(RegistryError) as error:
        load_registry(path)
    message = str(error.value)
    assert message.startswith("source #1 ('example-page'): url ")
    assert reason in message and SECRET not in message


# --- a fetch's redirects -------------------------------------------------------------------------


def test_a_redirect_to_a_url_with_credentials_is_not_followed(tmp_path, monkeypatch):
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    with FaultServer() as server:
        target = server.url("/moved").replace("http://", f"http://user:{SECRET}@")
        server.route("/moved", ok(b'{"moved": true}'))
        path = server.route("/page", redirect(target))
        registry = tmp_path / "sources.toml"
        registry.write_text(
            ENTRY.format(url=server.url(path)).replace("aa_provider_page", "cloudflare_models")
        )
        settings = Settings.resolve(registry, tmp_path / "warehouse", tmp_path / "exports")
        options = FetchOptions(max_attempts=1, trust_env=False)
        report = fetch_sources(settings, options=options)
        assert server.requests("/moved") == []
    (record,) = report.records
    assert record.label.startswith("failed: redirect to a URL that ")
    assert "a user name or password" in record.label and SECRET not in record.label
    assert SnapshotStore(settings.raw_dir).list("example-page") == []

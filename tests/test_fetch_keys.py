"""API keys and the plain machine-readable sources, against real servers on 127.0.0.1.

A key comes from the environment variable its registry entry names, goes in its header only to
its own source's scheme, host and port, and is written nowhere: not in snapshots, metadata,
outcome logs or progress lines. Without a required key a source is `skipped`, which is no
failure and re-confirms nothing.
"""

from __future__ import annotations

import gzip
import json
import logging

import pytest
from api_world import (
    AA_MODELS,
    API,
    BUNDLED,
    GPT4O,
    MODELS_DEV,
    PROVIDERS,
    aa_key,
    api_world,
    model_body,
    openrouter_key,
)
from http_fixtures import FaultServer, echo_header, gzipped, keyed, ok, redirect, status

from pipeline.fetch.keys import REDACTED, Keys, key_state, origin
from pipeline.raw.inventory import take_inventory
from pipeline.raw.outcomes import read_outcomes, record_outcome
from pipeline.raw.snapshots import SnapshotStore
from pipeline.sources.registry import load_registry
from pipeline.warehouse.connection import connect

AA = "artificial-analysis-api"
AA_PATH = "/api/v2/data/llms/models"


@pytest.fixture
def api(tmp_path, monkeypatch):
    yield from api_world(tmp_path, monkeypatch)


def every_byte(api) -> bytes:
    """Everything the fetch wrote under the warehouse, logs and caches included."""
    return b"".join(
        path.read_bytes() for path in sorted((api.tmp / "warehouse").rglob("*")) if path.is_file()
    )


def test_the_registry_says_where_each_key_comes_from_and_how_it_is_sent():
    endpoints, aa = BUNDLED["openrouter-endpoints"], BUNDLED[AA]
    assert (endpoints.api_key_env, endpoints.api_key_header, endpoints.api_key_prefix) == (
        "OPENROUTER_API_KEY",
        "Authorization",
        "Bearer ",
    )
    assert endpoints.api_key_required is False  # without one, the statistics are null
    assert (aa.api_key_env, aa.api_key_header, aa.api_key_required) == (
        "ARTIFICIAL_ANALYSIS_API_KEY",
        "x-api-key",
        True,
    )
    for source_id in ("openrouter-providers", "models-dev", "openrouter"):
        assert not BUNDLED[source_id].api_key_env


def test_artificial_analysis_sends_its_key_in_x_api_key(api):
    key = aa_key()
    api.serve(AA_PATH, keyed("x-api-key", key, ok(AA_MODELS, "application/json; charset=utf-8")))
    api.add(AA)
    record = api.fetch(environ={"ARTIFICIAL_ANALYSIS_API_KEY": key}).get(AA)
    assert record.outcome == "new", record.label
    latest = api.store.latest(AA)
    assert api.store.read(latest) == AA_MODELS
    assert latest.content_type == "application/json; charset=utf-8"
    assert latest.file.endswith(".json")
    assert [hit.headers["x-api-key"] for hit in api.server.requests(AA_PATH)] == [key]
    assert key.encode() not in every_byte(api)


def test_artificial_analysis_without_a_key_is_skipped_not_failed(api, cli, monkeypatch):
    api.serve(AA_PATH, ok(AA_MODELS))
    api.add(AA)
    report = api.fetch(environ={"ARTIFICIAL_ANALYSIS_API_KEY": "  "})  # blank is not set
    record = report.get(AA)
    assert record.label == "skipped: ARTIFICIAL_ANALYSIS_API_KEY not set"
    assert (record.attempts, record.snapshot, record.http_status) == (0, None, None)
    assert report.ok and not record.failed
    assert report.summary().endswith(": 1 skipped")
    assert not api.server.requests(AA_PATH) and not api.store.list(AA)
    assert read_outcomes(api.settings.raw_dir, AA) == [record]
    # the command exits 0, and `sources` shows the outcome with its reason
    monkeypatch.delenv("ARTIFICIAL_ANALYSIS_API_KEY", raising=False)
    result = cli("fetch", AA)
    assert result.status == 0, result.out + result.err
    assert any(line.split()[:2] == [AA, "skipped"] for line in result.out.splitlines())
    listing = {row["id"]: row for row in json.loads(cli("sources", "--json").out)}
    assert listing[AA]["last_outcome"] == "skipped: ARTIFICIAL_ANALYSIS_API_KEY not set"


def test_skipped_re_confirms_nothing(api):
    """Only unchanged and not_modified re-confirm a snapshot as fresh; skipped made no
    request, so the figures keep their age."""
    from pipeline.dagster.assets.core import confirmations

    key = aa_key()
    api.serve(AA_PATH, keyed("x-api-key", key, ok(AA_MODELS)))
    api.add(AA)
    assert api.fetch(environ={"ARTIFICIAL_ANALYSIS_API_KEY": key}).get(AA).outcome == "new"
    inventory = take_inventory(api.store, load_registry(api.registry))
    again = api.fetch(environ={"ARTIFICIAL_ANALYSIS_API_KEY": key}).get(AA)
    assert again.outcome == "unchanged"
    assert confirmations({AA: again}, inventory) == {AA: again.when}
    skipped = api.fetch(environ={}).get(AA)
    assert skipped.outcome == "skipped"
    assert confirmations({AA: skipped}, inventory) == {}


def test_a_key_that_is_no_key_fails_without_a_request_and_is_not_repeated(api):
    api.serve(AA_PATH, ok(AA_MODELS))
    api.add(AA)
    record = api.fetch(environ={"ARTIFICIAL_ANALYSIS_API_KEY": "abc de\x01fgh"}).get(AA)
    assert record.label == (
        "failed: ARTIFICIAL_ANALYSIS_API_KEY is not a usable API key (under 8 characters, or "
        "it holds spaces, control or non-ASCII characters)"
    )
    assert not api.server.requests(AA_PATH)
    assert b"abc de" not in every_byte(api)


def test_each_key_goes_only_to_its_own_source(api):
    """Four sources, two keys, two hosts: each request carries its own source's key or none."""
    or_key, aa = openrouter_key(), aa_key()
    api.serve_model("deepseek/deepseek-v4-flash", ok(model_body("deepseek/deepseek-v4-flash")))
    api.add("openrouter-endpoints", models=["deepseek/deepseek-v4-flash"], models_from=None)
    api.serve("/api/v1/providers", ok(PROVIDERS))
    api.add("openrouter-providers")  # OpenRouter's host too, but no key of its own
    api.serve(AA_PATH, ok(AA_MODELS))
    api.add(AA, host="localhost")
    api.serve("/api.json", ok(MODELS_DEV))
    api.add("models-dev", host="localhost")
    report = api.fetch(environ={"OPENROUTER_API_KEY": or_key, "ARTIFICIAL_ANALYSIS_API_KEY": aa})
    assert [r.outcome for r in report.records] == ["new"] * 4, report.records
    sent = {
        path: [(h.headers.get("authorization"), h.headers.get("x-api-key")) for h in hits]
        for path, hits in api.server.hits.items()
    }
    assert sent == {
        f"{API}/deepseek/deepseek-v4-flash/endpoints": [(f"Bearer {or_key}", None)],
        "/api/v1/providers": [(None, None)],
        AA_PATH: [(None, aa)],
        "/api.json": [(None, None)],
    }
    written = every_byte(api)
    assert or_key.encode() not in written and aa.encode() not in written


def test_a_redirect_to_another_host_is_refused_before_the_key_could_go_there(api):
    key = aa_key()
    api.serve(AA_PATH, redirect(api.server.url("/elsewhere", "localhost")))
    api.serve("/elsewhere", ok(AA_MODELS))
    api.add(AA)
    record = api.fetch(environ={"ARTIFICIAL_ANALYSIS_API_KEY": key}).get(AA)
    assert record.label == "failed: redirect to other host localhost"
    assert not api.server.requests("/elsewhere")


def test_the_key_goes_on_a_redirect_only_within_its_own_origin(api):
    """The same host on another port is followed (the redirect rule), but it is another
    origin: the key is not sent there. Within the origin it is sent on every hop."""
    key = aa_key()
    with FaultServer() as other:
        other.route("/moved", ok(AA_MODELS))
        api.serve(AA_PATH, redirect(other.url("/moved")))
        api.add(AA)
        record = api.fetch(environ={"ARTIFICIAL_ANALYSIS_API_KEY": key}).get(AA)
        assert record.outcome == "new", record.label
        assert api.server.requests(AA_PATH)[0].headers["x-api-key"] == key
        assert "x-api-key" not in other.requests("/moved")[0].headers
        assert api.store.latest(AA).http["final-url"] == other.url("/moved")
    api.serve(AA_PATH, redirect("/v2/models", 301))
    api.serve("/v2/models", keyed("x-api-key", key, ok(AA_MODELS + b" ")))
    assert api.fetch(environ={"ARTIFICIAL_ANALYSIS_API_KEY": key}).get(AA).outcome == "new"
    assert api.server.requests("/v2/models")[0].headers["x-api-key"] == key


@pytest.mark.parametrize(
    ("into", "reason"),
    [
        ("body", "the response repeats an API key: not stored"),
        ("header", "HTTP 200 repeats an API key in a header"),
    ],
)
def test_a_response_that_repeats_the_key_is_not_stored(api, into, reason):
    key = aa_key()
    api.serve(AA_PATH, echo_header("x-api-key", into))
    api.add(AA)
    record = api.fetch(environ={"ARTIFICIAL_ANALYSIS_API_KEY": key}).get(AA)
    assert record.label == f"failed: {reason}"
    assert not api.store.list(AA)
    assert key.encode() not in every_byte(api)


def test_a_poll_member_that_repeats_the_key_is_left_out(api):
    key = openrouter_key()
    api.serve_model("openai/gpt-4o", ok(GPT4O))
    api.serve_model("acme/echo", echo_header("Authorization"))
    api.add("openrouter-endpoints", models=["openai/gpt-4o", "acme/echo"], models_from=None)
    record = api.fetch(environ={"OPENROUTER_API_KEY": key}).get("openrouter-endpoints")
    assert record.outcome == "new"
    assert "1 failed: acme/echo (the response repeats an API key: not stored)" in record.detail
    assert key.encode() not in every_byte(api)


def test_a_message_that_would_carry_the_key_is_scrubbed(api, monkeypatch, caplog):
    """Whatever raised with the key in its text, the outcome, its log and the progress lines
    say [API key] instead."""
    key = aa_key()
    api.serve(AA_PATH, ok(AA_MODELS))
    api.add(AA)

    def leaky_add(self, source_id, data, **kwargs):
        raise OSError(f"cannot write while holding x-api-key: {key}")

    monkeypatch.setattr(SnapshotStore, "add", leaky_add)
    with caplog.at_level(logging.INFO, logger="speedbook"):
        record = api.fetch(environ={"ARTIFICIAL_ANALYSIS_API_KEY": key}).get(AA)
    assert record.label == (
        f"failed: cannot store snapshot (cannot write while holding x-api-key: {REDACTED})"
    )
    assert key not in caplog.text and REDACTED in caplog.text
    assert key.encode() not in every_byte(api)


def test_keys_helpers():
    source = BUNDLED["openrouter-endpoints"]
    state = key_state(source, {"OPENROUTER_API_KEY": " sk-or-v1-0123456789 "})
    assert state.key is not None and "0123456789" not in repr(state.key)
    assert state.key.headers_for("https://openrouter.ai/api/v1/models/a/b/endpoints") == {
        "Authorization": "Bearer sk-or-v1-0123456789"
    }
    for elsewhere in (
        "http://openrouter.ai/api/v1/models",  # another scheme
        "https://openrouter.ai:8443/api",  # another port
        "https://evil.example/api",
    ):
        assert state.key.headers_for(elsewhere) == {}
    assert origin("https://OpenRouter.ai/x") == ("https", "openrouter.ai", 443)
    assert key_state(source, {}).missing == "OPENROUTER_API_KEY not set"
    assert key_state(BUNDLED["models-dev"], {"OPENROUTER_API_KEY": "x" * 20}).key is None
    keys = Keys([state.key])
    assert keys.scrub("Bearer sk-or-v1-0123456789.") == f"Bearer {REDACTED}."
    assert keys.quoted_in(b"..sk-or-v1-0123456789..", ())
    assert keys.quoted_in(b"", [("x-echo", "sk-or-v1-0123456789")])
    assert not keys.quoted_in(b"sk-or-v1-", [("x", "y")])


# --- the plain single-response sources -----------------------------------------------------------


def test_openrouter_providers_and_models_dev_fetch_as_plain_json(api):
    api.serve("/api/v1/providers", ok(PROVIDERS, "application/json"))
    api.add("openrouter-providers")
    # models.dev serves its ~4 MB compressed; it is stored decoded, under the 25 MB cap
    api.serve("/api.json", gzipped(gzip.compress(MODELS_DEV), "application/json; charset=utf-8"))
    api.add("models-dev")
    report = api.fetch()
    assert report.ok and [r.outcome for r in report.records] == ["new", "new"]
    providers, catalogue = api.store.latest("openrouter-providers"), api.store.latest("models-dev")
    assert api.store.read(providers) == PROVIDERS and providers.file.endswith(".json")
    assert api.store.read(catalogue) == MODELS_DEV and catalogue.file.endswith(".json")
    assert report.get("models-dev").bytes == len(MODELS_DEV) > 4_000_000
    assert "application/json" in api.server.requests("/api.json")[0].headers["accept"]


@pytest.mark.parametrize(
    ("source_id", "path", "body"),
    [
        ("openrouter-providers", "/api/v1/providers", PROVIDERS),
        ("models-dev", "/api.json", MODELS_DEV),
        (AA, AA_PATH, AA_MODELS),
    ],
)
def test_the_plain_sources_refuse_what_their_format_cannot_read(api, source_id, path, body):
    key = aa_key()
    api.serve(path, ok(b"<html>Just a moment...</html>", "text/html"))
    api.add(source_id)
    environ = {"ARTIFICIAL_ANALYSIS_API_KEY": key}
    fmt = BUNDLED[source_id].format
    assert api.fetch(environ=environ).get(source_id).label == (
        f"failed: content type text/html not expected for {fmt}"
    )
    api.serve(path, ok(body))
    small = api.fetch(environ=environ, max_bytes=len(body) - 1).get(source_id)
    assert small.label.startswith("failed: body exceeds ")
    assert not api.store.list(source_id)


@pytest.mark.e2e
def test_a_skipped_outcome_is_loaded_into_the_warehouse(settings):
    from conftest import UP_TO_CORE, failures, materialize

    record_outcome(settings.raw_dir, AA, "skipped", "ARTIFICIAL_ANALYSIS_API_KEY not set")
    result = materialize(settings, UP_TO_CORE)
    assert result.success, failures(result)
    with connect(settings, read_only=True) as con:
        rows = con.execute(
            "SELECT outcome, detail, attempts FROM core.fetch_outcomes WHERE source_id = ?", [AA]
        ).fetchall()
    assert rows == [("skipped", "ARTIFICIAL_ANALYSIS_API_KEY not set", 0)]


@pytest.mark.parametrize(
    ("source_id", "path", "body"),
    [
        ("openrouter-providers", "/api/v1/providers", PROVIDERS),
        ("models-dev", "/api.json", MODELS_DEV),
        (AA, AA_PATH, AA_MODELS),
    ],
)
def test_the_plain_sources_honour_a_rate_limit(api, source_id, path, body):
    key = aa_key()
    api.serve(path, status(429, {"Retry-After": "1"}), ok(body))
    api.add(source_id)
    record = api.fetch(environ={"ARTIFICIAL_ANALYSIS_API_KEY": key}).get(source_id)
    assert record.outcome == "new" and record.attempts == 2
    first, second = api.server.requests(path)
    assert second.at - first.at >= 0.95
    expected = key if source_id == AA else None
    assert [hit.headers.get("x-api-key") for hit in (first, second)] == [expected, expected]
    assert api.store.read(api.store.latest(source_id)) == body

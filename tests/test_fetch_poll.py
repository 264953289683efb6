"""`openrouter-endpoints`: one poll = one request per selected model, through the client's
machinery, stored as one bundle. Real HTTP servers on 127.0.0.1 serving the real captures."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from api_world import (
    API,
    GPT4O,
    MODEL_LIST,
    api_world,
    model_body,
    openrouter_key,
)
from http_fixtures import by_key, hang, keyed, numbered, ok, reset, status

from pipeline.extract import PARSERS, SnapshotInput
from pipeline.raw.bundle import BundleMember, read_bundle, write_bundle
from pipeline.raw.outcomes import read_outcomes
from pipeline.raw.snapshots import SnapshotStore
from pipeline.sources.formats import BUNDLE_CONTENT_TYPE
from pipeline.sources.registry import load_registry

SOURCE = "openrouter-endpoints"
FLASH_ID = "deepseek/deepseek-v4-flash"
GPT_ID = "openai/gpt-4o"
ERROR_404 = b'{"error": {"message": "Model not found", "code": 404}}'
ERROR_500 = b'{"error": {"message": "upstream error", "code": 500}}'
JSON = {"Content-Type": "application/json"}
OLD = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture
def api(tmp_path, monkeypatch):
    yield from api_world(tmp_path, monkeypatch)


def poll_source(api, models=None, **changes):
    """openrouter-endpoints as the bundled registry has it (its models from `openrouter`), or
    polling the list `models`."""
    if models is not None:
        changes = {"models": list(models), "models_from": None} | changes
    return api.add(SOURCE, **changes)


def parsed_members(api, meta):
    source = load_registry(api.registry)[SOURCE]
    frames = PARSERS[source.format].parse(SnapshotInput(meta, source, api.store.read(meta)))
    return frames["openrouter_poll_members"].set_index("member_url")


def test_a_poll_stores_every_response_of_the_round_as_one_bundle(api):
    key = openrouter_key()
    auth = f"Bearer {key}"
    flash = model_body(FLASH_ID)
    api.serve_model(
        FLASH_ID, keyed("Authorization", auth, ok(flash, headers={"X-Generation-Id": "gen-1"}))
    )
    api.serve_model(
        GPT_ID,
        keyed("Authorization", auth, status(429, {"Retry-After": "1", **JSON}, b"{}")),
        keyed("Authorization", auth, ok(GPT4O)),
    )
    api.serve_model("acme/broken", keyed("Authorization", auth, status(500, JSON, ERROR_500)))
    api.serve_model("acme/gone", keyed("Authorization", auth, status(404, JSON, ERROR_404)))
    url = poll_source(api, [FLASH_ID, GPT_ID, "acme/broken", "acme/gone"])

    report = api.fetch(environ={"OPENROUTER_API_KEY": key})

    record = report.get(SOURCE)
    latest = api.store.latest(SOURCE)
    assert record.outcome == "new" and report.ok
    assert record.detail == (
        f"stored {latest.file}: 4 models: 4 responses (2 HTTP 200, 1 HTTP 404, 1 HTTP 500); "
        "8 endpoints, 2 without statistics"
    )
    assert (record.attempts, record.http_status, record.bytes) == (8, 200, latest.size)
    assert latest.file.endswith(".bundle") and latest.content_type == BUNDLE_CONTENT_TYPE
    assert (latest.url, latest.obtained_by, latest.http) == (url, "fetched", {})
    assert "a poll of 4 models (the registry's list)" in latest.note
    members = read_bundle(api.store.read(latest))
    assert [m.url for m in members] == [
        f"{url}/{model}/endpoints" for model in (FLASH_ID, GPT_ID, "acme/broken", "acme/gone")
    ]
    assert [m.status for m in members] == [200, 200, 500, 404]
    assert [m.body for m in members] == [flash, GPT4O, ERROR_500, ERROR_404]
    # received headers as the server spelt them; no credential, no transfer coding
    assert ("X-Generation-Id", "gen-1") in members[0].headers
    assert members[1].content_type == "application/json"
    for member in members:
        names = {name.lower() for name, _ in member.headers}
        assert not names & {"authorization", "x-api-key", "content-length"}
    # the retries: 429 honoured its Retry-After, 500 went to the attempt limit, 404 was final
    hits = {
        model: api.server.requests(f"{API}/{model}/endpoints")
        for model in (FLASH_ID, GPT_ID, "acme/broken", "acme/gone")
    }
    assert [len(hits[m]) for m in hits] == [1, 2, 4, 1]
    assert hits[GPT_ID][1].at - hits[GPT_ID][0].at >= 0.95
    assert all(hit.headers["authorization"] == auth for each in hits.values() for hit in each)
    # the parser reads the stored round: the two error responses are named, not staged
    staged = parsed_members(api, latest)
    assert staged["problem"].fillna("-").to_dict() == {
        members[0].url: "-",
        members[1].url: "-",
        members[2].url: "HTTP 500",
        members[3].url: "HTTP 404",
    }
    assert staged["endpoints_without_statistics"].tolist() == [0, 2, 0, 0]


def test_without_a_key_the_poll_is_stored_with_null_statistics(api):
    key = openrouter_key()  # the server knows it; the fetch does not have it
    for model in (FLASH_ID, GPT_ID):
        api.serve_model(
            model,
            by_key(
                "Authorization",
                f"Bearer {key}",
                ok(model_body(model)),
                ok(model_body(model, statistics=False)),
            ),
        )
    poll_source(api, [FLASH_ID, GPT_ID])
    record = api.fetch(environ={}).get(SOURCE)
    latest = api.store.latest(SOURCE)
    assert record.outcome == "new"
    assert record.detail == (
        f"stored {latest.file}: 2 models: 2 responses (2 HTTP 200); "
        "12 endpoints, 12 without statistics (not measured: no API key)"
    )
    for model in (FLASH_ID, GPT_ID):
        assert "authorization" not in api.server.requests(f"{API}/{model}/endpoints")[0].headers
    staged = parsed_members(api, latest)
    assert (staged["endpoints_without_statistics"] == staged["endpoints_staged"]).all()


def test_a_round_identical_to_the_last_is_unchanged(api):
    """Bodies compared, not bundle bytes: the headers (a request id) differ on every round."""
    api.serve_model(FLASH_ID, numbered(model_body(FLASH_ID)))
    api.serve_model(GPT_ID, numbered(GPT4O))
    poll_source(api, [FLASH_ID, GPT_ID])
    first = api.fetch().get(SOURCE)
    before = api.files()
    second = api.fetch().get(SOURCE)
    assert (first.outcome, second.outcome) == ("new", "unchanged")
    assert second.snapshot == first.snapshot
    assert second.detail == (
        f"same responses as {first.snapshot}: 2 models: 2 responses (2 HTTP 200)"
    )
    assert api.files() == before
    members = read_bundle(api.store.read(api.store.latest(SOURCE)))
    assert [m.header("X-Request-Id") for m in members] == ["req-1", "req-1"]
    # one body changes: a new round
    api.serve_model(GPT_ID, numbered(model_body(GPT_ID, GPT4O, statistics=False)))
    third = api.fetch().get(SOURCE)
    assert third.outcome == "new" and third.snapshot != first.snapshot
    outcomes = [r.outcome for r in read_outcomes(api.settings.raw_dir, SOURCE)]
    assert outcomes == ["new", "unchanged", "new"]


def test_a_response_added_by_hand_counts_as_the_previous_round(api):
    api.serve_model(FLASH_ID, ok(model_body(FLASH_ID)))
    url = poll_source(api, [FLASH_ID])
    api.settings  # noqa: B018 - writes the registry
    api.store.add(
        SOURCE,
        model_body(FLASH_ID),
        url=f"{url}/{FLASH_ID}/endpoints",
        retrieved_at=OLD,
        content_type="application/json",
        obtained_by="manual",
        extension="json",
    )
    assert api.fetch().get(SOURCE).outcome == "unchanged"


def test_members_with_no_whole_response_are_named_and_the_rest_stored(api):
    api.serve_model(FLASH_ID, ok(model_body(FLASH_ID)))
    api.serve_model("acme/reset", reset())
    api.serve_model("acme/silent", hang())
    api.serve_model("acme/html", ok(b"<html>checking your browser</html>", "text/html"))
    api.serve_model("acme/huge", ok(b'{"data": "' + b"x" * 30_000 + b'"}'))
    models = [FLASH_ID, "acme/reset", "acme/silent", "acme/html", "acme/huge"]
    poll_source(api, models)
    record = api.fetch(max_attempts=2, read_timeout=0.3, max_bytes=20_000).get(SOURCE)
    latest = api.store.latest(SOURCE)
    assert record.outcome == "new"
    assert record.detail == (
        f"stored {latest.file}: 5 models: 1 response (1 HTTP 200); 4 failed: "
        "acme/reset (connection reset after 2 attempts), acme/silent (timeout after 2 attempts), "
        "acme/html (content type text/html not expected for openrouter_endpoints), "
        "acme/huge (body exceeds 20 kB); 6 endpoints, 0 without statistics"
    )
    assert [m.url.rsplit("/", 2)[-2] for m in read_bundle(api.store.read(latest))] == [
        "deepseek-v4-flash"
    ]


def test_a_poll_with_no_http_200_stores_nothing_and_fails(api):
    api.serve_model(FLASH_ID, status(404, JSON, ERROR_404))
    api.serve_model(GPT_ID, status(500, JSON, ERROR_500))
    poll_source(api, [FLASH_ID, GPT_ID])
    record = api.fetch(max_attempts=2).get(SOURCE)
    assert record.label == (
        "failed: no HTTP 200 in the poll: 2 models: 2 responses (1 HTTP 404, 1 HTTP 500)"
    )
    assert record.attempts == 3 and not api.store.list(SOURCE)


def test_a_429_pauses_every_request_to_its_host(api):
    """A polite client: the Retry-After of one member holds the others to that host too."""
    api.serve_model(FLASH_ID, status(429, {"Retry-After": "1"}), ok(model_body(FLASH_ID)))
    api.serve_model(GPT_ID, ok(GPT4O))
    poll_source(api, [FLASH_ID, GPT_ID])
    record = api.fetch(per_host=1).get(SOURCE)
    assert record.outcome == "new" and record.attempts == 3
    first_flash = api.server.requests(f"{API}/{FLASH_ID}/endpoints")[0]
    first_gpt = api.server.requests(f"{API}/{GPT_ID}/endpoints")[0]
    assert first_gpt.at - first_flash.at >= 0.95


def test_a_poll_ends_at_its_deadline_naming_what_was_not_requested(api):
    api.serve_model(FLASH_ID, ok(model_body(FLASH_ID)))
    api.serve_model("acme/silent", hang())
    api.serve_model(GPT_ID, ok(GPT4O))
    poll_source(api, [FLASH_ID, "acme/silent", GPT_ID])
    record = api.fetch(per_host=1, read_timeout=5.0, poll_timeout=0.6).get(SOURCE)
    assert record.outcome == "new"
    assert "3 models: 1 response (1 HTTP 200); 2 failed: " in record.detail
    assert (
        "acme/silent (timeout (the poll's 0.6 s were used up)), "
        "openai/gpt-4o (not requested (the poll's 0.6 s were used up))"
    ) in record.detail
    assert not api.server.requests(f"{API}/{GPT_ID}/endpoints")


def test_models_from_polls_the_newest_usable_model_list(api):
    """By default the models are the `openrouter` list's: its newest snapshot the parser reads
    (a damaged or broken newer one is passed over), capped by max_models, in its order."""
    api.add("openrouter")
    poll_source(api, max_models=3)
    settings = api.settings
    good = api.store.add(
        "openrouter",
        MODEL_LIST,
        url="https://openrouter.ai/api/v1/models",
        retrieved_at=OLD,
        content_type="application/json",
        obtained_by="manual",
        extension="json",
    ).meta
    api.store.add(
        "openrouter",
        b'{"data": "not a list"}',
        url="https://openrouter.ai/api/v1/models",
        retrieved_at=datetime(2026, 2, 1, tzinfo=UTC),
        content_type="application/json",
        obtained_by="manual",
        extension="json",
    )
    first = [model["id"] for model in json.loads(MODEL_LIST)["data"][:3]]
    assert first[2] == "inclusionai/ring-2.6-1t:free"  # a ':' stays as it is in the path
    for model in first:
        api.serve_model(model, ok(model_body(model)))
    record = api.fetch(SOURCE).get(SOURCE)
    assert record.outcome == "new", record.detail
    assert record.detail.endswith(
        ": 3 models: 3 responses (3 HTTP 200); 18 endpoints, 0 without statistics"
    )
    latest = api.store.latest(SOURCE)
    assert f"a poll of 3 models (the models of {good.snapshot_id}, the first 3 of 364)" in (
        latest.note
    )
    assert [json.loads(m.body)["data"]["id"] for m in read_bundle(api.store.read(latest))] == first
    assert settings.raw_dir.is_dir()


def test_models_from_names_what_cannot_be_polled(api):
    api.add("openrouter")
    poll_source(api)
    assert api.fetch(SOURCE).get(SOURCE).label == (
        "failed: no usable snapshot of openrouter to take the models from"
    )
    ids = ["acme/good", "acme/one/two", "noslash"]
    api.store.add(
        "openrouter",
        json.dumps({"data": [{"id": model} for model in ids]}).encode(),
        url="https://openrouter.ai/api/v1/models",
        retrieved_at=OLD,
        content_type="application/json",
        obtained_by="manual",
        extension="json",
    )
    api.serve_model("acme/good", ok(model_body("acme/good")))
    record = api.fetch(SOURCE).get(SOURCE)
    assert record.outcome == "new"
    assert (
        "1 model: 1 response (1 HTTP 200); 2 left out: 'acme/one/two' is not of the form "
        "author/slug; 'noslash' is not of the form author/slug" in record.detail
    )
    assert not api.server.hits.get(f"{API}/noslash/endpoints")


def test_snapshot_add_takes_one_captured_response_or_a_captured_bundle(settings, cli, tmp_path):
    """By hand: one /endpoints response as it came is a `.json`; a bundle (a poll round saved
    elsewhere) is a `.bundle`. The parser reads both."""
    store = SnapshotStore(settings.raw_dir)
    source = load_registry(settings.registry)[SOURCE]
    response = tmp_path / "response.json"
    response.write_bytes(model_body(FLASH_ID))
    url = "https://openrouter.ai/api/v1/models/deepseek/deepseek-v4-flash/endpoints"
    added = cli(
        "snapshot",
        "add",
        SOURCE,
        str(response),
        "--url",
        url,
        "--retrieved-at",
        "2026-06-01T10:00:00Z",
    )
    assert added.status == 0, added.err
    plain = store.latest(SOURCE)
    assert plain.file.endswith(".json") and plain.content_type == "application/json"
    assert plain.url == url
    members = [
        BundleMember(url, 200, (("Content-Type", "application/json"),), model_body(FLASH_ID)),
        BundleMember(source.member_url(GPT_ID), 404, (), ERROR_404),
    ]
    captured = tmp_path / "poll.bundle"
    captured.write_bytes(write_bundle(members))
    added = cli("snapshot", "add", SOURCE, str(captured), "--retrieved-at", "2026-06-01T10:30:00Z")
    assert added.status == 0, added.err
    bundle = store.latest(SOURCE)
    assert bundle.file.endswith(".bundle") and bundle.content_type == BUNDLE_CONTENT_TYPE
    assert bundle.url == source.url
    for meta, endpoints in ((plain, 6), (bundle, 6)):
        frames = PARSERS[source.format].parse(SnapshotInput(meta, source, store.read(meta)))
        assert len(frames["openrouter_endpoints"]) == endpoints
    assert (
        len(
            PARSERS[source.format].parse(SnapshotInput(bundle, source, store.read(bundle)))[
                "openrouter_poll_members"
            ]
        )
        == 2
    )


def test_by_default_a_poll_asks_for_every_model_of_the_list(api):
    """The bundled entry as it is: all 364 models of the real OpenRouter list, one bundle."""
    api.add("openrouter")
    poll_source(api)
    api.settings  # noqa: B018 - writes the registry
    api.store.add(
        "openrouter",
        MODEL_LIST,
        url="https://openrouter.ai/api/v1/models",
        retrieved_at=OLD,
        content_type="application/json",
        obtained_by="manual",
        extension="json",
    )
    models = [model["id"] for model in json.loads(MODEL_LIST)["data"]]
    for model in models:
        api.serve_model(model, ok(model_body(model)))
    record = api.fetch(SOURCE).get(SOURCE)
    assert record.outcome == "new"
    assert ": 364 models: 364 responses (364 HTTP 200); 2,184 endpoints, " in record.detail
    members = read_bundle(api.store.read(api.store.latest(SOURCE)))
    assert [json.loads(m.body)["data"]["id"] for m in members] == models
    assert api.server.peak["127.0.0.1"] == 2  # polite: two at a time

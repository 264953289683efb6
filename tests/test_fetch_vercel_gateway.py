"""Vercel AI Gateway end to end: the model list (`vercel-ai-gateway-catalogue`) and one hourly poll
of its endpoint statistics (`vercel-ai-gateway-endpoints`), as the bundled registry has them,
fetched from a real HTTP server on 127.0.0.1 serving the documented-shape fixtures
(tests/fixtures/vercel-ai-gateway/README.md: written by hand, no value invented)."""

from __future__ import annotations

import json

import pytest
from api_world import FIXTURES, api_world
from http_fixtures import numbered, ok, status

from pipeline.extract import PARSERS, SnapshotInput
from pipeline.raw.bundle import read_bundle
from pipeline.sources.formats import BUNDLE_CONTENT_TYPE
from pipeline.sources.registry import load_registry

CATALOGUE = "vercel-ai-gateway-catalogue"
ENDPOINTS = "vercel-ai-gateway-endpoints"
HERE = FIXTURES / "vercel-ai-gateway"
MODEL_LIST = (HERE / "models.json").read_bytes()
RESPONSES = {
    path.stem.replace("__", "/"): path.read_bytes()
    for path in sorted((HERE / "round-00bafc0650ee").glob("*.json"))
} | {
    "google/gemini-3.1-pro-preview": (
        HERE / "endpoints-google__gemini-3.1-pro-preview.json"
    ).read_bytes()
}
API = "/v1/models"


@pytest.fixture
def api(tmp_path, monkeypatch):
    yield from api_world(tmp_path, monkeypatch)


def serve_gateway(api, skip: tuple[str, ...] = ()) -> str:
    """Both sources at the server, as registered; every model's /endpoints answered."""
    api.add(CATALOGUE)
    url = api.add(ENDPOINTS)
    api.serve(API, ok(MODEL_LIST))
    for model, body in RESPONSES.items():
        if model not in skip:
            api.serve(f"{API}/{model}/endpoints", numbered(body))
    return url


def parsed(api, source_id: str):
    meta = api.store.latest(source_id)
    source = load_registry(api.registry)[source_id]
    return meta, PARSERS[source.format].parse(SnapshotInput(meta, source, api.store.read(meta)))


def test_the_catalogue_then_an_hourly_poll_of_every_model_it_lists(api):
    url = serve_gateway(api)
    # the poll takes its models from the catalogue's newest snapshot: none yet
    first = api.fetch(ENDPOINTS).get(ENDPOINTS)
    assert first.label == f"failed: no usable snapshot of {CATALOGUE} to take the models from"
    assert api.fetch(CATALOGUE).get(CATALOGUE).outcome == "new"
    record = api.fetch(ENDPOINTS).get(ENDPOINTS)
    meta, frames = parsed(api, ENDPOINTS)
    assert record.outcome == "new" and record.snapshot == meta.file
    assert record.detail == (
        f"stored {meta.file}: 7 models: 7 responses (7 HTTP 200); "
        "21 endpoints, 0 without statistics"
    )
    assert meta.file.endswith(".bundle") and meta.content_type == BUNDLE_CONTENT_TYPE
    assert (meta.url, meta.obtained_by) == (url, "fetched")
    catalogue = api.store.latest(CATALOGUE)
    assert f"a poll of 7 models (the models of {catalogue.snapshot_id})" in meta.note
    members = read_bundle(api.store.read(meta))
    models = [json.loads(m.body)["data"]["id"] for m in members]
    assert models == [entry["id"] for entry in json.loads(MODEL_LIST)["data"]]
    assert [m.url for m in members] == [f"{url}/{model}/endpoints" for model in models]
    # no key is sent, and none is stored
    for model in models:
        (hit,) = api.server.requests(f"{API}/{model}/endpoints")
        assert "authorization" not in hit.headers
    assert not any(name.lower() == "authorization" for m in members for name, _ in m.headers)
    rows = frames["vercel_gateway_endpoints"]
    assert len(rows) == 21 and set(rows["window_minutes"]) == {60}
    assert set(rows["member_url"]) == {m.url for m in members}
    gemini = rows.set_index("model").loc["google/gemini-3.1-pro-preview"]
    assert (gemini["ttft_s_p50"], gemini["price_output_usd_per_mtok"]) == (2.292, 12)
    # the same round again: unchanged, nothing stored
    again = api.fetch(ENDPOINTS).get(ENDPOINTS)
    assert again.outcome == "unchanged" and again.snapshot == meta.file


def test_a_model_that_fails_is_named_and_the_round_kept(api):
    serve_gateway(api, skip=("moonshotai/kimi-k3", "zhipuai/glm-5.2"))
    api.serve(
        f"{API}/moonshotai/kimi-k3/endpoints",
        status(404, {"Content-Type": "application/json"}, b'{"error": "model not found"}'),
    )
    api.serve(f"{API}/zhipuai/glm-5.2/endpoints", ok(b"<html>busy</html>", "text/html"))
    api.fetch(CATALOGUE)
    record = api.fetch(ENDPOINTS, max_attempts=1).get(ENDPOINTS)
    assert record.outcome == "new"
    assert "7 models: 6 responses (5 HTTP 200, 1 HTTP 404); 1 failed: zhipuai/glm-5.2 " in (
        record.detail
    )
    assert record.detail.endswith("; 16 endpoints, 0 without statistics")  # 21 less 1 and 4
    _meta, frames = parsed(api, ENDPOINTS)
    problems = frames["vercel_gateway_poll_members"].set_index("member_url")["problem"]
    assert problems.dropna().tolist() == ["HTTP 404"]

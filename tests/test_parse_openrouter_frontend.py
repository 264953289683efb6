"""OpenRouter's undocumented website statistics (`openrouter-frontend-stats`): the seven real
captures bundled as snapshots, a real capture trimmed to eight models (tests/fixtures), one
statistics response on its own, and broken and hostile variants of the real bytes."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pandas as pd
import pytest
from api_world import api_world
from http_fixtures import gzip_bomb, ok
from test_parse_support import BUNDLED, FIXTURES, SOURCES, in_fixture_store, parse, refused

from pipeline.extract import PARSERS, SnapshotInput, openrouter_frontend
from pipeline.raw.snapshots import SnapshotStore
from pipeline.schema.staging import FRAMES
from pipeline.sources.formats import FORMATS

SOURCE_ID = "openrouter-frontend-stats"
TRIMMED_GZ = (
    FIXTURES / "openrouter" / "frontend-stats" / "stats-20260718T062438Z.trimmed.json.gz"
).read_bytes()
TRIMMED: dict[str, Any] = json.loads(gzip.decompress(TRIMMED_GZ))
COLLECTOR = "anpaure/frontier-model-sizes"
COMMIT = "71189a709d96d8236af81c27900016b6d629805e"
GPT54_OPENAI = "9ff5625c-403f-4d7f-b895-58ac7295062c"
SONAR = "47dadaf5-a2e7-4c17-ac4b-e4811f3c0a28"
QWEN_PLUS = "23a86833-b536-4529-94c4-a18746e95c60"
TOGETHER_GEMMA = {"576fca5b-f09c-4bda-b560-9989c39ac3ab", "f0196f2b-7c35-4d92-81ff-b1b0cc915a32"}
STATS_URL = (
    "https://openrouter.ai/api/frontend/v1/stats/endpoint?permaslug=openai%2Fgpt-5.4-20260305"
    "&variant=standard"
)


def capture(tmp_path: Path, data: bytes = TRIMMED_GZ, **stored: Any) -> SnapshotInput:
    """The capture stored as `snapshot add` stores it: the gzip file as committed."""
    stored = {"content_type": "application/gzip", "extension": "json.gz"} | stored
    return in_fixture_store(
        tmp_path, SOURCE_ID, data, retrieved_at="2026-07-18T06:24:38Z", **stored
    )


def edited(change: Callable[[dict[str, Any]], object], *, packed: bool = True) -> bytes:
    """The trimmed capture with `change` applied to a copy of its document."""
    document = json.loads(json.dumps(TRIMMED))
    change(document)
    data = json.dumps(document, separators=(",", ":")).encode()
    return gzip.compress(data, mtime=0) if packed else data


def model(document: dict[str, Any], model_id: str) -> dict[str, Any]:
    return next(m for m in document["models"] if m["openrouter_model_id"] == model_id)


def endpoint(document: dict[str, Any], endpoint_id: str) -> dict[str, Any]:
    return next(
        e
        for m in document["models"]
        for e in m["endpoint_payload"]["data"]
        if e["id"] == endpoint_id
    )


@pytest.fixture(scope="module")
def trimmed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, pd.DataFrame]:
    return parse(capture(tmp_path_factory.mktemp("frontend")))


# --- the bundled captures ----------------------------------------------------------------------


@pytest.mark.e2e
def test_the_seven_real_captures_are_bundled_with_their_provenance_and_parse():
    metas = BUNDLED.list(SOURCE_ID)
    assert [m.retrieved_at for m in metas] == [
        "2026-07-17T23:33:39Z",
        "2026-07-18T02:06:16Z",
        "2026-07-18T06:24:38Z",
        "2026-07-18T07:24:51Z",
        "2026-07-18T07:40:00Z",
        "2026-07-18T07:47:50Z",
        "2026-07-18T08:32:31Z",
    ]
    history = []
    for meta in metas:
        assert (meta.obtained_by, meta.content_type) == ("bundled", "application/gzip")
        assert meta.file.endswith(".json.gz")
        stamp = meta.retrieved_at.replace("-", "").replace(":", "").removesuffix("Z")
        assert meta.url == (
            f"https://raw.githubusercontent.com/{COLLECTOR}/{COMMIT}/sources/openrouter_history/"
            f"{stamp}+0000/openrouter_operational_snapshot_2026-07-18.json.gz"
        )
        assert f"committed by {COLLECTOR} (commit {COMMIT}" in meta.note
        assert "undocumented" in meta.note and "states no licence" in meta.note
        data = BUNDLED.read(meta)
        document = json.loads(gzip.decompress(data))
        assert document["fetched_at_utc"].replace("+00:00", "Z") == meta.retrieved_at
        frames = parse(SnapshotInput(meta, SOURCES[SOURCE_ID], data))
        counts = {name: len(frame) for name, frame in frames.items()}
        assert counts["openrouter_frontend_members"] == 308
        assert counts["openrouter_frontend_models"] == 344
        assert 899 <= counts["openrouter_frontend_endpoints"] <= 901
        assert counts["openrouter_frontend_stats"] > 1700
        assert counts["openrouter_frontend_daily"] > 7300
        for frame in frames.values():
            assert (frame["snapshot_id"] == meta.snapshot_id).all()
            assert (frame["observed_at"] == pd.Timestamp(meta.retrieved_at)).all()
        stats = frames["openrouter_frontend_stats"]
        history.append(
            stats.query("endpoint_id == @GPT54_OPENAI and block == 'statsByTier.default'")
        )
    # one endpoint's default tier, capture after capture: the history the corpus carries
    series = pd.concat(history)
    assert len(series) == 7 and series["output_tokens_per_s_p50"].notna().all()
    assert series["observed_at"].is_monotonic_increasing


# --- what a capture gives ----------------------------------------------------------------------


def test_each_statistics_block_is_a_row_with_its_percentiles_count_and_window(trimmed):
    stats = trimmed["openrouter_frontend_stats"].set_index(["endpoint_id", "block"])
    rows = stats.loc[GPT54_OPENAI]
    assert list(rows.index) == [
        "stats",
        "statsByTier.priority",
        "statsByTier.default",
        "statsByTier.flex",
    ]
    assert rows["service_tier"].fillna("-").tolist() == ["-", "priority", "default", "flex"]
    default = rows.loc["statsByTier.default"]
    raw = endpoint(TRIMMED, GPT54_OPENAI)["statsByTier"]["default"]
    assert raw["p50_throughput"] == 60 and raw["p99_latency"] == 9268.54
    for statistic in ("p50", "p75", "p90", "p95", "p99"):
        assert default[f"output_tokens_per_s_{statistic}"] == raw[f"{statistic}_throughput"]
        # latency is milliseconds in the API, seconds here
        assert default[f"ttft_s_{statistic}"] == pytest.approx(raw[f"{statistic}_latency"] / 1000)
    assert default["ttft_s_p99"] == pytest.approx(9.26854)
    assert (default["request_count"], default["window_minutes"]) == (10812, 30)
    assert default["method"] == "percentiles of live routed traffic"
    assert rows.loc["statsByTier.priority", "request_count"] == 48
    # the one value of the capture that is not a figure: sonar's p50 of 0, in both its blocks
    assert (
        stats["unread"].dropna().tolist() == ["p50_throughput is 0: expected a positive figure"] * 2
    )


def test_a_percentile_of_zero_is_left_null_and_named_the_rest_of_its_block_kept(trimmed):
    stats = trimmed["openrouter_frontend_stats"].set_index(["endpoint_id", "block"])
    sonar = stats.loc[(SONAR, "statsByTier.default")]
    assert pd.isna(sonar["output_tokens_per_s_p50"])
    assert sonar["output_tokens_per_s_p75"] == 40 and sonar["ttft_s_p50"] == 51.277
    assert sonar["unread"] == "p50_throughput is 0: expected a positive figure"
    # the `stats` block, which names no tier, is the same figures here
    assert pd.isna(stats.loc[(SONAR, "stats"), "output_tokens_per_s_p50"])


def test_endpoints_are_keyed_by_their_own_id_never_by_provider_or_tag(trimmed):
    endpoints = trimmed["openrouter_frontend_endpoints"].set_index("endpoint_id")
    together = endpoints.loc[sorted(TOGETHER_GEMMA)]
    assert set(together["tag"]) == {"together"} and len(together) == 2
    assert together["provider_model_id"].tolist() == [
        "google/gemma-4-31B-it",
        "pearl-ai/gemma-4-31b-it",
    ]
    assert together["status"].tolist() == [0, -5]
    gpt54 = endpoints.loc[GPT54_OPENAI]
    assert (gpt54["permaslug"], gpt54["variant"], gpt54["model_slug"]) == (
        "openai/gpt-5.4-20260305",
        "standard",
        "openai/gpt-5.4",
    )
    assert (gpt54["provider_name"], gpt54["tag_root"]) == ("OpenAI", "openai")
    assert pd.isna(gpt54["tag_suffix"])
    assert gpt54["price_input_usd_per_mtok"] == 2.5 and gpt54["price_output_usd_per_mtok"] == 15
    eu = endpoints[endpoints["tag"] == "azure/eu"].iloc[0]
    assert (eu["tag_root"], eu["tag_suffix"], eu["price_input_usd_per_mtok"]) == (
        "azure",
        "eu",
        2.75,
    )
    coder = endpoints.query("tag == 'amazon-bedrock' and model_slug.str.startswith('qwen/')")
    assert coder["context_length"].isna().all()
    assert coder["unread"].tolist() == [
        "context_length is 0: expected a whole number from 1 to 1,000,000,000,000"
    ]
    fp8 = endpoints[endpoints["tag"] == "novita/fp8"].iloc[0]
    assert (fp8["quantization"], fp8["precision"], fp8["quantization_known"]) == (
        "fp8",
        "fp8",
        True,
    )
    counts = endpoints[["requests_succeeded", "requests_succeeded_5m", "requests_rate_limited_1d"]]
    assert counts.notna().mean().min() > 0.9 and (counts.min() >= 0).all()


def test_an_endpoint_id_two_models_share_is_read_once_and_the_repeat_named(trimmed):
    members = trimmed["openrouter_frontend_members"].set_index("model")
    base, thinking = (
        members.loc["qwen/qwen-plus-2025-07-28"],
        members.loc["qwen/qwen-plus-2025-07-28:thinking"],
    )
    assert (base["endpoints_staged"], thinking["endpoints_staged"]) == (1, 0)
    assert (
        f"endpoint {QWEN_PLUS} of qwen/qwen-plus-2025-07-28 was read from model #6"
        in (thinking["problem"])
    )
    assert pd.isna(base["problem"])
    endpoints = trimmed["openrouter_frontend_endpoints"]
    assert (endpoints["endpoint_id"] == QWEN_PLUS).sum() == 1
    assert (thinking["daily_points_staged"], base["daily_points_staged"]) == (0, 16)


def test_the_daily_week_keeps_every_endpoint_and_claims_no_statistic(trimmed):
    daily = trimmed["openrouter_frontend_daily"]
    gemma = daily[daily["permaslug"] == "google/gemma-4-31b-it-20260402"]
    assert len(gemma) == 125 and set(gemma["time_range"]) == {"1w"}
    gone = gemma[~gemma["endpoint_listed"]]
    assert set(gone["endpoint_id"]) == {"65b19119-a8d5-427b-9cbd-03329ef0d939"}
    assert daily["day"].min() == "2026-07-11" and daily["day"].max() == "2026-07-18"
    assert set(daily["service_tier"]) == {"default", "flex", "priority"}
    # no statistic column: OpenRouter does not say which statistic a day's figure is
    columns = FRAMES["openrouter_frontend_daily"].to_schema().columns
    assert "statistic" not in columns and "method" not in columns
    assert "statistic is not stated" in columns["output_tokens_per_s"].description
    # a day's figure of 0 is no speed: left out, and named with its model
    lyria = (
        trimmed["openrouter_frontend_members"].set_index("model").loc["google/lyria-3-pro-preview"]
    )
    assert lyria["daily_points_staged"] == 5
    assert lyria["problem"].startswith(
        "3 daily figure(s) not read: 2026-07-11 82959141-f095-4f8f-92ce-f9b751be41e6::default "
        "is 0: expected a positive figure"
    )


def test_members_say_what_each_model_gave(trimmed):
    members = trimmed["openrouter_frontend_members"]
    assert members["member_index"].tolist() == list(range(1, 9))
    assert members["endpoints_listed"].tolist() == [16, 1, 3, 20, 1, 1, 1, 5]
    assert members["endpoints_staged"].tolist() == [16, 1, 3, 20, 1, 1, 0, 5]
    assert members["endpoints_without_statistics"].tolist() == [0, 0, 0, 1, 0, 0, 0, 2]
    assert members["collector_errors"].isna().all()
    row = members.set_index("model").loc["openai/gpt-5.4"]
    assert row["endpoint_url"] == STATS_URL
    assert row["throughput_url"].endswith("permaslug=openai%2Fgpt-5.4-20260305&timeRange=1w")


def test_the_catalogue_keeps_canonical_slug_and_hugging_face_id(trimmed):
    models = trimmed["openrouter_frontend_models"].set_index("model_id")
    assert len(models) == 8
    assert models.loc["google/gemma-4-31b-it", "canonical_slug"] == (
        "google/gemma-4-31b-it-20260402"
    )
    assert models.loc["google/gemma-4-31b-it", "hugging_face_id"] == "google/gemma-4-31B-it"
    assert models.loc["qwen/qwen3-coder-30b-a3b-instruct", "hugging_face_id"] == (
        "Qwen/Qwen3-Coder-30B-A3B-Instruct"
    )
    # an empty hugging_face_id and a missing one are both no id
    assert (
        models.loc[["openai/gpt-5.4", "google/lyria-3-pro-preview"], "hugging_face_id"].isna().all()
    )


def test_the_same_capture_as_plain_json_reads_the_same(tmp_path, trimmed):
    plain = capture(
        tmp_path, gzip.decompress(TRIMMED_GZ), content_type="application/json", extension="json"
    )
    frames = parse(plain)
    for name, frame in frames.items():
        columns = [c for c in frame.columns if c != "snapshot_id"]
        pd.testing.assert_frame_equal(frame[columns], trimmed[name][columns])


def test_one_statistics_response_fetched_as_it_came_is_a_capture_of_one_model(tmp_path):
    response = json.dumps(model(TRIMMED, "openai/gpt-5.4")["endpoint_payload"]).encode()
    snapshot = capture(
        tmp_path, response, content_type="application/json", extension="json", url=STATS_URL
    )
    frames = parse(snapshot)
    member = frames["openrouter_frontend_members"].iloc[0]
    assert (member["model"], member["endpoint_url"], member["endpoints_staged"]) == (
        "openai/gpt-5.4-20260305",
        STATS_URL,
        3,
    )
    assert pd.isna(member["throughput_url"]) and pd.isna(member["problem"])
    # `stats` and each tier: OpenAI's four, Azure's three, Azure EU's two
    assert len(frames["openrouter_frontend_stats"]) == 9
    assert frames["openrouter_frontend_daily"].empty
    assert frames["openrouter_frontend_models"].empty


def test_snapshot_add_stores_a_collectors_gzip_file_as_gzip(settings, cli, tmp_path):
    """`speedbook snapshot add` of a `.json.gz`: stored as the gzip bytes it is (not as JSON, as
    the file name's type alone would say), and read back by the parser."""
    path = tmp_path / "openrouter_operational_snapshot_2026-07-18.json.gz"
    path.write_bytes(TRIMMED_GZ)
    added = cli("snapshot", "add", SOURCE_ID, str(path), "--retrieved-at", "2026-07-18T06:24:38Z")
    assert added.status == 0, added.err
    store = SnapshotStore(settings.raw_dir)
    meta = next(m for m in store.list(SOURCE_ID) if m.obtained_by == "manual")
    assert (meta.content_type, meta.file) == (
        "application/gzip",
        "20260718T062438Z-" + meta.sha256[:12] + ".json.gz",
    )
    frames = parse(SnapshotInput(meta, SOURCES[SOURCE_ID], store.read(meta)))
    assert len(frames["openrouter_frontend_endpoints"]) == 47  # 48 listed, one a repeat
    broken = tmp_path / "broken.json.gz"
    broken.write_bytes(TRIMMED_GZ[:1000])
    refused_add = cli("snapshot", "add", SOURCE_ID, str(broken))
    assert refused_add.status != 0 and "not a readable gzip capture" in refused_add.err


def test_a_fetch_asked_for_by_hand_stores_the_registry_urls_one_response(tmp_path, monkeypatch):
    """`speedbook fetch openrouter-frontend-stats`: the registry URL's statistics response, from
    a server on 127.0.0.1, stored as it came and read as a capture of one model."""
    body = json.dumps(model(TRIMMED, "openai/gpt-5.4")["endpoint_payload"]).encode()
    for world in api_world(tmp_path, monkeypatch):
        real = urlsplit(SOURCES[SOURCE_ID].url)
        assert real.query == "permaslug=openai%2Fgpt-oss-120b&variant=standard"
        url = world.add(SOURCE_ID, path=f"{real.path}?{real.query}")
        world.serve("/api/frontend/v1/stats/endpoint", ok(body))
        record = world.fetch(SOURCE_ID).get(SOURCE_ID)
        assert record.outcome == "new", record.detail
        meta = world.store.latest(SOURCE_ID)
        assert (meta.url, meta.content_type, meta.file[-5:]) == (url, "application/json", ".json")
        frames = parse(SnapshotInput(meta, SOURCES[SOURCE_ID], world.store.read(meta)))
        member = frames["openrouter_frontend_members"].iloc[0]
        # the model is the one the URL asks for; the endpoints say which they are of
        assert member["model"] == "openai/gpt-oss-120b" and member["endpoints_staged"] == 3


# --- broken, hostile and missing input ---------------------------------------------------------


def test_a_truncated_gzip_fails_naming_the_snapshot(tmp_path):
    snapshot = capture(tmp_path)
    refused(
        snapshot, TRIMMED_GZ[: len(TRIMMED_GZ) // 2], "not a readable gzip capture", "truncated"
    )
    refused(snapshot, TRIMMED_GZ[:5], "not a readable gzip capture")


def test_a_gzip_bomb_is_refused_at_the_cap_not_unpacked(tmp_path, monkeypatch):
    monkeypatch.setattr(openrouter_frontend, "MAX_UNPACKED_BYTES", 1_000_000)
    refused(capture(tmp_path), gzip_bomb(4 << 20), "decompresses to more than 1,000,000 bytes")


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"", "not valid JSON"),
        (b"\x1f\x8bnot gzip at all", "not a readable gzip capture"),
        (gzip.compress(b"{not json", mtime=0), "not valid JSON"),
        (gzip.compress(b"\xff\xfe\x00", mtime=0), "the unpacked capture"),
        (b"[]", "expected a capture"),
        (b'{"models": {}}', "expected a capture"),
        (b'{"data": "x"}', "expected a capture"),
        (b'{"models": [], "catalog_payload": null}', "no endpoint could be read from any of the 0"),
    ],
)
def test_what_is_not_a_capture_fails_naming_what_was_expected(tmp_path, data, expected):
    refused(capture(tmp_path), data, expected)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda d: d.update(schema_version="2.0"), "schema_version '2.0'"),
        (lambda d: d.update(schema_version=2), "schema_version 2"),
        (lambda d: d.update(catalog_payload="models"), "catalog_payload is not"),
        (lambda d: d["catalog_payload"]["data"].append({"id": 7}), "expected a string 'id'"),
        (
            lambda d: d["catalog_payload"]["data"].append(d["catalog_payload"]["data"][0]),
            "more than once",
        ),
    ],
)
def test_a_wrapper_that_is_not_the_collectors_fails(tmp_path, change, expected):
    refused(capture(tmp_path), edited(change), expected)


def test_nothing_readable_fails_naming_each_model(tmp_path):
    def no_endpoints(document: dict[str, Any]) -> None:
        for each in document["models"]:
            each["endpoint_payload"] = {"error": {"message": "<b>rate limited</b>"}}

    message = refused(capture(tmp_path), edited(no_endpoints), "no endpoint could be read")
    assert "model #1 (google/gemma-4-31b-it): the statistics response is not" in message
    assert "and 3 more" in message and "<b>" not in message


def _problems(tmp_path: Path, change: Callable[[dict[str, Any]], object]) -> dict[str, Any]:
    frames = parse(capture(tmp_path), edited(change))
    members = frames["openrouter_frontend_members"].set_index("member_index")
    return {"frames": frames, "members": members}


def test_a_broken_model_stays_that_models_problem(tmp_path):
    def damage(document: dict[str, Any]) -> None:
        document["models"][0] = "not a model"
        document["models"][1]["endpoint_payload"] = None
        document["models"][2]["throughput_payload"] = {"data": "x"}
        document["models"][3]["errors"] = ["HTTP 429 <script>alert(1)</script>from the site"]

    result = _problems(tmp_path, damage)
    members = result["members"]
    assert members.loc[1, "problem"] == "model #1 is not an object"
    assert members.loc[2, "problem"].startswith(
        "no statistics response (endpoint_payload is null); 3 daily figure(s) not read"
    )
    assert "the daily throughput response is not" in members.loc[3, "problem"]
    assert members.loc[3, "endpoints_staged"] == 3
    assert members.loc[4, "collector_errors"] == "HTTP 429 from the site"
    assert len(result["frames"]["openrouter_frontend_endpoints"]) == 20 + 1 + 1 + 5 + 3


def test_hostile_and_malformed_endpoints_are_left_out_or_left_null_and_named(tmp_path):
    def damage(document: dict[str, Any]) -> None:
        gpt54 = model(document, "openai/gpt-5.4")["endpoint_payload"]["data"]
        gpt54.append(json.loads(json.dumps(gpt54[0])))  # listed twice
        first = model(document, "google/gemma-4-31b-it")["endpoint_payload"]["data"]
        first[0]["id"] = "<script>alert(1)</script>"
        first[1]["provider_name"] = "<b>Deep</b>Infra<script>x()</script>"
        first[2]["provider_slug"] = ""
        first[3]["stats"]["p50_throughput"] = "fast"
        first[3]["stats"]["p75_throughput"] = "61.5"  # a number as a string: read
        first[3]["stats"]["p99_latency"] = 1e308
        first[3]["stats"]["p90_throughput"] = -3
        first[3]["stats"]["request_count"] = 10**30
        oss = model(document, "openai/gpt-oss-120b")["endpoint_payload"]["data"]
        oss[0]["statsByTier"]["default"]["window_minutes"] = None
        oss[1]["statsByTier"]["<img src=x>"] = oss[1]["statsByTier"]["default"]
        oss[2]["statsByTier"]["default"]["endpoint_id"] = GPT54_OPENAI
        first[7]["pricing"]["prompt"] = "free"
        first[7]["quantization"] = "<i>fp8</i>"

    result = _problems(tmp_path, damage)
    frames, members = result["frames"], result["members"]
    gemma, gpt54, oss = (members.loc[i, "problem"] for i in (1, 3, 4))
    assert f"endpoint {GPT54_OPENAI} is listed more than once" in gpt54
    assert members.loc[3, "endpoints_staged"] == 2
    assert "endpoint #1: id ' ' is not an endpoint id (a UUID)" in gemma  # markup removed
    assert "expected a non-empty string 'provider_slug'" in gemma
    assert "statsByTier.default.window_minutes is None" in oss
    assert "statsByTier key '' is not a service tier" in oss  # markup removed
    assert f"statsByTier.default is of endpoint '{GPT54_OPENAI}', not this one" in oss
    endpoints = frames["openrouter_frontend_endpoints"].set_index("endpoint_id")
    data = model(TRIMMED, "google/gemma-4-31b-it")["endpoint_payload"]["data"]
    assert endpoints.loc[data[1]["id"], "provider_name"] == "DeepInfra"
    assert endpoints.loc[data[7]["id"], "quantization"] == "fp8"
    assert pd.isna(endpoints.loc[data[7]["id"], "price_input_usd_per_mtok"])
    assert "pricing.prompt is 'free'" in endpoints.loc[data[7]["id"], "unread"]
    stats = frames["openrouter_frontend_stats"].set_index(["endpoint_id", "block"])
    hit = stats.loc[(data[3]["id"], "stats")]
    assert pd.isna(hit["output_tokens_per_s_p50"]) and hit["output_tokens_per_s_p75"] == 61.5
    assert pd.isna(hit["ttft_s_p99"]) and pd.isna(hit["output_tokens_per_s_p90"])
    assert pd.isna(hit["request_count"])
    for said in ("p50_throughput is 'fast'", "p90_throughput is -3", "p99_latency is 1e+308"):
        assert said in hit["unread"]
    oss = model(TRIMMED, "openai/gpt-oss-120b")["endpoint_payload"]["data"]
    assert (oss[0]["id"], "statsByTier.default") not in stats.index
    assert (oss[0]["id"], "stats") in stats.index  # its other block stays
    assert len(stats.loc[oss[1]["id"]]) == 2  # stats and default: no row for the markup key
    for frame in frames.values():
        text = frame.astype(str)
        assert not text.apply(lambda column: column.str.contains("<script|<b>|<img")).any().any()


def _daily_points(document: dict[str, Any]) -> list[Any]:
    return model(document, "openai/gpt-5.4")["throughput_payload"]["data"]


def _first_key(document: dict[str, Any], index: int) -> str:
    return next(iter(_daily_points(document)[index]["y"]))


@pytest.mark.parametrize(
    ("change", "dropped", "expected"),
    [
        (
            lambda d: _daily_points(d)[0].update(x="last tuesday"),
            5,  # the day's five figures
            "x is 'last tuesday': expected a day (YYYY-MM-DD 00:00:00)",
        ),
        (
            lambda d: _daily_points(d)[0].update(x="2026-02-30 00:00:00"),
            5,
            "x is '2026-02-30 00:00:00': expected a day",
        ),
        (
            lambda d: _daily_points(d)[1]["y"].update({"no-separator": 5}),
            0,
            "2026-07-12: key 'no-separator' is not 'endpoint-id::tier'",
        ),
        (
            lambda d: _daily_points(d)[1]["y"].update({_first_key(d, 1): "1e999"}),
            1,
            f"2026-07-12 {GPT54_OPENAI}::default is '1e999': expected a number",
        ),
        (
            lambda d: _daily_points(d)[1]["y"].update({_first_key(d, 1): -2}),
            1,
            "::default is -2: expected a positive figure",
        ),
        (lambda d: _daily_points(d).__setitem__(2, ["x", "y"]), 5, "point #3 is not"),
    ],
)
def test_a_bad_daily_figure_is_named_and_the_rest_kept(tmp_path, change, dropped, expected):
    member = _problems(tmp_path, change)["members"].loc[3]
    assert member["problem"].startswith("1 daily figure(s) not read: ")
    assert expected in member["problem"]
    assert member["daily_points_staged"] == 43 - dropped


# --- registry and format -----------------------------------------------------------------------


def test_the_source_is_registered_as_its_own_unscheduled_source():
    source = SOURCES[SOURCE_ID]
    assert (source.publisher, source.kind, source.tier, source.format) == (
        "OpenRouter",
        "benchmark",
        "T1",
        "openrouter_frontend",
    )
    assert not source.scheduled and source.cadence == "half_hourly"
    assert "undocumented" in source.title and "undocumented" in source.notes
    assert source.url.startswith("https://openrouter.ai/api/frontend/v1/stats/endpoint?permaslug=")
    spec = FORMATS["openrouter_frontend"]
    assert spec.content_types == ("application/gzip", "application/json")
    assert spec.extension_for("application/gzip") == "json.gz"
    assert spec.extension_for("application/json") == "json"
    assert PARSERS["openrouter_frontend"].frames == tuple(
        name for name in FRAMES if name.startswith("openrouter_frontend_")
    )

"""OpenRouter's endpoint statistics (GET /api/v1/models/{author}/{slug}/endpoints): the two real
captures in tests/fixtures (one with an API key, one without), read as they came and as members of
a poll bundle, and broken variants of them."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from test_parse_support import FIXTURES, PROVENANCE, in_fixture_store, parse, refused

from pipeline.extract import ExtractError, SnapshotInput
from pipeline.raw.bundle import BundleMember, write_bundle
from pipeline.schema.staging import FRAMES, OPENROUTER_PERCENTILES
from pipeline.sources.formats import BUNDLE_CONTENT_TYPE
from pipeline.sources.registry import Source
from pipeline.support.settings import SQL_DIR

SOURCE_ID = "openrouter-endpoints"
SOURCE = Source(
    id=SOURCE_ID,
    kind="benchmark",
    publisher="OpenRouter",
    url="https://openrouter.ai/api/v1/models",
    tier="T1",
    format="openrouter_endpoints",
    cadence="daily",
)
API = "https://openrouter.ai/api/v1/models"
FLASH_URL = f"{API}/deepseek/deepseek-v4-flash/endpoints"
GPT4O_URL = f"{API}/openai/gpt-4o/endpoints"
FLASH = (
    FIXTURES / "openrouter" / "endpoints" / "deepseek-v4-flash.authenticated.json"
).read_bytes()
GPT4O = (FIXTURES / "openrouter" / "endpoints" / "gpt-4o.unauthenticated.json").read_bytes()
JSON_HEADERS = (("content-type", "application/json; charset=utf-8"),)
FLASH_PRECISIONS = {
    "digitalocean": "unknown",
    "baidu/fp8": "fp8",
    "streamlake/fp8": "fp8",
    "gmicloud/fp8": "fp8",
    "deepinfra/fp8": "fp8",
    "sail-research/fp4": "fp4",
}


def response(tmp_path: Path, data: bytes = FLASH, url: str = FLASH_URL) -> SnapshotInput:
    """One /endpoints response captured as it came (snapshot add)."""
    return in_fixture_store(
        tmp_path, SOURCE_ID, data, retrieved_at="2026-06-13T10:00:00Z", source=SOURCE, url=url
    )


def poll(tmp_path: Path, *members: BundleMember) -> SnapshotInput:
    """One poll round: a bundle of responses."""
    return in_fixture_store(
        tmp_path,
        SOURCE_ID,
        write_bundle(members),
        retrieved_at="2026-06-13T10:30:00Z",
        source=SOURCE,
        extension="bundle",
        content_type=BUNDLE_CONTENT_TYPE,
    )


def member(data: bytes = FLASH, url: str = FLASH_URL, status: int = 200) -> BundleMember:
    return BundleMember(url, status, JSON_HEADERS, data)


def edited(data: bytes, change: Any) -> bytes:
    document = json.loads(data)
    change(document)
    return json.dumps(document).encode()


def endpoint(tag: str) -> Any:
    """A change applying `fn` to the flash endpoint with `tag`."""

    def on(fn: Any) -> Any:
        def change(document: dict[str, Any]) -> None:
            fn(next(e for e in document["data"]["endpoints"] if e["tag"] == tag))

        return change

    return on


def stat_rows(frames: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Each figure of the endpoints' percentile columns as a row (tag, metric, statistic, value,
    with the endpoint's response, model, window and method), as the core SQL reads them."""
    columns = {column: key for key, column in OPENROUTER_PERCENTILES.items()}
    rows = frames["openrouter_endpoints"].melt(
        id_vars=["member_url", "model", "tag", "window_minutes", "method"],
        value_vars=list(columns),
        var_name="column",
        value_name="value",
    )
    rows = rows[rows["value"].notna()]
    rows["metric"] = [columns[column][0] for column in rows["column"]]
    rows["statistic"] = [columns[column][1] for column in rows["column"]]
    return rows


def stats(frames: dict[str, pd.DataFrame]) -> dict[tuple[str, str, str], float]:
    rows = stat_rows(frames)
    return {(r.tag, r.metric, r.statistic): r.value for r in rows.itertuples()}


def test_the_authenticated_capture_gives_six_endpoints_with_their_precisions(
    tmp_path: Path,
) -> None:
    frames = parse(response(tmp_path))
    rows = frames["openrouter_endpoints"].set_index("tag")
    assert dict(rows["precision"]) == FLASH_PRECISIONS
    assert set(rows["model"]) == {"deepseek/deepseek-v4-flash"}
    assert rows["quantization_known"].all()
    assert tuple(rows.loc["sail-research/fp4", ["provider_name", "tag_root", "tag_suffix"]]) == (
        "Sail Research",
        "sail-research",
        "fp4",
    )
    assert pd.isna(rows.loc["digitalocean", "tag_suffix"])
    assert rows.loc["digitalocean", "quantization"] == "unknown"
    baidu = rows.loc["baidu/fp8"]
    assert (baidu.context_length, baidu.max_completion_tokens) == (1_048_576, 131_072)
    assert pd.isna(baidu.max_prompt_tokens) and baidu.status == 0
    assert baidu.uptime_last_5m == pytest.approx(99.96309963099631)
    assert baidu.uptime_last_1d == pytest.approx(99.88447061556765)
    assert rows["function_calling"].all()
    assert (rows["member_url"] == FLASH_URL).all()


def test_prices_are_per_million_tokens_net_of_the_discount_which_is_kept(tmp_path: Path) -> None:
    rows = parse(response(tmp_path))["openrouter_endpoints"].set_index("tag")
    prices = ["price_input_usd_per_mtok", "price_output_usd_per_mtok"]
    prices += ["price_cache_read_usd_per_mtok", "discount"]
    assert tuple(rows.loc["baidu/fp8", prices]) == (0.07, 0.14, 0.014, 0.5)
    assert tuple(rows.loc["deepinfra/fp8", prices]) == (0.09, 0.18, 0.018, 0.0)
    assert tuple(rows.loc["digitalocean", prices]) == (0.0679, 0.168, 0.0168, 0.0)
    # The listed prices are already discounted: Baidu, StreamLake and GMICloud list DeepSeek's
    # 0.14 / 0.28 USD per million tokens times (1 - discount). Applying it again would be wrong.
    for tag in ("baidu/fp8", "streamlake/fp8", "gmicloud/fp8"):
        row = rows.loc[tag]
        assert row.price_input_usd_per_mtok / (1 - row.discount) == pytest.approx(0.14)
        assert row.price_output_usd_per_mtok / (1 - row.discount) == pytest.approx(0.28)
    assert rows["price_cache_write_usd_per_mtok"].isna().all()


def test_statistics_are_the_four_percentiles_ttft_in_seconds(tmp_path: Path) -> None:
    frames = parse(response(tmp_path))
    figures = stats(frames)
    assert len(figures) == 6 * 2 * 4
    assert figures[("baidu/fp8", "output_tokens_per_s", "p50")] == 83
    assert figures[("baidu/fp8", "output_tokens_per_s", "p90")] == 115
    assert figures[("baidu/fp8", "ttft_s", "p50")] == pytest.approx(0.683)  # 683 ms
    assert figures[("baidu/fp8", "ttft_s", "p90")] == pytest.approx(1.6369)
    assert figures[("digitalocean", "ttft_s", "p99")] == pytest.approx(27.32666)
    assert figures[("sail-research/fp4", "output_tokens_per_s", "p99")] == 145
    endpoint = frames["openrouter_endpoints"].set_index("tag").loc["baidu/fp8"]
    assert (endpoint["output_tokens_per_s_p50"], endpoint["output_tokens_per_s_p99"]) == (83, 141)
    assert endpoint["ttft_s_p50"] == pytest.approx(0.683)
    rows = stat_rows(frames)
    assert set(rows["window_minutes"]) == {30}
    assert set(rows["method"]) == {"percentiles of live routed traffic"}
    assert set(rows["member_url"]) == {FLASH_URL}
    members = frames["openrouter_poll_members"].drop(columns=PROVENANCE)
    assert members.astype(object).where(members.notna(), None).to_dict("records") == [
        {
            "member_index": 1,
            "member_url": FLASH_URL,
            "http_status": 200,
            "model": "deepseek/deepseek-v4-flash",
            "endpoints_listed": 6,
            "endpoints_staged": 6,
            "endpoints_without_statistics": 0,
            "problem": None,
        }
    ]


def test_without_an_api_key_the_endpoints_are_listed_with_no_statistics(tmp_path: Path) -> None:
    frames = parse(response(tmp_path, GPT4O, GPT4O_URL))
    rows = frames["openrouter_endpoints"].set_index("tag")
    assert list(rows.index) == ["openai", "azure"]
    assert tuple(rows["status"]) == (0, -2)
    assert tuple(rows["price_input_usd_per_mtok"]) == (2.5, 2.5)
    assert rows.loc["openai", "price_cache_read_usd_per_mtok"] == 1.25
    assert pd.isna(rows.loc["azure", "price_cache_read_usd_per_mtok"])
    # null is not measured: a null figure, never 0
    assert rows[list(OPENROUTER_PERCENTILES.values())].isna().all().all()
    member_row = frames["openrouter_poll_members"].iloc[0]
    assert (member_row.endpoints_staged, member_row.endpoints_without_statistics) == (2, 2)
    assert pd.isna(member_row.problem)


def test_a_poll_bundle_keeps_each_row_traceable_to_its_response(tmp_path: Path) -> None:
    frames = parse(poll(tmp_path, member(FLASH, FLASH_URL), member(GPT4O, GPT4O_URL)))
    rows = frames["openrouter_endpoints"]
    assert len(rows) == 8
    assert dict(rows.groupby("member_url")["model"].first()) == {
        FLASH_URL: "deepseek/deepseek-v4-flash",
        GPT4O_URL: "openai/gpt-4o",
    }
    assert set(stat_rows(frames)["member_url"]) == {FLASH_URL}
    members = frames["openrouter_poll_members"].set_index("member_index")
    assert list(members["endpoints_without_statistics"]) == [0, 2]
    assert members["problem"].isna().all()


def test_the_bundle_and_the_plain_response_give_the_same_rows(tmp_path: Path) -> None:
    plain = parse(response(tmp_path / "a"))
    bundled = parse(poll(tmp_path / "b", member()))
    for name in ("openrouter_endpoints", "openrouter_poll_members"):
        pd.testing.assert_frame_equal(
            plain[name].drop(columns=PROVENANCE), bundled[name].drop(columns=PROVENANCE)
        )


# One bad response, or one bad endpoint, stays with its member.


def test_responses_that_failed_are_reported_and_the_rest_is_read(tmp_path: Path) -> None:
    frames = parse(
        poll(
            tmp_path,
            member(FLASH, FLASH_URL),
            member(
                b'{"error": {"code": 429, "message": "Rate limit"}}', f"{API}/a/b/endpoints", 429
            ),
            member(b"<html>502 Bad Gateway</html>", f"{API}/a/c/endpoints", 502),
            member(b'{"data": {"id": "a/d", "endpoints": [', f"{API}/a/d/endpoints"),
            member(b'{"data": []}', f"{API}/a/e/endpoints"),
            member(
                b'{"error": {"code": 404, "message": "<b>No</b> model"}}', f"{API}/a/f/endpoints"
            ),
            member(b'{"data": {"id": "a/g", "endpoints": []}}', f"{API}/a/g/endpoints"),
            member(b'{"data": "\xff"}', f"{API}/a/h/endpoints"),
            member(GPT4O, GPT4O_URL),
        )
    )
    assert len(frames["openrouter_endpoints"]) == 8
    members = frames["openrouter_poll_members"].set_index("member_index")
    assert list(members["http_status"]) == [200, 429, 502, 200, 200, 200, 200, 200, 200]
    problems = members["problem"]
    assert problems[2] == "HTTP 429" and problems[3] == "HTTP 502"
    assert problems[4].startswith("not valid JSON")
    assert problems[5] == "expected {'data': {'id': 'author/slug', 'endpoints': [endpoint, ...]}}"
    assert problems[6].endswith("(the API said: 'No model')")
    assert pd.isna(problems[7]) and members.loc[7, "endpoints_listed"] == 0  # none listed is fine
    assert "not valid utf-8 at byte offset" in problems[8]
    assert problems[[1, 7, 9]].isna().all()
    assert list(members["endpoints_staged"]) == [6, 0, 0, 0, 0, 0, 0, 0, 2]
    assert members.loc[2:6, "model"].isna().all() and members.loc[7, "model"] == "a/g"


def test_nothing_readable_is_an_error_naming_each_response(tmp_path: Path) -> None:
    snapshot = poll(
        tmp_path,
        member(b"{}", f"{API}/a/b/endpoints", 500),
        member(b"[]", f"{API}/a/c/endpoints"),
    )
    refused(
        snapshot,
        snapshot.data,
        "no endpoint could be read from any of the 2 responses",
        f"member #1 ({API}/a/b/endpoints): HTTP 500",
        f"member #2 ({API}/a/c/endpoints): expected {{'data'",
    )


def test_a_poll_of_many_failures_gives_a_short_error(tmp_path: Path) -> None:
    failures = [member(b"{}", f"{API}/m/{i}/endpoints", 503) for i in range(1_000)]
    snapshot = poll(tmp_path, *failures)
    message = refused(snapshot, snapshot.data, "of the 1000 responses", "and 995 more")
    assert message.count("HTTP 503") == 5


@pytest.mark.parametrize(
    "data", [b"", b"not json", b"[]", b"{}", b'{"data": []}', b'{"data": {"id": "x"}}']
)
def test_a_plain_response_of_the_wrong_shape_is_refused(tmp_path: Path, data: bytes) -> None:
    message = refused(response(tmp_path), data, "no endpoint could be read from the response")
    assert "not valid JSON" in message or "expected {'data': {'id'" in message


def test_an_error_body_says_what_the_api_said(tmp_path: Path) -> None:
    data = b'{"error": {"code": 401, "message": "No auth credentials found"}}'
    refused(response(tmp_path), data, "(the API said: 'No auth credentials found')")


def test_the_same_model_twice_in_one_poll_keeps_the_first(tmp_path: Path) -> None:
    frames = parse(poll(tmp_path, member(), member(url=f"{API}/deepseek/alias/endpoints")))
    assert len(frames["openrouter_endpoints"]) == 6
    second = frames["openrouter_poll_members"].iloc[1]
    assert second.problem == "model 'deepseek/deepseek-v4-flash' was read from member #1 already"


def test_a_percentile_missing_or_null_has_no_row(tmp_path: Path) -> None:
    def change(document: dict[str, Any]) -> None:
        endpoints = {e["tag"]: e for e in document["data"]["endpoints"]}
        del endpoints["baidu/fp8"]["latency_last_30m"]["p90"]
        endpoints["baidu/fp8"]["throughput_last_30m"]["p99"] = None
        endpoints["deepinfra/fp8"]["latency_last_30m"] = None
        endpoints["gmicloud/fp8"]["throughput_last_30m"] = {}
        del endpoints["digitalocean"]["throughput_last_30m"]

    frames = parse(response(tmp_path), edited(FLASH, change))
    figures = stats(frames)
    assert len(figures) == 48 - 1 - 1 - 4 - 4 - 4
    assert ("baidu/fp8", "ttft_s", "p90") not in figures
    assert figures[("baidu/fp8", "ttft_s", "p99")] == pytest.approx(6.32708)
    assert not any(key[0] == "deepinfra/fp8" and key[1] == "ttft_s" for key in figures)
    assert (stat_rows(frames)["value"] > 0).all()
    assert frames["openrouter_poll_members"].iloc[0].endpoints_without_statistics == 0
    assert len(frames["openrouter_endpoints"]) == 6


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (
            lambda e: e["latency_last_30m"].__setitem__("p50", "fast"),
            "endpoint 'baidu/fp8': latency_last_30m.p50 is not a number: 'fast'",
        ),
        (
            lambda e: e["throughput_last_30m"].__setitem__("p90", 0),
            "endpoint 'baidu/fp8': throughput_last_30m.p90 is 0: expected a positive figure",
        ),
        (
            lambda e: e["throughput_last_30m"].__setitem__("p50", -3),
            "throughput_last_30m.p50 is -3: expected a positive figure or null",
        ),
        (
            lambda e: e["latency_last_30m"].__setitem__("p99", 4_000_000),
            "latency_last_30m.p99 is 4000000: expected a positive figure",
        ),
        (
            lambda e: e.__setitem__("latency_last_30m", [683, 904]),
            "latency_last_30m is not an object of percentiles",
        ),
        (
            lambda e: e["pricing"].__setitem__("prompt", "cheap"),
            "pricing.prompt is not a number: 'cheap'",
        ),
        (
            lambda e: e["pricing"].__setitem__("prompt", "-0.5"),
            "pricing.prompt is negative: '-0.5'",
        ),
        (
            lambda e: e["pricing"].__setitem__("prompt", "0.5"),
            "pricing.prompt is '0.5': not a price",
        ),
        (
            lambda e: e["pricing"].__setitem__("discount", 1.5),
            "pricing.discount is 1.5: expected 0",
        ),
        (lambda e: e.__setitem__("pricing", "free"), "pricing is not an object"),
        (
            lambda e: e.__setitem__("context_length", "1M"),
            "context_length is not a positive whole number: '1M'",
        ),
        (
            lambda e: e.__setitem__("max_completion_tokens", 10**30),
            "max_completion_tokens is 1000000000000000000000000000000: expected at most",
        ),
        (
            lambda e: e.__setitem__("context_length", 10**400),
            "context_length is 1000000000000000000000000000000000000",
        ),
        (lambda e: e.__setitem__("status", 10**400), "status is not a status code"),
        (
            lambda e: e.__setitem__("uptime_last_5m", 120),
            "uptime_last_5m is 120: expected 0 to 100",
        ),
        (lambda e: e.__setitem__("status", "up"), "status is not a status code: 'up'"),
        (lambda e: e.__setitem__("quantization", 8), "quantization is not a string: 8"),
        (
            lambda e: e.__setitem__("provider_name", None),
            "expected a non-empty string 'provider_name'",
        ),
    ],
)
def test_an_endpoint_with_a_malformed_field_is_left_out_and_reported(
    tmp_path: Path, change: Any, problem: str
) -> None:
    frames = parse(response(tmp_path), edited(FLASH, endpoint("baidu/fp8")(change)))
    assert "baidu/fp8" not in set(frames["openrouter_endpoints"]["tag"])
    assert "baidu/fp8" not in set(stat_rows(frames)["tag"])
    assert len(frames["openrouter_endpoints"]) == 5
    row = frames["openrouter_poll_members"].iloc[0]
    assert problem in row.problem, row.problem
    assert row.problem.startswith("endpoint 'baidu/fp8': ")
    assert (row.endpoints_listed, row.endpoints_staged) == (6, 5)


def test_a_price_text_refused_before_is_refused_again_naming_the_field_it_is_in(
    tmp_path: Path,
) -> None:
    # prices and labels are remembered per process: a refusal must not be, nor its field's name
    for number, key in enumerate(("prompt", "completion", "prompt")):
        change = endpoint("baidu/fp8")(lambda e, key=key: e["pricing"].__setitem__(key, "0.5"))
        frames = parse(response(tmp_path / str(number)), edited(FLASH, change))
        problem = frames["openrouter_poll_members"].iloc[0].problem
        assert f"pricing.{key} is '0.5': not a price" in problem, problem
        assert len(frames["openrouter_endpoints"]) == 5


def test_each_percentile_row_names_its_own_response_model_and_endpoint(tmp_path: Path) -> None:
    # the rows are built as columns: an endpoint without figures, a tag listed twice (both left
    # out) and a response without figures between others must not shift any row onto another
    def shuffled(document: dict[str, Any]) -> None:
        endpoints = document["data"]["endpoints"]
        endpoints[1]["latency_last_30m"] = endpoints[1]["throughput_last_30m"] = None
        endpoints.insert(3, dict(endpoints[2]))  # the third endpoint's tag, twice

    flash = edited(FLASH, shuffled)
    other = f"{API}/deepseek/deepseek-v4-flash-copy/endpoints"
    copy = edited(FLASH, lambda d: d["data"].__setitem__("id", "deepseek/deepseek-v4-flash-copy"))
    frames = parse(poll(tmp_path, member(flash), member(GPT4O, GPT4O_URL), member(copy, other)))
    source = json.loads(FLASH)["data"]["endpoints"]
    figures = {
        (e["tag"], metric, statistic): e[key][statistic] / divisor
        for e in source
        for metric, key, divisor in (
            ("output_tokens_per_s", "throughput_last_30m", 1),
            ("ttft_s", "latency_last_30m", 1000),
        )
        for statistic in ("p50", "p75", "p90", "p99")
        if e[key] and e[key].get(statistic) is not None
    }
    rows = stat_rows(frames)
    left_out = {source[1]["tag"], source[2]["tag"]}  # no figures; listed twice
    by_member = {
        FLASH_URL: ("deepseek/deepseek-v4-flash", left_out),
        other: ("deepseek/deepseek-v4-flash-copy", set()),
    }
    assert set(rows["member_url"]) == set(by_member)  # gpt-4o's response has no figures
    for url, (model, absent) in by_member.items():
        mine = rows[rows["member_url"] == url]
        assert set(mine["model"]) == {model}
        assert set(mine["tag"]) == {e["tag"] for e in source} - absent
        for row in mine.itertuples():
            assert row.value == pytest.approx(figures[(row.tag, row.metric, row.statistic)])


def test_a_label_is_cleaned_as_json_label_cleans_it_and_a_short_one_remembered() -> None:
    from pipeline.extract import openrouter_endpoints as parser
    from pipeline.extract.jsondoc import json_label
    from pipeline.support.text import _remembered_clean_text

    _remembered_clean_text.cache_clear()  # a full cache would keep its size whatever is added
    long = "<b>Provider</b> " + "x" * 5_000
    assert parser._label(long) == json_label(long)
    assert _remembered_clean_text.cache_info().currsize == 0
    assert parser._label(" Provider  18 ") == json_label(" Provider  18 ") == "Provider 18"
    assert _remembered_clean_text.cache_info().currsize == 1  # a short one is kept
    assert parser._label("<i></i>") is None is json_label("<i></i>")  # nothing left
    assert parser._label(5) is None


def test_a_number_written_as_a_string_is_read(tmp_path: Path) -> None:
    data = edited(FLASH, endpoint("baidu/fp8")(lambda e: e["latency_last_30m"].update(p50="683")))
    assert stats(parse(response(tmp_path), data))[("baidu/fp8", "ttft_s", "p50")] == 0.683


@pytest.mark.parametrize(
    ("label", "precision", "known"),
    [
        ("fp5", "unknown", False),
        ("MXFP4", "fp4", True),
        ("nvfp4", "fp4", True),
        (None, "unknown", True),
    ],
)
def test_quantization_labels(
    tmp_path: Path, label: str | None, precision: str, known: bool
) -> None:
    data = edited(FLASH, endpoint("deepinfra/fp8")(lambda e: e.__setitem__("quantization", label)))
    rows = parse(response(tmp_path), data)["openrouter_endpoints"].set_index("tag")
    row = rows.loc["deepinfra/fp8"]
    assert (row.precision, bool(row.quantization_known)) == (precision, known)
    assert (row.quantization if label else None) == label  # kept as written, never rejected
    assert len(rows) == 6


def test_a_tag_listed_twice_leaves_out_both_copies(tmp_path: Path) -> None:
    def change(document: dict[str, Any]) -> None:
        document["data"]["endpoints"][1]["tag"] = "deepinfra/fp8"

    frames = parse(response(tmp_path), edited(FLASH, change))
    assert "deepinfra/fp8" not in set(frames["openrouter_endpoints"]["tag"])
    assert len(frames["openrouter_endpoints"]) == 4
    problem = frames["openrouter_poll_members"].iloc[0].problem
    assert problem == "endpoint 'deepinfra/fp8' is listed more than once"


def test_regions_and_service_tiers_in_the_tag(tmp_path: Path) -> None:
    def change(document: dict[str, Any]) -> None:
        endpoints = document["data"]["endpoints"]
        endpoints[0]["tag"] = "amazon-bedrock/eu-west-1"
        endpoints[1]["tag"] = "fireworks/fast"

    rows = parse(response(tmp_path), edited(FLASH, change))["openrouter_endpoints"]
    split = {r.tag: (r.tag_root, r.tag_suffix) for r in rows.itertuples()}
    assert split["amazon-bedrock/eu-west-1"] == ("amazon-bedrock", "eu-west-1")
    assert split["fireworks/fast"] == ("fireworks", "fast")


def test_markup_in_names_comes_out_as_clean_text(tmp_path: Path) -> None:
    def change(document: dict[str, Any]) -> None:
        document["data"]["id"] = "<script>alert(1)</script>deepseek/deepseek-v4-flash"
        endpoints = document["data"]["endpoints"]
        endpoints[0]["provider_name"] = "<img src=x onerror=alert(1)>Digital\u200bOcean"
        endpoints[1]["tag"] = "baidu/<b>fp8</b>"
        endpoints[2]["tag"] = "<script>x()</script>"  # nothing left: not an endpoint

    frames = parse(response(tmp_path), edited(FLASH, change))
    rows = frames["openrouter_endpoints"].set_index("tag")
    assert set(rows["model"]) == {"deepseek/deepseek-v4-flash"}
    assert rows.loc["digitalocean", "provider_name"] == "DigitalOcean"
    assert rows.loc["baidu/fp8", "tag_suffix"] == "fp8"
    problem = frames["openrouter_poll_members"].iloc[0].problem
    assert problem == "endpoint #3: expected a non-empty string 'tag'"


def test_a_truncated_bundle_is_refused(tmp_path: Path) -> None:
    snapshot = poll(tmp_path, member(), member(GPT4O, GPT4O_URL))
    refused(snapshot, snapshot.data[:-500], "not a readable bundle: member #2 of 2", "truncated")


def test_a_damaged_bundle_member_is_refused(tmp_path: Path) -> None:
    snapshot = poll(tmp_path, member())
    data = snapshot.data.replace(b'"p50": 683', b'"p50": 684')
    refused(snapshot, data, "not a readable bundle: member #1 of 1", "body sha256")


def test_a_bundle_of_no_responses_is_refused(tmp_path: Path) -> None:
    snapshot = poll(tmp_path)
    refused(snapshot, snapshot.data, "the bundle holds no responses")


def test_errors_start_with_the_snapshot_id(tmp_path: Path) -> None:
    snapshot = response(tmp_path)
    with pytest.raises(ExtractError) as caught:
        parse(snapshot, b"{")
    assert str(caught.value).startswith(f"{SOURCE_ID}/20260613T100000Z-")


@pytest.mark.e2e
@pytest.mark.timeout(180)
def test_a_response_of_100000_endpoints_parses_in_reasonable_time(tmp_path: Path) -> None:
    document = json.loads(FLASH)
    real = document["data"]["endpoints"]
    many = []
    for i in range(100_000):
        copy = dict(real[i % 6])
        copy["tag"] = f"{real[i % 6]['tag']}-{i}"
        many.append(copy)
    document["data"]["endpoints"] = many
    data = json.dumps(document).encode()
    started = time.perf_counter()
    frames = parse(response(tmp_path), data)
    assert time.perf_counter() - started < 150  # generous: a shared 2-core machine
    assert len(frames["openrouter_endpoints"]) == 100_000
    assert len(stat_rows(frames)) == 800_000
    assert frames["openrouter_poll_members"].iloc[0].endpoints_staged == 100_000


def test_the_percentile_columns_are_the_models_and_the_core_sqls() -> None:
    """Each percentile column is in the model and in what the core SQL's UNPIVOT of the routers'
    rows reads: a column one of them lacked would be a figure never staged, or never made an
    observation (and the UNPIVOT takes no other column of either router's rows)."""
    columns = set(OPENROUTER_PERCENTILES.values())
    model = FRAMES["openrouter_endpoints"].to_schema().columns
    assert columns <= set(model)
    assert {c for c in model if c.startswith(("output_tokens_per_s_", "ttft_s_"))} == columns
    sql = (SQL_DIR / "core" / "10_observations.sql").read_text(encoding="utf-8")
    unpivoted = re.search(r"UNPIVOT routers\s+ON COLUMNS\('([^']*)'\)\s+INTO", sql)
    assert unpivoted is not None
    pattern = re.compile(unpivoted.group(1))
    assert {c for c in model if pattern.search(c)} == columns
    gateway = FRAMES["vercel_gateway_endpoints"].to_schema().columns
    read = {c for c in gateway if pattern.search(c)}
    assert read == {c for c in gateway if c.startswith(("output_tokens_per_s_", "ttft_s_"))}
    assert read

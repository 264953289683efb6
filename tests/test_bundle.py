"""The bundle container (pipeline/raw/bundle.py): real /endpoints responses round-trip byte for
byte; credentials never get in; every kind of damage is refused naming the member."""

from __future__ import annotations

import hashlib
import io
import json

import pytest
from conftest import FIXTURES

from pipeline.raw.bundle import (
    MAX_BODY_BYTES,
    MAX_MEMBERS,
    BundleError,
    BundleMember,
    is_bundle,
    iter_bundle,
    read_bundle,
    write_bundle,
)

ENDPOINTS = FIXTURES / "openrouter" / "endpoints"
API = "https://openrouter.ai/api/v1/models"
HEADERS = (
    ("Content-Type", "application/json; charset=utf-8"),
    ("Date", "Sat, 13 Jun 2026 10:00:00 GMT"),
    ("Vary", "Accept-Encoding"),
    ("Vary", "Origin"),  # repeated headers stay, in order
)


def members() -> list[BundleMember]:
    """The two real captures, and a 429 as a poll meets one."""
    return [
        BundleMember(
            f"{API}/deepseek/deepseek-v4-flash/endpoints",
            200,
            HEADERS,
            (ENDPOINTS / "deepseek-v4-flash.authenticated.json").read_bytes(),
        ),
        BundleMember(
            f"{API}/openai/gpt-4o/endpoints",
            200,
            HEADERS,
            (ENDPOINTS / "gpt-4o.unauthenticated.json").read_bytes(),
        ),
        BundleMember(
            f"{API}/x/y/endpoints", 429, (("Retry-After", "7"),), b'{"error": "rate limited"}\n'
        ),
    ]


def lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def test_members_round_trip_exactly() -> None:
    data = write_bundle(members())
    assert is_bundle(data)
    assert data.startswith(b'{"speedbook_bundle":1,"members":3}\n')
    back = read_bundle(data)
    assert back == members()
    assert back[0].body == (ENDPOINTS / "deepseek-v4-flash.authenticated.json").read_bytes()
    assert back[0].content_type == "application/json; charset=utf-8"
    assert back[2].header("retry-after") == "7" and back[2].status == 429


def test_the_same_members_give_the_same_bytes() -> None:
    assert write_bundle(members()) == write_bundle(members())


def test_each_member_line_names_url_status_size_and_sha256() -> None:
    data = write_bundle(members())
    meta = json.loads(lines(data)[1])
    body = (ENDPOINTS / "deepseek-v4-flash.authenticated.json").read_bytes()
    assert meta == {
        "headers": [list(pair) for pair in HEADERS],
        "sha256": hashlib.sha256(body).hexdigest(),
        "size": len(body),
        "status": 200,
        "url": f"{API}/deepseek/deepseek-v4-flash/endpoints",
    }


def test_it_streams_one_member_at_a_time() -> None:
    stream = io.BytesIO(write_bundle(members()))
    reader = iter_bundle(stream)
    first = next(reader)
    assert first.url.endswith("deepseek-v4-flash/endpoints")
    # Read up to the end of the first body and its newline, no further.
    assert stream.getvalue()[stream.tell() :].startswith(b'{"headers":[["Content-Type"')
    assert stream.tell() < len(stream.getvalue()) - 2_000
    assert [m.status for m in reader] == [200, 429]


def test_empty_bodies_and_empty_bundles() -> None:
    empty = BundleMember(f"{API}/a/b/endpoints", 204, (), b"")
    assert read_bundle(write_bundle([empty])) == [empty]
    assert read_bundle(write_bundle([])) == []


def test_a_body_with_any_bytes_is_kept_exactly() -> None:
    body = bytes(range(256)) * 3 + b"\n\n{" + b"\xff\xfe"
    member = BundleMember(f"{API}/a/b/endpoints", 200, (), body)
    assert read_bundle(write_bundle([member]))[0].body == body


@pytest.mark.parametrize(
    "name",
    ["Authorization", "x-api-key", "X-API-KEY", "Cookie", "set-cookie", "Proxy-Authorization"],
)
def test_credential_headers_never_get_into_a_bundle(name: str) -> None:
    secret = "sk-or-v1-SENTINEL-0123456789"
    member = BundleMember(f"{API}/a/b/endpoints", 200, ((name, secret), ("Date", "x")), b"{}")
    data = write_bundle([member])
    assert secret.encode() not in data
    assert read_bundle(data)[0].headers == (("Date", "x"),)


def test_credential_headers_written_by_something_else_are_dropped_on_reading() -> None:
    data = write_bundle([BundleMember(f"{API}/a/b/endpoints", 200, (("Date", "x"),), b"{}")])
    forged = data.replace(b'[["Date","x"]]', b'[["Date","x"],["Authorization","Bearer s"]]')
    assert forged != data
    assert read_bundle(forged)[0].headers == (("Date", "x"),)


# Damaged bundles: each refused with the member and what was expected.


def refused(data: bytes, *expected: str) -> str:
    with pytest.raises(BundleError) as caught:
        read_bundle(data)
    message = str(caught.value)
    for part in expected:
        assert part in message, f"{part!r} not in {message!r}"
    assert len(message) < 600
    return message


@pytest.mark.parametrize("cut", [10, 40, 60, 3_000, 9_600, -200, -1])
def test_a_truncated_bundle(cut: int) -> None:
    data = write_bundle(members())
    message = refused(data[:cut])
    assert "truncated" in message or "expected a newline" in message, message


def test_a_body_cut_short_names_its_member_and_sizes() -> None:
    data = write_bundle(members())
    size = len((ENDPOINTS / "deepseek-v4-flash.authenticated.json").read_bytes())
    end_of_meta = data.index(b"\n", data.index(b"\n") + 1) + 1
    refused(
        data[: end_of_meta + 100],
        "member #1 of 3",
        "deepseek-v4-flash/endpoints",
        f"expected {size:,} body bytes, found 100 (truncated bundle)",
    )


def test_a_bundle_cut_at_a_member_boundary_is_truncated_too() -> None:
    data = write_bundle(members())
    boundary = data.index(b'{"headers":[["Retry-After"')
    refused(data[:boundary], "member #3 of 3", "found the end of the bundle (truncated)")


def test_a_changed_body_byte_fails_its_sha256() -> None:
    data = write_bundle(members())
    damaged = data.replace(b'"p50": 683', b'"p50": 684', 1)
    assert damaged != data and len(damaged) == len(data)
    refused(damaged, "member #1 of 3", "body sha256 is", "expected")


def test_a_size_that_does_not_match_the_body() -> None:
    data = write_bundle(members()[2:])
    size = len(b'{"error": "rate limited"}\n')
    longer = data.replace(f'"size":{size}'.encode(), f'"size":{size - 3}'.encode())
    refused(longer, "member #1 of 1", f"expected a newline after its {size - 3} body bytes")
    shorter = data.replace(f'"size":{size}'.encode(), f'"size":{size + 5}'.encode())
    refused(shorter, "member #1 of 1", f"expected {size + 5} body bytes, found {size + 1}")


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (b'{"speedbook_bundle":2,"members":0}', "version 2 is not 1"),
        (b'{"speedbook_bundle":true,"members":0}', "version True is not 1"),
        (b'{"speedbook_bundle":1,"members":-1}', "members -1 is not a whole number"),
        (b'{"speedbook_bundle":1,"members":"3"}', "members '3' is not a whole number"),
        (b'{"speedbook_bundle":1}', "expected exactly the keys"),
        (b'{"speedbook_bundle":1,"members":0,"x":1}', "expected exactly the keys"),
        (b'{"speedbook_bundle":1,"members":0,"members":0}', "bundle header: expected"),
        (b'{"speedbook_bundle":1,"members":' + str(MAX_MEMBERS + 1).encode() + b"}", "cap"),
        (b'{"data": {"id": "x"}}', "bundle header: expected"),
        (b"", "bundle header: expected"),
        (b"\x00" * 10, "bundle header: expected"),
    ],
)
def test_a_bad_header(header: bytes, expected: str) -> None:
    refused(header + b"\n", expected)


def test_a_header_line_with_no_end() -> None:
    refused(b'{"speedbook_bundle":1,"members":0' + b" " * 2_000_000, "line longer than")


def test_fewer_members_than_announced() -> None:
    data = write_bundle(members()).replace(b'"members":3', b'"members":4', 1)
    refused(data, "member #4 of 4", "found the end of the bundle (truncated)")


@pytest.mark.parametrize("garbage", [b"x", b"\n", b"{}\n", b'{"speedbook_bundle":1,"members":0}\n'])
def test_trailing_garbage(garbage: bytes) -> None:
    refused(write_bundle(members()) + garbage, "unexpected bytes after the last of 3 members")


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (b'"status":429', b'"status":"429"', "status '429' is not an HTTP status code"),
        (b'"status":429', b'"status":99', "status 99 is not an HTTP status code"),
        (b'"url":"https://openrouter.ai', b'"url":"javascript:alert(1)//', "not an http(s) URL"),
        (b'"sha256":"', b'"sha256":"zz', "is not 64 lowercase hex digits"),
        (b'"size":', b'"size":-', "is not a whole number"),
        (b'"headers":[["Retry-After","7"]]', b'"headers":{"a":"b"}', "headers is not a list"),
        (b'"headers":[["Retry-After","7"]]', b'"headers":[["a"]]', "is not a [name, value] pair"),
        (b'"headers":[["Retry-After","7"]],', b"", "expected the keys headers, sha256"),
        (b'{"headers":[["Retry-After"', b'["headers",[["Retry-After"', "its metadata line"),
    ],
)
def test_a_bad_member_line(old: bytes, new: bytes, expected: str) -> None:
    data = write_bundle(members()[2:])
    assert old in data
    refused(data.replace(old, new, 1), "member #1 of 1", expected)


def test_a_size_over_the_cap_is_refused_before_reading() -> None:
    data = write_bundle(members()[2:]).replace(
        b'"size":26', f'"size":{MAX_BODY_BYTES + 1}'.encode()
    )
    refused(data, "is over the", "cap")


@pytest.mark.parametrize(
    ("member", "expected"),
    [
        (BundleMember("ftp://x/y", 200, (), b""), "is not an http(s) URL"),
        (BundleMember(f"{API}/a", 1000, (), b""), "status 1000 is not an HTTP status code"),
        (BundleMember(f"{API}/a", True, (), b""), "status True is not an HTTP status code"),
        (BundleMember(f"{API}/a", 200, (), "text"), "body is str, expected bytes"),  # type: ignore[arg-type]
        (BundleMember(f"{API}/a", 200, (("a",),), b""), "is not a (name, value) pair"),  # type: ignore[arg-type]
    ],
)
def test_writing_refuses_what_could_not_be_read_back(member: BundleMember, expected: str) -> None:
    with pytest.raises(BundleError, match=r"member #1: ") as caught:
        write_bundle([member])
    assert expected in str(caught.value)


@pytest.mark.timeout(60)
def test_many_members_read_in_reasonable_time() -> None:
    body = (ENDPOINTS / "gpt-4o.unauthenticated.json").read_bytes()
    many = [BundleMember(f"{API}/m/{i}/endpoints", 200, HEADERS, body) for i in range(20_000)]
    data = write_bundle(many)
    assert len(read_bundle(data)) == 20_000

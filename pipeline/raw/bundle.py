"""A bundle: many HTTP responses in one snapshot, each with its URL, status, received headers and
body bytes exactly as received. One OpenRouter poll round (one `/endpoints` request per model) is
one bundle, so a year of half-hourly polls is 17,520 snapshots rather than millions of files.

The format (media type `application/vnd.speedbook.bundle`, file extension `.bundle`)::

    {"speedbook_bundle":1,"members":N}\\n
    {"headers":[[name,value],...],"sha256":"<hex>","size":S,"status":200,"url":"https://..."}\\n
    <exactly S body bytes>\\n
    ... N members in all, then nothing.

Each metadata line is compact JSON with sorted keys and ASCII only (JSON escapes every control
character, so a line never holds a raw newline); the bytes that follow it are the body as
received, not re-encoded, so `size` and `sha256` describe exactly what the server sent. The file
is read front to back with no index, so it streams both ways, and the member count in the first
line makes a bundle cut at a member boundary as detectable as one cut inside a body. It is not
JSON Lines (bodies may hold newlines and any bytes), hence its own media type rather than
`+jsonl`.

Headers are the response headers, in the order received, names as the server spelt them.
Credentials are never part of a bundle: request headers are not stored at all, and any
`authorization`, `proxy-authorization`, `x-api-key`, `cookie` or `set-cookie` header is dropped
on writing and again on reading.

Reading refuses, naming the member and what was expected: a bad or missing first line, a
metadata line that is not the object above, a body shorter than its `size` (a truncated bundle),
a `sha256` that does not match, a missing newline after a body, fewer members than announced and
bytes after the last member. Sizes are capped (`MAX_MEMBERS`, `MAX_BODY_BYTES`, `MAX_LINE_BYTES`).
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import BinaryIO
from urllib.parse import urlsplit

from pipeline.sources.formats import MAX_MEMBERS
from pipeline.support import strict_json

VERSION = 1
MAGIC = b'{"speedbook_bundle":'  # every bundle starts with these bytes

MAX_BODY_BYTES = 64 * 1024 * 1024
MAX_LINE_BYTES = 1024 * 1024
MAX_URL_LENGTH = 2048

# Never stored: they carry credentials (ours in a request, the server's in a response).
SECRET_HEADERS = frozenset(
    ("authorization", "proxy-authorization", "x-api-key", "cookie", "set-cookie")
)

_SHA256 = re.compile(r"[0-9a-f]{64}")
_MEMBER_KEYS = ("headers", "sha256", "size", "status", "url")


class BundleError(ValueError):
    """Bytes that are not a well-formed bundle, or a member that cannot be written into one."""


@dataclass(frozen=True)
class BundleMember:
    """One HTTP response: where it came from, its status, its headers and its body."""

    url: str
    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes

    def header(self, name: str) -> str | None:
        """The first header called `name` (any case), or None."""
        wanted = name.casefold()
        return next((value for key, value in self.headers if key.casefold() == wanted), None)

    @property
    def content_type(self) -> str | None:
        return self.header("content-type")


def public_headers(headers: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """The headers without any that carry credentials (SECRET_HEADERS), order kept."""
    return tuple(
        (name, value) for name, value in headers if name.strip().casefold() not in SECRET_HEADERS
    )


def is_bundle(data: bytes) -> bool:
    """True when the bytes start as a bundle does (a plain JSON response never does)."""
    return data.startswith(MAGIC)


def _web_url(url: object) -> bool:
    if not isinstance(url, str) or not url or len(url) > MAX_URL_LENGTH:
        return False
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def _check_member(member: BundleMember, where: str) -> None:
    if not _web_url(member.url):
        raise BundleError(f"{where}: url {member.url!r:.120} is not an http(s) URL")
    if isinstance(member.status, bool) or not isinstance(member.status, int):
        raise BundleError(f"{where}: status {member.status!r} is not an HTTP status code")
    if not 100 <= member.status <= 599:
        raise BundleError(f"{where}: status {member.status} is not an HTTP status code")
    if not isinstance(member.body, bytes):
        raise BundleError(f"{where}: body is {type(member.body).__name__}, expected bytes")
    if len(member.body) > MAX_BODY_BYTES:
        raise BundleError(
            f"{where}: body of {len(member.body):,} bytes is over the {MAX_BODY_BYTES:,} cap"
        )
    for pair in member.headers:
        if len(pair) != 2 or not all(isinstance(part, str) for part in pair):
            raise BundleError(f"{where}: header {pair!r:.120} is not a (name, value) pair")


def write_bundle(members: Iterable[BundleMember]) -> bytes:
    """The bundle of `members`, in their order. Same members, same bytes."""
    members = list(members)
    if len(members) > MAX_MEMBERS:
        raise BundleError(f"{len(members):,} members is over the {MAX_MEMBERS:,} cap")
    header = {"speedbook_bundle": VERSION, "members": len(members)}
    parts = [json.dumps(header, separators=(",", ":")).encode("ascii"), b"\n"]
    for index, member in enumerate(members, start=1):
        _check_member(member, f"member #{index}")
        meta = {
            "headers": [list(pair) for pair in public_headers(member.headers)],
            "sha256": hashlib.sha256(member.body).hexdigest(),
            "size": len(member.body),
            "status": member.status,
            "url": member.url,
        }
        line = json.dumps(meta, separators=(",", ":"), sort_keys=True, ensure_ascii=True)
        if len(line) > MAX_LINE_BYTES:
            raise BundleError(f"member #{index}: its headers make a line over the cap")
        parts += [line.encode("ascii"), b"\n", member.body, b"\n"]
    return b"".join(parts)


def _line(stream: BinaryIO, what: str, expected: str) -> bytes:
    line = stream.readline(MAX_LINE_BYTES + 1)
    if not line:
        raise BundleError(f"{what}: expected {expected}, found the end of the bundle (truncated)")
    if not line.endswith(b"\n"):
        if len(line) > MAX_LINE_BYTES:
            raise BundleError(f"{what}: line longer than {MAX_LINE_BYTES:,} bytes")
        raise BundleError(f"{what}: expected {expected} ending in a newline (truncated)")
    return line[:-1]


def _json_object(line: bytes, what: str, expected: str) -> dict[str, object]:
    try:
        value = strict_json.loads(line.decode("ascii"))  # a key given twice: ValueError
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise BundleError(f"{what}: expected {expected}, found {line[:60]!r}") from None
    if not isinstance(value, dict):
        raise BundleError(f"{what}: expected {expected}, found {line[:60]!r}")
    return value


def _count(stream: BinaryIO) -> int:
    expected = '{"speedbook_bundle": 1, "members": N}'
    line = _line(stream, "bundle header", expected)
    if not line.startswith(MAGIC):
        raise BundleError(f"bundle header: expected {expected}, found {line[:60]!r}")
    header = _json_object(line, "bundle header", expected)
    if set(header) != {"speedbook_bundle", "members"}:
        raise BundleError(f"bundle header: expected exactly the keys of {expected}")
    version, count = header["speedbook_bundle"], header["members"]
    if version != VERSION or isinstance(version, bool):
        raise BundleError(f"bundle header: version {version!r} is not {VERSION}")
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise BundleError(f"bundle header: members {count!r} is not a whole number >= 0")
    if count > MAX_MEMBERS:
        raise BundleError(f"bundle header: {count:,} members is over the {MAX_MEMBERS:,} cap")
    return count


def _headers(value: object, where: str) -> tuple[tuple[str, str], ...]:
    pairs = []
    if not isinstance(value, list):
        raise BundleError(f"{where}: headers is not a list of [name, value] pairs")
    for pair in value:
        if not (
            isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) for p in pair)
        ):
            raise BundleError(f"{where}: header {pair!r:.80} is not a [name, value] pair")
        pairs.append((pair[0], pair[1]))
    return public_headers(pairs)


def _member(stream: BinaryIO, index: int, count: int) -> BundleMember:
    where = f"member #{index} of {count}"
    expected = "its metadata line {headers, sha256, size, status, url}"
    meta = _json_object(_line(stream, where, expected), where, expected)
    if tuple(sorted(meta)) != _MEMBER_KEYS:
        raise BundleError(f"{where}: expected the keys {', '.join(_MEMBER_KEYS)}")
    url, status, size, digest = meta["url"], meta["status"], meta["size"], meta["sha256"]
    if not _web_url(url):
        raise BundleError(f"{where}: url {url!r:.120} is not an http(s) URL")
    where = f"{where} ({url:.120})"
    if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
        raise BundleError(f"{where}: status {status!r} is not an HTTP status code")
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise BundleError(f"{where}: size {size!r} is not a whole number >= 0")
    if size > MAX_BODY_BYTES:
        raise BundleError(f"{where}: size {size:,} is over the {MAX_BODY_BYTES:,}-byte cap")
    if not isinstance(digest, str) or not _SHA256.fullmatch(digest):
        raise BundleError(f"{where}: sha256 {digest!r:.80} is not 64 lowercase hex digits")
    headers = _headers(meta["headers"], where)
    body = stream.read(size)
    if len(body) < size:
        raise BundleError(
            f"{where}: expected {size:,} body bytes, found {len(body):,} (truncated bundle)"
        )
    if stream.read(1) != b"\n":
        raise BundleError(f"{where}: expected a newline after its {size:,} body bytes")
    actual = hashlib.sha256(body).hexdigest()
    if actual != digest:
        raise BundleError(f"{where}: body sha256 is {actual[:12]}…, expected {digest[:12]}…")
    return BundleMember(url=url, status=status, headers=headers, body=body)


def iter_bundle(stream: BinaryIO) -> Iterator[BundleMember]:
    """The members of the bundle read from `stream`, one at a time; BundleError on any defect
    (members already yielded were good)."""
    count = _count(stream)
    for index in range(1, count + 1):
        yield _member(stream, index, count)
    if stream.read(1):
        raise BundleError(f"unexpected bytes after the last of {count} members")


def read_bundle(data: bytes) -> list[BundleMember]:
    """Every member of the bundle `data`; BundleError when any part is not well formed."""
    return list(iter_bundle(io.BytesIO(data)))

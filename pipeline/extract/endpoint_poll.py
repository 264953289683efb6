"""What the parsers of per-model endpoint responses share (OpenRouter's, openrouter_endpoints.py,
and Vercel AI Gateway's, vercel_gateway.py): a poll round is one bundle of responses
(pipeline/raw/bundle.py), each `{"data": {"id": model, "endpoints": [endpoint, ...]}}`, and one
response captured as it came is read as a poll of one.

Each response gives one row of `<source>_poll_members` (its URL, status, model, how many
endpoints it listed and staged, and its problem) and the rows of its endpoints. A response with an
HTTP status other than 200, a body that is not that shape, or a model an earlier response of the
poll already gave, is left out with its problem; so is an endpoint the parser cannot read, or one
whose key (provider, tag) the response lists twice.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from pipeline.extract.base import SnapshotInput
from pipeline.extract.jsondoc import json_label, parse_json
from pipeline.extract.readings import Unreadable
from pipeline.raw.bundle import BundleError, BundleMember, is_bundle, read_bundle
from pipeline.support.text import TextDecodeError, decode_text, shorten


@dataclass(frozen=True)
class EndpointPoll:
    """How one source's responses are read: the parts that differ between the sources."""

    shape: str  # the documented shape of a response, for problems
    scope: Any  # the `where` of jsondoc's readers: its `fail` gives an Unreadable
    # one endpoint (the object, its position from 1, the model, the member's URL) as a row;
    # Unreadable when it cannot be read
    endpoint: Callable[[Any, int, str, str], dict[str, Any]]
    key: str  # the row's column a response lists once per endpoint
    repeated: str  # what a repeated key is called in the problem: 'provider', 'endpoint'
    statistics: Collection[str]  # the row's statistic columns
    summary: Callable[[list[str]], str | None]  # a few problems in one text
    label: Callable[[Any], str | None]  # the model id as clean text


@dataclass
class MemberRead:
    """What one response gave: its row of the poll's members and its endpoints' rows."""

    member: dict[str, Any]
    endpoints: list[dict[str, Any]] = field(default_factory=list)


def bundle_members(snapshot: SnapshotInput) -> list[BundleMember]:
    """The responses of the poll: the bundle's members, or the snapshot itself as one."""
    if not is_bundle(snapshot.data):
        content_type = snapshot.meta.content_type
        return [
            BundleMember(snapshot.meta.url, 200, (("content-type", content_type),), snapshot.data)
        ]
    try:
        return read_bundle(snapshot.data)
    except BundleError as error:
        raise snapshot.fail(f"not a readable bundle: {error}") from None


def response_data(poll: EndpointPoll, member: BundleMember) -> dict[str, Any]:
    """The member's `data` object; Unreadable when it has none (quoting the API's error)."""
    if member.status != 200:
        raise Unreadable(f"HTTP {member.status}")
    try:
        text = decode_text(member.body, member.content_type, "body")
    except TextDecodeError as error:
        raise Unreadable(str(error)) from None
    document = parse_json(poll.scope, text)
    data = document.get("data") if isinstance(document, dict) else None
    if not isinstance(data, dict) or not isinstance(data.get("endpoints"), list):
        error = document.get("error") if isinstance(document, dict) else None
        said = error.get("message") if isinstance(error, dict) else error
        said = f" (the API said: {shorten(json_label(said) or '', 100)!r})" if said else ""
        raise Unreadable(f"expected {poll.shape}{said}")
    return data


def read_member(
    poll: EndpointPoll, index: int, member: BundleMember, models: dict[str, int]
) -> MemberRead:
    """Response `index` of the poll; `models` (model -> the member that gave it) grows."""
    read = MemberRead(
        {
            "member_index": index,
            "member_url": member.url,
            "http_status": member.status,
            "model": None,
            "endpoints_listed": None,
            "endpoints_staged": 0,
            "endpoints_without_statistics": 0,
            "problem": None,
        }
    )
    try:
        data = response_data(poll, member)
        model = poll.label(data.get("id"))
        if model is None:
            raise Unreadable(f"expected {poll.shape}: data.id is not a non-empty string")
        if model in models:
            raise Unreadable(f"model {model!r} was read from member #{models[model]} already")
    except Unreadable as problem:
        read.member["problem"] = str(problem)
        return read
    models[model] = index
    endpoints = data["endpoints"]
    read.member |= {"model": model, "endpoints_listed": len(endpoints)}
    problems: list[str] = []
    parsed = []
    for position, endpoint in enumerate(endpoints, start=1):
        try:
            parsed.append(poll.endpoint(endpoint, position, model, member.url))
        except Unreadable as problem:
            problems.append(str(problem))
    counts = Counter(row[poll.key] for row in parsed)
    repeated = {key for key, n in counts.items() if n > 1}
    problems += [f"{poll.repeated} {key!r} is listed more than once" for key in sorted(repeated)]
    for row in parsed:
        if row[poll.key] in repeated:
            continue  # which of the copies is right is unknowable
        read.endpoints.append(row)
        if all(row[column] is None for column in poll.statistics):
            read.member["endpoints_without_statistics"] += 1
    read.member["endpoints_staged"] = len(read.endpoints)
    read.member["problem"] = poll.summary(problems)
    return read


def read_poll(poll: EndpointPoll, snapshot: SnapshotInput) -> list[MemberRead]:
    """Every response of the snapshot, in order."""
    models: dict[str, int] = {}
    return [
        read_member(poll, index, member, models)
        for index, member in enumerate(bundle_members(snapshot), start=1)
    ]

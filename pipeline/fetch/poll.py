"""A poll: one request per selected model, the responses stored as one bundle snapshot.

This module holds what a poll decides without the network: which models it asks for, whether a
round is the same as the previous one, and the outcome line. The requests themselves go through
the client's machinery, one member at a time (``pipeline.fetch.client``).

What a poll keeps: every response that arrived whole is a member of the bundle, with its URL,
status, headers and body, whatever its status (a 404 stays a 404, for the parser to report). A
model with no whole response (a timeout, a reset, a body over the cap, an unexpected content
type) is not in the bundle; the outcome line names it. A round is stored when at least one
member is HTTP 200.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.raw.bundle import (
    BundleError,
    BundleMember,
    is_bundle,
    read_bundle,
)
from pipeline.raw.snapshots import SnapshotError, SnapshotMeta
from pipeline.raw.store import Store
from pipeline.sources.formats import BUNDLE_CONTENT_TYPE, FormatSpec
from pipeline.sources.registry import Source, model_id_problem
from pipeline.support.text import shorten

# The parser frame that describes each member of a poll, by format: the outcome line counts it.
MEMBER_FRAMES = {
    "openrouter_endpoints": "openrouter_poll_members",
    "vercel_gateway_endpoints": "vercel_gateway_poll_members",
}
CATALOGUE_FRAME = "catalogue_entries"  # a `models_from` source's models
CATALOGUE_ID = "platform_model_id"
NO_KEY = "not measured: no API key"
SHOWN = 5  # models named in an outcome line; the rest are counted
# Headers about how the body travelled: the stored body is decoded, and its size is the member's.
TRANSFER_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})


class PollError(Exception):
    """The poll cannot start: there are no models to ask for."""


@dataclass(frozen=True)
class Selection:
    models: tuple[str, ...]
    origin: str  # where the list came from, for the snapshot's note
    left_out: tuple[str, ...] = ()  # ids that are not author/slug, with why


@dataclass(frozen=True)
class MemberResult:
    """One model's request: the response as a member, or why there is none."""

    model: str
    member: BundleMember | None
    failure: str | None = None  # set when member is None
    attempts: int = 0


def member_content_types(spec: FormatSpec) -> tuple[str, ...]:
    """What one response of a poll may be: the format's types, less the bundle's own."""
    return tuple(kind for kind in spec.content_types if kind != BUNDLE_CONTENT_TYPE)


def member_headers(headers: Sequence[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    return tuple((name, value) for name, value in headers if name.lower() not in TRANSFER_HEADERS)


def _catalogue_ids(store: Store, source: Source) -> tuple[list[str], str]:
    """The model ids of `source`'s newest snapshot its parser reads, and that snapshot's id."""
    from pipeline.extract import PARSERS, ExtractError, SnapshotInput  # pandas only for polls

    parser = PARSERS[source.format]
    if CATALOGUE_FRAME not in parser.frames:
        raise PollError(f"models_from {source.id}: format {source.format} lists no models")
    problems: list[str] = []
    for meta in reversed(store.list(source.id, errors=problems)):
        try:
            frames = parser.parse(SnapshotInput(meta, source, store.read(meta)))
        except (SnapshotError, ExtractError):
            continue  # damaged or unreadable: the next older one may do
        return [str(model) for model in frames[CATALOGUE_FRAME][CATALOGUE_ID]], meta.snapshot_id
    raise PollError(f"no usable snapshot of {source.id} to take the models from")


def select_models(store: Store, sources: dict[str, Source], source: Source) -> Selection:
    """The models a poll of `source` asks for, in order: its `models`, or the catalogue of its
    `models_from` source; duplicates dropped, ids that are not author/slug left out (named),
    then the first `max_models`."""
    if source.models:
        ids, origin = list(source.models), "the registry's list"
    else:
        ids, origin = _catalogue_ids(store, sources[source.models_from])
        origin = f"the models of {origin}"
    models, left_out = [], []
    for model in dict.fromkeys(ids):
        problem = model_id_problem(model)
        if problem:
            left_out.append(f"{shorten(model, 80)!r} {problem}")
        else:
            models.append(model)
    if source.max_models is not None and len(models) > source.max_models:
        origin += f", the first {source.max_models:,} of {len(models):,}"
        models = models[: source.max_models]
    if not models:
        raise PollError(f"no model to poll ({origin} lists none that is author/slug)")
    return Selection(tuple(models), origin, tuple(left_out))


def previous_members(store: Store, meta: SnapshotMeta) -> list[BundleMember] | None:
    """The members of a stored poll (a response added by hand is a poll of one); None when the
    snapshot cannot be read as one."""
    try:
        data = store.read(meta)
    except SnapshotError:
        return None
    if not is_bundle(data):
        return [BundleMember(meta.url, 200, (), data)]
    try:
        return read_bundle(data)
    except BundleError:
        return None


def same_round(previous: Sequence[BundleMember] | None, members: Sequence[BundleMember]) -> bool:
    """True when every member has the URL, status and body bytes of the previous round's (the
    headers differ on every round: Date, request ids)."""
    if previous is None:
        return False

    def key(member: BundleMember) -> tuple[str, int, bytes]:
        return member.url, member.status, member.body

    return [key(m) for m in previous] == [key(m) for m in members]


def _named(items: Sequence[str]) -> str:
    shown = ", ".join(items[:SHOWN])
    more = len(items) - SHOWN
    return shown + (f" and {more} more" if more > 0 else "")


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def round_summary(results: Sequence[MemberResult]) -> str:
    """`3 models: 3 responses (2 HTTP 200, 1 HTTP 404); 1 failed: a/b (timeout)`."""
    members = [r.member for r in results if r.member is not None]
    statuses = Counter(member.status for member in members)
    counts = ", ".join(f"{n} HTTP {code}" for code, n in sorted(statuses.items()))
    text = f"{_count(len(results), 'model')}: {_count(len(members), 'response')}" + (
        f" ({counts})" if counts else ""
    )
    failed = [f"{r.model} ({r.failure})" for r in results if r.member is None]
    if failed:
        text += f"; {len(failed):,} failed: {_named(failed)}"
    return text


def statistics_summary(source: Source, meta: SnapshotMeta, data: bytes, *, keyless: bool) -> str:
    """What the format's parser reads of a stored poll: endpoints, and how many have no
    statistics (the parser's own count), for the outcome line; `keyless` when the poll was
    sent without its API key, which is why they have none."""
    from pipeline.extract import PARSERS, ExtractError, SnapshotInput  # pandas only for polls

    frame_name = MEMBER_FRAMES.get(source.format)
    if frame_name is None:
        return NO_KEY if keyless else ""
    try:
        frames = PARSERS[source.format].parse(SnapshotInput(meta, source, data))
    except ExtractError as error:
        reason = str(error).removeprefix(f"{meta.snapshot_id}: ")
        return f"the parser reads nothing of it: {shorten(reason, 300)}"
    frame = frames[frame_name]
    staged = int(frame["endpoints_staged"].sum())
    bare = int(frame["endpoints_without_statistics"].sum())
    because = f" ({NO_KEY})" if keyless and bare else ""
    return f"{staged:,} endpoints, {bare:,} without statistics{because}"

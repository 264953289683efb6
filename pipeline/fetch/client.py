"""Fetch registered sources over HTTP and store each new body as a snapshot.

One shared ``httpx.AsyncClient``; bounded concurrency overall and per host; retries with backoff
on transient failures; conditional requests from the newest snapshot's validators; a size cap
after decompression; content types checked against the source's format; redirects followed by
hand and only within the source's host; a 429's Retry-After holds its whole host. A poll source
is one request per model through the same machinery, its round stored as one bundle
(``pipeline.fetch.poll``). API keys come from the environment and go only to their source's
origin; every message is scrubbed of them (``pipeline.fetch.keys``). Every source ends with
exactly one outcome, appended to its log (see ``pipeline.raw.outcomes``). Nothing is ever deleted
or overwritten: a failure stores nothing and the last good snapshot stays the newest.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import math
import os
import socket
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar
from urllib.parse import urljoin

import httpx

from pipeline.fetch.body import BodyError, read_capped, too_large
from pipeline.fetch.keys import ApiKey, Keys, KeyState, key_state
from pipeline.fetch.policy import (
    DEFAULT_OPTIONS,
    REDIRECT_STATUSES,
    RETRY_STATUSES,
    FetchOptions,
    media_type,
    parse_retry_after,
    redirect_refusal,
    retry_wait,
    shown,
)
from pipeline.fetch.poll import (
    MemberResult,
    PollError,
    member_content_types,
    member_headers,
    previous_members,
    round_summary,
    same_round,
    select_models,
    statistics_summary,
)
from pipeline.fetch.reach import Reachability, endpoint
from pipeline.raw.bundle import BundleError, BundleMember, write_bundle
from pipeline.raw.outcomes import OUTCOMES, OutcomeRecord, record_outcome
from pipeline.raw.snapshots import SnapshotError, SnapshotMeta, format_utc
from pipeline.raw.store import Store, open_store
from pipeline.sources.formats import BUNDLE_CONTENT_TYPE, FORMATS
from pipeline.sources.registry import Source, load_registry
from pipeline.sources.suggest import unknown_sources
from pipeline.support.progress import report
from pipeline.support.settings import Settings
from pipeline.support.sizes import format_size
from pipeline.support.text import url_problem

STRICT_SKIP = "skipped (--strict)"
_E = TypeVar("_E", bound=BaseException)
KEPT_HEADERS = ("etag", "last-modified")  # validators for the next conditional request


class FetchError(ValueError):
    """The fetch cannot start (unknown source ids); nothing was requested or recorded."""


@dataclass(frozen=True)
class FetchReport:
    """One outcome per requested source, in the order they were requested."""

    records: tuple[OutcomeRecord, ...]
    elapsed_s: float = 0.0

    @property
    def failed(self) -> tuple[OutcomeRecord, ...]:
        return tuple(r for r in self.records if r.failed)

    @property
    def ok(self) -> bool:
        return not self.failed

    def get(self, source_id: str) -> OutcomeRecord:
        for record in self.records:
            if record.source_id == source_id:
                return record
        raise KeyError(source_id)

    def counts(self) -> dict[str, int]:
        return {name: sum(r.outcome == name for r in self.records) for name in OUTCOMES}

    def summary(self) -> str:
        parts = [f"{n} {name.replace('_', ' ')}" for name, n in self.counts().items() if n]
        noun = "source" if len(self.records) == 1 else "sources"
        return f"{len(self.records)} {noun} in {self.elapsed_s:.1f} s: " + (
            ", ".join(parts) or "nothing fetched"
        )


class _Failure(Exception):
    """One attempt failed; ``reason`` is what the outcome will say."""

    def __init__(
        self,
        reason: str,
        *,
        retryable: bool = False,
        status: int | None = None,
        retry_after: float | None = None,
        reply: _Reply | None = None,
        cut_by_poll: bool = False,
        unreachable: bool = False,
        answered: bool = True,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after
        self.reply = reply  # the error response itself, read whole: a poll keeps it as a member
        self.cut_by_poll = cut_by_poll  # the poll's deadline, not the attempt's, ended it
        self.unreachable = unreachable  # no connection was made: name, route or port failed
        self.answered = answered  # a server was reached (False also when it is not known)

    def final(self, attempts: int, suffix: str = "") -> _Failure:
        """The failure as the outcome states it, once no attempt is left."""
        reason = self.reason + (f" after {attempts} attempts" if attempts > 1 else "") + suffix
        return _Failure(
            reason,
            status=self.status,
            reply=self.reply,
            unreachable=self.unreachable,
            answered=self.answered,
        )


@dataclass(frozen=True)
class _Reply:
    status: int  # 200 or 304; any status for a poll member
    url: str  # after redirects
    headers: httpx.Headers
    body: bytes = b""

    def raw_headers(self) -> tuple[tuple[str, str], ...]:
        """The headers in the order received, names as the server spelt them."""
        return tuple((k.decode("latin-1"), v.decode("latin-1")) for k, v in self.headers.raw)


@dataclass(frozen=True)
class _Ask:
    """One request through the machinery: a source's URL, or one member of a poll."""

    url: str
    headers: dict[str, str]
    key: ApiKey | None = None  # added per hop, only at the source's own origin
    conditional: bool = False
    member: bool = False  # a poll member: an error response is kept whole, not only named
    deadline: float | None = None  # time.monotonic() when the poll's time is up


def _cause(error: BaseException, kind: type[_E]) -> _E | None:
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, kind):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def _caused_by(error: BaseException, kind: type[BaseException]) -> bool:
    return _cause(error, kind) is not None


def _has_errno(error: BaseException, message: str, number: int) -> bool:
    """Whether the error (or one it came from) is OSError `number`, or its text names it."""
    cause = _cause(error, OSError)
    return (cause is not None and cause.errno == number) or f"[errno {number}]" in message.lower()


def _transport_failure(error: httpx.TransportError) -> _Failure:
    """Name a network failure briefly. Most are worth another attempt; a name the resolver says
    does not exist is not (a retry seconds later asks the same resolver). A failure to connect
    at all is marked `unreachable`: the run's Reachability decides whether to try again."""
    message = str(error)
    if isinstance(error, httpx.ConnectTimeout):
        return _Failure("connect timeout", retryable=True, unreachable=True, answered=False)
    if isinstance(error, httpx.TimeoutException):
        reason = "timeout"
    elif _caused_by(error, ConnectionResetError) or "reset by peer" in message.lower():
        reason = "connection reset"
    elif isinstance(error, httpx.ConnectError):
        lookup = _cause(error, socket.gaierror)
        if _caused_by(error, ConnectionRefusedError) or _has_errno(
            error, message, errno.ECONNREFUSED
        ):
            reason = "connection refused"
        elif lookup is not None:
            known = lookup.errno != socket.EAI_NONAME  # EAI_AGAIN: the resolver may recover
            return _Failure(
                "host name lookup failed" + ("" if known else " (no such name)"),
                retryable=known,
                unreachable=True,
                answered=False,
            )
        elif _has_errno(error, message, errno.ENETUNREACH):
            reason = "network unreachable"
        elif _has_errno(error, message, errno.EHOSTUNREACH):
            reason = "no route to host"
        else:
            reason = f"cannot connect ({message or 'no detail'})"
        return _Failure(reason, retryable=True, unreachable=True, answered=False)
    elif isinstance(error, httpx.RemoteProtocolError):
        if "incomplete" in message or "complete message body" in message:
            reason = "truncated body"
        elif "without sending a response" in message:
            reason = "connection closed without a response"
        else:
            reason = f"protocol error ({shown(message)})"
    else:
        reason = f"network error ({message or type(error).__name__})"
    return _Failure(reason, retryable=True)


def conditional_headers(latest: SnapshotMeta | None, source: Source) -> dict[str, str]:
    """Validators from the newest snapshot, only if it came from the URL we are about to ask."""
    if latest is None or latest.url != source.url:
        return {}
    headers: dict[str, str] = {}
    if etag := latest.http.get("etag"):
        headers["If-None-Match"] = etag
    if modified := latest.http.get("last-modified"):
        headers["If-Modified-Since"] = modified
    return headers


@dataclass
class _Poll:
    """What the members of one poll share."""

    deadline: float  # time.monotonic()
    bytes_left: int


@dataclass
class _Run:
    store: Store
    raw_dir: Path  # the local folder whose warehouse keeps the outcome logs (Settings.raw_dir)
    client: httpx.AsyncClient
    options: FetchOptions
    strict: bool
    sources: dict[str, Source]  # the whole registry: a poll may take its models from another
    key_states: dict[str, KeyState]
    reach: Reachability  # which hosts answered, which could not be reached
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    wake: asyncio.Event = field(default_factory=asyncio.Event)  # ends waits between attempts
    overall: asyncio.Semaphore = field(init=False)
    hosts: dict[str, asyncio.Semaphore] = field(default_factory=dict)
    resume_at: dict[str, float] = field(default_factory=dict)  # a host's Retry-After, monotonic
    keys: Keys = field(init=False)
    latest: dict[str, SnapshotMeta | None] = field(default_factory=dict)  # see read_latest

    def __post_init__(self) -> None:
        self.overall = asyncio.Semaphore(self.options.concurrency)
        self.keys = Keys(state.key for state in self.key_states.values() if state.key)

    async def read_latest(self, sources: list[Source]) -> None:
        """Each page source's latest snapshot, read before any request starts.

        Off the event loop, like store.add: it reads metadata and may rewrite the index. All
        of them first, so that requests then queue for their slots in the sources' order:
        with --strict, one at a time, the first failure skips every source after it.
        """

        def latest_of(source: Source) -> SnapshotMeta | None:
            problems: list[str] = []  # unreadable metadata of old snapshots must not block
            existing = self.store.list(source.id, errors=problems)
            for problem in problems:
                self._say(f"fetch {source.id}: warning: snapshot skipped: {problem}")
            return existing[-1] if existing else None

        pages = [source for source in sources if not source.polls]
        found = await asyncio.gather(*(asyncio.to_thread(latest_of, page) for page in pages))
        self.latest.update(zip((page.id for page in pages), found, strict=True))

    def _host_slot(self, host: str) -> asyncio.Semaphore:
        return self.hosts.setdefault(host.lower(), asyncio.Semaphore(self.options.per_host))

    def _say(self, message: str) -> None:
        report(self.keys.scrub(message))

    async def fetch(self, source: Source) -> OutcomeRecord:
        try:
            record = await self._fetch(source)
        except Exception as error:  # one broken source must never stop the others
            record = self._record(source, "failed", f"error ({type(error).__name__}: {error})")
        if record.failed and self.strict:
            self.stop.set()
            self.wake.set()
        self._say(f"fetch {source.id}: {record.label}")
        return record

    def _record(
        self,
        source: Source,
        outcome: str,
        detail: str,
        *,
        snapshot: str | None = None,
        http_status: int | None = None,
        size: int | None = None,
        attempts: int = 0,
    ) -> OutcomeRecord:
        """Append the outcome to the source's log (outcomes.record_outcome, the one writer)."""
        detail = self.keys.scrub(detail)
        at = datetime.now(UTC)
        try:
            return record_outcome(
                self.raw_dir,
                source.id,
                outcome,
                detail,
                at=at,
                snapshot=snapshot,
                http_status=http_status,
                size=size,
                attempts=attempts,
            )
        except OSError as error:
            # The report still carries the outcome; say plainly that the log missed it.
            self._say(f"fetch {source.id}: cannot append to its outcome log: {error}")
            return OutcomeRecord(
                source_id=source.id,
                outcome=outcome,
                detail=self.keys.scrub(f"{detail} (not logged: {error.strerror or error})"),
                at=format_utc(at),
                snapshot=snapshot,
                http_status=http_status,
                bytes=size,
                attempts=attempts,
            )

    async def _fetch(self, source: Source) -> OutcomeRecord:
        state = self.key_states.get(source.id, KeyState())
        if state.unusable:
            return self._record(source, "failed", state.unusable)
        if state.missing and source.api_key_required:
            return self._record(source, "skipped", state.missing)  # no request: nothing to say
        if blocked := self.reach.blocked(source.url):
            return self._record(source, "failed", f"not requested: {blocked}")
        if source.polls:
            return await self._poll(source, state)
        latest = self.latest.get(source.id)
        conditional = conditional_headers(latest, source)
        spec = FORMATS[source.format]
        headers = {"Accept": ", ".join((*spec.content_types, "*/*;q=0.1")), **conditional}
        ask = _Ask(source.url, headers, state.key, conditional=bool(conditional))
        reply, failure, attempts = await self._request(source, ask, source.id)
        if reply is None:
            return self._record(
                source, "failed", failure.reason, http_status=failure.status, attempts=attempts
            )
        return await self._store(source, reply, latest, attempts)

    async def _request(
        self, source: Source, ask: _Ask, what: str
    ) -> tuple[_Reply | None, _Failure, int]:
        """One request with its retries: (the reply, or None and the failure; attempts made).

        A poll member's reply may be an error response (HTTP 404, or 500 after the last retry).
        """
        attempts = 0
        failure = _Failure("not attempted")
        # Time spent on this request: its attempts and the waits between them, not the time it
        # queued for a connection slot behind others (a poll's deadline counts everything).
        budget = self.options.source_timeout
        slot = self._host_slot(source.host)
        holding = False
        try:
            while True:
                if not holding:
                    await slot.acquire()
                    holding = True
                await self._host_pause(source.host)  # a 429's Retry-After holds the whole host
                async with self.overall:
                    stopped = self._stopped(ask, failure, attempts)
                    if stopped is not None:
                        return stopped.reply, stopped, attempts
                    limit = min(self.options.total_timeout, budget)
                    left = math.inf if ask.deadline is None else ask.deadline - time.monotonic()
                    attempts += 1
                    started = time.monotonic()
                    self.reach.in_flight += 1
                    try:
                        outcome = await self._once(source, ask, min(limit, left), left < limit)
                    finally:
                        self.reach.in_flight -= 1
                    budget -= time.monotonic() - started
                    if isinstance(outcome, _Reply):
                        self.reach.reached(ask.url)
                        return outcome, failure, attempts
                    failure = outcome
                    self._note_reach(ask.url, failure)
                    if failure.retry_after is not None and failure.status == 429:
                        # the host asked to be left alone: every request to it waits
                        wait = min(failure.retry_after, self.options.retry_after_max)
                        resume = max(self.resume_at.get(source.host, 0.0), time.monotonic() + wait)
                        self.resume_at[source.host] = resume
                final, wait = self._retry(ask, failure, attempts, budget, what)
                if final is not None:
                    return final.reply, final, attempts
                if not failure.unreachable:
                    # others may use the host meanwhile; a host that could not be connected to
                    # keeps the slot, so the requests queued for it wait for this one's verdict
                    slot.release()
                    holding = False
                budget -= await self._pause(wait)
        finally:
            if holding:
                slot.release()

    def _retry(
        self, ask: _Ask, failure: _Failure, attempts: int, budget: float, what: str
    ) -> tuple[_Failure | None, float]:
        """After a failed attempt: (the final failure, 0) when no attempt is left, else (None,
        the seconds to wait before the next)."""
        if failure.cut_by_poll:
            return failure.final(attempts, self._poll_over), 0.0
        if not failure.retryable or attempts >= self.options.max_attempts:
            if failure.unreachable:  # the host is not asked again in this run
                self.reach.give_up(ask.url, failure.reason)
            return failure.final(attempts), 0.0
        if failure.unreachable and (blocked := self.reach.blocked(ask.url)):
            return failure.final(attempts, f" (not retried: {blocked})"), 0.0
        wait = retry_wait(attempts, failure.retry_after, self.options)
        if wait >= budget:
            used = f" (the source's {self.options.source_timeout:g} s were used up)"
            return failure.final(attempts, used), 0.0
        if ask.deadline is not None and time.monotonic() + wait >= ask.deadline:
            return failure.final(attempts, self._poll_over), 0.0
        if self.reach.answered or not failure.unreachable:
            # offline, every source would say this: until a host answers, only the outcome
            self._say(
                f"fetch {what}: {failure.reason}; attempt {attempts + 1} of "
                f"{self.options.max_attempts} in {wait:.1f} s"
            )
        return None, wait

    def _note_reach(self, url: str, failure: _Failure) -> None:
        """What a failed attempt tells of its host; says once that the network looks down."""
        if failure.answered:
            self.reach.reached(url)
        elif failure.unreachable and (offline := self.reach.not_reached(url, failure.reason)):
            self._say(f"fetch: {offline}: no further request starts and none is retried")
            self.wake.set()

    async def _pause(self, wait: float) -> float:
        """Wait `wait` seconds between attempts, less when the run stops or the network looks
        unreachable; returns the seconds waited."""
        started = time.monotonic()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.wake.wait(), wait)
        return time.monotonic() - started

    @property
    def _poll_over(self) -> str:
        return f" (the poll's {self.options.poll_timeout:g} s were used up)"

    def _stopped(self, ask: _Ask, failure: _Failure, attempts: int) -> _Failure | None:
        """Why no further attempt may start (--strict stopped the run, the poll's time is up)."""
        if self.stop.is_set():
            if attempts == 0:
                return _Failure(STRICT_SKIP)
            return failure.final(attempts, " (retries stopped by --strict)")
        blocked = self.reach.blocked(ask.url)
        if blocked and attempts == 0:
            return _Failure(f"not requested: {blocked}", unreachable=True, answered=False)
        if blocked and failure.unreachable:  # woken from its wait: no retry of a connect
            return failure.final(attempts, f" (not retried: {blocked})")
        if ask.deadline is not None and time.monotonic() >= ask.deadline:
            if attempts == 0:
                return _Failure("not requested" + self._poll_over)
            return failure.final(attempts, self._poll_over)
        return None

    async def _once(
        self, source: Source, ask: _Ask, limit: float, cut_by_poll: bool
    ) -> _Reply | _Failure:
        """One attempt within `limit` seconds: the reply, or why there is none."""
        try:
            async with asyncio.timeout(limit):
                return await self._attempt(source, ask)
        except TimeoutError:  # connected or not: it tells nothing of the host's reach
            if cut_by_poll:
                return _Failure("timeout", cut_by_poll=True, answered=False)
            within = f"{self.options.total_timeout:g} s"
            return _Failure(
                f"timeout (no complete response within {within})", retryable=True, answered=False
            )
        except httpx.TransportError as error:
            return _transport_failure(error)
        except BodyError as error:
            return _Failure(error.reason, retryable=error.retryable, status=200)
        except _Failure as error:
            return error

    async def _host_pause(self, host: str) -> None:
        while (wait := self.resume_at.get(host, 0.0) - time.monotonic()) > 0:
            await asyncio.sleep(wait)

    async def _attempt(self, source: Source, ask: _Ask) -> _Reply:
        url = ask.url
        for _hop in range(self.options.max_redirects + 1):
            headers = {**ask.headers, **(ask.key.headers_for(url) if ask.key else {})}
            request = self.client.build_request("GET", url, headers=headers)
            response = await self.client.send(request, stream=True)
            try:
                status = response.status_code
                if self.keys.quoted_in(b"", response.headers.multi_items()):
                    raise _Failure(f"HTTP {status} repeats an API key in a header", status=status)
                if status in REDIRECT_STATUSES:
                    location = response.headers.get("location")
                    if not location:
                        raise _Failure(f"HTTP {status} without a Location", status=status)
                    target = urljoin(url, location)
                    refusal = redirect_refusal(url, target, source.host)
                    if refusal:
                        raise _Failure(refusal, status=status)
                    url = target
                    continue
                return await self._accept(source, response, url, ask)
            finally:
                await response.aclose()
        raise _Failure(f"more than {self.options.max_redirects} redirects")

    async def _body(self, response: httpx.Response) -> bytes:
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.options.max_bytes:
            raise too_large(self.options.max_bytes)
        body = await read_capped(
            response.aiter_raw(),
            response.headers.get("content-encoding", ""),
            self.options.max_bytes,
        )
        if self.keys.quoted_in(body, ()):
            raise BodyError("the response repeats an API key: not stored")
        return body

    async def _error_reply(self, response: httpx.Response, url: str) -> _Reply | None:
        """An error response read whole, for a poll to keep; None when its body cannot be."""
        try:
            body = await self._body(response)
        except BodyError:
            return None
        return _Reply(response.status_code, url, response.headers, body)

    async def _accept(
        self, source: Source, response: httpx.Response, url: str, ask: _Ask
    ) -> _Reply:
        status = response.status_code
        if status == 304:
            if not ask.conditional:
                raise _Failure("HTTP 304 to an unconditional request", status=status)
            return _Reply(status, url, response.headers)
        if status in RETRY_STATUSES:
            retry_after = parse_retry_after(response.headers.get("retry-after"))
            kept = await self._error_reply(response, url) if ask.member else None
            raise _Failure(
                f"HTTP {status}", retryable=True, status=status, retry_after=retry_after, reply=kept
            )
        if status != 200:
            kept = await self._error_reply(response, url) if ask.member else None
            if kept is None:
                raise _Failure(f"HTTP {status}", status=status)
            return kept
        spec = FORMATS[source.format]
        expected = member_content_types(spec) if ask.member else spec.content_types
        received_type = media_type(response.headers.get("content-type"))
        if received_type not in expected:
            raise _Failure(
                f"content type {shown(received_type) or '(none)'} not expected for {source.format}",
                status=status,
            )
        body = await self._body(response)
        if not body:
            raise _Failure("empty body", status=status)
        return _Reply(status, url, response.headers, body)

    async def _store(
        self, source: Source, reply: _Reply, latest: SnapshotMeta | None, attempts: int
    ) -> OutcomeRecord:
        if reply.status == 304:
            assert latest is not None  # only a conditional request gets this far with a 304
            sent = " and ".join(conditional_headers(latest, source))
            return self._record(
                source,
                "not_modified",
                f"HTTP 304 to {sent}; {latest.file} is current",
                snapshot=latest.file,
                http_status=304,
                attempts=attempts,
            )
        http = {key: reply.headers[key] for key in KEPT_HEADERS if key in reply.headers}
        if reply.url != source.url:
            http["final-url"] = reply.url
        content_type = reply.headers.get("content-type", "")
        note = f"fetched by speedbook fetch ({format_size(len(reply.body))})"
        return await self._add(source, reply.body, content_type, note, http, attempts)

    async def _add(
        self,
        source: Source,
        data: bytes,
        content_type: str,
        note: str,
        http: dict[str, str],
        attempts: int,
        summary: Callable[[SnapshotMeta], str] | None = None,
    ) -> OutcomeRecord:
        """Store the bytes as the source's newest snapshot; `summary` adds to a new one's detail."""
        try:
            result = await asyncio.to_thread(
                self.store.add,
                source.id,
                data,
                url=source.url,
                retrieved_at=datetime.now(UTC),
                content_type=content_type,
                obtained_by="fetched",
                extension=FORMATS[source.format].extension_for(content_type),
                note=note,
                http=http,
            )
        except (SnapshotError, OSError) as error:
            detail = f"cannot store snapshot ({error})"
            return self._record(source, "failed", detail, http_status=200, attempts=attempts)
        meta = result.meta
        if result.created:
            outcome, detail = "new", f"stored {meta.file}"
            if summary is not None:
                detail += await asyncio.to_thread(summary, meta)
        else:
            outcome, detail = "unchanged", f"same bytes as {meta.file}"
        return self._record(
            source,
            outcome,
            detail,
            snapshot=meta.file,
            http_status=200,
            size=meta.size,
            attempts=attempts,
        )

    async def _poll(self, source: Source, state: KeyState) -> OutcomeRecord:
        """One request per selected model through the machinery above; one bundle of them."""
        try:
            selection = await asyncio.to_thread(select_models, self.store, self.sources, source)
        except PollError as error:
            return self._record(source, "failed", str(error))
        self._say(f"fetch {source.id}: polling {len(selection.models):,} models")
        spec = FORMATS[source.format]
        headers = {"Accept": ", ".join((*member_content_types(spec), "*/*;q=0.1"))}
        poll = _Poll(time.monotonic() + self.options.poll_timeout, self.options.poll_max_bytes)
        results = await asyncio.gather(
            *(self._member(source, model, headers, state.key, poll) for model in selection.models)
        )
        attempts = sum(result.attempts for result in results)
        summary = round_summary(results)
        if selection.left_out:
            summary += f"; {len(selection.left_out):,} left out: " + "; ".join(
                selection.left_out[:5]
            )
        members = [result.member for result in results if result.member is not None]
        if not any(member.status == 200 for member in members):
            return self._record(
                source, "failed", f"no HTTP 200 in the poll: {summary}", attempts=attempts
            )
        existing = await asyncio.to_thread(self.store.list, source.id, errors=[])
        latest = existing[-1] if existing else None
        if latest is not None and same_round(
            await asyncio.to_thread(previous_members, self.store, latest), members
        ):
            return self._record(
                source,
                "unchanged",
                f"same responses as {latest.file}: {summary}",
                snapshot=latest.file,
                http_status=200,
                size=latest.size,
                attempts=attempts,
            )
        try:
            data = write_bundle(members)
        except BundleError as error:
            return self._record(source, "failed", f"cannot bundle the responses ({error})")

        def statistics(meta: SnapshotMeta) -> str:
            read = statistics_summary(source, meta, data, keyless=state.missing is not None)
            return f": {summary}" + (f"; {read}" if read else "")

        note = (
            f"fetched by speedbook fetch: a poll of {len(selection.models):,} models "
            f"({selection.origin}), {format_size(len(data))}"
        )
        return await self._add(
            source, data, BUNDLE_CONTENT_TYPE, note, {}, attempts, summary=statistics
        )

    async def _member(
        self,
        source: Source,
        model: str,
        headers: dict[str, str],
        key: ApiKey | None,
        poll: _Poll,
    ) -> MemberResult:
        url = source.member_url(model)
        problem = url_problem(url)
        if problem:
            return MemberResult(model, None, f"its URL {problem}")
        ask = _Ask(url, headers, key, member=True, deadline=poll.deadline)
        reply, failure, attempts = await self._request(source, ask, f"{source.id} {model}")
        if reply is None:
            return MemberResult(model, None, failure.reason, attempts)
        if len(reply.body) > poll.bytes_left:
            cap = format_size(self.options.poll_max_bytes)
            return MemberResult(model, None, f"the poll's {cap} were used up", attempts)
        poll.bytes_left -= len(reply.body)
        member = BundleMember(
            reply.url, reply.status, member_headers(reply.raw_headers()), reply.body
        )
        return MemberResult(model, member, None, attempts)


def _select(sources: dict[str, Source], source_ids: Iterable[str] | None) -> list[Source]:
    if source_ids is None:
        return list(sources.values())
    wanted = list(dict.fromkeys(source_ids))  # de-duplicate, keep the caller's order
    unknown = [source_id for source_id in wanted if source_id not in sources]
    if unknown:
        raise FetchError(unknown_sources(unknown, sources))
    return [sources[source_id] for source_id in wanted]


async def _fetch_all(
    settings: Settings,
    registry: dict[str, Source],
    sources: list[Source],
    strict: bool,
    options: FetchOptions,
    environ: Mapping[str, str],
) -> list[OutcomeRecord]:
    timeout = httpx.Timeout(options.read_timeout, connect=options.connect_timeout)
    limits = httpx.Limits(
        max_connections=options.concurrency, max_keepalive_connections=options.concurrency
    )
    # read once, here: the keys of this run, and nothing of the environment beyond them
    states = {source.id: key_state(source, environ) for source in sources}
    async with httpx.AsyncClient(
        headers={"User-Agent": options.user_agent, "Accept-Encoding": "gzip, deflate"},
        timeout=timeout,
        limits=limits,
        follow_redirects=False,  # followed by hand, so every hop is checked
        trust_env=options.trust_env,
    ) as client:
        store = open_store(settings.snapshot_store)
        reach = Reachability(frozenset(endpoint(source.url) for source in sources))
        run = _Run(store, settings.raw_dir, client, options, strict, registry, states, reach)
        await run.read_latest(sources)
        return list(await asyncio.gather(*(run.fetch(source) for source in sources)))


def fetch_sources(
    settings: Settings,
    source_ids: Iterable[str] | None = None,
    *,
    strict: bool = False,
    options: FetchOptions = DEFAULT_OPTIONS,
    environ: Mapping[str, str] | None = None,
) -> FetchReport:
    """Fetch the given sources (all registered sources by default) and store what is new.

    Never raises for a failing source: each one's outcome is in the report and in its log.
    Raises RegistryError for a broken registry and FetchError for unknown source ids. With
    ``strict``, the first failure stops new requests and the rest are recorded as skipped.
    API keys are read from ``environ`` (the process environment by default).
    """
    registry = load_registry(settings.registry)
    sources = _select(registry, source_ids)
    started = time.monotonic()
    if sources:
        report(
            f"fetch: {len(sources)} source(s), {options.concurrency} at a time, "
            f"{options.per_host} per host"
        )
    environ = os.environ if environ is None else environ
    records = (
        asyncio.run(_fetch_all(settings, registry, sources, strict, options, environ))
        if sources
        else []
    )
    return FetchReport(tuple(records), round(time.monotonic() - started, 2))

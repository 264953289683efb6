"""Fetch registered sources over HTTP and store each new body as a snapshot.

One shared ``httpx.AsyncClient``; bounded concurrency overall and per host; retries with backoff
on transient failures; conditional requests from the newest snapshot's validators; a size cap
after decompression; content types checked against the source's format; redirects followed by
hand and only within the source's host. Every source ends with exactly one outcome, appended to
its log (see ``pipeline.raw.outcomes``). Nothing is ever deleted or overwritten: a failure stores
nothing and the last good snapshot stays the newest.
"""

from __future__ import annotations

import asyncio
import errno
import socket
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from urllib.parse import urljoin

import httpx

from pipeline.raw.fetch.body import BodyError, read_capped, too_large
from pipeline.raw.fetch.policy import (
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
from pipeline.raw.outcomes import OUTCOMES, OutcomeRecord, record_outcome
from pipeline.raw.snapshots import SnapshotError, SnapshotMeta, SnapshotStore, format_utc
from pipeline.sources.formats import FORMATS
from pipeline.sources.registry import Source, load_registry
from pipeline.support.progress import report
from pipeline.support.settings import Settings
from pipeline.support.sizes import format_size

STRICT_SKIP = "skipped (--strict)"
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
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after


@dataclass(frozen=True)
class _Reply:
    status: int  # 200 or 304
    url: str  # after redirects
    headers: httpx.Headers
    body: bytes = b""


def _caused_by(error: BaseException, kind: type[BaseException]) -> bool:
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, kind):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def _transport_failure(error: httpx.TransportError) -> _Failure:
    """Name a network failure briefly; all of them are worth another attempt."""
    message = str(error)
    if isinstance(error, httpx.ConnectTimeout):
        reason = "connect timeout"
    elif isinstance(error, httpx.TimeoutException):
        reason = "timeout"
    elif _caused_by(error, ConnectionResetError) or "reset by peer" in message.lower():
        reason = "connection reset"
    elif isinstance(error, httpx.ConnectError):
        refused = _caused_by(error, ConnectionRefusedError) or f"[errno {errno.ECONNREFUSED}]" in (
            message.lower()
        )
        if refused:
            reason = "connection refused"
        elif _caused_by(error, socket.gaierror):
            reason = "host name lookup failed"
        else:
            reason = f"cannot connect ({message or 'no detail'})"
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
class _Run:
    store: SnapshotStore
    client: httpx.AsyncClient
    options: FetchOptions
    strict: bool
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    overall: asyncio.Semaphore = field(init=False)
    hosts: dict[str, asyncio.Semaphore] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.overall = asyncio.Semaphore(self.options.concurrency)

    def _host_slot(self, host: str) -> asyncio.Semaphore:
        return self.hosts.setdefault(host.lower(), asyncio.Semaphore(self.options.per_host))

    async def fetch(self, source: Source) -> OutcomeRecord:
        try:
            record = await self._fetch(source)
        except Exception as error:  # one broken source must never stop the others
            record = self._record(source, "failed", f"error ({type(error).__name__}: {error})")
        if record.failed and self.strict:
            self.stop.set()
        report(f"fetch {source.id}: {record.label}")
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
        at = datetime.now(UTC)
        try:
            return record_outcome(
                self.store.root,
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
            report(f"fetch {source.id}: cannot append to its outcome log: {error}")
            return OutcomeRecord(
                source_id=source.id,
                outcome=outcome,
                detail=f"{detail} (not logged: {error.strerror or error})",
                at=format_utc(at),
                snapshot=snapshot,
                http_status=http_status,
                bytes=size,
                attempts=attempts,
            )

    async def _fetch(self, source: Source) -> OutcomeRecord:
        problems: list[str] = []  # unreadable metadata of old snapshots must not block a fetch
        # off the event loop, like store.add: it reads metadata and may rewrite the index
        existing = await asyncio.to_thread(self.store.list, source.id, errors=problems)
        for problem in problems:
            report(f"fetch {source.id}: warning: snapshot skipped: {problem}")
        latest = existing[-1] if existing else None
        conditional = conditional_headers(latest, source)
        spec = FORMATS[source.format]
        headers = {"Accept": ", ".join((*spec.content_types, "*/*;q=0.1")), **conditional}
        attempts = 0
        failure = _Failure("not attempted")
        # Time spent on this source: its attempts and the waits between them, not the time it
        # queued for a connection slot behind other sources.
        budget = self.options.source_timeout
        while True:
            async with self._host_slot(source.host), self.overall:
                if self.stop.is_set():
                    if attempts == 0:
                        return self._record(source, "failed", STRICT_SKIP)
                    return self._failed(source, failure, attempts, " (retries stopped by --strict)")
                attempts += 1
                limit = min(self.options.total_timeout, budget)
                started = time.monotonic()
                try:
                    async with asyncio.timeout(limit):
                        reply = await self._attempt(source, headers, bool(conditional))
                    break
                except TimeoutError:
                    within = f"{self.options.total_timeout:g} s"
                    failure = _Failure(
                        f"timeout (no complete response within {within})", retryable=True
                    )
                except httpx.TransportError as error:
                    failure = _transport_failure(error)
                except BodyError as error:
                    failure = _Failure(error.reason, retryable=error.retryable, status=200)
                except _Failure as error:
                    failure = error
                finally:
                    budget -= time.monotonic() - started
            if not failure.retryable or attempts >= self.options.max_attempts:
                return self._failed(source, failure, attempts)
            wait = retry_wait(attempts, failure.retry_after, self.options)
            if wait >= budget:
                used = f" (the source's {self.options.source_timeout:g} s were used up)"
                return self._failed(source, failure, attempts, used)
            report(
                f"fetch {source.id}: {failure.reason}; attempt {attempts + 1} of "
                f"{self.options.max_attempts} in {wait:.1f} s"
            )
            await asyncio.sleep(wait)
            budget -= wait
        return await self._store(source, reply, latest, attempts)

    def _failed(
        self, source: Source, failure: _Failure, attempts: int, suffix: str = ""
    ) -> OutcomeRecord:
        detail = failure.reason + (f" after {attempts} attempts" if attempts > 1 else "") + suffix
        return self._record(source, "failed", detail, http_status=failure.status, attempts=attempts)

    async def _attempt(self, source: Source, headers: dict[str, str], conditional: bool) -> _Reply:
        url = source.url
        for _hop in range(self.options.max_redirects + 1):
            request = self.client.build_request("GET", url, headers=headers)
            response = await self.client.send(request, stream=True)
            try:
                status = response.status_code
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
                return await self._accept(source, response, url, conditional)
            finally:
                await response.aclose()
        raise _Failure(f"more than {self.options.max_redirects} redirects")

    async def _accept(
        self, source: Source, response: httpx.Response, url: str, conditional: bool
    ) -> _Reply:
        status = response.status_code
        if status == 304:
            if not conditional:
                raise _Failure("HTTP 304 to an unconditional request", status=status)
            return _Reply(status, url, response.headers)
        if status in RETRY_STATUSES:
            retry_after = parse_retry_after(response.headers.get("retry-after"))
            raise _Failure(f"HTTP {status}", retryable=True, status=status, retry_after=retry_after)
        if status != 200:
            raise _Failure(f"HTTP {status}", status=status)
        spec = FORMATS[source.format]
        received_type = media_type(response.headers.get("content-type"))
        if received_type not in spec.content_types:
            raise _Failure(
                f"content type {shown(received_type) or '(none)'} not expected for {source.format}",
                status=status,
            )
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.options.max_bytes:
            raise _Failure(too_large(self.options.max_bytes).reason, status=status)
        body = await read_capped(
            response.aiter_raw(),
            response.headers.get("content-encoding", ""),
            self.options.max_bytes,
        )
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
        try:
            result = await asyncio.to_thread(
                self.store.add,
                source.id,
                reply.body,
                url=source.url,
                retrieved_at=datetime.now(UTC),
                content_type=reply.headers.get("content-type", ""),
                obtained_by="fetched",
                extension=FORMATS[source.format].extension_for(
                    reply.headers.get("content-type", "")
                ),
                note=f"fetched by speedbook fetch ({format_size(len(reply.body))})",
                http=http,
            )
        except (SnapshotError, OSError) as error:
            detail = f"cannot store snapshot ({error})"
            return self._record(source, "failed", detail, http_status=200, attempts=attempts)
        meta = result.meta
        if result.created:
            outcome, detail = "new", f"stored {meta.file}"
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


def _select(sources: dict[str, Source], source_ids: Iterable[str] | None) -> list[Source]:
    if source_ids is None:
        return list(sources.values())
    wanted = list(dict.fromkeys(source_ids))  # de-duplicate, keep the caller's order
    unknown = [source_id for source_id in wanted if source_id not in sources]
    if unknown:
        raise FetchError(f"unknown source id(s): {', '.join(unknown)} (see `speedbook sources`)")
    return [sources[source_id] for source_id in wanted]


async def _fetch_all(
    settings: Settings, sources: list[Source], strict: bool, options: FetchOptions
) -> list[OutcomeRecord]:
    timeout = httpx.Timeout(options.read_timeout, connect=options.connect_timeout)
    limits = httpx.Limits(
        max_connections=options.concurrency, max_keepalive_connections=options.concurrency
    )
    async with httpx.AsyncClient(
        headers={"User-Agent": options.user_agent, "Accept-Encoding": "gzip, deflate"},
        timeout=timeout,
        limits=limits,
        follow_redirects=False,  # followed by hand, so every hop is checked
        trust_env=options.trust_env,
    ) as client:
        run = _Run(SnapshotStore(settings.raw_dir), client, options, strict)
        return list(await asyncio.gather(*(run.fetch(source) for source in sources)))


def fetch_sources(
    settings: Settings,
    source_ids: Iterable[str] | None = None,
    *,
    strict: bool = False,
    options: FetchOptions = DEFAULT_OPTIONS,
) -> FetchReport:
    """Fetch the given sources (all registered sources by default) and store what is new.

    Never raises for a failing source: each one's outcome is in the report and in its log.
    Raises RegistryError for a broken registry and FetchError for unknown source ids. With
    ``strict``, the first failure stops new requests and the rest are recorded as skipped.
    """
    sources = _select(load_registry(settings.registry), source_ids)
    started = time.monotonic()
    if sources:
        report(
            f"fetch: {len(sources)} source(s), {options.concurrency} at a time, "
            f"{options.per_host} per host"
        )
    records = asyncio.run(_fetch_all(settings, sources, strict, options)) if sources else []
    return FetchReport(tuple(records), round(time.monotonic() - started, 2))

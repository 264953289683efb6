"""Fetch policy: limits, retry timing, and the checks a response must pass before it is stored.

Pure functions only (no I/O), so every rule is testable without a server.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit

from pipeline import __version__
from pipeline.support.text import url_problem

# No public project URL exists yet; add "+<url>" here once one does, rather than invent one.
USER_AGENT = f"Speedbook/{__version__} (LLM inference speed dataset; data pipeline)"

RETRY_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})


@dataclass(frozen=True)
class FetchOptions:
    """Limits for one fetch run. The defaults suit the real sources; tests shrink the delays."""

    concurrency: int = 8  # requests in flight overall
    per_host: int = 2  # requests in flight per host: be a polite client
    connect_timeout: float = 10.0
    read_timeout: float = 30.0  # longest silence between two reads
    # Wall-clock deadlines over whole responses, which a read timeout (per read) cannot give: a
    # server dripping one byte every few seconds is never silent for 30 s.
    total_timeout: float = 60.0  # one attempt, from the request to the body's last byte
    source_timeout: float = 120.0  # all attempts of one source, waits between them included
    max_attempts: int = 4
    backoff_base: float = 1.0  # first retry waits about this long, then doubles
    backoff_max: float = 30.0
    retry_after_max: float = 60.0  # a server's Retry-After is honoured up to this many seconds
    max_bytes: int = 25_000_000  # counted after decompression
    max_redirects: int = 5
    # A poll (one request per model): each request has its own source_timeout; the whole round
    # ends after poll_timeout (what is not requested by then is named as failed), and its
    # bodies together hold at most poll_max_bytes.
    poll_timeout: float = 600.0
    poll_max_bytes: int = 200_000_000
    user_agent: str = USER_AGENT
    trust_env: bool = True  # honour HTTP(S)_PROXY / NO_PROXY like any other client

    def __post_init__(self) -> None:
        positive = {
            "concurrency": self.concurrency,
            "per_host": self.per_host,
            "max_attempts": self.max_attempts,
            "max_bytes": self.max_bytes,
            "connect_timeout": self.connect_timeout,
            "read_timeout": self.read_timeout,
            "total_timeout": self.total_timeout,
            "source_timeout": self.source_timeout,
            "poll_timeout": self.poll_timeout,
            "poll_max_bytes": self.poll_max_bytes,
        }
        bad = [name for name, value in positive.items() if value <= 0]
        non_negative = {
            "backoff_base": self.backoff_base,
            "backoff_max": self.backoff_max,
            "retry_after_max": self.retry_after_max,
            "max_redirects": self.max_redirects,
        }
        bad += [name for name, value in non_negative.items() if value < 0]
        if bad:
            raise ValueError(f"FetchOptions: {', '.join(bad)} out of range")


DEFAULT_OPTIONS = FetchOptions()


def backoff_delay(retry: int, options: FetchOptions, rng: random.Random | None = None) -> float:
    """Wait before retry number ``retry`` (1 = first retry): exponential with "equal jitter",
    so parallel clients spread out but the wait never collapses to zero."""
    ceiling = min(options.backoff_max, options.backoff_base * 2 ** (retry - 1))
    return ceiling / 2 + (rng or random).uniform(0, ceiling / 2)


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date); None when
    absent or unreadable. A date in the past means "now"."""
    if not value or not value.strip():
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # HTTP dates are GMT by definition
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def retry_wait(
    retry: int,
    retry_after: float | None,
    options: FetchOptions,
    rng: random.Random | None = None,
) -> float:
    """The server's Retry-After when it gave one (capped), otherwise the backoff."""
    if retry_after is not None:
        return min(retry_after, options.retry_after_max)
    return backoff_delay(retry, options, rng)


def media_type(content_type: str | None) -> str:
    """``Text/HTML; charset=utf-8`` -> ``text/html``; parameters never decide a match."""
    return (content_type or "").split(";", 1)[0].strip().lower()


def redirect_refusal(current: str, target: str, host: str) -> str | None:
    """Why a redirect from ``current`` to ``target`` may not be followed, or None if it may.

    Only http(s), only the source's own host (any port), never from https down to http, and only
    to a URL the store would keep (support.text.url_problem: the final URL is recorded).
    """
    try:
        parts = urlsplit(target)
    except ValueError:
        return "redirect to an invalid URL"
    if parts.scheme not in ("http", "https"):
        return f"redirect to non-http(s) URL scheme {shown(parts.scheme) or '(none)'}"
    problem = url_problem(target)
    if problem:
        return f"redirect to a URL that {problem}"
    target_host = (parts.hostname or "").lower()
    if target_host != host.lower():
        return f"redirect to other host {shown(target_host) or '(none)'}"
    if urlsplit(current).scheme == "https" and parts.scheme == "http":
        return "redirect from https down to http"
    return None


def shown(text: str, limit: int = 80) -> str:
    """Server-supplied text for a one-line outcome: printable characters only, kept short,
    so a hostile header cannot inject escape sequences or newlines into logs and terminals."""
    clean = "".join(ch if ch.isprintable() else "?" for ch in text)
    return clean if len(clean) <= limit else clean[: limit - 1] + "…"

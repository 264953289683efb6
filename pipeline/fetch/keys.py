"""API keys: read from the environment when a fetch starts, sent only to their own source's
origin, never written anywhere.

A source names the variable its key comes from and the header it goes in (the registry's
`api_key_env`, `api_key_header`, `api_key_prefix`). The key is added to a request only when that
request's scheme, host and port are the source URL's own, so a redirect elsewhere (which the
client refuses anyway) or another source never gets it. Every text a fetch writes or prints
passes through `Keys.scrub`, and a response that quotes a key back is not stored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from pipeline.sources.registry import Source

MIN_KEY_LENGTH = 8  # shorter is no real key, and scrubbing it would mangle every message
REDACTED = "[API key]"


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) with the scheme's default port made explicit."""
    parts = urlsplit(url)
    default = {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme, (parts.hostname or "").lower(), parts.port or default


@dataclass(frozen=True)
class ApiKey:
    """One source's key. `repr` never shows it."""

    source_id: str
    env: str
    header: str
    prefix: str
    origin: tuple[str, str, int | None]
    value: str = field(repr=False)

    def headers_for(self, url: str) -> dict[str, str]:
        """The key's header for a request to `url`: only at the source's own origin."""
        if origin(url) != self.origin:
            return {}
        return {self.header: self.prefix + self.value}


@dataclass(frozen=True)
class KeyState:
    """What the environment gave a keyed source: its key, or why there is none."""

    key: ApiKey | None = None
    missing: str | None = None  # "OPENROUTER_API_KEY not set"
    unusable: str | None = None  # set but not a key: a failure, never sent


def key_state(source: Source, environ: Mapping[str, str]) -> KeyState:
    if not source.api_key_env:
        return KeyState()
    value = environ.get(source.api_key_env, "").strip()
    if not value:
        return KeyState(missing=f"{source.api_key_env} not set")
    if len(value) < MIN_KEY_LENGTH or any(
        not (char.isascii() and char.isprintable()) or char.isspace() for char in value
    ):
        return KeyState(
            unusable=f"{source.api_key_env} is not a usable API key (under {MIN_KEY_LENGTH} "
            "characters, or it holds spaces, control or non-ASCII characters)"
        )
    key = ApiKey(
        source.id,
        source.api_key_env,
        source.api_key_header,
        source.api_key_prefix,
        origin(source.url),
        value,
    )
    return KeyState(key=key)


class Keys:
    """Every key of one fetch run, to scrub from whatever the run writes or prints."""

    def __init__(self, keys: Iterable[ApiKey]) -> None:
        self._values = sorted({key.value for key in keys}, key=len, reverse=True)

    def scrub(self, text: str) -> str:
        for value in self._values:
            text = text.replace(value, REDACTED)
        return text

    def quoted_in(self, body: bytes, headers: Iterable[tuple[str, str]]) -> bool:
        """True when a response repeats a key: in a header value or in its body."""
        for value in self._values:
            if value.encode("ascii") in body or any(value in text for _, text in headers):
                return True
        return False

"""Read a response body under a size cap counted after decompression.

httpx would decode gzip for us, but one 64 KiB network read of a gzip bomb inflates to ~64 MB
in a single call before anyone can count it. Decoding here with ``max_length`` means we never
hold more than the cap (plus one byte) of output, whatever the compression ratio.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator

from pipeline.fetch.policy import shown
from pipeline.support.sizes import format_size


class BodyError(Exception):
    """The body cannot be accepted; ``reason`` is the short text recorded as the outcome."""

    def __init__(self, reason: str, *, retryable: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable


def too_large(max_bytes: int) -> BodyError:
    return BodyError(f"body exceeds {format_size(max_bytes)}")


class _Inflater:
    """gzip (multi-member) or deflate (zlib-wrapped, or raw as some servers send it)."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        self.gzip = encoding == "gzip"
        self.fresh = True  # deflate: the first failure switches to raw deflate
        self.inflater = self._new()

    def _new(self, raw: bool = False) -> zlib._Decompress:
        if self.gzip:
            return zlib.decompressobj(zlib.MAX_WBITS | 16)
        return zlib.decompressobj(-zlib.MAX_WBITS if raw else zlib.MAX_WBITS)

    def decompress(self, data: bytes, limit: int) -> tuple[bytes, bytes]:
        """Inflate at most ``limit`` bytes of ``data``; return (output, input still to feed)."""
        try:
            out = self.inflater.decompress(data, limit)
        except zlib.error as error:
            if self.gzip or not self.fresh:
                raise BodyError(f"bad {self.encoding} body ({error})") from None
            self.fresh = False
            self.inflater = self._new(raw=True)
            return self.decompress(data, limit)
        self.fresh = False
        pending = self.inflater.unconsumed_tail
        if self.inflater.eof and self.inflater.unused_data:
            if not self.gzip:
                return out, b""  # bytes after the end of a deflate stream carry nothing
            pending = self.inflater.unused_data  # the next gzip member
            self.inflater = self._new()
        return out, pending

    @property
    def complete(self) -> bool:
        return self.inflater.eof


async def read_capped(chunks: AsyncIterator[bytes], content_encoding: str, max_bytes: int) -> bytes:
    """The decoded body.

    Raises BodyError when the body (decoded, or as sent) exceeds ``max_bytes``, when the
    encoding is unsupported, and when a compressed stream ends early (a truncated body).
    """
    encoding = content_encoding.strip().lower()
    if encoding == "x-gzip":
        encoding = "gzip"
    if encoding not in ("", "identity", "gzip", "deflate"):
        raise BodyError(f"unsupported content encoding {shown(encoding)}")
    inflater = _Inflater(encoding) if encoding in ("gzip", "deflate") else None
    body = bytearray()
    received = 0
    async for chunk in chunks:
        received += len(chunk)
        if received > max_bytes:
            raise too_large(max_bytes)
        if inflater is None:
            body += chunk
        else:
            pending = chunk
            while pending:
                # Ask for one byte more than the room left: getting it proves the cap is passed.
                out, pending = inflater.decompress(pending, max_bytes - len(body) + 1)
                body += out
                if len(body) > max_bytes:
                    raise too_large(max_bytes)
    if inflater is not None and received and not inflater.complete:
        raise BodyError("truncated body", retryable=True)
    return bytes(body)

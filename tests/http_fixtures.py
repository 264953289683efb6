"""A real HTTP server on 127.0.0.1 that misbehaves on purpose, for fetch tests.

Each route is a list of responders: the n-th request to a path gets the n-th responder (the last
one repeats). The server logs every request and counts requests in flight per Host header.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
import zlib
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit


@dataclass(frozen=True)
class Hit:
    at: float  # time.monotonic() when the request arrived
    headers: dict[str, str]  # lower-cased names


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # one request per connection: simple, and closes are clean
    server: _Server

    def do_GET(self) -> None:
        self.server.fault.dispatch(self)

    def log_message(self, format: str, *args: object) -> None:  # keep test output clean
        pass

    # Helpers for responders.
    def done(self) -> None:
        """Stop counting this request as in flight (call before the last bytes are sent, so
        the client cannot start its next request while this one still counts)."""
        self.server.fault.leave(self)

    def send(
        self,
        status: int,
        body: bytes = b"",
        headers: dict[str, str] | None = None,
        content_length: int | None = None,
    ) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if status != 304:
            length = len(body) if content_length is None else content_length
            self.send_header("Content-Length", str(length))
        self.end_headers()
        self.done()
        if body:
            self.wfile.write(body)


Responder = Callable[[Handler], None]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fault: FaultServer

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # clients that give up (timeouts) make writes fail: expected here


class FaultServer:
    def __init__(self) -> None:
        self.routes: dict[str, list[Responder]] = {}
        self.hits: dict[str, list[Hit]] = defaultdict(list)
        self.in_flight: dict[str, int] = defaultdict(int)
        self.peak: dict[str, int] = defaultdict(int)
        self.peak_total = 0
        self.closing = threading.Event()
        self._lock = threading.Lock()
        self._counted: set[int] = set()
        self._server = _Server(("127.0.0.1", 0), Handler)
        self._server.fault = self
        self.port = self._server.server_address[1]
        # A short poll interval: shutdown() waits for the loop to notice, once per test.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def __enter__(self) -> FaultServer:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.closing.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def route(self, path: str, *responders: Responder) -> str:
        self.routes[path] = list(responders)
        return path

    def requests(self, path: str) -> list[Hit]:
        with self._lock:
            return list(self.hits[path])

    def dispatch(self, handler: Handler) -> None:
        path = urlsplit(handler.path).path
        host = (handler.headers.get("Host") or "").rsplit(":", 1)[0]
        with self._lock:
            count = len(self.hits[path])
            self.hits[path].append(
                Hit(time.monotonic(), {k.lower(): v for k, v in handler.headers.items()})
            )
            self.in_flight[host] += 1
            self._counted.add(id(handler))
            self.peak[host] = max(self.peak[host], self.in_flight[host])
            self.peak_total = max(self.peak_total, sum(self.in_flight.values()))
        handler.fault_host = host  # type: ignore[attr-defined]
        try:
            responders = self.routes.get(path)
            if not responders:
                handler.send(404, b"no such route", {"Content-Type": "text/plain"})
                return
            responders[min(count, len(responders) - 1)](handler)
        finally:
            self.leave(handler)

    def leave(self, handler: Handler) -> None:
        with self._lock:
            if id(handler) in self._counted:
                self._counted.discard(id(handler))
                self.in_flight[handler.fault_host] -= 1  # type: ignore[attr-defined]


# --- responders ---------------------------------------------------------------------------------

JSON = "application/json"


def ok(body: bytes, content_type: str = JSON, headers: dict[str, str] | None = None) -> Responder:
    return lambda h: h.send(200, body, {"Content-Type": content_type, **(headers or {})})


def status(code: int, headers: dict[str, str] | None = None, body: bytes = b"") -> Responder:
    return lambda h: h.send(code, body, {"Content-Type": "text/plain", **(headers or {})})


def slow(delay: float, body: bytes, content_type: str = JSON) -> Responder:
    def respond(h: Handler) -> None:
        h.server.fault.closing.wait(delay)
        h.send(200, body, {"Content-Type": content_type})

    return respond


def drip(seconds: float, every: float = 0.05) -> Responder:
    """Headers at once, then one byte of body every ``every`` seconds: never idle long enough
    for a read timeout."""

    def respond(h: Handler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", JSON)
        h.end_headers()
        h.done()
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not h.server.fault.closing.wait(every):
            h.wfile.write(b" ")

    return respond


def slow_body(body: bytes, every: float, content_type: str = JSON) -> Responder:
    """A whole, correctly sized response sent one byte every ``every`` seconds: it would
    complete, but only after ``len(body) * every`` seconds, and never idles long enough for a
    read timeout (the server of issue 17 sent one byte every 5 seconds)."""

    def respond(h: Handler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", content_type)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.flush()
        h.done()
        for index in range(len(body)):
            if h.server.fault.closing.wait(every):
                return
            h.wfile.write(body[index : index + 1])
            h.wfile.flush()

    return respond


def hang(seconds: float = 10.0) -> Responder:
    """Accept the request and never answer (until the server closes)."""

    def respond(h: Handler) -> None:
        h.server.fault.closing.wait(seconds)

    return respond


def reset() -> Responder:
    """Read the request, then abort the connection with a TCP RST."""

    def respond(h: Handler) -> None:
        h.done()
        h.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        h.connection.close()

    return respond


def truncated(body: bytes, declared: int, content_type: str = JSON) -> Responder:
    """Promise ``declared`` bytes, send ``body`` (fewer), close."""
    return lambda h: h.send(200, body, {"Content-Type": content_type}, content_length=declared)


def unsized(body: bytes, content_type: str = JSON) -> Responder:
    """No Content-Length: the body ends when the connection closes."""

    def respond(h: Handler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", content_type)
        h.end_headers()
        h.done()
        h.wfile.write(body)

    return respond


def gzipped(compressed: bytes, content_type: str = JSON) -> Responder:
    headers = {"Content-Type": content_type, "Content-Encoding": "gzip"}
    return lambda h: h.send(200, compressed, headers)


def redirect(location: str, code: int = 302) -> Responder:
    return lambda h: h.send(code, b"", {"Location": location})


def conditional(body: bytes, etag: str, content_type: str = JSON) -> Responder:
    """A 304 when If-None-Match names ``etag``, else the body with that ETag."""

    def respond(h: Handler) -> None:
        if h.headers.get("If-None-Match") == etag:
            h.send(304, b"", {"ETag": etag})
        else:
            h.send(200, body, {"Content-Type": content_type, "ETag": etag})

    return respond


def gzip_bomb(expanded: int) -> bytes:
    """A gzip stream of ``expanded`` zero bytes, compressed ~1000:1, built without ever holding
    the expanded bytes."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    chunk = bytes(1 << 20)
    parts = [compressor.compress(chunk) for _ in range(expanded // len(chunk))]
    parts.append(compressor.flush())
    return b"".join(parts)


def keyed(header: str, value: str, responder: Responder) -> Responder:
    """``responder`` when the request carries ``header: value``, else 401 with a JSON error, as
    the real APIs answer a missing or wrong key."""

    def respond(h: Handler) -> None:
        if h.headers.get(header) == value:
            responder(h)
        else:
            h.send(
                401,
                b'{"error": {"message": "No auth credentials found", "code": 401}}',
                {"Content-Type": JSON},
            )

    return respond


def by_key(header: str, value: str, with_key: Responder, without_key: Responder) -> Responder:
    """``with_key`` when the request carries ``header: value``; ``without_key`` when it carries
    no such header at all (OpenRouter's /endpoints answers both, with null statistics without);
    401 for a wrong key."""

    def respond(h: Handler) -> None:
        sent = h.headers.get(header)
        if sent is None:
            without_key(h)
        elif sent == value:
            with_key(h)
        else:
            h.send(401, b'{"error": {"message": "Invalid API key"}}', {"Content-Type": JSON})

    return respond


def echo_header(header: str, into: str = "body") -> Responder:
    """A server that repeats a request header back: in the body, or in a response header."""

    def respond(h: Handler) -> None:
        sent = h.headers.get(header, "")
        if into == "body":
            h.send(200, b'{"you_sent": "%s"}' % sent.encode(), {"Content-Type": JSON})
        else:
            h.send(200, b'{"data": []}', {"Content-Type": JSON, "X-Echo": sent})

    return respond


def numbered(body: bytes, content_type: str = JSON) -> Responder:
    """The same body every time, with headers that differ on every response (a request id), as
    a real API's do."""
    served = iter(range(1, 1_000_000))

    def respond(h: Handler) -> None:
        h.send(200, body, {"Content-Type": content_type, "X-Request-Id": f"req-{next(served)}"})

    return respond

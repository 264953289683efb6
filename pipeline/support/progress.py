"""Progress lines for long work. Plain functions report through here; the CLI decides where the
lines go (stderr by default, nowhere in tests that do not care)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

Reporter = Callable[[str], None]


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


_reporter: Reporter = _stderr
_started = time.monotonic()


def set_reporter(reporter: Reporter | None) -> None:
    global _reporter, _started
    _reporter = reporter or (lambda _message: None)
    _started = time.monotonic()


def report(message: str) -> None:
    _reporter(f"[{time.monotonic() - _started:6.1f}s] {message}")

"""Per-stage wall time of a build, for the build report and the benchmark.

Stages: inventory, extract (parse), validate, normalise, load, sql, export. Assets run in the
build's process one after another, so a module-level accumulator is enough.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

_seconds: dict[str, float] = {}


def reset() -> None:
    _seconds.clear()


def add(stage: str, seconds: float) -> None:
    _seconds[stage] = _seconds.get(stage, 0.0) + seconds


@contextmanager
def stage(name: str) -> Iterator[None]:
    started = time.perf_counter()
    try:
        yield
    finally:
        add(name, time.perf_counter() - started)


def snapshot() -> dict[str, float]:
    return {name: round(seconds, 3) for name, seconds in sorted(_seconds.items())}

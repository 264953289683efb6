"""Byte counts as people read them in messages and limits, and work cut into runs by them."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")


def format_size(size: int) -> str:
    """25_000_000 -> ``25 MB``; decimal units, exact when the size is a round number."""
    for unit, scale in (("GB", 1_000_000_000), ("MB", 1_000_000), ("kB", 1_000)):
        if size >= scale:
            value = size / scale
            return f"{value:g} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{size} bytes"


def runs(
    items: Iterable[T], size_of: Callable[[T], int], max_bytes: int, max_items: int | None = None
) -> Iterator[list[T]]:
    """Consecutive runs of items, each of at most `max_bytes` (an item larger than that is a run
    of its own) and at most `max_items` items: what a process or a query takes at once."""
    run: list[T] = []
    held = 0
    for item in items:
        size = size_of(item)
        if run and (len(run) == max_items or held + size > max_bytes):
            yield run
            run, held = [], 0
        run.append(item)
        held += size
    if run:
        yield run

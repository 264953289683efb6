"""Work on many small objects at once: a whole export built, parsed, compared or recorded."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def bulk_objects() -> Iterator[None]:
    """Pause the cyclic garbage collector while a whole export is built or parsed: a 20 MB
    document is a million small objects, whose allocation triggers full collections that find
    no cycle to free and, on a large heap, cost more than the parse itself. Nested uses keep it
    paused until the outermost ends."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextmanager
def long_lived_objects() -> Iterator[None]:
    """Pause the collector while objects that live as long as the process are made (the modules
    a build imports, Dagster's definitions and instance: a million objects), then leave them out
    of its scans (`gc.freeze`) before it resumes. Its first collection would otherwise scan all
    of them at once, and every full collection after it again. `thawed_at_end` hands them back."""
    with bulk_objects():
        try:
            yield
        finally:
            gc.freeze()  # still paused: the collector never sees them young


@contextmanager
def thawed_at_end() -> Iterator[None]:
    """Hand the objects frozen by `long_lived_objects` back to the collector on the way out, so
    that a process running many builds (the tests) still collects the cycles among them."""
    try:
        yield
    finally:
        gc.unfreeze()

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

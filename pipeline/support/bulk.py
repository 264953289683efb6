"""Work on many small objects at once: the one place the collector is paused is the parse of a
chunk of snapshots (pipeline/warehouse/staging.py), where a poll's parse makes 200,000 objects."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def bulk_objects() -> Iterator[None]:
    """Pause the cyclic garbage collector meanwhile: a chunk's parse is a million small objects,
    whose allocation triggers full collections that find no cycle to free and, on a large heap,
    cost a fifth of the parse. Nested uses keep it paused until the outermost ends."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()

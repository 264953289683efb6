"""Writing a build's database afresh when much of its file is free space.

DuckDB reuses the blocks that deletes free, but never shrinks its file. A build that derives every
observation again (a change of the core SQL, of a reviewed name or of a tier) deletes the history
and writes it anew, and leaves the file nearly twice the size of its data: at 90 days of polls
10.92 GB, 18,419 of its 41,665 blocks free. Every later build's working copy reads, compares and
fsyncs the file's size (pipeline/warehouse/spare.py), so a file that is mostly free space is
written afresh before it is committed, with DuckDB's own way of reclaiming space, COPY FROM
DATABASE: the same tables, views, macros and comments, the rows in the same order.
"""

from __future__ import annotations

import os
from pathlib import Path

from pipeline.warehouse.connection import connect, drop_checkpointed_wal, quote_literal, wal_of

COMPACT_ABOVE = 0.25  # the share of the file's blocks that may be free before it is written afresh


def free_share(path: Path) -> float:
    """The share of the DuckDB file's blocks that are free (0 for an empty file)."""
    with connect(path, read_only=True) as con:
        total, free = con.execute(
            "SELECT total_blocks, free_blocks FROM pragma_database_size() "
            "WHERE database_name = current_database()"
        ).fetchone()  # type: ignore[misc]
    return free / total if total else 0.0


def compact(path: Path, above: float = COMPACT_ABOVE) -> bool:
    """Write the checkpointed, closed DuckDB file `path` afresh when more than `above` of its
    blocks are free; return whether it was. The new file is written beside it and renamed over
    it, so a failure leaves `path` as it was."""
    if free_share(path) <= above:
        return False
    fresh = path.with_name(f"{path.stem}-compact{path.suffix}")
    fresh.unlink(missing_ok=True)
    try:
        with connect(path) as con:
            (name,) = con.execute("SELECT current_database()").fetchone()  # type: ignore[misc]
            con.execute(f"ATTACH {quote_literal(str(fresh))} AS compacted")
            source = '"' + str(name).replace('"', '""') + '"'
            con.execute(f"COPY FROM DATABASE {source} TO compacted")
            con.execute("CHECKPOINT compacted")
            con.execute("DETACH compacted")
        drop_checkpointed_wal(fresh)
    except BaseException:
        fresh.unlink(missing_ok=True)
        wal_of(fresh).unlink(missing_ok=True)
        raise
    os.replace(fresh, path)
    return True

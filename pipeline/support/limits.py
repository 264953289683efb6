"""How much of a long list a message, a log line or a run event may hold.

A build can meet hundreds of thousands of bad names or snapshots; a message naming them all is
megabytes on one line, and each Dagster run event keeps it forever. Messages and event metadata
name the first few and count the rest; the full list stays in the warehouse.
"""

from __future__ import annotations

from collections.abc import Sequence

MESSAGE_ITEMS = 5  # names in a one-line message
METADATA_ITEMS = 20  # rows in a run event's metadata
TEXT_CHARS = 2_000  # characters of one message


def capped(items: Sequence[str], limit: int, where: str) -> list[str]:
    """The first `limit` items, then one saying how many more there are and `where` they are."""
    if len(items) <= limit:
        return list(items)
    return [*items[:limit], f"... and {len(items) - limit:,} more ({where})"]


def capped_text(text: str, limit: int = TEXT_CHARS) -> str:
    """One line of at most `limit` characters (whitespace collapsed)."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"

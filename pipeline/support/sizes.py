"""Byte counts as people read them in messages and limits."""

from __future__ import annotations


def format_size(size: int) -> str:
    """25_000_000 -> ``25 MB``; decimal units, exact when the size is a round number."""
    for unit, scale in (("GB", 1_000_000_000), ("MB", 1_000_000), ("kB", 1_000)):
        if size >= scale:
            value = size / scale
            return f"{value:g} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{size} bytes"

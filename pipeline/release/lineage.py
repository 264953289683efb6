"""The order releases were published in, as their changelogs record it.

Versions follow the data date, and most releases are published in version order. Not all: after
`speedbook snapshot remove`, a build publishes the content without the withdrawn snapshot under
an older data date (2026.11.29.2) and it replaces a newer release (2026.12.01) as `latest`. Its
changes.json compares it with the release it replaced ("from"), which is what happened; version
order would put it before that release and read the change backwards.

So a release comes after the release its changelog compares it with, and otherwise in version
order. `speedbook releases` lists them so, and `speedbook diff` with no arguments compares
`latest` with the release its changelog names.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pipeline.release.publish import CHANGES_JSON, latest_version, list_versions


def stored_changes(folder: Path) -> dict[str, Any] | None:
    """A release folder's changes.json, or None when it is missing or is not a JSON object."""
    try:
        changes = json.loads((folder / CHANGES_JSON).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return changes if isinstance(changes, dict) else None


def compared_with(changes: Mapping[str, Any] | None) -> str | None:
    """The version a changes.json compares its release with (None for a first release)."""
    old = (changes or {}).get("from")
    version = old.get("version") if isinstance(old, dict) else None
    return version if isinstance(version, str) else None


def publication_order(versions: Sequence[str], before: Mapping[str, str | None]) -> list[str]:
    """`versions` (in version order) in the order they were published: each after the release
    `before` names for it (the one its changelog compares it with), else in version order. A
    loop (hand-edited changelogs) cannot hold a release back: what is left goes last, by
    version."""
    known = set(versions)
    placed: list[str] = []
    done: set[str] = set()
    waiting: dict[str, list[str]] = {}

    def place(version: str) -> None:
        if version in done:
            return
        placed.append(version)
        done.add(version)
        for later in waiting.pop(version, []):
            place(later)

    for version in versions:
        earlier = before.get(version)
        if earlier in known and earlier != version and earlier not in done:
            waiting.setdefault(earlier, []).append(version)  # type: ignore[arg-type]
        else:
            place(version)
    for version in versions:
        place(version)
    return placed


def published_releases(exports: Path) -> list[tuple[str, dict[str, Any] | None]]:
    """Every release folder in `exports` with its changes.json, in publication order."""
    versions = list_versions(exports)
    changes = {version: stored_changes(exports / version) for version in versions}
    before = {version: compared_with(changes[version]) for version in versions}
    return [(version, changes[version]) for version in publication_order(versions, before)]


def last_change(exports: Path) -> tuple[str, str] | None:
    """The two releases `speedbook diff` compares by default, older first: `latest` and the
    release its changelog compares it with, or (no such folder) the one published before it.
    None when there are fewer than two releases."""
    newest = latest_version(exports)
    if newest is None:
        return None
    named = compared_with(stored_changes(exports / newest))
    if named is not None and named != newest and named in list_versions(exports):
        return named, newest
    order = [version for version, _ in published_releases(exports)]
    at = order.index(newest)
    return (order[at - 1], newest) if at > 0 else None

"""The source registry: one reviewed TOML file listing every source the pipeline reads."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

from pipeline.schema.vocabulary import SOURCE_KINDS, TIERS
from pipeline.sources.formats import FORMATS
from pipeline.support.text import url_for_message, url_problem

CADENCES: dict[str, timedelta] = {
    "half_hourly": timedelta(minutes=30),  # live traffic statistics (OpenRouter's last 30 minutes)
    "daily": timedelta(days=1),
    "weekly": timedelta(days=7),
    "monthly": timedelta(days=31),
    "quarterly": timedelta(days=92),
    "yearly": timedelta(days=366),
}
REQUIRED = ("id", "kind", "publisher", "url", "tier", "format", "cadence")
OPTIONAL = ("notes", "title")
SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


class RegistryError(ValueError):
    """The registry file is unreadable or an entry breaks a rule; the message names the entry."""


@dataclass(frozen=True)
class Source:
    id: str
    kind: str
    publisher: str
    url: str
    tier: str
    format: str
    cadence: str
    notes: str = ""
    title: str = ""

    @property
    def host(self) -> str:
        return urlsplit(self.url).hostname or ""

    @property
    def max_age(self) -> timedelta:
        """How old the newest snapshot may be before the source's figures count as stale."""
        return CADENCES[self.cadence]


def _check_entry(index: int, entry: object) -> Source:
    if not isinstance(entry, dict):
        raise RegistryError(f"source #{index}: expected a table, got {type(entry).__name__}")
    label = f"source #{index} ({entry.get('id', '?')!r})"
    missing = [key for key in REQUIRED if not entry.get(key)]
    if missing:
        raise RegistryError(f"{label}: missing {', '.join(missing)}")
    unknown = sorted(set(entry) - set(REQUIRED) - set(OPTIONAL))
    if unknown:
        raise RegistryError(f"{label}: unknown field(s) {', '.join(unknown)}")
    bad_types = [key for key, value in entry.items() if not isinstance(value, str)]
    if bad_types:
        raise RegistryError(f"{label}: field(s) {', '.join(bad_types)} must be strings")
    if not SLUG.match(entry["id"]):
        raise RegistryError(f"{label}: id must be a lower-case slug (a-z, 0-9, single hyphens)")
    checks = (
        ("kind", SOURCE_KINDS),
        ("tier", TIERS),
        ("format", tuple(FORMATS)),
        ("cadence", tuple(CADENCES)),
    )
    for field, allowed in checks:
        if entry[field] not in allowed:
            raise RegistryError(
                f"{label}: unknown {field} {entry[field]!r} (expected one of {', '.join(allowed)})"
            )
    problem = url_problem(entry["url"])
    if problem:
        raise RegistryError(f"{label}: url {url_for_message(entry['url'])} {problem}")
    return Source(**entry)


def load_registry(path: Path) -> dict[str, Source]:
    """Read and validate the registry; return sources by id, in file order."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RegistryError(f"registry {path}: file not found") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise RegistryError(f"registry {path}: cannot read: {error}") from None
    entries = raw.get("source")
    if not isinstance(entries, list) or not entries:
        raise RegistryError(f"registry {path}: no [[source]] entries")
    sources: dict[str, Source] = {}
    for index, entry in enumerate(entries, start=1):
        source = _check_entry(index, entry)
        if source.id in sources:
            raise RegistryError(f"source #{index} ({source.id!r}): duplicate id")
        sources[source.id] = source
    return sources

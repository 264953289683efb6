"""The source registry: one reviewed TOML file listing every source the pipeline reads."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from pipeline.schema.vocabulary import SOURCE_KINDS, TIERS
from pipeline.sources.formats import BUNDLE_CONTENT_TYPE, FORMATS, MAX_MEMBERS
from pipeline.sources.schedule import cron_problem
from pipeline.support.text import url_for_message, url_problem

CADENCES: dict[str, timedelta] = {
    "half_hourly": timedelta(minutes=30),  # live traffic statistics (OpenRouter's last 30 minutes)
    "hourly": timedelta(hours=1),  # live traffic statistics (Vercel AI Gateway's last hour)
    "daily": timedelta(days=1),
    "weekly": timedelta(days=7),
    "monthly": timedelta(days=31),
    "quarterly": timedelta(days=92),
    "yearly": timedelta(days=366),
}
CRON_TABLE = "cadences"  # `[cadences]`: the cron string of each cadence that runs on a schedule
REQUIRED = ("id", "kind", "publisher", "url", "tier", "format", "cadence")
# Optional fields by the type TOML must give them.
OPTIONAL_TEXT = (
    "notes",
    "title",
    "api_key_env",
    "api_key_header",
    "api_key_prefix",
    "poll_path",
    "models_from",
    "license",
    "terms_url",
)
OPTIONAL_BOOL = ("api_key_required", "scheduled", "attribution_required")
OPTIONAL_INT = ("max_models",)
OPTIONAL_LIST = ("models",)
OPTIONAL = OPTIONAL_TEXT + OPTIONAL_BOOL + OPTIONAL_INT + OPTIONAL_LIST
SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
# ids whose raw asset (`raw_<id>`) would be one of the raw layer's own: raw_fetch, raw_inventory
RESERVED_IDS = ("fetch", "inventory")
ENV_NAME = re.compile(r"[A-Z_][A-Z0-9_]*")
HEADER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*")
MODEL_PLACEHOLDER = "{model}"
# The terms a source's data is under: an SPDX licence id where the publisher gives one (MIT,
# Apache-2.0, CC-BY-4.0), `publisher-terms` where the publisher's own terms govern it (terms_url
# says which), `unknown` where nobody knows. Never guessed: what is not known stays unknown.
PUBLISHER_TERMS = "publisher-terms"
UNKNOWN_LICENSE = "unknown"
SPDX_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.+-]{0,63}$")
MAX_MODEL_ID = 200


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
    # An API key, read from the environment variable `api_key_env` when fetching and sent as
    # `<api_key_header>: <api_key_prefix><key>`, only to the url's own scheme, host and port.
    # Without it, a source whose key is required is skipped; otherwise it is fetched anyway.
    api_key_env: str = ""
    api_key_header: str = ""
    api_key_prefix: str = ""
    api_key_required: bool = True
    # A poll: one request per model, `<url>/<poll_path with {model} filled in>`, the responses
    # stored as one bundle. The models: `models`, or the catalogue of the source `models_from`
    # (its newest usable snapshot), the first `max_models` of them when given.
    poll_path: str = ""
    models_from: str = ""
    models: tuple[str, ...] = ()
    max_models: int | None = None
    # False: no schedule fetches it (an undocumented API is read only when a maintainer asks);
    # `speedbook fetch` still does when asked, and its snapshots are read like any other.
    scheduled: bool = True
    # The terms its data is under (see PUBLISHER_TERMS), where they are written, and whether the
    # publisher requires credit wherever its data is shown (None: nobody knows).
    license: str = UNKNOWN_LICENSE
    terms_url: str = ""
    attribution_required: bool | None = None

    @property
    def host(self) -> str:
        return urlsplit(self.url).hostname or ""

    @property
    def max_age(self) -> timedelta:
        """How old the newest snapshot may be before the source's figures count as stale."""
        return CADENCES[self.cadence]

    @property
    def polls(self) -> bool:
        """True when one fetch is a poll of many requests, stored as one bundle."""
        return bool(self.poll_path)

    def member_url(self, model: str) -> str:
        """The URL a poll requests for `model` (an `author/slug` id, each part percent-encoded)."""
        author, slug = model.split("/")
        path = quote(author, safe="~:") + "/" + quote(slug, safe="~:")
        return self.url.rstrip("/") + "/" + self.poll_path.replace(MODEL_PLACEHOLDER, path)


def model_id_problem(model: object) -> str | None:
    """Why `model` cannot be polled as an `author/slug` model id, or None when it can."""
    if not isinstance(model, str):
        return f"is not text ({type(model).__name__})"
    if not model or len(model) > MAX_MODEL_ID:
        return f"is not 1 to {MAX_MODEL_ID} characters"
    if any(not char.isprintable() or char.isspace() for char in model):
        return "holds a space or a control character"
    parts = model.split("/")
    if len(parts) != 2 or not all(parts) or any(part in (".", "..") for part in parts):
        return "is not of the form author/slug"
    return None


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


TYPE_RULES = (
    (REQUIRED + OPTIONAL_TEXT, lambda value: isinstance(value, str), "must be strings"),
    (OPTIONAL_BOOL, lambda value: isinstance(value, bool), "must be true or false"),
    (OPTIONAL_INT, _is_int, "must be whole numbers"),
    (OPTIONAL_LIST, lambda value: isinstance(value, list), "must be lists"),
)


def _typed(label: str, entry: dict[str, Any]) -> None:
    for keys, test, rule in TYPE_RULES:
        bad = [key for key in keys if key in entry and not test(entry[key])]
        if bad:
            raise RegistryError(f"{label}: field(s) {', '.join(bad)} {rule}")


def _check_key(label: str, entry: dict[str, Any]) -> None:
    env, header = entry.get("api_key_env"), entry.get("api_key_header")
    if not env:
        given = [
            key for key in ("api_key_header", "api_key_prefix", "api_key_required") if key in entry
        ]
        if given:
            raise RegistryError(f"{label}: {', '.join(given)} without api_key_env")
        return
    if not ENV_NAME.fullmatch(env):
        raise RegistryError(
            f"{label}: api_key_env {env!r} is not an environment variable name (A-Z, 0-9, _)"
        )
    if not header:
        raise RegistryError(f"{label}: api_key_env needs api_key_header (the header it is sent in)")
    if not HEADER_NAME.fullmatch(header):
        raise RegistryError(f"{label}: api_key_header {header!r} is not an HTTP header name")
    prefix = entry.get("api_key_prefix", "")
    if any(not (char.isprintable() and char.isascii()) for char in prefix):
        raise RegistryError(f"{label}: api_key_prefix must be printable ASCII")


def _check_terms(label: str, entry: dict[str, Any]) -> None:
    terms = entry.get("license", UNKNOWN_LICENSE)
    if not SPDX_ID.match(terms):
        raise RegistryError(
            f"{label}: license {terms[:80]!r} is neither an SPDX id, {PUBLISHER_TERMS!r} nor "
            f"{UNKNOWN_LICENSE!r}"
        )
    terms_url = entry.get("terms_url")
    if terms_url is not None:
        problem = url_problem(terms_url)
        if problem:
            raise RegistryError(f"{label}: terms_url {url_for_message(terms_url)} {problem}")
    elif terms == PUBLISHER_TERMS:
        raise RegistryError(f"{label}: license {PUBLISHER_TERMS!r} needs terms_url (which terms)")


def _check_poll(label: str, entry: dict[str, Any]) -> None:
    path = entry.get("poll_path")
    if not path:
        given = [key for key in ("models_from", "models", "max_models") if key in entry]
        if given:
            raise RegistryError(f"{label}: {', '.join(given)} without poll_path")
        return
    spec = FORMATS[entry["format"]]
    if BUNDLE_CONTENT_TYPE not in spec.content_types:
        raise RegistryError(
            f"{label}: poll_path, but format {spec.name} does not read bundles of responses"
        )
    rest = path.replace(MODEL_PLACEHOLDER, "")
    if path.count(MODEL_PLACEHOLDER) != 1 or "{" in rest or "}" in rest:
        raise RegistryError(f"{label}: poll_path {path!r} must hold {MODEL_PLACEHOLDER} once")
    if (
        path.startswith("/")
        or any(char in rest for char in "?#\\")
        or url_problem("https://example.org/" + rest)
    ):
        raise RegistryError(f"{label}: poll_path {path!r} is not a relative URL path")
    parts = urlsplit(entry["url"])
    if parts.query or parts.fragment:
        raise RegistryError(f"{label}: a poll's url takes no query or fragment")
    if ("models" in entry) == ("models_from" in entry):
        raise RegistryError(f"{label}: a poll needs exactly one of models and models_from")
    models = entry.get("models")
    if models is not None:
        if not models:
            raise RegistryError(f"{label}: models is empty")
        for model in models:
            problem = model_id_problem(model)
            if problem:
                raise RegistryError(f"{label}: model {str(model)[:80]!r} {problem}")
        if len(set(models)) != len(models):
            raise RegistryError(f"{label}: models lists a model twice")
        entry["models"] = tuple(models)
    count = entry.get("max_models")
    if count is not None and not 1 <= count <= MAX_MEMBERS:
        raise RegistryError(f"{label}: max_models must be 1 to {MAX_MEMBERS:,}")


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
    _typed(label, entry)
    if not SLUG.match(entry["id"]):
        raise RegistryError(f"{label}: id must be a lower-case slug (a-z, 0-9, single hyphens)")
    if entry["id"] in RESERVED_IDS:
        raise RegistryError(f"{label}: id {entry['id']!r} is reserved (the raw layer's own asset)")
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
    entry = dict(entry)
    _check_key(label, entry)
    _check_poll(label, entry)
    _check_terms(label, entry)
    return Source(**entry)


def _read(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RegistryError(f"registry {path}: file not found") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise RegistryError(f"registry {path}: cannot read: {error}") from None


def _check_crons(path: Path, raw: dict[str, Any]) -> dict[str, str]:
    table = raw.get(CRON_TABLE, {})
    if not isinstance(table, dict):
        raise RegistryError(f"registry {path}: [{CRON_TABLE}] must be a table of cron strings")
    for cadence, cron in table.items():
        if cadence not in CADENCES:
            raise RegistryError(
                f"registry {path}: [{CRON_TABLE}] names unknown cadence {cadence[:80]!r} "
                f"(expected one of {', '.join(CADENCES)})"
            )
        problem = cron_problem(cron)
        if problem:
            raise RegistryError(
                f"registry {path}: [{CRON_TABLE}] {cadence} = {str(cron)[:80]!r} {problem}"
            )
    return dict(table)


def load_crons(path: Path) -> dict[str, str]:
    """The registry's cron string of each cadence that runs on a schedule (in file order; a
    cadence left out has none), validated as `load_registry` validates them."""
    return _check_crons(path, _read(path))


def load_registry(path: Path) -> dict[str, Source]:
    """Read and validate the registry (its `[cadences]` too); return sources by id, in file
    order."""
    raw = _read(path)
    _check_crons(path, raw)
    entries = raw.get("source")
    if not isinstance(entries, list) or not entries:
        raise RegistryError(f"registry {path}: no [[source]] entries")
    sources: dict[str, Source] = {}
    for index, entry in enumerate(entries, start=1):
        source = _check_entry(index, entry)
        if source.id in sources:
            raise RegistryError(f"source #{index} ({source.id!r}): duplicate id")
        sources[source.id] = source
    for index, source in enumerate(sources.values(), start=1):
        if source.models_from and (
            source.models_from == source.id or source.models_from not in sources
        ):
            raise RegistryError(
                f"source #{index} ({source.id!r}): models_from {source.models_from!r} is not "
                "another source of the registry"
            )
    return sources

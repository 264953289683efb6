"""Reviewed fact files: record claims (claims.toml) and model-access platforms (platforms.toml).

Prose pages cannot be parsed reliably, so their facts are written down here by a reviewer, with
the exact quotes that carry them; parsers then verify every quote against every snapshot.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from pipeline.schema.vocabulary import CLAIM_SCOPES, ID_PATTERN, PLATFORM_KINDS, PRECISIONS
from pipeline.support.figures import FigureError, parse_figure

ID_SLUG = re.compile(f"^{ID_PATTERN}$")

CLAIMS_FILE = "claims.toml"
PLATFORMS_FILE = "platforms.toml"


class ReviewedFileError(ValueError):
    """A reviewed file breaks a rule; the message names the file and the entry."""


@dataclass(frozen=True)
class Evidence:
    source: str
    quote: str


@dataclass(frozen=True)
class Claim:
    id: str
    provider: str
    model: str
    hardware: str
    figure: str
    scope: str
    precision: str
    technique: str
    verified_by: str
    claimed: str
    notes: str
    evidence: tuple[Evidence, ...]


@dataclass(frozen=True)
class Platform:
    id: str
    name: str
    owner: str
    kind: str
    aliases: tuple[str, ...]
    doc_source: str
    catalogue_sources: tuple[str, ...]
    catalogue_scope: str
    stated_count: str
    notable: tuple[str, ...]
    # "<source_id>/<provider id>": the platform's listing in a catalogue of many providers'
    # catalogues (models.dev), where its own catalogue is not read
    catalogue_providers: tuple[str, ...] = ()


def _load(path: Path) -> dict[str, object]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ReviewedFileError(f"{path}: cannot read: {error}") from None


def _text(entry: dict[str, object], key: str, label: str, *, required: bool = True) -> str:
    value = entry.get(key, "")
    if not isinstance(value, str) or (required and not value.strip()):
        raise ReviewedFileError(f"{label}: field {key!r} must be a non-empty string")
    return value.strip()


def _strings(entry: dict[str, object], key: str, label: str) -> tuple[str, ...]:
    value = entry.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ReviewedFileError(f"{label}: field {key!r} must be a list of non-empty strings")
    return tuple(v.strip() for v in value)


def _claim(index: int, entry: object, path: Path) -> Claim:
    if not isinstance(entry, dict):
        raise ReviewedFileError(f"{path}: claim #{index} is not a table")
    label = f"{path.name}: claim #{index} ({entry.get('id', '?')!r})"
    fields = {
        key: _text(
            entry, key, label, required=key in ("id", "provider", "model", "figure", "scope")
        )
        for key in (
            "id",
            "provider",
            "model",
            "hardware",
            "figure",
            "scope",
            "precision",
            "technique",
            "verified_by",
            "claimed",
            "notes",
        )
    }
    for key in ("id", "provider", "model"):
        if not ID_SLUG.match(fields[key]):
            raise ReviewedFileError(f"{label}: {key} {fields[key]!r} is not a slug")
    if fields["scope"] not in CLAIM_SCOPES:
        raise ReviewedFileError(f"{label}: scope must be one of {', '.join(CLAIM_SCOPES)}")
    fields["precision"] = fields["precision"] or "unknown"
    if fields["precision"] not in PRECISIONS:
        raise ReviewedFileError(f"{label}: unknown precision {fields['precision']!r}")
    try:
        figure = parse_figure(fields["figure"])
    except FigureError as error:
        raise ReviewedFileError(f"{label}: figure: {error}") from None
    if figure.value is None:
        raise ReviewedFileError(f"{label}: figure {fields['figure']!r} is not a single number")
    raw_evidence = entry.get("evidence", [])
    if not isinstance(raw_evidence, list) or not raw_evidence:
        raise ReviewedFileError(f"{label}: needs at least one [[claim.evidence]]")
    evidence = []
    for item in raw_evidence:
        if not isinstance(item, dict):
            raise ReviewedFileError(f"{label}: evidence entries must be tables")
        evidence.append(Evidence(_text(item, "source", label), _text(item, "quote", label)))
    return Claim(**fields, evidence=tuple(evidence))


def _platform(index: int, entry: object, path: Path) -> Platform:
    if not isinstance(entry, dict):
        raise ReviewedFileError(f"{path}: platform #{index} is not a table")
    label = f"{path.name}: platform #{index} ({entry.get('id', '?')!r})"
    platform = Platform(
        id=_text(entry, "id", label),
        name=_text(entry, "name", label),
        owner=_text(entry, "owner", label),
        kind=_text(entry, "kind", label),
        aliases=_strings(entry, "aliases", label),
        doc_source=_text(entry, "doc_source", label),
        catalogue_sources=_strings(entry, "catalogue_sources", label),
        catalogue_scope=_text(entry, "catalogue_scope", label, required=False),
        stated_count=_text(entry, "stated_count", label),
        notable=_strings(entry, "notable", label),
        catalogue_providers=_strings(entry, "catalogue_providers", label),
    )
    for listing in platform.catalogue_providers:
        source, _, provider = listing.partition("/")
        if not ID_SLUG.match(source) or not provider.strip() or "/" in provider:
            raise ReviewedFileError(
                f"{label}: catalogue_providers entry {listing!r} must be "
                "'<source_id>/<provider id>'"
            )
    if not ID_SLUG.match(platform.id):
        raise ReviewedFileError(f"{label}: id is not a slug")
    if platform.kind not in PLATFORM_KINDS:
        raise ReviewedFileError(f"{label}: kind must be one of {', '.join(PLATFORM_KINDS)}")
    return platform


def _unique(items: list, what: str, path: Path) -> None:
    seen: set[str] = set()
    for item in items:
        if item.id in seen:
            raise ReviewedFileError(f"{path.name}: duplicate {what} id {item.id!r}")
        seen.add(item.id)


def load_claims(path: Path) -> tuple[Claim, ...]:
    entries = _load(path).get("claim", [])
    if not isinstance(entries, list):
        raise ReviewedFileError(f"{path}: expected [[claim]] entries")
    claims = [_claim(i, e, path) for i, e in enumerate(entries, start=1)]
    _unique(claims, "claim", path)
    return tuple(claims)


def load_platforms(path: Path) -> tuple[Platform, ...]:
    entries = _load(path).get("platform", [])
    if not isinstance(entries, list) or not entries:
        raise ReviewedFileError(f"{path}: expected [[platform]] entries")
    platforms = [_platform(i, e, path) for i, e in enumerate(entries, start=1)]
    _unique(platforms, "platform", path)
    return tuple(platforms)


def unregistered_sources(
    claims: tuple[Claim, ...], platforms: tuple[Platform, ...], registered: Iterable[str]
) -> list[str]:
    """Source ids the reviewed files cite that the registry does not list, one message each,
    naming every place that cites it. Their quotes cannot be verified and their catalogues
    cannot be read, so a typo would silently drop a claim or a platform's listing; the build
    reports these instead."""
    known = set(registered)
    cited = [(f"claim {c.id!r}", e.source) for c in claims for e in c.evidence]
    for platform in platforms:
        cited.append((f"platform {platform.id!r} doc_source", platform.doc_source))
        cited += [(f"platform {platform.id!r} catalogue", s) for s in platform.catalogue_sources]
        cited += [
            (f"platform {platform.id!r} catalogue provider", listing.partition("/")[0])
            for listing in platform.catalogue_providers
        ]
    places: dict[str, list[str]] = {}
    for where, source in cited:
        if source and source not in known and where not in places.setdefault(source, []):
            places[source].append(where)
    return [
        f"{source!r}, not in the registry, cited by {', '.join(wheres)}"
        for source, wheres in places.items()
    ]


def file_digest(path: Path) -> str:
    """Short content hash, folded into parser versions so edits re-run verification."""
    return hashlib.sha256(path.read_bytes()).hexdigest()[:10]


def file_digests(metadata_dir: Path) -> dict[str, str]:
    """`file_digest` of every file in a metadata folder, by file name. Raises OSError."""
    files = sorted(path for path in Path(metadata_dir).iterdir() if path.is_file())
    return {path.name: file_digest(path) for path in files}


@dataclass(frozen=True)
class ReviewedFiles:
    """The reviewed facts of one metadata folder, read once per build, and a short digest of
    every file in the folder: a parser that reads a file folds its digest into its cache key."""

    claims: tuple[Claim, ...]
    platforms: tuple[Platform, ...]
    digests: Mapping[str, str]  # file name -> file_digest

    @classmethod
    def load(cls, metadata_dir: Path) -> ReviewedFiles:
        """Raises ReviewedFileError naming the file and the entry that breaks a rule."""
        metadata_dir = Path(metadata_dir)
        claims = load_claims(metadata_dir / CLAIMS_FILE)
        platforms = load_platforms(metadata_dir / PLATFORMS_FILE)
        try:
            digests = file_digests(metadata_dir)
        except OSError as error:
            raise ReviewedFileError(f"{metadata_dir}: cannot read: {error}") from None
        return cls(claims, platforms, digests)

"""Canonical providers and models: raw names resolved through the reviewed alias tables.

The tables live in `pipeline/metadata/` (`providers.csv`, `models.csv` and their `*_aliases.csv`).
A name resolves only through an alias a reviewer wrote down: resolving a label to the wrong
provider or model is worse than leaving it unresolved, so there is no fuzzy matching into the
data. Close matches are offered as `suggestions` for the reviewer, never applied.

Rules, in order, on the label's base (the label with its variant markers removed):
1. an exact alias, compared by `alias_key` (case, Unicode form and `-`/`_`/space runs ignored);
2. for a base containing `/`, the same on its last path segment with any `:<version>` removed
   (`meta/llama-2-13b-chat:f4e2...` -> `llama-2-13b-chat`).

A name a source gives as a stable id (OpenRouter's slugs, models.dev's ids, Artificial Analysis's
slugs, Cloudflare's model names) that no alias resolves is not left unresolved
(`Resolver.resolve_stable`): its normalised slug (`stable_slug`) is a reviewed entity's id, or
else an unreviewed entity of its own under that slug, shared by every source whose id normalises
the same. Nothing else merges entities: never similarity.
"""

from __future__ import annotations

import csv
import difflib
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from pipeline.normalise.variants import Variant, alias_key, clean_label, parse_variant
from pipeline.support.text import url_problem

PROVIDER = "provider"
MODEL = "model"
KINDS: tuple[str, ...] = (PROVIDER, MODEL)

RESOLVED = "resolved"
UNRESOLVED = "unresolved"
UNREVIEWED = "unreviewed"  # a source's stable id no reviewer has confirmed yet: kept under it

# Entity ids are lower-case slugs; dots are allowed because model versions use them (kimi-k2.5).
ID_SLUG = re.compile(r"^[a-z0-9]+(?:[-.][a-z0-9]+)*$")
_MAX_SUGGESTIONS = 3
_SUGGESTION_CUTOFF = 0.6


class AliasError(ValueError):
    """A reviewed entity or alias file is missing or malformed; the message names file and row."""


@dataclass(frozen=True)
class ProviderRecord:
    """One row of `providers.csv`."""

    provider_id: str
    name: str
    country: str | None
    type: str
    website: str | None
    notes: str | None

    REQUIRED: ClassVar[tuple[str, ...]] = ("provider_id", "name", "type")

    @property
    def id(self) -> str:
        return self.provider_id


@dataclass(frozen=True)
class ModelRecord:
    """One row of `models.csv`."""

    model_id: str
    name: str
    creator: str | None
    notes: str | None

    REQUIRED: ClassVar[tuple[str, ...]] = ("model_id", "name")

    @property
    def id(self) -> str:
        return self.model_id


Record = TypeVar("Record", ProviderRecord, ModelRecord)


@dataclass(frozen=True)
class Resolution:
    """What one raw label resolved to, with the variant read off it and the rule that matched."""

    input: str
    status: str  # RESOLVED | UNRESOLVED
    entity_id: str | None  # a provider_id or model_id
    precision: str
    service_tier: str
    reasoning_effort: str | None
    rule: str | None  # which alias matched, and on what
    suggestions: tuple[str, ...]  # close ids: filled only by callers that report (suggest)

    @property
    def resolved(self) -> bool:
        return self.status == RESOLVED


@dataclass(frozen=True)
class _Alias:
    entity_id: str
    spellings: tuple[str, ...]  # every alias text with this key, in file order

    def spelling_for(self, text: str) -> str:
        # Report the row the reviewer would look for: the one spelt like the input, if any.
        return text if text in self.spellings else self.spellings[0]


def _read_rows(path: Path, columns: tuple[str, ...]) -> list[tuple[int, dict[str, str]]]:
    """Rows of a CSV with exactly `columns`, as (line number, stripped values)."""
    if not path.is_file():
        raise AliasError(f"{path}: no such file")
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.DictReader(handle)
            header = tuple(reader.fieldnames or ())
            if sorted(header) != sorted(columns):
                raise AliasError(
                    f"{path}: header must be {','.join(columns)}, found {','.join(header) or '-'}"
                )
            rows: list[tuple[int, dict[str, str]]] = []
            for row in reader:
                line = reader.line_num
                # DictReader keys surplus cells under None and fills missing ones with None.
                if None in row or any(value is None for value in row.values()):
                    raise AliasError(
                        f"{path}: row {line}: expected {len(columns)} fields ({','.join(columns)})"
                    )
                rows.append((line, {key: value.strip() for key, value in row.items()}))
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise AliasError(f"{path}: cannot read: {error}") from None
    return rows


def _check_id(path: Path, line: int, column: str, value: str) -> None:
    if not ID_SLUG.match(value):
        raise AliasError(
            f"{path}: row {line}: {column} {value!r} is not a slug "
            "(lower-case a-z, 0-9, single '-' or '.')"
        )


def _load_entities(path: Path, record: type[Record]) -> dict[str, Record]:
    columns = tuple(field.name for field in fields(record))
    id_column = columns[0]
    entities: dict[str, Record] = {}
    for line, row in _read_rows(path, columns):
        for column in record.REQUIRED:
            if not row[column]:
                raise AliasError(f"{path}: row {line}: {column} is empty")
        _check_id(path, line, id_column, row[id_column])
        if row[id_column] in entities:
            raise AliasError(f"{path}: row {line}: duplicate {id_column} {row[id_column]!r}")
        website = row.get("website")
        problem = url_problem(website) if website else None
        if problem:  # the exports link it: the one URL rule (support/text.py)
            raise AliasError(f"{path}: row {line}: website {problem}")
        values: dict[str, Any] = {
            key: (value or None) if key not in record.REQUIRED else value
            for key, value in row.items()
        }
        entities[row[id_column]] = record(**values)
    return entities


def _load_aliases(path: Path, id_column: str, known: dict[str, Any]) -> dict[str, _Alias]:
    aliases: dict[str, _Alias] = {}
    for line, row in _read_rows(path, ("alias", id_column, "notes")):
        alias, entity_id = row["alias"], row[id_column]
        key = alias_key(alias)
        if not key:
            raise AliasError(f"{path}: row {line}: alias is empty")
        if not entity_id:
            raise AliasError(f"{path}: row {line}: {id_column} is empty")
        _check_id(path, line, id_column, entity_id)
        if entity_id not in known:
            raise AliasError(f"{path}: row {line}: alias {alias!r} points at unknown {entity_id!r}")
        if parse_variant(alias).base != clean_label(alias):
            # Variant markers are removed before lookup, so such an alias could never match.
            raise AliasError(
                f"{path}: row {line}: alias {alias!r} ends in variant markers and would never "
                f"match; write its base {parse_variant(alias).base!r}"
            )
        previous = aliases.get(key)
        if previous is None:
            aliases[key] = _Alias(entity_id, (alias,))
        elif previous.entity_id != entity_id:
            raise AliasError(
                f"{path}: row {line}: alias {alias!r} maps to {entity_id!r} but "
                f"{previous.spellings[0]!r} already maps the same name to {previous.entity_id!r}"
            )
        else:
            aliases[key] = _Alias(entity_id, (*previous.spellings, alias))
    return aliases


class Resolver:
    """Resolves raw provider and model names through the reviewed alias tables, memoised."""

    def __init__(
        self,
        providers: dict[str, ProviderRecord],
        models: dict[str, ModelRecord],
        provider_aliases: dict[str, _Alias],
        model_aliases: dict[str, _Alias],
    ) -> None:
        self.providers = providers
        self.models = models
        self._aliases: dict[str, dict[str, _Alias]] = {
            PROVIDER: provider_aliases,
            MODEL: model_aliases,
        }
        self._candidates: dict[str, dict[str, str]] = {
            PROVIDER: self._suggestion_candidates(providers, provider_aliases),
            MODEL: self._suggestion_candidates(models, model_aliases),
        }
        # Labels repeat thousands of times in a build; each distinct text is resolved once.
        self._memo: dict[tuple[str, str], Resolution] = {}
        self._suggested: dict[tuple[str, str], tuple[str, ...]] = {}

    @classmethod
    def load(cls, metadata_dir: Path) -> Resolver:
        """Read and check the four tables; raises AliasError naming the file and row."""
        metadata_dir = Path(metadata_dir)
        providers = _load_entities(metadata_dir / "providers.csv", ProviderRecord)
        models = _load_entities(metadata_dir / "models.csv", ModelRecord)
        return cls(
            providers,
            models,
            _load_aliases(metadata_dir / "provider_aliases.csv", "provider_id", providers),
            _load_aliases(metadata_dir / "model_aliases.csv", "model_id", models),
        )

    @staticmethod
    def _suggestion_candidates(
        entities: dict[str, ProviderRecord] | dict[str, ModelRecord], aliases: dict[str, _Alias]
    ) -> dict[str, str]:
        candidates = {key: alias.entity_id for key, alias in aliases.items()}
        for entity_id, record in entities.items():
            candidates.setdefault(alias_key(entity_id), entity_id)
            candidates.setdefault(alias_key(record.name), entity_id)
        return candidates

    def provider(self, text: str) -> Resolution:
        return self.resolve(PROVIDER, text)

    def model(self, text: str) -> Resolution:
        return self.resolve(MODEL, text)

    def resolve(self, kind: str, text: str, *, suggest: bool = True) -> Resolution:
        """`suggest`: close matches for an unresolved name (difflib against every alias: the
        costly part); without it, `suggestions` is empty and `suggest()` gives them later."""
        if kind not in KINDS:
            raise ValueError(f"unknown kind {kind!r}: expected one of {', '.join(KINDS)}")
        # Frames hand over None or NaN for empty cells: they resolve to nothing, not a crash.
        text = text if isinstance(text, str) else ""
        memo_key = (kind, text)
        found = self._memo.get(memo_key)
        if found is None:
            found = self._memo[memo_key] = self._resolve(kind, text)
        if suggest and found.status == UNRESOLVED:
            return replace(found, suggestions=self.suggest(kind, text))
        return found

    def suggest(self, kind: str, text: str) -> tuple[str, ...]:
        """Close matches for a name no alias resolves (memoised), for a reviewer to confirm."""
        text = text if isinstance(text, str) else ""
        memo_key = (kind, text)
        found = self._suggested.get(memo_key)
        if found is None:
            variant = parse_variant(text, provider=kind == PROVIDER)
            base = variant.base
            found = self._suggest(kind, base, _path_tail(base)) if base else ()
            self._suggested[memo_key] = found
        return found

    def resolve_stable(self, kind: str, name: str, stable_id: str | None = None) -> Resolution:
        """Resolve a name from a source that gives stable ids: through the aliases (on `name`,
        then on `stable_id`, the source's own id when the name is a display name), then by
        slug equality with a reviewed entity's id, else as an unreviewed entity under the stable
        id's normalised slug. Unresolved only when neither yields a slug."""
        named = self.resolve(kind, name, suggest=False)
        if named.resolved or stable_id is None or stable_id == name:
            candidate = named
        else:
            by_id = self.resolve(kind, stable_id, suggest=False)
            candidate = by_id if by_id.resolved else named
        if candidate.resolved:
            return candidate
        variant = parse_variant(name, provider=kind == PROVIDER)
        source_id = stable_id if stable_id is not None else variant.base
        slug = stable_slug(source_id if stable_id is not None else variant.base)
        if slug is None:
            return candidate
        known = self.providers if kind == PROVIDER else self.models
        if slug in known:
            rule = f"slug {slug!r} of {source_id!r} is the reviewed id"
            return _resolved(name, variant, slug, rule)
        return Resolution(
            input=name,
            status=UNREVIEWED,
            entity_id=slug,
            precision=variant.precision,
            service_tier=variant.service_tier,
            reasoning_effort=variant.reasoning_effort,
            rule=f"unreviewed: slug of {source_id!r}",
            suggestions=(),
        )

    def resolve_many(self, kind: str, texts: Iterable[str]) -> list[Resolution]:
        return [self.resolve(kind, text) for text in texts]

    def _resolve(self, kind: str, text: str) -> Resolution:
        variant = parse_variant(text, provider=kind == PROVIDER)
        if not variant.base:
            return _unresolved(text, variant, ())
        aliases = self._aliases[kind]
        alias = aliases.get(alias_key(variant.base))
        if alias is not None:
            rule = f"alias {alias.spelling_for(variant.base)!r}"
            return _resolved(text, variant, alias.entity_id, rule)
        tail = _path_tail(variant.base)
        if tail:
            alias = aliases.get(alias_key(tail))
            if alias is not None:
                rule = f"alias {alias.spelling_for(tail)!r} on path tail of {variant.base!r}"
                return _resolved(text, variant, alias.entity_id, rule)
        return _unresolved(text, variant, ())  # suggestions on demand: `suggest`

    def _suggest(self, kind: str, base: str, tail: str | None) -> tuple[str, ...]:
        candidates = self._candidates[kind]
        suggestions: list[str] = []
        for probe in (base, tail):
            if not probe:
                continue
            matches = difflib.get_close_matches(
                alias_key(probe), list(candidates), n=10, cutoff=_SUGGESTION_CUTOFF
            )
            for match in matches:
                if candidates[match] not in suggestions:
                    suggestions.append(candidates[match])
        return tuple(suggestions[:_MAX_SUGGESTIONS])


_NOT_SLUG = re.compile(r"[^a-z0-9.]+")
_SEPARATOR_RUN = re.compile(r"[-.]*-[-.]*")  # a run of separators holding a dash: one dash
_DOTS = re.compile(r"\.{2,}")


def stable_slug(source_id: str) -> str | None:
    """The id an unreviewed entity gets from a source's stable id: the last path segment without
    a `:<version>` suffix, NFKC, lower case, every run of characters other than a-z, 0-9 and `.`
    as one `-`, trimmed ('deepseek/deepseek-v4-flash' -> 'deepseek-v4-flash', 'Sail Research'
    -> 'sail-research', '@cf/meta/llama-3.1-8b-instruct' -> 'llama-3.1-8b-instruct'); None when
    nothing is left."""
    text = unicodedata.normalize("NFKC", source_id).strip()
    tail = _path_tail(text) if "/" in text else text.split(":", 1)[0]
    slug = _NOT_SLUG.sub("-", (tail or "").casefold())
    slug = _DOTS.sub(".", _SEPARATOR_RUN.sub("-", slug)).strip("-.")
    return slug if ID_SLUG.match(slug) else None


def _path_tail(base: str) -> str | None:
    """`meta/llama-2-13b-chat:f4e2...` -> `llama-2-13b-chat`; None for a base without `/`."""
    if "/" not in base:
        return None
    return base.rsplit("/", 1)[1].split(":", 1)[0].strip() or None


def _resolved(text: str, variant: Variant, entity_id: str, rule: str) -> Resolution:
    return Resolution(
        input=text,
        status=RESOLVED,
        entity_id=entity_id,
        precision=variant.precision,
        service_tier=variant.service_tier,
        reasoning_effort=variant.reasoning_effort,
        rule=rule,
        suggestions=(),
    )


def _unresolved(text: str, variant: Variant, suggestions: tuple[str, ...]) -> Resolution:
    return Resolution(
        input=text,
        status=UNRESOLVED,
        entity_id=None,
        precision=variant.precision,
        service_tier=variant.service_tier,
        reasoning_effort=variant.reasoning_effort,
        rule=None,
        suggestions=suggestions,
    )

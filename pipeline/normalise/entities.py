"""Canonical providers and models: raw names resolved through the reviewed alias tables and the
identity rules (identity.py).

The tables live in `pipeline/metadata/` (`providers.csv`, `models.csv` and their `*_aliases.csv`).
Resolving a label to the wrong provider or model is worse than leaving it unresolved, so nothing
is matched by similarity: close matches are offered as `suggestions` for the reviewer, never
applied.

Rules, in order (the resolution's `rule` names the one that decided):
1. an exact alias on the label's base (the label with its variant markers removed), compared by
   `alias_key` (case, Unicode form and `-`/`_`/space runs ignored);
2. for a base containing `/`, the same on its last path segment with any `:<version>` removed
   (`meta/llama-2-13b-chat:f4e2...` -> `llama-2-13b-chat`);
3. an exact alias on the label's identity spelling (its vendor, platform and region prefixes and
   version suffixes removed: `us.meta.llama3-3-70b-instruct-v1:0` -> `llama3.3-70b-instruct`);
4. the identity key of a reviewed entity: a model whose key is a reviewed model id's
   ("Llama 3.3 Instruct 70B" and `llama-3.3-70b-instruct`), a provider whose key is a reviewed
   provider's id, name or alias (`together`, "Together.ai").

A name a source gives as a stable id (OpenRouter's slugs, models.dev's ids, Artificial Analysis's
names, Cloudflare's model names) that none of these resolves is not left unresolved
(`Resolver.resolve_stable`): it becomes an unreviewed entity under its identity spelling, and
every spelling with the same identity key is the same entity (labels.py gives the group one id).
"""

from __future__ import annotations

import csv
import difflib
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from pipeline.normalise.identity import (
    ID_SLUG,
    NO_HINTS,
    Hints,
    ModelIdentity,
    model_identity,
    provider_key,
    slugify,
)
from pipeline.normalise.variants import (
    DEFAULT_PRECISION,
    DEFAULT_SERVICE_TIER,
    Variant,
    alias_key,
    clean_label,
    parse_variant,
)
from pipeline.support.text import url_problem

PROVIDER = "provider"
MODEL = "model"
KINDS: tuple[str, ...] = (PROVIDER, MODEL)

RESOLVED = "resolved"
UNRESOLVED = "unresolved"
UNREVIEWED = "unreviewed"  # a source's stable id no reviewer has confirmed yet: kept under it

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
    OPTIONAL: ClassVar[tuple[str, ...]] = ()

    @property
    def id(self) -> str:
        return self.provider_id


@dataclass(frozen=True)
class ModelRecord:
    """One row of `models.csv`."""

    model_id: str
    name: str
    creator: str | None
    family: str | None  # the model its dated snapshots belong to; empty: the id's family
    notes: str | None

    REQUIRED: ClassVar[tuple[str, ...]] = ("model_id", "name")
    # a models.csv written before families were stated has no family column
    OPTIONAL: ClassVar[tuple[str, ...]] = ("family",)

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
    rule: str | None  # which alias or identity rule matched, and on what
    suggestions: tuple[str, ...]  # close ids: filled only by callers that report (suggest)
    family: str | None = None  # a model's family: its id without the snapshot date
    region: str | None = None  # a Bedrock inference profile read off the id ('us', 'global')
    key: str = ""  # the identity key: spellings with one key are one entity (identity.py)

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


def _read_rows(
    path: Path, columns: tuple[str, ...], optional: tuple[str, ...] = ()
) -> list[tuple[int, dict[str, str]]]:
    """Rows of a CSV with exactly `columns` (those in `optional` may be left out of the header:
    read as empty), as (line number, stripped values)."""
    if not path.is_file():
        raise AliasError(f"{path}: no such file")
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.DictReader(handle)
            header = tuple(reader.fieldnames or ())
            missing = tuple(column for column in columns if column not in header)
            if sorted(header) != sorted(columns) and not (
                set(missing) <= set(optional) and sorted(header + missing) == sorted(columns)
            ):
                raise AliasError(
                    f"{path}: header must be {','.join(columns)}, found {','.join(header) or '-'}"
                )
            rows: list[tuple[int, dict[str, str]]] = []
            for row in reader:
                line = reader.line_num
                # DictReader keys surplus cells under None and fills missing ones with None.
                if None in row or any(value is None for value in row.values()):
                    raise AliasError(
                        f"{path}: row {line}: expected {len(header)} fields ({','.join(header)})"
                    )
                values = {key: value.strip() for key, value in row.items()}
                rows.append((line, values | dict.fromkeys(missing, "")))
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
    for line, row in _read_rows(path, columns, record.OPTIONAL):
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
    """Resolves raw provider and model names through the reviewed alias tables and the identity
    rules, memoised."""

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
        self._reviewed_keys: dict[str, dict[str, str]] = {
            PROVIDER: _reviewed_provider_keys(providers, provider_aliases),
            MODEL: _reviewed_model_keys(models),
        }
        # Labels repeat thousands of times in a build; each distinct text is resolved once.
        self._memo: dict[tuple[str, str], Resolution] = {}
        self._stable_memo: dict[tuple[str, str, str | None, Hints], Resolution] = {}
        self._families: dict[str, str] = {}
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

    def reviewed_keys(self, kind: str) -> dict[str, str]:
        """Identity key -> reviewed id, for the rules and for ranking candidates."""
        return dict(self._reviewed_keys[kind])

    def family_of(self, model_id: str) -> str | None:
        """A reviewed model's family as models.csv states it, else its id's own family."""
        found = self._families.get(model_id)
        if found is None:
            record = self.models.get(model_id)
            found = record.family if record is not None and record.family else None
            found = self._families[model_id] = found or model_identity(model_id).family or ""
        return found or None

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

    def resolve_stable(
        self, kind: str, name: str, stable_id: str | None = None, hints: Hints = NO_HINTS
    ) -> Resolution:
        """Resolve a name from a source that gives stable ids: through the aliases and the
        identity rules (on `name`, then on `stable_id`, the source's own id when the name is a
        display name), else as an unreviewed entity under the identity spelling of the stable
        id (of the name without one). Unresolved only when no name is left. `hints`: the stable
        keys the source publishes beside it (identity.Hints)."""
        memo_key = (kind, name if isinstance(name, str) else "", stable_id, hints)
        found = self._stable_memo.get(memo_key)
        if found is None:
            found = self._stable_memo[memo_key] = self._resolve_stable(
                kind, memo_key[1], stable_id, hints
            )
        return found

    def _resolve_stable(
        self, kind: str, name: str, stable_id: str | None, hints: Hints
    ) -> Resolution:
        source = stable_id if stable_id is not None else name
        identity = _identity(kind, source, hints)
        # the aliases on the name, then on the id; then the identity rules on the id (a display
        # name's words are less sure than the id's)
        named = parse_variant(name, provider=kind == PROVIDER)
        found = self._by_alias(kind, name, named)
        if found is None and stable_id is not None and stable_id != name:
            found = self._by_alias(kind, stable_id)
        if found is None:
            found = self._by_identity(kind, source, identity)
        if found is not None:
            # the region is the id's, wherever the entity was found (us.anthropic....)
            return replace(found, region=found.region or identity.region)
        if not identity.spelling:
            return self.resolve(kind, name, suggest=False)
        if stable_id is None or stable_id == name:
            named = None  # a display name beside the id may state a variant the id does not
        return Resolution(
            input=name,
            status=UNREVIEWED,
            entity_id=identity.spelling,
            precision=_first_set(identity.precision, named and named.precision, DEFAULT_PRECISION),
            service_tier=_first_set(
                identity.service_tier, named and named.service_tier, DEFAULT_SERVICE_TIER
            ),
            reasoning_effort=identity.reasoning_effort or (named and named.reasoning_effort),
            rule=_unreviewed_rule(source, identity),
            suggestions=(),
            family=identity.family if kind == MODEL else None,
            region=identity.region,
            key=identity.key,
        )

    def resolve_many(self, kind: str, texts: Iterable[str]) -> list[Resolution]:
        return [self.resolve(kind, text) for text in texts]

    def _resolve(self, kind: str, text: str) -> Resolution:
        found = self._by_alias(kind, text)
        if found is None:
            found = self._by_identity(kind, text, _identity(kind, text, NO_HINTS))
        if found is None:  # suggestions on demand: `suggest`
            return _unresolved(text, parse_variant(text, provider=kind == PROVIDER), ())
        return found

    def _by_alias(self, kind: str, text: str, variant: Variant | None = None) -> Resolution | None:
        """An exact alias on the label's base (`variant`: the label read already), else on its
        path tail."""
        variant = variant or parse_variant(text, provider=kind == PROVIDER)
        if not variant.base:
            return None
        aliases = self._aliases[kind]
        alias = aliases.get(alias_key(variant.base))
        if alias is not None:
            rule = f"alias {alias.spelling_for(variant.base)!r}"
            return self._resolved(kind, text, variant, alias.entity_id, rule)
        tail = _path_tail(variant.base)
        if tail:
            alias = aliases.get(alias_key(tail))
            if alias is not None:
                rule = f"alias {alias.spelling_for(tail)!r} on path tail of {variant.base!r}"
                return self._resolved(kind, text, variant, alias.entity_id, rule)
        return None

    def _by_identity(self, kind: str, text: str, identity: ModelIdentity) -> Resolution | None:
        """An alias on the identity spelling, else a reviewed entity with the same key."""
        if not identity.key:
            return None
        alias = self._aliases[kind].get(alias_key(identity.spelling)) if identity.spelling else None
        if alias is not None:
            rule = f"alias {alias.spelling_for(identity.spelling or '')!r} on the identity "
            rule += f"spelling {identity.spelling!r}"
            entity_id = alias.entity_id
        elif identity.key in self._reviewed_keys[kind]:
            entity_id = self._reviewed_keys[kind][identity.key]
            rule = f"identity key of reviewed {entity_id!r}"
        else:
            return None
        if identity.steps:
            rule += f" ({'; '.join(identity.steps)})"
        return Resolution(
            input=text,
            status=RESOLVED,
            entity_id=entity_id,
            precision=identity.precision,
            service_tier=identity.service_tier,
            reasoning_effort=identity.reasoning_effort,
            rule=rule,
            suggestions=(),
            family=self.family_of(entity_id) if kind == MODEL else None,
            region=identity.region,
            key=identity.key,
        )

    def _resolved(
        self, kind: str, text: str, variant: Variant, entity_id: str, rule: str
    ) -> Resolution:
        family = self.family_of(entity_id) if kind == MODEL else None
        return replace(_resolved(text, variant, entity_id, rule), family=family)

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


def _identity(kind: str, text: str, hints: Hints) -> ModelIdentity:
    """The identity rules for a kind: a model's (identity.model_identity), or a provider's: its
    variant markers read as a provider's, its slug the stable id's, its key letters and digits."""
    if kind == MODEL:
        return model_identity(text, hints)
    variant = parse_variant(text if isinstance(text, str) else "", provider=True)
    spelling = stable_slug(variant.base) if variant.base else None
    return ModelIdentity(
        spelling=spelling,
        key=provider_key(variant.base) if spelling else "",
        family=None,
        date=None,
        region=None,
        precision=variant.precision,
        service_tier=variant.service_tier,
        reasoning_effort=variant.reasoning_effort,
        steps=(f"variant {', '.join(repr(t) for t in variant.tokens)}",) if variant.tokens else (),
    )


def _reviewed_model_keys(models: dict[str, ModelRecord]) -> dict[str, str]:
    """The identity key of every reviewed model id. Only ids: a reviewed display name or alias
    may mean more in its source than its words say ("Llama 3.3 70B" is the instruct model on
    Artificial Analysis's pages), so its key could catch another model (a base model)."""
    keys: dict[str, str] = {}
    for model_id in models:
        key = model_identity(model_id).key
        if key:
            keys[key] = model_id
    return keys


def _reviewed_provider_keys(
    providers: dict[str, ProviderRecord], aliases: dict[str, _Alias]
) -> dict[str, str]:
    """The key of every reviewed provider's id, name and alias; a key two providers share is
    left out (it decides nothing)."""
    found: dict[str, set[str]] = {}
    spellings = [(p.provider_id, p.provider_id) for p in providers.values()]
    spellings += [(p.name, p.provider_id) for p in providers.values()]
    spellings += [(s, a.entity_id) for a in aliases.values() for s in a.spellings]
    for spelling, provider_id in spellings:
        key = provider_key(parse_variant(spelling, provider=True).base)
        if key:
            found.setdefault(key, set()).add(provider_id)
    return {key: next(iter(ids)) for key, ids in found.items() if len(ids) == 1}


def _first_set(value: str, fallback: str | None, default: str) -> str:
    """A variant dimension from the id, else from the name, else the default."""
    if value != default:
        return value
    return fallback or default


def _unreviewed_rule(source: str, identity: ModelIdentity) -> str:
    rule = f"unreviewed: identity spelling of {source!r}"
    if identity.steps:
        rule += f" ({'; '.join(identity.steps)})"
    return rule


def stable_slug(source_id: str) -> str | None:
    """A provider's id from a source's stable id: the last path segment without a `:<version>`
    suffix, as a slug (identity.slugify: 'Sail Research' -> 'sail-research'); None when nothing
    is left."""
    text = unicodedata.normalize("NFKC", source_id).strip()
    tail = _path_tail(text) if "/" in text else text.split(":", 1)[0]
    return slugify(tail or "")


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

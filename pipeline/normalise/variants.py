"""Endpoint variants: read precision, service tier and reasoning effort markers off a label.

`parse_variant("DeepInfra (Turbo, FP8)")` gives base `DeepInfra`, service tier `turbo`, precision
`fp8`. Only known markers are stripped, and only where publishers put them (a trailing
parenthetical, trailing words, hyphenated suffixes of slug-like ids); every other word stays in
the base, so a name that carries no variant comes back unchanged.

A service tier word that is also part of model names (`turbo`, `fast`: "GPT-4 Turbo", "Grok 4
Fast") is read as a tier outside parentheses only after a parameter count: a served checkpoint is
named by its size ("Llama-3.3-70B-Instruct-Turbo", "llama-3.1-8b-instruct-fast"), a product
model is not.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from pipeline.schema.quantization import (
    DEFAULT_PRECISION,
    QUANTIZATION_PRECISION,
)
from pipeline.schema.vocabulary import REASONING_EFFORTS

DEFAULT_SERVICE_TIER = "standard"

# Marker dimensions. `adapter` is LoRA readiness: recognised and stripped, but it sets nothing.
PRECISION = "precision"
SERVICE_TIER = "service_tier"
REASONING_EFFORT = "reasoning_effort"
ADAPTER = "adapter"


# Spellings of each marker, keyed by `alias_key` (casefolded, separators as one space).
_PRECISION_MARKERS: dict[str, str] = {
    **{
        label: value
        for label, value in QUANTIZATION_PRECISION.items()
        if value != DEFAULT_PRECISION
    },
    # AWQ and GPTQ checkpoints as served by these platforms are 4-bit weight quantisations.
    "awq": "int4",
    "gptq": "int4",
}
_SERVICE_TIER_MARKERS: dict[str, str] = {
    "standard": "standard",
    "base": "standard",  # Nebius's standard endpoints ("Nebius Base"); only on provider names
    "turbo": "turbo",
    "fast": "fast",
    "latency optimized": "latency-optimized",
    "latency optimised": "latency-optimized",
    "reference": "reference",
}
# Every way the sources write an effort (Artificial Analysis: "(Non-reasoning)", "(Reasoning,
# Max Effort)", "(Adaptive Reasoning, Max Effort)", "(xhigh)"; OpenRouter and gateways:
# ":thinking"). `reasoning` is reasoning on at a level not stated: a stated level refines it.
REASONING_ON = "reasoning"
NO_REASONING = "none"
_EFFORT_MARKERS: dict[str, str] = {
    **{effort: effort for effort in REASONING_EFFORTS},
    **{f"{effort} effort": effort for effort in REASONING_EFFORTS},
    "non reasoning": NO_REASONING,
    "no reasoning": NO_REASONING,
    "adaptive reasoning": REASONING_ON,
    "thinking": REASONING_ON,
}
_ADAPTER_MARKERS: dict[str, str] = {"lora": "lora"}

_ALL_MARKERS: dict[str, tuple[str, str]] = {
    **{key: (PRECISION, value) for key, value in _PRECISION_MARKERS.items()},
    **{key: (SERVICE_TIER, value) for key, value in _SERVICE_TIER_MARKERS.items()},
    **{key: (REASONING_EFFORT, value) for key, value in _EFFORT_MARKERS.items()},
    **{key: (ADAPTER, value) for key, value in _ADAPTER_MARKERS.items()},
}

# Outside parentheses a word is only a marker where it cannot be part of a model's name:
# "GPT-4 Turbo", "Grok 4 Fast" and "Mistral Medium" are models, so efforts are never read from
# trailing words, and turbo and fast only after a parameter count (SIZED_ONLY); of the efforts
# only the words no model is named by are read from slug suffixes (gpt-5.3-codex-xhigh,
# grok-4-fast-non-reasoning; not `-high`, `-max`, `-medium`: qwen3-max, mistral-medium).
SIZED_ONLY = frozenset({"turbo", "fast"})
_TRAILING_WORD_MARKERS = frozenset(_PRECISION_MARKERS) | {"latency optimized", "latency optimised"}
_SLUG_SUFFIX_MARKERS = (
    _TRAILING_WORD_MARKERS
    | SIZED_ONLY
    | frozenset(_ADAPTER_MARKERS)
    | {"xhigh", "minimal", "non reasoning"}
)
# A provider's name never ends in a service tier, so on provider names every service tier word is
# a marker, in parentheses or not ("DeepInfra Turbo FP8", "Fireworks Fast", "Nebius Base"). "Base"
# is a marker only there: "Llama 3.1 70B (Base)" is the base model, not a service tier.
_PROVIDER_TRAILING_MARKERS = _TRAILING_WORD_MARKERS | frozenset(_SERVICE_TIER_MARKERS)
_MODEL_TRAILING_MARKERS = _TRAILING_WORD_MARKERS | SIZED_ONLY
_MODEL_ONLY_EXCLUDED = frozenset({"base"})

# A parameter count as model ids write it: 70b, 1.5B, 270m, 1t, 8x7b (experts x size), a22b
# (active), e4b (effective), 128e (experts).
SIZE = re.compile(r"^(?:\d+(?:\.\d+)?[bmt]|\d+x\d+(?:\.\d+)?b|[ae]\d+(?:\.\d+)?b|\d+e)$")
# words of a name: separators, and dots that are not a decimal point (1.5b keeps its dot)
_WORDS = re.compile(r"[\s\-_/:,()\[\]]+|\.(?!\d)|(?<!\d)\.")


def has_size(text: str) -> bool:
    """Whether a name carries a parameter count ('Llama-3.3-70B-Instruct': 70B)."""
    words = _WORDS.split(unicodedata.normalize("NFKC", text).casefold())
    return any(SIZE.match(word) for word in words if word)


_SEPARATORS = re.compile(r"[\s\-_\u2010-\u2015]+")
_PARENTHETICAL = re.compile(r"^(?P<base>.*?\S)\s*\((?P<inner>[^()]*)\)$")

Found = list[tuple[str, str, str]]  # (token as written, dimension, value)


@dataclass(frozen=True)
class Variant:
    """A label split into its base name and the endpoint variant its markers describe."""

    base: str
    precision: str = DEFAULT_PRECISION
    service_tier: str = DEFAULT_SERVICE_TIER
    reasoning_effort: str | None = None
    tokens: tuple[str, ...] = ()


def clean_label(label: str) -> str:
    """Strip and collapse runs of whitespace (including newlines and no-break spaces)."""
    return " ".join(label.split())


def alias_key(text: str) -> str:
    """The comparison key of a name: NFKC, casefolded, runs of space, `-` and `_` as one space.

    Markers here and aliases in `entities` are compared by it."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _SEPARATORS.sub(" ", folded).strip()


_ASCII_SEPARATORS = str.maketrans("-_", "  ")


def _lookup(
    token: str, allowed: frozenset[str] | None = None, excluded: frozenset[str] = frozenset()
) -> tuple[str, str] | None:
    if token.isascii() and " " not in token:
        # most tokens are no marker: an ASCII word's key is its lower case with - and _ as
        # spaces, so a miss needs no Unicode normalisation (a label has several tokens to try)
        key = token.lower().translate(_ASCII_SEPARATORS)
        if key not in _ALL_MARKERS:
            return None
    key = alias_key(token)
    if (allowed is not None and key not in allowed) or key in excluded:
        return None
    return _ALL_MARKERS.get(key)


def _strip_parenthetical(text: str, excluded: frozenset[str]) -> tuple[str, Found] | None:
    match = _PARENTHETICAL.match(text)
    if not match:
        return None
    found: Found = []
    for raw in match["inner"].split(","):
        token = raw.strip()
        marker = _lookup(token, excluded=excluded) if token else None
        if marker is None:
            # One unknown word means this is part of the name ("(0528)", "(400B)"): keep it all.
            return None
        found.append((token, *marker))
    return match["base"], found


def _sized_enough(token: str, base: str, sized_only: frozenset[str]) -> bool:
    """A tier word that also names models (turbo, fast) counts only after a parameter count."""
    return alias_key(token) not in sized_only or has_size(base)


def _strip_trailing_words(
    text: str, allowed: frozenset[str], sized_only: frozenset[str]
) -> tuple[str, Found] | None:
    words = text.split(" ")
    # Two-word markers first so "Latency Optimized" is read as one marker.
    for count in (2, 1):
        if len(words) <= count:
            continue
        token = " ".join(words[-count:])
        marker = _lookup(token, allowed)
        base = " ".join(words[:-count])
        if marker is not None and _sized_enough(token, base, sized_only):
            return base, [(token, *marker)]
    return None


def _strip_slug_suffix(text: str) -> tuple[str, Found] | None:
    parts = text.split("-")
    for count in (2, 1):
        if len(parts) <= count:
            continue
        token = "-".join(parts[-count:])
        marker = _lookup(token, _SLUG_SUFFIX_MARKERS)
        base = "-".join(parts[:-count])
        if (
            marker is not None
            and base
            and not base.endswith("/")
            and _sized_enough(token, base, SIZED_ONLY)
        ):
            return base, [(token, *marker)]
    return None


def merged_effort(held: str, value: str) -> str | None:
    """Two efforts one label states as one: the same one, or a stated level for reasoning on at
    no stated level ("Reasoning, High Effort": high); None when they contradict
    ("Non-reasoning, High Effort")."""
    if held == value:
        return held
    if REASONING_ON in (held, value):
        level = value if held == REASONING_ON else held
        return level if level != NO_REASONING else None
    return None


def _merge(state: dict[str, str], found: Found) -> dict[str, str] | None:
    """The variant with `found` added, or None when it contradicts itself (FP8 and FP16;
    non-reasoning and high effort)."""
    merged = dict(state)
    for _, dimension, value in found:
        held = merged.setdefault(dimension, value)
        combined = merged_effort(held, value) if dimension == REASONING_EFFORT else None
        if held == value:
            continue
        if combined is None:
            return None
        merged[dimension] = combined
    return merged


def parse_variant(label: str, *, provider: bool = False) -> Variant:
    """Split `label` into a base name and variant; unknown words always stay in the base.
    `provider`: the label names a provider, whose trailing words may be any service tier."""
    base = clean_label(label)
    state: dict[str, str] = {}
    tokens: list[str] = []
    trailing = _PROVIDER_TRAILING_MARKERS if provider else _MODEL_TRAILING_MARKERS
    excluded = frozenset() if provider else _MODEL_ONLY_EXCLUDED
    # on a provider's name every tier word is a marker; on a model's, turbo and fast need a size
    sized_only = frozenset() if provider else SIZED_ONLY
    while True:
        if " " in base:
            step = _strip_parenthetical(base, excluded) or _strip_trailing_words(
                base, trailing, sized_only
            )
        else:
            # Slug-like ids ("@cf/meta/llama-3.3-70b-instruct-fp8-fast") carry hyphen suffixes.
            step = _strip_parenthetical(base, excluded) or _strip_slug_suffix(base)
        if step is None:
            break
        new_base, found = step
        merged = _merge(state, found)
        if merged is None:
            # Contradictory markers (FP8 and FP16): claim no variant at all rather than pick
            # one; the whole label stays the base, so it will not resolve and gets reported.
            return Variant(base=clean_label(label))
        state = merged
        tokens[:0] = [token for token, _, _ in found]
        base = new_base
    return Variant(
        base=base,
        precision=state.get(PRECISION, DEFAULT_PRECISION),
        service_tier=state.get(SERVICE_TIER, DEFAULT_SERVICE_TIER),
        reasoning_effort=state.get(REASONING_EFFORT),
        tokens=tuple(tokens),
    )


@dataclass(frozen=True)
class TagVariant:
    """What the suffix of an endpoint's tag says ('deepinfra/fp8', 'fireworks/fast',
    'amazon-bedrock/eu-west-1'): variant markers, and a region for the words that are none."""

    precision: str = DEFAULT_PRECISION
    service_tier: str = DEFAULT_SERVICE_TIER
    reasoning_effort: str | None = None
    region: str | None = None


def tag_variant(suffix: str | None) -> TagVariant:
    """Read a tag suffix, each `/`-separated part on its own: a part that is a marker (any
    precision, service tier or effort word; `fp8-fast` holds two) sets its dimension; a part
    that is not is the endpoint's region, as written ('eu-west-1'). Contradictory markers
    (`fp8/fp16`) are not read: the whole suffix is kept as the region."""
    if not suffix or not suffix.strip():
        return TagVariant()
    state: dict[str, str] = {}
    regions: list[str] = []
    for part in suffix.strip().split("/"):
        tokens = [part] if _lookup(part) else part.split("-")
        found = [(token, *marker) for token in tokens if (marker := _lookup(token))]
        if len(found) != len(tokens) or not found:
            regions.append(part)
            continue
        merged = _merge(state, found)
        if merged is None:
            return TagVariant(region=suffix.strip())
        state = merged
    return TagVariant(
        precision=state.get(PRECISION, DEFAULT_PRECISION),
        service_tier=state.get(SERVICE_TIER, DEFAULT_SERVICE_TIER),
        reasoning_effort=state.get(REASONING_EFFORT),
        region="/".join(regions) or None,
    )

"""Endpoint variants: read precision, service tier and reasoning effort markers off a label.

`parse_variant("DeepInfra (Turbo, FP8)")` gives base `DeepInfra`, service tier `turbo`, precision
`fp8`. Only known markers are stripped, and only where publishers put them (a trailing
parenthetical, trailing words, hyphenated suffixes of slug-like ids); every other word stays in
the base, so a name that carries no variant comes back unchanged.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from pipeline.schema.vocabulary import REASONING_EFFORTS

DEFAULT_PRECISION = "unknown"
DEFAULT_SERVICE_TIER = "standard"

# Marker dimensions. `adapter` is LoRA readiness: recognised and stripped, but it sets nothing.
PRECISION = "precision"
SERVICE_TIER = "service_tier"
REASONING_EFFORT = "reasoning_effort"
ADAPTER = "adapter"

# Reviewed: what each `quantization` label OpenRouter writes means as a precision (its OpenAPI
# `Quantization` enum, 2026-08, as written in endpoint responses). Microscaling formats count as
# their element width: MXFP4 and NVFP4 are 4-bit floats, MXFP8 an 8-bit float. A label not in
# this table is kept as written with precision `unknown` and reported (precision_of_quantization).
QUANTIZATION_PRECISION: dict[str, str] = {
    "fp32": "fp32",
    "bf16": "bf16",
    "fp16": "fp16",
    "fp8": "fp8",
    "mxfp8": "fp8",
    "fp6": "fp6",
    "fp4": "fp4",
    "mxfp4": "fp4",
    "nvfp4": "fp4",
    "int8": "int8",
    "int4": "int4",
    "unknown": DEFAULT_PRECISION,
}

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
_EFFORT_MARKERS: dict[str, str] = {effort: effort for effort in REASONING_EFFORTS}
_ADAPTER_MARKERS: dict[str, str] = {"lora": "lora"}

_ALL_MARKERS: dict[str, tuple[str, str]] = {
    **{key: (PRECISION, value) for key, value in _PRECISION_MARKERS.items()},
    **{key: (SERVICE_TIER, value) for key, value in _SERVICE_TIER_MARKERS.items()},
    **{key: (REASONING_EFFORT, value) for key, value in _EFFORT_MARKERS.items()},
    **{key: (ADAPTER, value) for key, value in _ADAPTER_MARKERS.items()},
}

# Outside parentheses a word is only a marker where it cannot be part of a model's name:
# "GPT-4 Turbo" and "Mistral Medium" are models, so turbo and efforts are never read from trailing
# words or slug suffixes; "-fast" is, because Workers AI ids use it (llama-3.1-8b-instruct-fast).
_TRAILING_WORD_MARKERS = frozenset(_PRECISION_MARKERS) | {"latency optimized", "latency optimised"}
_SLUG_SUFFIX_MARKERS = _TRAILING_WORD_MARKERS | {"fast"} | frozenset(_ADAPTER_MARKERS)
# A provider's name never ends in a service tier, so on provider names every service tier word is
# a marker, in parentheses or not ("DeepInfra Turbo FP8", "Fireworks Fast", "Nebius Base"). "Base"
# is a marker only there: "Llama 3.1 70B (Base)" is the base model, not a service tier.
_PROVIDER_TRAILING_MARKERS = _TRAILING_WORD_MARKERS | frozenset(_SERVICE_TIER_MARKERS)
_MODEL_ONLY_EXCLUDED = frozenset({"base"})

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


def precision_of_quantization(label: str | None) -> str | None:
    """The precision a quantization label means (`QUANTIZATION_PRECISION`, any case): `unknown`
    for no label or the label 'unknown', None for a label the table does not know (the caller
    keeps the label, uses precision `unknown` and reports it)."""
    if label is None:
        return DEFAULT_PRECISION
    return QUANTIZATION_PRECISION.get(label.strip().casefold())


def clean_label(label: str) -> str:
    """Strip and collapse runs of whitespace (including newlines and no-break spaces)."""
    return " ".join(label.split())


def alias_key(text: str) -> str:
    """The comparison key of a name: NFKC, casefolded, runs of space, `-` and `_` as one space.

    Markers here and aliases in `entities` are compared by it."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _SEPARATORS.sub(" ", folded).strip()


def _lookup(
    token: str, allowed: frozenset[str] | None = None, excluded: frozenset[str] = frozenset()
) -> tuple[str, str] | None:
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


def _strip_trailing_words(text: str, allowed: frozenset[str]) -> tuple[str, Found] | None:
    words = text.split(" ")
    # Two-word markers first so "Latency Optimized" is read as one marker.
    for count in (2, 1):
        if len(words) <= count:
            continue
        token = " ".join(words[-count:])
        marker = _lookup(token, allowed)
        if marker is not None:
            return " ".join(words[:-count]), [(token, *marker)]
    return None


def _strip_slug_suffix(text: str) -> tuple[str, Found] | None:
    parts = text.split("-")
    for count in (2, 1):
        if len(parts) <= count:
            continue
        token = "-".join(parts[-count:])
        marker = _lookup(token, _SLUG_SUFFIX_MARKERS)
        base = "-".join(parts[:-count])
        if marker is not None and base and not base.endswith("/"):
            return base, [(token, *marker)]
    return None


def _merge(state: dict[str, str], found: Found) -> dict[str, str] | None:
    """The variant with `found` added, or None when it contradicts itself (FP8 and FP16)."""
    merged = dict(state)
    for _, dimension, value in found:
        if merged.setdefault(dimension, value) != value:
            return None
    return merged


def parse_variant(label: str, *, provider: bool = False) -> Variant:
    """Split `label` into a base name and variant; unknown words always stay in the base.
    `provider`: the label names a provider, whose trailing words may be any service tier."""
    base = clean_label(label)
    state: dict[str, str] = {}
    tokens: list[str] = []
    trailing = _PROVIDER_TRAILING_MARKERS if provider else _TRAILING_WORD_MARKERS
    excluded = frozenset() if provider else _MODEL_ONLY_EXCLUDED
    while True:
        if " " in base:
            step = _strip_parenthetical(base, excluded) or _strip_trailing_words(base, trailing)
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

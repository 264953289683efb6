"""The measure of near-duplicate model ids (a test helper): ids a loose comparison, independent
of the identity rules, finds to be one name spelt apart. It imports nothing from the pipeline, so
the same measure runs on any version of it."""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable

# Words a loose comparison ignores: variant markers, formats, vendor and platform names.
_LOOSE_NOISE = frozenset(
    [
        "fp8",
        "fp16",
        "bf16",
        "fp4",
        "fp6",
        "int4",
        "int8",
        "awq",
        "gptq",
        "mxfp4",
        "nvfp4",
        "fast",
        "turbo",
        "hf",
        "maas",
        "free",
        "lora",
        "meta",
        "openai",
        "anthropic",
        "google",
        "amazon",
        "nvidia",
        "microsoft",
        "databricks",
        "ibm",
        "cohere",
        "xai",
        "ai21",
    ]
)
_LOOSE_REGION = re.compile(r"^(?:us-gov|us|eu|apac|jp|au|ca|global)\.")
_LOOSE_VENDOR = re.compile(r"^[a-z]+\.(?=[a-z])")


def loose_key(model_id: str) -> str:
    """A deliberately loose comparison key of a model id, independent of the identity rules:
    its last path segment without tags, region and vendor prefixes and Bedrock version, as a
    sorted bag of letter runs and digit runs without variant, format and vendor words. Ids with
    one loose key are near-duplicates: the same model spelt apart, or models a human would want
    to compare (a size or date apart spells differently, so those are not counted)."""
    text = unicodedata.normalize("NFKC", model_id).casefold()
    text = text.rsplit("/", 1)[-1].split(":", 1)[0].split("@", 1)[0]
    text = _LOOSE_VENDOR.sub("", _LOOSE_REGION.sub("", text))
    text = re.sub(r"-v\d+(?:[:.]\d+)?$", "", text)
    runs = [run for run in re.findall(r"[a-z]+|\d+", text) if run not in _LOOSE_NOISE]
    return " ".join(sorted(runs))


def near_duplicate_groups(model_ids: Iterable[str]) -> list[list[str]]:
    """Groups of two or more distinct ids with one loose key, largest first."""
    groups: dict[str, set[str]] = defaultdict(set)
    for model_id in model_ids:
        key = loose_key(model_id) if isinstance(model_id, str) else ""
        if key:  # an id of nothing but vendor and variant words is compared with none
            groups[key].add(model_id)
    found = [sorted(ids) for ids in groups.values() if len(ids) > 1]
    return sorted(found, key=lambda ids: (-len(ids), ids))


@dataclasses.dataclass(frozen=True)
class Measure:
    ids: int  # distinct model ids
    grouped: int  # ids in a near-duplicate group
    groups: int


def measure(model_ids: Iterable[str]) -> Measure:
    ids = {model_id for model_id in model_ids if isinstance(model_id, str) and model_id}
    groups = near_duplicate_groups(ids)
    return Measure(len(ids), sum(len(group) for group in groups), len(groups))

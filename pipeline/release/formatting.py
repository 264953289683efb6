"""How a release writes things for people: one formatter per concept (a time, a day, a speed, a
variant), shared by the exports' display texts, the changelog and the preview page."""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache

from pipeline.release.contract.common import Variant
from pipeline.schema.vocabulary import PlatformKind, ServiceTier

PLATFORM_KIND_LABELS: dict[PlatformKind, str] = {
    "managed_cloud_catalogue": "Managed cloud catalogue",
    "edge_hosted": "Edge-hosted",
    "gateway": "Gateway (proxy)",
    "model_choice_layer": "Model-choice layer",
}
# The standard tier is the default and goes unsaid.
SERVICE_TIER_LABELS: dict[ServiceTier, str] = {
    "turbo": "Turbo",
    "fast": "Fast",
    "latency-optimized": "Latency Optimized",
    "reference": "Reference",
}


@lru_cache(maxsize=4096)  # a release writes 50,000 times, most of them the few times of a poll
def timestamp(value: datetime | None) -> str | None:
    """A warehouse time as the exports write it: 2026-11-29T00:00:00Z (UTC, to the second)."""
    return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value is not None else None


def day(value: str | None) -> str | None:
    """The day of an export's timestamp: 2026-11-29."""
    return value[:10] if value else None


def speed(value: float) -> str:
    """A speed as people read it: '321', '2,314', '51.7', '0.54'."""
    if abs(value) >= 100:
        return f"{round(value):,}"
    if abs(value) >= 10:
        return f"{value:,.1f}"
    return f"{value:,.2f}"


def variant_label(variant: Variant) -> str:
    """'high, Turbo, FP8': reasoning effort, then service tier, then precision, each only when
    it is stated and not the default ('' for a standard endpoint of unknown precision)."""
    parts = []
    if variant.reasoning_effort:
        parts.append(variant.reasoning_effort)
    if variant.service_tier in SERVICE_TIER_LABELS:
        parts.append(SERVICE_TIER_LABELS[variant.service_tier])
    if variant.precision != "unknown":
        parts.append(variant.precision.upper())
    return ", ".join(parts)

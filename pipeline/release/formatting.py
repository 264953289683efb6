"""How a release writes things for people: one formatter per concept (a time, a day, a number, a
figure's label, a variant), shared by the exports' display texts, the changelog and the preview
page. docs/methodology.md describes the labels these write."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
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
    "flex": "Flex",
    "priority": "Priority",
}
# How a display names a method: short, and never claiming more than the method is.
METHOD_LABELS = {
    "fixed-workload probe": "probe",
    "percentiles of live routed traffic": "routed traffic",
    "percentiles of live gateway traffic": "gateway traffic",
    "one-off run": "one-off run",
    "vendor record": "vendor record",
    "compiled": "compiled figure",
    "listed price": "list price",
}
# What a number is, by metric: its unit as people read it, before and after the number.
METRIC_UNITS: dict[str, tuple[str, str]] = {
    "output_tokens_per_s": ("", " t/s"),
    "ttft_s": ("", " s to first token"),
    "time_to_first_answer_token_s": ("", " s to first answer token"),
    "e2e_s": ("", " s end to end"),
    "price_blended_usd_per_mtok": ("$", " per 1M tokens, blended"),
    "price_input_usd_per_mtok": ("$", " per 1M input tokens"),
    "price_output_usd_per_mtok": ("$", " per 1M output tokens"),
}
UNIT_LABELS = {"tokens/s": ("", " t/s"), "s": ("", " s"), "USD per 1M tokens": ("$", " per 1M")}


@lru_cache(maxsize=4096)  # a release writes most times many times: the few times of a poll
def timestamp(value: datetime | None) -> str | None:
    """A warehouse time as the exports write it: 2026-11-29T00:00:00Z (UTC, to the second)."""
    return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value is not None else None


def day(value: str | None) -> str | None:
    """The day of an export's timestamp: 2026-11-29."""
    return value[:10] if value else None


def speed(value: float) -> str:
    """A speed rounded as people read it: '321', '2,314', '51.7', '0.54' (bar labels)."""
    if abs(value) >= 100:
        return f"{round(value):,}"
    if abs(value) >= 10:
        return f"{value:,.1f}"
    return f"{value:,.2f}"


def digits(value: float) -> str:
    """A figure with every digit it has and none it has not: '187.1', '2,314', '0.000075'."""
    text = f"{Decimal(repr(float(value))):,f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def amount_text(
    value: float | None,
    low: float | None,
    high: float | None,
    qualifier: str | None,
    metric: str,
    unit: str,
) -> str:
    """'187.1 t/s', '~2,314 t/s' (approximate only), 'up to 740 t/s', 'at least 1,000 t/s',
    '35–434 t/s', '$0.6 per 1M input tokens': a bound or range is written as one."""
    before, after = METRIC_UNITS.get(metric) or UNIT_LABELS.get(unit, ("", f" {unit}"))
    if qualifier == "range" or value is None:
        ends = [f"{before}{digits(v)}" for v in (low, high) if v is not None]
        return ("–".join(ends) or "—") + after
    text = f"{before}{digits(value)}{after}"
    return {"approx": f"~{text}", "at_least": f"at least {text}", "up_to": f"up to {text}"}.get(
        qualifier or "", text
    )


def window_text(minutes: int) -> str:
    """'72 h', '30 min', '1 h'."""
    return f"{minutes // 60} h" if minutes % 60 == 0 else f"{minutes} min"


def measurement_text(method: str | None, statistic: str | None, window: int | None) -> str:
    """'probe median, 72 h', 'routed traffic p90, 30 min', 'one-off run p50', 'vendor record'."""
    label = METHOD_LABELS.get(method or "", method or "method not recorded")
    text = f"{label} {statistic}" if statistic else label
    return f"{text}, {window_text(window)}" if window else text


def date_text(observed_at: str, bound: str, stale: bool) -> str:
    """'as of 2026-06-28', 'as of 2026-06-28 or later' (a lower-bound time), 'stale, as of ...'."""
    text = f"as of {day(observed_at)}" + (" or later" if bound == "lower_bound" else "")
    return f"stale, {text}" if stale else text


def figure_display(
    *,
    amount: str,
    subject: str,
    method: str | None,
    statistic: str | None,
    window: int | None,
    observed_at: str,
    bound: str,
    stale: bool,
    suspect: bool = False,
) -> str:
    """'187.1 t/s · Llama 4 Maverick · probe median, 72 h · as of 2026-06-28': what the figure
    is, what it is about, how it was measured and when; '· suspect' when it is."""
    parts = [amount, subject, measurement_text(method, statistic, window)]
    parts.append(date_text(observed_at, bound, stale))
    if suspect:
        parts.append("suspect")
    return " · ".join(part for part in parts if part)


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
    if variant.region:
        parts.append(variant.region)
    if variant.key and variant.key != variant.precision:  # novita/fp8 is FP8 already
        parts.append(variant.key)
    return ", ".join(parts)


def with_variant(name: str, variant: Variant) -> str:
    """'Llama 3.3 70B (FP8)': a name with its variant's label, when it has one."""
    label = variant_label(variant)
    return f"{name} ({label})" if label else name

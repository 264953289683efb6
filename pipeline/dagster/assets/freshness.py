"""Freshness of each source, as an asset check on its raw asset: what the UI shows agrees with
`mart.source_health`, row for row.

Dagster's own FreshnessPolicy counts from the time a materialisation was recorded (when a build
reported the snapshot), which a runless report cannot backdate: a source retrieved in 2024 would
pass because a build saw it a minute ago. So each build evaluates one non-blocking check per raw
asset (severity WARN) from `mart.source_health`: measured from the retrieval of the snapshot the
source is read from, or a later fetch that re-confirmed it, against the source's cadence, at the
build's data date (pipeline/raw/freshness.py states the rule; the mart applies it).
"""

from collections.abc import Iterator
from datetime import datetime
from typing import Any

import dagster as dg

from pipeline.dagster.assets.core import MART
from pipeline.dagster.assets.raw import raw_asset_key
from pipeline.dagster.resources import SpeedbookResource
from pipeline.sources.registry import Source
from pipeline.support.progress import report

CHECK = "fresh"
HEALTH = """
SELECT h.source_id, h.cadence, h.max_age_minutes, h.used_snapshot_id, h.used_retrieved_at,
       h.confirmed_at, greatest(h.used_retrieved_at, coalesce(h.confirmed_at, h.used_retrieved_at))
           AS fresh_as_of,
       h.age_days, h.stale, h.status, b.data_date
FROM mart.source_health AS h, core.build_state AS b
ORDER BY h.source_id
"""


def _timestamp(value: datetime | None) -> dg.MetadataValue:
    return dg.MetadataValue.timestamp(value) if value is not None else dg.MetadataValue.null()


def _number(value: float | None) -> dg.MetadataValue:
    return dg.MetadataValue.float(float(value)) if value is not None else dg.MetadataValue.null()


def freshness_result(source_id: str, row: dict[str, Any] | None) -> dg.AssetCheckResult:
    """The check of one source from its mart.source_health row (None: the mart has none)."""
    key = raw_asset_key(source_id)
    if row is None:
        return dg.AssetCheckResult(
            asset_key=key,
            check_name=CHECK,
            passed=False,
            severity=dg.AssetCheckSeverity.WARN,
            metadata={"status": "not in mart.source_health"},
        )
    return dg.AssetCheckResult(
        asset_key=key,
        check_name=CHECK,
        passed=row["stale"] is False,  # no usable snapshot (null) is not fresh either
        severity=dg.AssetCheckSeverity.WARN,
        metadata={
            "status": str(row["status"]),
            "stale": "unknown (no usable snapshot)" if row["stale"] is None else row["stale"],
            "cadence": str(row["cadence"]),
            "max_age_days": round(row["max_age_minutes"] / 1440, 1),
            "snapshot_used": str(row["used_snapshot_id"] or "none"),
            "retrieved_at": _timestamp(row["used_retrieved_at"]),
            "confirmed_at": _timestamp(row["confirmed_at"]),
            "fresh_as_of": _timestamp(row["fresh_as_of"]),
            "age_days": _number(row["age_days"]),
            "measured_at": _timestamp(row["data_date"]),
        },
    )


def build_freshness_checks(sources: dict[str, Source]) -> dg.AssetChecksDefinition:
    specs = [
        dg.AssetCheckSpec(
            CHECK,
            asset=raw_asset_key(source.id),
            additional_deps=[MART],
            blocking=False,
            description=f"the snapshot the source is read from, or its re-confirmation by a "
            f"fetch, is no older than its cadence ({source.cadence}) at the build's data date "
            "(mart.source_health.stale)",
        )
        for source in sources.values()
    ]

    @dg.multi_asset_check(
        specs=specs,
        name="raw_freshness",
        can_subset=True,
        description="Each source's freshness from mart.source_health: its retrieval time "
        "against its cadence, never the time a build ran",
    )
    def raw_freshness(
        context: dg.AssetCheckExecutionContext, speedbook: SpeedbookResource
    ) -> Iterator[dg.AssetCheckResult]:
        with speedbook.build_session() as con:
            cursor = con.execute(HEALTH)
            names = [d[0] for d in cursor.description]
            rows = {row[0]: dict(zip(names, row, strict=True)) for row in cursor.fetchall()}
        selected = {key.asset_key for key in context.selected_asset_check_keys}
        failing = 0
        for source_id in sources:
            if raw_asset_key(source_id) not in selected:
                continue
            result = freshness_result(source_id, rows.get(source_id))
            failing += not result.passed
            yield result
        report(f"freshness: {failing} of {len(selected)} source(s) not fresh at the data date")

    return raw_freshness

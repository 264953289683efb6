"""Raw layer: one asset per registered source, materialised from the snapshot store.

Each asset records the source's newest usable snapshot (data version = its sha256). The source's
cadence becomes a Dagster freshness policy, and a non-blocking check warns when the newest
snapshot is older than that cadence.
"""

from collections.abc import Iterator
from datetime import UTC, datetime

import dagster as dg

from pipeline.assets.resources import SpeedbookResource
from pipeline.progress import report
from pipeline.raw import take_inventory
from pipeline.registry import Source
from pipeline.snapshots import SnapshotStore


def raw_asset_key(source_id: str) -> dg.AssetKey:
    return dg.AssetKey(f"raw_{source_id.replace('-', '_')}")


def _spec(source: Source) -> dg.AssetSpec:
    return dg.AssetSpec(
        key=raw_asset_key(source.id),
        group_name="raw",
        description=f"{source.publisher}: {source.title or source.url} "
        f"({source.kind}, {source.tier})",
        kinds={"file"},
        freshness_policy=dg.FreshnessPolicy.time_window(fail_window=source.max_age),
        metadata={
            "source_id": source.id,
            "url": dg.MetadataValue.url(source.url),
            "tier": source.tier,
            "format": source.format,
            "cadence": source.cadence,
        },
    )


def _fresh_check(source: Source) -> dg.AssetCheckSpec:
    return dg.AssetCheckSpec(
        "snapshot_within_cadence",
        asset=raw_asset_key(source.id),
        description=f"warns when the newest snapshot is older than the {source.cadence} cadence",
    )


def build_raw_assets(sources: dict[str, Source]) -> dg.AssetsDefinition:
    @dg.multi_asset(
        name="raw_snapshots",
        specs=[_spec(source) for source in sources.values()],
        check_specs=[_fresh_check(source) for source in sources.values()],
        can_subset=True,
    )
    def raw_snapshots(
        context: dg.AssetExecutionContext, speedbook: SpeedbookResource
    ) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:
        settings = speedbook.settings
        inventory = take_inventory(
            SnapshotStore(settings.raw_dir), speedbook.sources(), speedbook.as_of_time
        )
        for problem in inventory.problems:
            context.log.warning(problem)
        now = datetime.now(UTC)
        selected = {key.path[-1] for key in context.selected_asset_keys}
        for source_id, entry in inventory.sources.items():
            key = raw_asset_key(source_id)
            if key.path[-1] not in selected:
                continue
            latest = entry.latest
            metadata: dict[str, object] = {"snapshots": len(entry.snapshots)}
            if latest is not None:
                metadata |= {
                    "latest_snapshot": latest.snapshot_id,
                    "retrieved_at": latest.retrieved_at,
                    "obtained_by": latest.obtained_by,
                    "sha256": latest.sha256,
                }
            yield dg.MaterializeResult(
                asset_key=key,
                metadata=metadata,
                data_version=dg.DataVersion(latest.sha256 if latest else "none"),
            )
            age = (now - latest.retrieved) if latest else None
            yield dg.AssetCheckResult(
                asset_key=key,
                check_name="snapshot_within_cadence",
                passed=age is not None and age <= entry.source.max_age,
                severity=dg.AssetCheckSeverity.WARN,
                metadata={"age_days": round(age.total_seconds() / 86400, 1) if age else -1},
            )
        report(f"raw: {len(inventory.snapshots)} snapshots from {len(inventory.sources)} sources")

    return raw_snapshots

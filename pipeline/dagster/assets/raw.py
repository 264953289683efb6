"""Raw layer: one external asset per registered source, standing for its snapshots on disk.

Raw assets are not computed by a run: the snapshot store is filled by `speedbook fetch` and
`speedbook snapshot add`. Before each build, `report_new_snapshots` records a materialization
for every source whose newest snapshot changed since the last report, so the UI shows when data
last arrived. Each source's cadence is its Dagster freshness policy.
"""

import dagster as dg

from pipeline.raw.inventory import Inventory
from pipeline.sources.registry import Source


def raw_asset_key(source_id: str) -> dg.AssetKey:
    return dg.AssetKey(f"raw_{source_id.replace('-', '_')}")


def build_raw_specs(sources: dict[str, Source]) -> list[dg.AssetSpec]:
    return [
        dg.AssetSpec(
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
        for source in sources.values()
    ]


def report_new_snapshots(instance: dg.DagsterInstance, inventory: Inventory) -> int:
    """Record a materialization for each source whose newest snapshot is not the one last
    reported; returns how many were reported. Sources without snapshots are left alone."""
    reported = 0
    keys = {source_id: raw_asset_key(source_id) for source_id in inventory.sources}
    last_events = instance.get_latest_materialization_events(keys.values())  # one query
    for source_id, entry in inventory.sources.items():
        latest = entry.latest
        if latest is None:
            continue
        key = keys[source_id]
        last = last_events.get(key)
        materialization = last.asset_materialization if last else None
        seen = materialization.metadata.get("sha256") if materialization else None
        if seen is not None and seen.value == latest.sha256:
            continue
        instance.report_runless_asset_event(
            dg.AssetMaterialization(
                asset_key=key,
                description=f"newest snapshot {latest.snapshot_id}",
                metadata={
                    "snapshots": len(entry.snapshots),
                    "latest_snapshot": latest.snapshot_id,
                    "retrieved_at": latest.retrieved_at,
                    "obtained_by": latest.obtained_by,
                    "sha256": latest.sha256,
                },
                tags={"dagster/data_version": latest.sha256},
            )
        )
        reported += 1
    return reported

"""Raw layer: one external asset per registered source, standing for its snapshots on disk.

Raw assets are not computed by a run: the snapshot store is filled by `speedbook fetch`,
`speedbook snapshot add` and the fetch of a scheduled run (`raw_fetch`, assets/fetch.py). The
first step of a build, `raw_inventory`, lists the snapshots the build reads, reports each one it
leaves out, and records a materialization for every source whose newest snapshot changed since
the last report, so the UI shows when data last arrived (`dagster/last_updated_timestamp`: the
snapshot's retrieval, not the report). A source's freshness is the asset check `fresh` on its
raw asset (assets/freshness.py), never a FreshnessPolicy, which would count from when the report
was recorded.
"""

import dagster as dg

from pipeline.dagster.assets import stage_metadata
from pipeline.dagster.assets.fetch import RAW_FETCH
from pipeline.dagster.resources import SpeedbookResource
from pipeline.raw.inventory import Inventory
from pipeline.sources.registry import Source
from pipeline.support.progress import report, warn
from pipeline.support.timing import StageClock

RAW_INVENTORY = dg.AssetKey("raw_inventory")


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
                    # Dagster's name for when the data itself was last updated
                    "dagster/last_updated_timestamp": dg.MetadataValue.timestamp(latest.retrieved),
                },
                tags={"dagster/data_version": latest.sha256},
            )
        )
        reported += 1
    return reported


def build_inventory_asset(sources: dict[str, Source]) -> dg.AssetsDefinition:
    @dg.asset(
        key=RAW_INVENTORY,
        group_name="raw",
        # after the fetch of a refresh run (a dependency only: the build job has no fetch)
        deps=[RAW_FETCH, *(raw_asset_key(source_id) for source_id in sources)],
        kinds={"file"},
        description="The snapshots a build reads: every registered source's, up to the as-of "
        "time. Reports each snapshot it leaves out once per run, and records a materialisation "
        "of each raw asset whose newest snapshot changed",
    )
    def raw_inventory(
        context: dg.AssetExecutionContext, speedbook: SpeedbookResource
    ) -> dg.MaterializeResult:
        clock = StageClock()
        with clock.stage("inventory"):
            inventory = speedbook.inventory()
            on_disk = speedbook.inventory(whole_history=True)  # the newest, whatever --as-of
        reported = report_new_snapshots(context.instance, on_disk)
        report(f"raw: {reported} source(s) with a new snapshot since the last build")
        # broken metadata and snapshots of unregistered sources are left out of the build
        for problem in inventory.problems:
            warn(f"snapshot skipped: {problem}")
        data_date = inventory.data_date
        return dg.MaterializeResult(
            metadata={
                "snapshots": len(inventory.snapshots),
                "sources_with_snapshots": sum(1 for e in inventory.sources.values() if e.latest),
                "new_raw_snapshots": reported,
                "skipped": len(inventory.problems),
                "skipped_snapshots": dg.MetadataValue.md(
                    "\n".join(f"- {problem}" for problem in inventory.problems) or "none"
                ),
                "data_date": data_date.isoformat() if data_date else "",
                **stage_metadata(clock),
            }
        )

    return raw_inventory

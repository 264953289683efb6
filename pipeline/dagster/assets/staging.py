"""Staged layer: one asset per format. Each extracts its sources' new snapshots into the lake's
`staging` schema: the facts in the shape their sources give them, validated with their Pandera
models before they are written (pipeline/warehouse/staging.py). A check per frame reports what it
validated.

A failure stays with its snapshot: one its parser rejects, or whose rows fail their model, is
recorded as a failed extraction (`staging.extractions`), and its source is read from its newest
good snapshot (`mart.latest_snapshots`), as for a damaged one; the build goes on (the check
warns, naming them)."""

from collections.abc import Iterator, Mapping

import dagster as dg
import duckdb

from pipeline.dagster.assets import stage_metadata
from pipeline.dagster.assets.raw import RAW_INVENTORY, raw_asset_key
from pipeline.dagster.resources import SpeedbookResource
from pipeline.extract import PARSERS, Parser
from pipeline.sources.formats import FORMATS
from pipeline.sources.registry import Source
from pipeline.support.limits import METADATA_ITEMS, capped, capped_text
from pipeline.support.progress import warn
from pipeline.support.timing import StageClock
from pipeline.warehouse.staging import extract, registered_ids, staged_rows


def staging_asset_key(format_name: str) -> dg.AssetKey:
    return dg.AssetKey(f"staging_{format_name}")


def _extracted_ok(con: duckdb.DuckDBPyConnection, snapshot_ids: list[str]) -> list[str]:
    """Those of these snapshots whose extraction is ok."""
    with registered_ids(con, "asked_ids", snapshot_ids):
        rows = con.execute(
            "SELECT snapshot_id FROM staging.extractions SEMI JOIN asked_ids "
            "USING (snapshot_id) WHERE status = 'ok'"
        ).fetchall()
    return [row[0] for row in rows]


def _newest(snapshot_ids: list[str]) -> str:
    """The newest of these snapshot ids (`<source>/<UTC time>-<hash>`); "" for none."""
    return max(snapshot_ids, key=lambda s: s.split("/")[1], default="")


def _code_version(parser: Parser, digests: Mapping[str, str] | None) -> str | None:
    """The staging cache version, for the UI; None when a reviewed file it reads is missing
    (the run then fails naming it)."""
    try:
        return parser.cache_version(digests)
    except ValueError:
        return None


def _staging_asset(
    parser: Parser, sources: list[Source], digests: Mapping[str, str] | None
) -> dg.AssetsDefinition:
    """`digests`: of the reviewed files when the definitions load, for the code version only
    (the run reads the files through the resource)."""
    key = staging_asset_key(parser.format)

    @dg.asset(
        key=key,
        group_name="staging",
        deps=[RAW_INVENTORY, *(raw_asset_key(source.id) for source in sources)],
        code_version=_code_version(parser, digests),
        kinds={"pandas", "duckdb"},
        description=(
            f"{', '.join(parser.frames)} from every {parser.format} snapshot "
            f"({FORMATS[parser.format].description})"
        ),
        check_specs=[
            dg.AssetCheckSpec(
                "matches_schema",
                asset=key,
                description="rows of "
                + ", ".join(f"staging.{frame}" for frame in parser.frames)
                + " satisfy their models (validated before they are written; a snapshot whose "
                "rows fail is rejected)",
            )
        ],
    )
    def staged(speedbook: SpeedbookResource) -> Iterator[object]:
        clock = StageClock()
        registry = {s.id: s for s in sources}
        with clock.stage("inventory"):
            inventory = speedbook.inventory()  # its problems are raw_inventory's to report
        pairs = [
            (meta, registry[meta.source_id])
            for meta in inventory.snapshots
            if meta.source_id in registry
        ]
        all_ids = [m.snapshot_id for m, _ in pairs]
        with speedbook.staging() as con:
            with clock.stage("extract"):
                result = extract(
                    con,
                    speedbook.store(),
                    pairs,
                    reviewed=speedbook.reviewed() if parser.reads else None,
                    label=f"staging_{parser.format}",
                    ensure=False,  # speedbook.staging() did, once per run
                )
            for problem in capped(result.damaged, METADATA_ITEMS, "staging.extractions"):
                warn(f"damaged snapshot, not used: {problem}")
            for problem in capped(result.failed, METADATA_ITEMS, "staging.extractions"):
                warn(f"snapshot rejected: {capped_text(problem, 300)}")
            ok_ids = _extracted_ok(con, all_ids)
            counts = {frame: staged_rows(con, frame, ok_ids) for frame in parser.frames}
            # the first snapshot's rows (by id): ordering the whole staged history to find them
            # cost a scan of it at every build
            preview = con.execute(
                f"SELECT * FROM staging.{parser.frames[0]} WHERE snapshot_id = ? LIMIT 10",
                [min(ok_ids, default="")],
            ).df()
        failed = result.failed
        yield dg.MaterializeResult(
            metadata={
                "snapshots": len(ok_ids),
                "extracted_now": result.extracted,
                "from_cache": result.cached,
                "damaged": len(result.damaged),
                "rejected": len(failed),
                "rejected_snapshots": dg.MetadataValue.md(
                    "\n".join(
                        f"- {capped_text(line, 300)}"
                        for line in capped(failed, METADATA_ITEMS, "staging.extractions")
                    )
                    or "none"
                ),
                **{f"rows_{frame}": count for frame, count in counts.items()},
                "latest_snapshot": _newest(all_ids),
                "preview": dg.MetadataValue.md(preview.to_markdown(index=False)),
                **stage_metadata(clock),
            }
        )
        written = sum(result.rows.get(frame, 0) for frame in parser.frames)
        yield dg.AssetCheckResult(
            check_name="matches_schema",
            passed=not failed,
            severity=dg.AssetCheckSeverity.WARN,  # the snapshots are rejected; the rest goes on
            description=(
                f"{len(failed)} snapshot(s) rejected: "
                + "; ".join(capped(failed, 3, "staging.extractions"))
                if failed
                else f"{written:,} new row(s) validated before writing"
            ),
            metadata={"rows_written": written, "rejected": len(failed)},
        )

    return staged


def build_staging_assets(
    sources: dict[str, Source], digests: Mapping[str, str] | None = None
) -> list[dg.AssetsDefinition]:
    assets = []
    for parser in PARSERS.values():
        chosen = [s for s in sources.values() if s.format == parser.format]
        if chosen:
            assets.append(_staging_asset(parser, chosen, digests))
    return assets

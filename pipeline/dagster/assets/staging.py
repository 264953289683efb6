"""Staged layer: one asset per format. Each extracts its sources' new snapshots into the
warehouse's `staging` schema; a blocking check per frame re-validates, with the very Pandera model
the parser used, the rows after their round trip through DuckDB."""

from collections.abc import Iterator, Mapping

import dagster as dg
import duckdb

from pipeline.dagster.assets import stage_metadata
from pipeline.dagster.assets.raw import RAW_INVENTORY, raw_asset_key
from pipeline.dagster.resources import SpeedbookResource
from pipeline.extract import PARSERS, Parser
from pipeline.extract.staging import extract
from pipeline.schema.staging import FRAMES
from pipeline.sources.formats import FORMATS
from pipeline.sources.registry import Source
from pipeline.support.progress import warn
from pipeline.support.timing import StageClock
from pipeline.warehouse.connection import connect
from pipeline.warehouse.validate import validate_by_snapshot

# Above this many rows a check re-validates only the rows this build added; older rows were
# validated when they were staged.
FULL_CHECK_ROWS = 200_000


def staging_asset_key(format_name: str) -> dg.AssetKey:
    return dg.AssetKey(f"staging_{format_name}")


def _check_frame(
    con: duckdb.DuckDBPyConnection,
    frame: str,
    snapshot_ids: list[str],
    new_ids: list[str],
    total: int,
) -> dg.AssetCheckResult:
    """`total` is the frame's row count over `snapshot_ids` (the materialisation counted it)."""
    scope = snapshot_ids if total <= FULL_CHECK_ROWS else new_ids
    checked, failures = validate_by_snapshot(con, FRAMES[frame], f"staging.{frame}", scope)
    if failures is not None:
        return dg.AssetCheckResult(
            check_name=f"{frame}_matches_schema",
            passed=False,
            metadata={
                "failures": len(failures),
                "sample": dg.MetadataValue.md(failures.head(20).to_markdown()),
            },
        )
    return dg.AssetCheckResult(
        check_name=f"{frame}_matches_schema", passed=True, metadata={"rows_checked": checked}
    )


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
                f"{frame}_matches_schema",
                asset=key,
                blocking=True,
                description=f"rows of staging.{frame} satisfy the {FRAMES[frame].__name__} model",
            )
            for frame in parser.frames
        ],
    )
    def staged(speedbook: SpeedbookResource) -> Iterator[object]:
        clock = StageClock()
        settings = speedbook.settings
        registry = {s.id: s for s in sources}
        with clock.stage("inventory"):
            inventory = speedbook.inventory()  # its problems are raw_inventory's to report
        pairs = [
            (meta, registry[meta.source_id])
            for meta in inventory.snapshots
            if meta.source_id in registry
        ]
        with connect(settings.database) as con:
            with clock.stage("extract"):
                result = extract(
                    con,
                    speedbook.store(),
                    pairs,
                    reviewed=speedbook.reviewed() if parser.reads else None,
                    label=f"staging_{parser.format}",
                )
            for problem in result.damaged:
                warn(f"damaged snapshot, not used: {problem}")
            if result.failed:
                raise dg.Failure(
                    description=f"{len(result.failed)} snapshot(s) could not be parsed: "
                    + " | ".join(result.failed[:5]),
                    metadata={
                        "errors": dg.MetadataValue.md("\n".join(f"- {e}" for e in result.failed))
                    },
                )
            ok_ids = [
                row[0]
                for row in con.execute(
                    "SELECT snapshot_id FROM staging.extractions WHERE status = 'ok' "
                    "AND snapshot_id IN (SELECT unnest(?))",
                    [[m.snapshot_id for m, _ in pairs]],
                ).fetchall()
            ]
            counts = {
                frame: con.execute(
                    f"SELECT count(*) FROM staging.{frame} WHERE snapshot_id IN (SELECT unnest(?))",
                    [ok_ids],
                ).fetchone()[0]
                for frame in parser.frames
            }
            preview = con.execute(
                f"SELECT * FROM staging.{parser.frames[0]} WHERE snapshot_id IN (SELECT unnest(?)) "
                "ORDER BY snapshot_id LIMIT 10",
                [ok_ids],
            ).df()
            with clock.stage("validate"):
                checks = [
                    _check_frame(con, f, ok_ids, result.new_snapshot_ids, counts[f])
                    for f in parser.frames
                ]
        yield dg.MaterializeResult(
            metadata={
                "snapshots": len(ok_ids),
                "extracted_now": result.extracted,
                "from_cache": result.cached,
                "damaged": len(result.damaged),
                **{f"rows_{frame}": count for frame, count in counts.items()},
                "latest_snapshot": max(
                    (m.snapshot_id for m, _ in pairs), key=lambda s: s.split("/")[1], default=""
                ),
                "preview": dg.MetadataValue.md(preview.to_markdown(index=False)),
                **stage_metadata(clock),
            }
        )
        yield from checks

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

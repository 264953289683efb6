"""Staged layer: one asset per format. Each extracts its sources' new snapshots into the
warehouse's `staging` schema; a blocking check per frame re-validates, with the very Pandera model
the parser used, the rows after their round trip through DuckDB: in SQL, the model's checks as
predicates, then Pandera over the snapshots whose rows fail one (pipeline/warehouse/validate.py).

A failure stays with its snapshot: one its parser rejects, or whose staged rows fail the check,
is recorded as a failed extraction (`staging.extractions`), and its source is read from its
newest good snapshot (`mart.latest_snapshots`), as for a damaged one; the build goes on. Only a
failure no snapshot can be blamed for (a whole column of the wrong type) fails the check."""

from collections.abc import Iterator, Mapping

import dagster as dg
import duckdb
import pandas as pd

from pipeline.dagster.assets import stage_metadata
from pipeline.dagster.assets.raw import RAW_INVENTORY, raw_asset_key
from pipeline.dagster.resources import SpeedbookResource
from pipeline.extract import PARSERS, Parser
from pipeline.extract.staging import extract, registered_ids, staged_rows
from pipeline.schema.core import unique_key
from pipeline.schema.staging import FRAMES
from pipeline.sources.formats import FORMATS
from pipeline.sources.registry import Source
from pipeline.support.limits import METADATA_ITEMS, capped, capped_text
from pipeline.support.progress import warn
from pipeline.support.timing import StageClock
from pipeline.warehouse.connection import connect
from pipeline.warehouse.validate import repeated_keys, validate_rows

# Above this many rows a check re-validates only the rows this build added; older rows were
# validated when they were staged.
FULL_CHECK_ROWS = 200_000


def staging_asset_key(format_name: str) -> dg.AssetKey:
    return dg.AssetKey(f"staging_{format_name}")


def _failure_text(case: object) -> str:
    """One Pandera failure case as a short phrase: column, check, the value that failed."""
    column = getattr(case, "column", None)
    check = getattr(case, "check", None)
    value = getattr(case, "failure_case", None)
    return capped_text(f"column {column}: {check} (got {value!r})", 200)


def _check_frame(
    con: duckdb.DuckDBPyConnection,
    frame: str,
    snapshot_ids: list[str],
    new_ids: list[str],
    total: int,
) -> tuple[dg.AssetCheckResult, dict[str, str]]:
    """Re-validate a frame's staged rows; returns the check and the snapshots to reject (id ->
    why) for rows of theirs that fail. `total` is the frame's row count over `snapshot_ids`."""
    model = FRAMES[frame]
    name = f"{frame}_matches_schema"
    table = f"staging.{frame}"
    scope = snapshot_ids if total <= FULL_CHECK_ROWS else new_ids
    checked, failures = validate_rows(con, model, table, scope, limit=None)
    # the key, which Pandera saw a chunk at a time: each snapshot's rows were unique when parsed
    key = unique_key(model)
    _count, repeating = repeated_keys(con, table, key, scope, owners=True)
    if failures is None and not repeating:
        return dg.AssetCheckResult(
            check_name=name, passed=True, metadata={"rows_checked": checked}
        ), {}
    failures = failures if failures is not None else pd.DataFrame(columns=["snapshot_id"])
    sample = dg.MetadataValue.md(failures.head(METADATA_ITEMS).to_markdown())
    unattributed = failures[failures["snapshot_id"].isna()]
    if len(unattributed):  # a whole column or table: no snapshot to blame, the check fails
        return dg.AssetCheckResult(
            check_name=name,
            passed=False,
            description=f"staging.{frame} fails {model.__name__}: "
            + _failure_text(next(unattributed.itertuples())),
            metadata={"failures": len(failures), "sample": sample},
        ), {}
    rejected: dict[str, str] = {}
    for case in failures.itertuples():
        rejected.setdefault(
            str(case.snapshot_id),
            f"{case.snapshot_id}: staged {frame} rows fail {model.__name__}: {_failure_text(case)}",
        )
    for snapshot_id in repeating:
        rejected.setdefault(
            snapshot_id,
            f"{snapshot_id}: staged {frame} rows fail {model.__name__}: "
            f"more than one row has the key ({', '.join(key)})",
        )
    return dg.AssetCheckResult(
        check_name=name,
        passed=False,
        severity=dg.AssetCheckSeverity.WARN,  # the snapshots are rejected; the rest goes on
        description=f"{len(rejected)} snapshot(s) rejected: "
        + "; ".join(capped(list(rejected.values()), 3, "staging.extractions")),
        metadata={
            "failures": len(failures) + len(repeating),
            "rejected": len(rejected),
            "sample": sample,
        },
    ), rejected


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


def _reject(con: duckdb.DuckDBPyConnection, rejected: dict[str, str]) -> None:
    """Record snapshots whose staged rows failed their check as failed extractions: the build
    leaves them out, and the next build reads them again (a fixed parser takes them)."""
    for snapshot_id, error in rejected.items():
        con.execute(
            "UPDATE staging.extractions SET status = 'failed', error = ? WHERE snapshot_id = ?",
            [error, snapshot_id],
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
        registry = {s.id: s for s in sources}
        with clock.stage("inventory"):
            inventory = speedbook.inventory()  # its problems are raw_inventory's to report
        pairs = [
            (meta, registry[meta.source_id])
            for meta in inventory.snapshots
            if meta.source_id in registry
        ]
        all_ids = [m.snapshot_id for m, _ in pairs]
        with connect(speedbook.database) as con:
            with clock.stage("extract"):
                result = extract(
                    con,
                    speedbook.store(),
                    pairs,
                    reviewed=speedbook.reviewed() if parser.reads else None,
                    label=f"staging_{parser.format}",
                )
            for problem in capped(result.damaged, METADATA_ITEMS, "staging.extractions"):
                warn(f"damaged snapshot, not used: {problem}")
            for problem in capped(result.failed, METADATA_ITEMS, "staging.extractions"):
                warn(f"snapshot rejected: {capped_text(problem, 300)}")
            ok_ids = _extracted_ok(con, all_ids)
            checks, rejected = [], {}
            with clock.stage("validate"):
                for frame in parser.frames:
                    check, found = _check_frame(
                        con, frame, ok_ids, result.new_snapshot_ids, staged_rows(con, frame, ok_ids)
                    )
                    checks.append(check)
                    if found:
                        _reject(con, found)
                        rejected |= found
                        ok_ids = [sid for sid in ok_ids if sid not in found]
            for problem in capped(list(rejected.values()), METADATA_ITEMS, "staging.extractions"):
                warn(f"snapshot rejected: {problem}")
            counts = {frame: staged_rows(con, frame, ok_ids) for frame in parser.frames}
            # the first snapshot's rows (by id): ordering the whole staged history to find them
            # cost a scan of it at every build
            preview = con.execute(
                f"SELECT * FROM staging.{parser.frames[0]} WHERE snapshot_id = ? LIMIT 10",
                [min(ok_ids, default="")],
            ).df()
        failed = [*result.failed, *rejected.values()]
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

"""Normalise and core layers: resolve every label once, then load the core tables (which read
the resolutions through Dagster's IO manager) and the mart views."""

from collections.abc import Iterator

import dagster as dg
import duckdb
import pandas as pd

from pipeline.dagster.assets import stage_metadata
from pipeline.dagster.assets.staging import staging_asset_key
from pipeline.dagster.resources import SpeedbookResource
from pipeline.extract import PARSERS
from pipeline.normalise.labels import LabelReport, resolve_labels
from pipeline.normalise.reviewed import unregistered_sources
from pipeline.raw.freshness import confirmations
from pipeline.raw.inventory import Inventory
from pipeline.raw.outcomes import read_outcomes
from pipeline.schema.core import CORE_TABLES, CoreTable, unique_key
from pipeline.schema.growing import PER_SNAPSHOT
from pipeline.support.limits import MESSAGE_ITEMS, METADATA_ITEMS
from pipeline.support.progress import report, warn
from pipeline.support.text import shorten
from pipeline.support.timing import StageClock
from pipeline.warehouse.connection import connect
from pipeline.warehouse.core import build_core
from pipeline.warehouse.marts import apply_marts
from pipeline.warehouse.validate import (
    duplicate_keys,
    snapshot_scope,
    validate_rows,
    validate_table,
)

UNRESOLVED = dg.AssetKey("staging_unresolved_names")
MART = dg.AssetKey("mart_views")


def core_asset_key(table: str) -> dg.AssetKey:
    return dg.AssetKey(f"core_{table}")


def _ids(inventory: Inventory) -> list[str]:
    return [meta.snapshot_id for meta in inventory.snapshots]


@dg.asset(
    key=UNRESOLVED,
    group_name="staging",
    deps=[staging_asset_key(f) for f in PARSERS],
    kinds={"duckdb"},
    description="Every label in staging resolved once per build (core_tables reads the "
    "resolutions); its metadata lists the names no reviewed alias resolves, with suggestions, "
    "and counts the unreviewed entities kept under a source's stable id",
    check_specs=[
        dg.AssetCheckSpec(
            "no_unresolved_names_in_figures",
            asset=UNRESOLVED,
            blocking=False,  # the figures are held back from the release; the rest publishes
            description="every provider, model and platform name behind a figure resolves; a "
            "warning lists those whose figures are held back",
        )
    ],
)
def staging_unresolved_names(speedbook: SpeedbookResource) -> Iterator[object]:
    clock = StageClock()
    with clock.stage("inventory"):
        inventory = speedbook.inventory()
    with connect(speedbook.database) as con, clock.stage("normalise"):
        labels = resolve_labels(
            con, speedbook.resolver(), speedbook.reviewed().platforms, _ids(inventory)
        )
    columns = ["kind", "label", "held_back", "suggestions", "sources", "uses"]
    unresolved = labels.unresolved[columns]
    yield dg.MaterializeResult(
        value=labels,
        metadata={
            "labels": len(labels.resolutions),
            "unresolved": len(unresolved),
            "held_back": len(labels.held_back),
            "unreviewed": len(labels.unreviewed),
            # a few rows in the event log; the full list is staging.label_resolution
            "report": dg.MetadataValue.md(
                unresolved.head(METADATA_ITEMS).to_markdown(index=False) or "none"
            ),
            **stage_metadata(clock),
        },
    )
    held_back = labels.held_back.sort_values("uses", ascending=False)
    yield dg.AssetCheckResult(
        check_name="no_unresolved_names_in_figures",
        passed=held_back.empty,
        severity=dg.AssetCheckSeverity.WARN,
        description=held_back_summary(held_back),
        metadata={"held_back": len(held_back)},
    )


def held_back_summary(held_back: pd.DataFrame) -> str:
    """One line for the run log and the build summary: the most used unresolved names whose
    figures are held back (at most MESSAGE_ITEMS), with suggestions, and how many in all."""
    if held_back.empty:
        return "all names behind figures resolve"
    shown = held_back.head(MESSAGE_ITEMS)
    names = ", ".join(
        f"{r.kind} {shorten(str(r.label), 60)!r}"
        + (f" (suggestions {', '.join(r.suggestions)})" if len(r.suggestions) else "")
        for r in shown.itertuples()
    )
    more = f" and {len(held_back) - len(shown):,} more" if len(held_back) > len(shown) else ""
    return (
        f"figures held back, {len(held_back):,} unresolved name(s): {names}{more}; add an alias "
        "(pipeline/metadata/*_aliases.csv) or see `speedbook resolve --pending`"
    )


def _core_specs() -> list[dg.AssetSpec]:
    return [
        dg.AssetSpec(
            core_asset_key(name),
            group_name="core",
            deps=[UNRESOLVED],
            kinds={"duckdb"},
            description=(model.__doc__ or "").strip().split("\n\n")[0],
        )
        for name, model in CORE_TABLES.items()
    ]


def _core_checks() -> list[dg.AssetCheckSpec]:
    checks = [
        dg.AssetCheckSpec(
            "matches_schema",
            asset=core_asset_key(name),
            blocking=True,
            description=f"core.{name} satisfies its Pandera model",
        )
        for name in CORE_TABLES
    ]
    checks.append(
        dg.AssetCheckSpec(
            "traceable_to_snapshot",
            asset=core_asset_key("observations"),
            blocking=True,
            description="every observation names a stored snapshot, its http(s) URL, tier and date",
        )
    )
    return checks


# Over the observations a build appended (or all, when it derived them all): core.snapshots holds
# every stored snapshot, so the rows of earlier builds keep the snapshot they were traced to.
TRACEABILITY = """
SELECT count(*) FROM (SELECT * FROM core.observations WHERE {scope}) AS o
LEFT JOIN core.snapshots AS s USING (snapshot_id)
LEFT JOIN core.sources AS src ON src.source_id = o.source_id
WHERE (s.snapshot_id IS NULL OR src.source_id IS NULL OR s.url NOT SIMILAR TO 'https?://.+'
       OR o.tier IS NULL OR o.observed_at IS NULL)
"""


# Tables that grow with the history. Rows of snapshots loaded by earlier builds were validated
# then (and their metadata never changes), so a build validates the rows of the snapshots it
# appended to the tables derived per snapshot; the others that grow (one row per snapshot) are
# checked whole, which in SQL costs little. Their key (the model's, `unique_key`) is checked in
# SQL: over the rows it appended when the table is derived per snapshot (every such key is or
# hashes its snapshot id, sql/core/, so rows of two snapshots never share one), over the whole
# table otherwise, on the key's hash in passes of bounded memory (`duplicate_keys`): one grouped
# count of the key's text over the 78 million observations of a quarter of half-hourly polls
# ran out of DuckDB's memory.
GROWING = (*PER_SNAPSHOT, "snapshots", "extractions")


def _validate_table(
    con: duckdb.DuckDBPyConnection,
    name: str,
    model: type[CoreTable],
    appended: list[str] | None,
) -> dg.AssetCheckResult:
    """Validate a core table with its model (a table that grows with the history: in SQL first,
    the rows of the snapshots this build appended; see GROWING)."""
    key = core_asset_key(name)
    if name in GROWING:
        columns = unique_key(model)
        within = appended if appended is not None and name in PER_SNAPSHOT else None
        duplicates = duplicate_keys(con, f"core.{name}", columns, within)
        if duplicates:
            return dg.AssetCheckResult(
                asset_key=key,
                check_name="matches_schema",
                passed=False,
                metadata={"duplicate_keys": duplicates, "key": ", ".join(columns)},
            )
        checked, failures = validate_rows(con, model, f"core.{name}", within)
    else:
        checked, failures = validate_table(con, model, f"core.{name}", limit=None)
    if failures is not None:
        return dg.AssetCheckResult(
            asset_key=key,
            check_name="matches_schema",
            passed=False,
            metadata={"failures": dg.MetadataValue.md(failures.head(20).to_markdown())},
        )
    return dg.AssetCheckResult(
        asset_key=key, check_name="matches_schema", passed=True, metadata={"rows_checked": checked}
    )


@dg.multi_asset(
    name="core_tables",
    specs=_core_specs(),
    check_specs=_core_checks(),
    ins={"labels": dg.AssetIn(UNRESOLVED)},
)
def core_tables(speedbook: SpeedbookResource, labels: LabelReport) -> Iterator[object]:
    clock = StageClock()
    settings = speedbook.settings
    sources = speedbook.sources()
    with clock.stage("inventory"):
        inventory = speedbook.inventory()
        everything = speedbook.inventory(whole_history=True)  # core.snapshots keeps it all
    # each log read once: its last line confirms the newest snapshot, all of it is history
    logs = {source_id: read_outcomes(settings.raw_dir, source_id) for source_id in sources}
    latest = {source_id: records[-1] for source_id, records in logs.items() if records}
    confirmed = confirmations(latest, inventory)
    reviewed = speedbook.reviewed()
    for problem in unregistered_sources(reviewed.claims, reviewed.platforms, sources):
        warn(f"reviewed files: {problem}")
    with connect(speedbook.database) as con, clock.stage("load"):
        loaded = build_core(
            con,
            sources=sources,
            snapshots=everything.snapshots,
            in_scope=_ids(inventory),
            confirmed=confirmed,
            resolver=speedbook.resolver(),
            labels=labels,
            claims=reviewed.claims,
            platforms=reviewed.platforms,
            as_of=speedbook.as_of_time,
            data_date=inventory.data_date,
            outcomes=[record for records in logs.values() for record in records],
        )
    derived = "all" if loaded.appended is None else len(loaded.appended)
    report(f"core: observations derived for {derived} snapshot(s)")
    # the checks on a connection of their own: what DuckDB kept of the load is released with it
    with connect(speedbook.database) as con, clock.stage("validate"):
        checks = [
            _validate_table(con, name, model, loaded.appended)
            for name, model in CORE_TABLES.items()
        ]
        scope, scoped = snapshot_scope(con, "core.observations", loaded.appended)
        untraceable = con.execute(TRACEABILITY.format(scope=scope), scoped).fetchone()[0]
    for name, count in loaded.counts.items():
        metadata: dict[str, object] = {"rows": count}
        if name == "observations":
            metadata["snapshots_derived"] = str(derived)
            metadata.update(stage_metadata(clock))
        yield dg.MaterializeResult(asset_key=core_asset_key(name), metadata=metadata)
    yield from checks
    yield dg.AssetCheckResult(
        asset_key=core_asset_key("observations"),
        check_name="traceable_to_snapshot",
        passed=untraceable == 0,
        metadata={"untraceable": untraceable},
    )


@dg.asset(
    key=MART,
    group_name="core",
    deps=[core_asset_key(name) for name in CORE_TABLES],
    kinds={"duckdb", "sql"},
    description="The analyst-facing views of schema mart (sql/mart/*.sql)",
    check_specs=[dg.AssetCheckSpec("one_headline_per_provider", asset=MART, blocking=True)],
)
def mart_views(speedbook: SpeedbookResource) -> Iterator[object]:
    clock = StageClock()
    with connect(speedbook.database) as con, clock.stage("sql"):
        applied = apply_marts(con)
        headlines = con.execute(
            "SELECT provider_id, model_id, round(value, 1) AS value, tier, stale, headline_rule "
            "FROM mart.provider_headline ORDER BY provider_id"
        ).df()
    # from the rows read: the view computes every current figure's headline rule again
    duplicates = len(headlines) - headlines["provider_id"].nunique()
    yield dg.MaterializeResult(
        metadata={
            "sql_applied": ", ".join(applied),
            "headlines": dg.MetadataValue.md(headlines.to_markdown(index=False)),
            **stage_metadata(clock),
        }
    )
    yield dg.AssetCheckResult(check_name="one_headline_per_provider", passed=duplicates == 0)

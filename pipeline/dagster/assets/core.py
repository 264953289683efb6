"""Normalise and core layers: resolve every label once, then build the core tables and the mart
(which read the resolutions through Dagster's IO manager) in one lake transaction, checked before
it commits."""

from collections.abc import Iterator

import dagster as dg
import pandas as pd

from pipeline.dagster.assets import stage_metadata
from pipeline.dagster.assets.staging import staging_asset_key
from pipeline.dagster.resources import SpeedbookResource
from pipeline.extract import PARSERS
from pipeline.normalise.labels import LabelReport, resolve_labels
from pipeline.raw.freshness import confirmations
from pipeline.raw.inventory import Inventory
from pipeline.raw.outcomes import read_outcomes
from pipeline.schema.core import CORE_TABLES, CORE_VIEWS
from pipeline.sources.reviewed import unregistered_sources
from pipeline.support.limits import MESSAGE_ITEMS, METADATA_ITEMS
from pipeline.support.progress import report, warn
from pipeline.support.text import shorten
from pipeline.support.timing import StageClock
from pipeline.warehouse.core import build_core

UNRESOLVED = dg.AssetKey("staging_unresolved_names")
MART = dg.AssetKey("mart_views")


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
    with speedbook.connect() as con, clock.stage("normalise"):
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
            "names_summary": names_summary(labels),
            # a few rows in the event log; the full list is core.labels
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


def names_summary(labels: LabelReport) -> str:
    """The build's line about names: figures held back by names nothing resolves, and how many
    entities wait for review (printed by `speedbook build` whatever else it says)."""
    held = held_back_summary(labels.held_back.sort_values("uses", ascending=False))
    unreviewed = labels.unreviewed
    kinds = unreviewed.groupby("kind")["entity_id"].nunique().to_dict() if len(unreviewed) else {}
    waiting = ", ".join(f"{count:,} {kind}(s)" for kind, count in sorted(kinds.items()))
    review = (
        f"; unreviewed, kept under their sources' ids: {waiting} (`speedbook resolve --pending`)"
        if waiting
        else ""
    )
    return f"names: {held}{review}"


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


CORE = dg.AssetKey("core_tables")
CHECKED = {
    "matches_schema": "every core table satisfies its Pandera model (pipeline/schema/core.py)",
    "traceable_to_snapshot": "every figure names a stored snapshot with its http(s) URL, tier "
    "and date",
    "one_id_per_endpoint": "no two of a source's endpoints share an id, and every id is one the "
    "exports accept",
    "one_headline_per_provider": "at most one headline per provider",
}


def _specs() -> list[dg.AssetSpec]:
    """The core (its tables and views) and the mart: written by one transaction. One asset each,
    not one per table: every asset and check is a few events a build stores, at a commit of the
    instance's SQLite file each."""
    return [
        dg.AssetSpec(
            CORE,
            group_name="core",
            deps=[UNRESOLVED],
            kinds={"duckdb"},
            description="The core tables (entities, endpoints, snapshots, sources, claims, "
            "platforms) and the views over the staged facts (observations, offers, model "
            "figures): " + ", ".join(f"core.{name}" for name in {**CORE_TABLES, **CORE_VIEWS}),
            skippable=True,  # a failed check commits nothing: nothing is materialised
        ),
        dg.AssetSpec(
            MART,
            group_name="core",
            deps=[CORE],
            kinds={"duckdb", "sql"},
            description="The analyst-facing views and tables of schema mart (sql/mart/*.sql)",
            skippable=True,
        ),
    ]


def _checks() -> list[dg.AssetCheckSpec]:
    return [
        dg.AssetCheckSpec(
            name,
            asset=MART if name == "one_headline_per_provider" else CORE,
            blocking=True,
            description=description,
        )
        for name, description in CHECKED.items()
    ]


@dg.multi_asset(
    name="core_tables",
    specs=_specs(),
    check_specs=_checks(),
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
    # one warning, one line per source: each is an event in the run's log
    unregistered = unregistered_sources(reviewed.claims, reviewed.platforms, sources)
    if unregistered:
        warn(
            f"reviewed files: {len(unregistered)} source(s) they cite are not in the registry "
            "(their quotes are not verified, their listings not read):"
            + "".join(f"\n  {problem}" for problem in unregistered)
        )
    with speedbook.build_session() as con, clock.stage("load"):
        built = build_core(
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
            remake=speedbook.remake,
        )
    if built.measured is not None:
        report(f"warehouse: {built.measured.summary()}")
    if built.committed:
        report(f"warehouse: core and mart committed as lake snapshot {built.lake_snapshot}")
        measured = built.measured
        yield dg.MaterializeResult(
            asset_key=CORE,
            metadata={f"rows_{name}": n for name, n in built.counts.items()}
            | ({} if measured is None else {"measured_figures_added": measured.figures_added}),
        )
        yield dg.MaterializeResult(
            asset_key=MART,
            metadata={"lake_snapshot": built.lake_snapshot, **stage_metadata(clock)},
        )
    else:
        failed = [f"{c.relation}.{c.name}" for c in built.checks if not c.passed]
        report(f"warehouse: nothing committed, failed check(s): {', '.join(failed)}")
    for name in CHECKED:  # one result per check, naming what failed where
        results = [check for check in built.checks if check.name == name]
        failed = [check for check in results if not check.passed]
        yield dg.AssetCheckResult(
            asset_key=MART if name == "one_headline_per_provider" else CORE,
            check_name=name,
            passed=not failed,
            description="; ".join(f"{c.relation}: {c.description}" for c in failed) or None,
            metadata={
                "checked": ", ".join(c.relation for c in results),
                **{
                    f"{c.relation}.{key}": value
                    for c in results
                    for key, value in c.metadata.items()
                },
            },
        )

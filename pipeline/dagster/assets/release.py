"""Release layer: the three exports (each with a blocking JSON Schema check) and the release
that publishes them as a new version when their content changed. The documents reach the
release through Dagster's IO manager (`DocumentIOManager`), whichever process runs each step.
The release names, in its changelog, the snapshots the build could not use (rejected, damaged)
or that were withdrawn, verifies every snapshot it cites, and under --strict is not published
while a snapshot in scope was rejected or damaged."""

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import dagster as dg
import duckdb

from pipeline.dagster.assets import stage_metadata
from pipeline.dagster.assets.core import MART
from pipeline.dagster.resources import SpeedbookResource
from pipeline.raw.inventory import citation_check
from pipeline.raw.snapshots import parse_utc
from pipeline.release.cadence import (
    RELEASE_DUE_AT,
    ReleaseCadenceError,
    next_release_at,
    release_interval,
)
from pipeline.release.changelog import markdown_table, parse_release
from pipeline.release.contract import Release
from pipeline.release.contracts import EXPORT_FILES, problems
from pipeline.release.exports import ReleaseInfo, build_exports
from pipeline.release.history import record_releases
from pipeline.release.notes import SnapshotNote, last_published, not_used, withdrawn_since
from pipeline.release.parquet import write_parquet
from pipeline.release.preview import render_preview
from pipeline.release.preview_history import read_history
from pipeline.release.publish import (
    Documents,
    Populate,
    cited_snapshots,
    latest_version,
    publish_release,
)
from pipeline.release.queries import read_inputs
from pipeline.release.remote import (
    RemotePublishError,
    RemoteResult,
    lake_data_url,
    publish_remote,
    write_lake_catalog,
)
from pipeline.support.limits import METADATA_ITEMS, capped
from pipeline.support.progress import report, warn
from pipeline.support.settings import ENV_RELEASE_CADENCE
from pipeline.support.timing import StageClock
from pipeline.warehouse.connection import lake_of
from pipeline.warehouse.lake import lake_snapshot
from pipeline.warehouse.staging import verified_files

RELEASE = dg.AssetKey("out_release")
DOCUMENTS = "documents"  # the IO manager that hands the exports to the release
PLACEHOLDER_VERSION = "0000.00.00"  # documents are re-rendered with the real version at release
CHANGELOG_NOTES = 100  # notes a changelog lists; the rest are counted (mart.source_health)
WHERE_ALL = "every one: mart.source_health and core.extractions"


def parquet_extra(speedbook: SpeedbookResource) -> Populate:
    """Parquet of the warehouse for engines beyond one machine (pipeline/release/parquet.py)."""

    def parquet(folder: Path, version: str) -> None:
        # the history's days that did not change are linked from the release `latest` names
        previous = (speedbook.settings.exports / "latest").resolve() / "parquet"
        with speedbook.build_session() as con:
            write_parquet(con, folder / "parquet", previous if previous.is_dir() else None)

    return parquet


def lake_extra(speedbook: SpeedbookResource, data_url: str) -> Populate:
    """lake/catalog.sqlite: the lake's catalog as the release's build left it, its data path the
    published one (pipeline/release/remote.py), so the published release reads as a lake."""

    def lake(folder: Path, version: str) -> None:
        with speedbook.connect() as con:
            write_lake_catalog(con, folder, data_url, lake_of(speedbook.settings))

    return lake


def publish_to_target(speedbook: SpeedbookResource, version: str) -> RemoteResult:
    """Publish the release `version` of exports/ to SPEEDBOOK_RELEASES too. `latest` there follows
    the local one: it moves only to the release the local `latest` names."""
    settings = speedbook.settings
    takes = not speedbook.as_of and latest_version(settings.exports) == version
    try:
        return publish_remote(
            settings.exports / version,
            settings.releases,
            lake_data=lake_of(settings).data_path,
            take_latest=takes,
            may_go_back=takes,
        )
    except RemotePublishError as error:
        raise dg.Failure(
            description=f"release {version} is published in {settings.exports} but not to "
            f"{settings.releases}: {error}. The next build publishes it there again."
        ) from None


def preview_extra(parsed: Callable[[str], Release]) -> Populate:
    """index.html, a self-contained preview page built from the release's exports
    (`parsed(version)`: them parsed) and the history in its Parquet (written before it)."""

    def preview(folder: Path, version: str) -> None:
        page = render_preview(parsed(version), history=read_history(folder))
        (folder / "index.html").write_text(page, encoding="utf-8")

    return preview


def export_asset_key(file_name: str) -> dg.AssetKey:
    return dg.AssetKey(f"out_{file_name.removesuffix('.json')}")


def _headline_markdown(document: dict[str, Any]) -> str:
    rows = [
        [row["name"], row["display"], row["headline"]["tier"], row["headline"]["stale"]]
        for row in document["providers"]
        if row["headline"]
    ]
    return "\n".join(markdown_table(["provider", "headline", "tier", "stale"], rows))


@dg.multi_asset(
    name="out_exports",
    can_subset=True,  # a build whose release is not due materialises none of them
    specs=[
        dg.AssetSpec(
            export_asset_key(name),
            group_name="release",
            deps=[MART],
            kinds={"json"},
            description=f"{name}, built from mart",
        ).with_io_manager_key(DOCUMENTS)
        for name in EXPORT_FILES
    ],
    check_specs=[
        dg.AssetCheckSpec(
            "matches_json_schema",
            asset=export_asset_key(name),
            blocking=True,
            description=f"{name} validates against schemas/{name.replace('.json', '.schema.json')}",
        )
        for name in EXPORT_FILES
    ],
)
def out_exports(
    context: dg.AssetExecutionContext, speedbook: SpeedbookResource
) -> Iterator[object]:
    clock = StageClock()
    standing = latest_version(speedbook.settings.exports)
    with speedbook.build_session() as con, clock.stage("sql"):
        due_at = _next_release_at(speedbook, con, standing)
        if due_at is not None:
            # no export, so no release: Dagster skips the steps downstream
            yield _deferred(speedbook, due_at, standing, not_used(con))
            return
        inputs = read_inputs(con)
    with clock.stage("export"):
        documents = build_exports(inputs, ReleaseInfo(PLACEHOLDER_VERSION))
    timed = stage_metadata(clock)
    for name, document in documents.items():
        key = export_asset_key(name)
        if key not in context.selected_asset_keys:
            continue
        rows_key = {
            "inference.json": "providers",
            "model_platforms.json": "platforms",
            "inference_catalog.json": "tasks",
        }[name]
        metadata: dict[str, Any] = {
            "rows": len(document[rows_key]),
            "snapshots_cited": len(document["snapshots"]),
        }
        if name == "inference.json":
            metadata["headlines"] = dg.MetadataValue.md(_headline_markdown(document))
        metadata.update(timed)
        timed = {}  # on one materialisation only: the runner sums over the run
        yield dg.MaterializeResult(asset_key=key, metadata=metadata, value=document)
        found = problems(name, document)
        yield dg.AssetCheckResult(
            asset_key=key,
            check_name="matches_json_schema",
            passed=not found,
            description="; ".join(found) if found else "valid",
        )


def _next_release_at(
    speedbook: SpeedbookResource, con: duckdb.DuckDBPyConnection, standing: str | None
) -> datetime | None:
    """When the release cadence has the next release due (None: now); an --as-of build's is,
    and so is one with no release standing (`standing`: the one `latest` names)."""
    try:
        interval = release_interval(speedbook.settings.release_cadence)
    except ReleaseCadenceError as error:
        raise dg.Failure(description=str(error)) from None
    if speedbook.as_of or interval is None or standing is None:
        return None
    return next_release_at(last_published(con, latest=True), interval, datetime.now(UTC))


def _deferred(
    speedbook: SpeedbookResource,
    due_at: datetime,
    standing: str | None,
    unused: list[SnapshotNote],
) -> dg.AssetObservation:
    """What the runner reports of a build whose release is not due: when it is, the release
    that stands meanwhile, and the snapshots it could not use (as a release's step reports
    them)."""
    due = due_at.strftime("%Y-%m-%dT%H:%M:%SZ")
    message = (
        f"no release: the next is due at {due} ({ENV_RELEASE_CADENCE}="
        f"{speedbook.settings.release_cadence}); release {standing} stands"
    )
    report(message)
    return dg.AssetObservation(
        asset_key=export_asset_key(EXPORT_FILES[0]),
        metadata={
            RELEASE_DUE_AT: due,
            "release": standing or "",
            "message": message,
            "snapshots_not_used": len(unused),
            "notes": dg.MetadataValue.json(
                capped([note.text for note in unused], METADATA_ITEMS, WHERE_ALL)
            ),
        },
    )


def _parameter(name: str) -> str:
    return export_asset_key(name).to_python_identifier()


@dg.asset(
    key=RELEASE,
    group_name="release",
    ins={_parameter(name): dg.AssetIn(export_asset_key(name)) for name in EXPORT_FILES},
    kinds={"json"},
    description="Publishes exports/<version>/ and switches exports/latest when content changed",
)
def out_release(speedbook: SpeedbookResource, **exports: dict[str, Any]) -> dg.MaterializeResult:
    documents = {name: exports[_parameter(name)] for name in EXPORT_FILES}
    return _release(speedbook, documents)


def _release(speedbook: SpeedbookResource, documents: Documents) -> dg.MaterializeResult:
    clock = StageClock()
    settings = speedbook.settings
    # the date the exports were built for, not whatever the warehouse holds by now
    data_date = parse_utc(documents["inference.json"]["data_date"])

    def render(version: str) -> dict[str, dict[str, Any]]:
        return {name: doc | {"version": version} for name, doc in documents.items()}

    releases: dict[str, Release] = {}

    def parsed(version: str) -> Release:
        """The exports of `version` parsed once, for the changelog, the preview and the history."""
        if version not in releases:
            releases[version] = parse_release(render(version))
        return releases[version]

    with speedbook.build_session() as con:
        unused = not_used(con)
        withdrawn = withdrawn_since(con, speedbook.inventory().withdrawn, last_published(con))
        # the snapshots the exports cite are the only ones the release's check looks up
        verified = verified_files(con, sorted(cited_snapshots(documents)))
    texts = [note.text for note in unused]
    for line in capped(texts, METADATA_ITEMS, WHERE_ALL):
        warn(line)
    if speedbook.strict and unused:
        raise dg.Failure(
            description=f"not published (--strict): {len(unused)} snapshot(s) newer than the "
            "ones their sources are read from could not be used (listed in `notes`)",
            metadata={
                "snapshots_not_used": len(unused),
                "notes": dg.MetadataValue.json(capped(texts, METADATA_ITEMS, WHERE_ALL)),
            },
        )
    notes = [note.to_json() for note in [*unused, *withdrawn]]
    if len(notes) > CHANGELOG_NOTES:
        left = len(notes) - CHANGELOG_NOTES
        notes = [*notes[:CHANGELOG_NOTES], {"kind": "more", "text": f"... and {left:,} more"}]
    extras = [parquet_extra(speedbook), preview_extra(parsed)]  # the page draws the Parquet
    if settings.releases:
        try:
            data_url = lake_data_url(settings.releases)
        except RemotePublishError as error:
            raise dg.Failure(description=f"not published: {error}") from None
        if not speedbook.as_of:  # an --as-of build's core and mart are not the lake's
            extras.append(lake_extra(speedbook, data_url))
    with clock.stage("export"):
        result = publish_release(
            settings.exports,
            data_date,
            render,
            extras,
            notes=notes,
            check=citation_check(speedbook.store(), speedbook.listing(), verified),
            take_latest=not speedbook.as_of,  # an --as-of build never takes `latest`
            parsed=parsed,
        )
    if result.cleaned:
        report(f"removed leftovers of an interrupted publish: {', '.join(result.cleaned)}")
    report(result.message)
    published_at = {result.version: datetime.now(UTC)} if result.published else {}
    written = {result.version: result.written} if result.written else {}
    with speedbook.connect() as con:
        # the lake snapshot of this build's core and mart: builds hold the warehouse's lock, so
        # nothing else committed since; an --as-of build's core is not in the lake
        built_from = {} if speedbook.as_of else {result.version: lake_snapshot(con)}
        recorded = record_releases(con, settings.exports, published_at, written, built_from)
    remote = publish_to_target(speedbook, result.version) if settings.releases else None
    return dg.MaterializeResult(
        metadata={
            "version": result.version,
            "published": result.published,
            "path": str(result.path),
            "message": result.message,
            "previous": result.previous or "",
            "changes": result.summary,
            "history_rows_added": len(recorded),
            "snapshots_not_used": len(unused),
            # what the build's summary prints: the first few, and how many more there are
            "notes": dg.MetadataValue.json(capped(texts, METADATA_ITEMS, WHERE_ALL)),
            "withdrawn": dg.MetadataValue.json([note.text for note in withdrawn][:METADATA_ITEMS]),
            **(_remote_metadata(remote) if remote else {}),
            **stage_metadata(clock),
        }
    )


def _remote_metadata(remote: RemoteResult) -> dict[str, Any]:
    return {
        "published_to": remote.target,
        "published_files": remote.files,
        "published_put": remote.put,
        "published_put_bytes": remote.put_bytes,
        "published_latest": remote.latest or "",
        "published_seconds": round(remote.seconds, 2),
    }

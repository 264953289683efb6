"""Release layer: the three exports (each with a blocking JSON Schema check) and the release
that publishes them as a new version when their content changed."""

import contextlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import dagster as dg

from pipeline.dagster.assets.core import MART
from pipeline.dagster.resources import SpeedbookResource
from pipeline.raw.snapshots import parse_utc
from pipeline.release.changelog import markdown_table
from pipeline.release.contracts import EXPORT_FILES, problems
from pipeline.release.exports import ReleaseInfo, build_exports
from pipeline.release.history import record_releases
from pipeline.release.jsonio import dumps
from pipeline.release.parquet import write_parquet
from pipeline.release.preview import render_preview
from pipeline.release.publish import Populate, Render, publish_release
from pipeline.release.queries import read_inputs
from pipeline.support import timing
from pipeline.support.progress import report
from pipeline.support.settings import Settings
from pipeline.warehouse.connection import connect

RELEASE = dg.AssetKey("out_release")
PLACEHOLDER_VERSION = "0000.00.00"  # documents are re-rendered with the real version at release


# More release content, written into the release folder before it is renamed into place:
# each is called as populate(staging_dir, version) (Parquet, a preview page, ...).
def release_extras(settings: Settings, render: Render) -> list[Populate]:
    """What a release holds besides the exports: Parquet of the warehouse for engines beyond one
    machine, and index.html, a self-contained preview page built from the release's exports."""

    def parquet(folder: Path, _version: str) -> None:
        earlier = settings.exports / "latest" / "parquet"
        with connect(settings.database, read_only=True) as con:
            write_parquet(con, folder / "parquet", earlier if earlier.is_dir() else None)

    def preview(folder: Path, version: str) -> None:
        (folder / "index.html").write_text(render_preview(render(version)), encoding="utf-8")

    return [parquet, preview]


def export_asset_key(file_name: str) -> dg.AssetKey:
    return dg.AssetKey(f"out_{file_name.removesuffix('.json')}")


def pending_dir(warehouse: Path) -> Path:
    return warehouse / "pending"


def _write_pending(warehouse: Path, documents: dict[str, dict[str, Any]]) -> None:
    target = pending_dir(warehouse)
    # left by a killed build; the age guard spares one a concurrent run (the UI) is writing
    for leftover in warehouse.glob(".pending-*"):
        with contextlib.suppress(OSError):
            if time.time() - leftover.stat().st_mtime > 600:
                shutil.rmtree(leftover, ignore_errors=True)
    staging = Path(tempfile.mkdtemp(prefix=".pending-", dir=warehouse))
    for name, document in documents.items():
        (staging / name).write_bytes(dumps(document))
    if target.exists():
        shutil.rmtree(target)
    os.rename(staging, target)


def _headline_markdown(document: dict[str, Any]) -> str:
    rows = [
        [row["name"], row["display"], row["headline"]["tier"], row["headline"]["stale"]]
        for row in document["providers"]
        if row["headline"]
    ]
    return "\n".join(markdown_table(["provider", "headline", "tier", "stale"], rows))


@dg.multi_asset(
    name="out_exports",
    specs=[
        dg.AssetSpec(
            export_asset_key(name),
            group_name="release",
            deps=[MART],
            kinds={"json"},
            description=f"{name}, built from mart",
        )
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
def out_exports(speedbook: SpeedbookResource) -> Iterator[object]:
    settings = speedbook.settings
    with connect(settings.database, read_only=False) as con, timing.stage("sql"):
        inputs = read_inputs(con)
    with timing.stage("export"):
        documents = build_exports(inputs, ReleaseInfo(PLACEHOLDER_VERSION))
    _write_pending(settings.warehouse, documents)
    for name, document in documents.items():
        key = export_asset_key(name)
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
        yield dg.MaterializeResult(asset_key=key, metadata=metadata)
        found = problems(name, document)
        yield dg.AssetCheckResult(
            asset_key=key,
            check_name="matches_json_schema",
            passed=not found,
            description="; ".join(found) if found else "valid",
        )


@dg.asset(
    key=RELEASE,
    group_name="release",
    deps=[export_asset_key(name) for name in EXPORT_FILES],
    kinds={"json"},
    description="Publishes exports/<version>/ and switches exports/latest when content changed",
)
def out_release(speedbook: SpeedbookResource) -> dg.MaterializeResult:
    settings = speedbook.settings
    pending = pending_dir(settings.warehouse)
    documents = {
        name: json.loads((pending / name).read_text(encoding="utf-8")) for name in EXPORT_FILES
    }
    # the date the exports were built for, not whatever the warehouse holds by now
    data_date = parse_utc(documents["inference.json"]["data_date"])

    def render(version: str) -> dict[str, dict[str, Any]]:
        return {name: doc | {"version": version} for name, doc in documents.items()}

    with timing.stage("export"):
        result = publish_release(
            settings.exports, data_date, render, release_extras(settings, render)
        )
    if result.cleaned:
        report(f"removed leftovers of an interrupted publish: {', '.join(result.cleaned)}")
    report(result.message)
    published_at = {result.version: datetime.now(UTC)} if result.published else {}
    with connect(settings.database, read_only=False) as con:
        recorded = record_releases(con, settings.exports, published_at)
    return dg.MaterializeResult(
        metadata={
            "version": result.version,
            "published": result.published,
            "path": str(result.path),
            "message": result.message,
            "previous": result.previous or "",
            "changes": result.summary,
            "history_rows_added": len(recorded),
        }
    )

"""Release history in the warehouse: `history.releases` and `history.release_figures`.

Core tables are rebuilt by every build; schema `history` is only ever added to, so it keeps every
release a warehouse has published. Rows are derived from the release folders themselves
(immutable, complete), so a warehouse that missed a release (a crash between the rename and the
insert, a fresh warehouse over old exports) catches up at the next publish.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from pipeline.raw.snapshots import parse_utc
from pipeline.release.changelog import (
    FigureKey,
    UnreadableRelease,
    figures,
    headline_keys,
    parse_release,
    summary_line,
)
from pipeline.release.contract import Release
from pipeline.release.contracts import EXPORT_FILES
from pipeline.release.publish import (
    CHANGES_JSON,
    DATAPACKAGE,
    ReleaseDamaged,
    Written,
    decode_exports,
    list_versions,
    read_exports,
)
from pipeline.support.duck import registered, transaction
from pipeline.warehouse.marts import ensure_history

RELEASES_SCHEMA = pa.schema(
    [
        ("version", pa.string()),
        ("data_date", pa.timestamp("us", tz="UTC")),
        ("as_of", pa.timestamp("us", tz="UTC")),
        ("schema_version", pa.string()),
        ("built_at", pa.timestamp("us", tz="UTC")),
        ("previous_version", pa.string()),
        ("summary", pa.string()),
        ("content_hashes", pa.map_(pa.string(), pa.string())),
        ("snapshots", pa.list_(pa.string())),
        ("snapshot_count", pa.int32()),
        ("providers", pa.int32()),
        ("figures", pa.int32()),
        ("lake_snapshot", pa.int64()),
    ]
)
FIGURES_SCHEMA = pa.schema(
    [
        ("version", pa.string()),
        ("endpoint_id", pa.string()),
        ("provider_id", pa.string()),
        ("model_id", pa.string()),
        ("precision", pa.string()),
        ("service_tier", pa.string()),
        ("reasoning_effort", pa.string()),
        ("metric", pa.string()),
        ("scope", pa.string()),
        ("value", pa.float64()),
        ("low", pa.float64()),
        ("high", pa.float64()),
        ("qualifier", pa.string()),
        ("unit", pa.string()),
        ("tier", pa.string()),
        ("stale", pa.bool_()),
        ("is_headline", pa.bool_()),
        ("observed_at", pa.timestamp("us", tz="UTC")),
        ("retrieved_at", pa.timestamp("us", tz="UTC")),
        ("source_id", pa.string()),
        ("snapshot_id", pa.string()),
    ]
)


@lru_cache(maxsize=4096)  # 50,000 times per release, most of them the few times of a poll
def _time(text: str | None) -> datetime | None:
    """An export's ISO 8601 time (or null) as the UTC timestamp the history tables hold."""
    return parse_utc(text) if text else None


def figure_rows(
    version: str,
    documents: Mapping[str, dict[str, Any]] | Release,
    read: Mapping[FigureKey, dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """One row per live figure of a release's inference.json, flagged when it is the headline.
    The figures are read by changelog.figures, so history and changelogs see the same ones;
    `read`: them as the publish's changelog already read them (its view of the release)."""
    release = documents if isinstance(documents, Release) else parse_release(dict(documents))
    headlines = headline_keys(release)
    rows = []
    for key, figure in (figures(release) if read is None else read).items():
        variant = figure["variant"] or {}
        rows.append(
            {
                "version": version,
                "endpoint_id": figure["endpoint"],
                "provider_id": figure["provider"]["id"],
                "model_id": figure["model"]["id"],
                "precision": variant.get("precision"),
                "service_tier": variant.get("service_tier"),
                "reasoning_effort": variant.get("reasoning_effort"),
                "region": variant.get("region"),
                "metric": figure["metric"],
                "scope": figure["scope"],
                "method": figure["method"],
                "statistic": figure["statistic"],
                "value": figure["value"],
                "low": figure["low"],
                "high": figure["high"],
                "qualifier": figure["qualifier"],
                "unit": figure["unit"],
                "tier": figure["tier"],
                "stale": figure["stale"],
                "is_headline": key in headlines,
                "observed_at": _time(figure["observed_at"]),
                "retrieved_at": _time(figure["retrieved_at"]),
                "source_id": figure["source"],
                "snapshot_id": figure["snapshot"],
            }
        )
    return rows


def _folder_release(folder: Path, written: Written | None) -> Release:
    """A release folder's exports, parsed; raises ReleaseDamaged when the folder is not a complete
    release (reading and hashing it is the check). When its exports are the bytes a publish has
    just written, that publish's parse of them is taken instead of parsing them again."""
    exports = read_exports(folder)
    if written is not None and all(exports[n] == written.files.get(n) for n in EXPORT_FILES):
        return written.release
    return parse_release(decode_exports(folder, exports))


def _folder_changes(folder: Path, written: Written | None) -> dict[str, Any]:
    """A release folder's changes.json (the publish's own when the bytes are those it wrote)."""
    data = (folder / CHANGES_JSON).read_bytes()
    if written is not None and data == written.files.get(CHANGES_JSON):
        return written.changes
    return json.loads(data.decode("utf-8"))


def release_row(
    folder: Path, built_at: datetime, written: Written | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The history.releases row and history.release_figures rows of one release folder; raises
    ReleaseDamaged when the folder is not a complete release (reading it is the check), and
    UnreadableRelease when its exports do not fit the contract. `written`: what the publish of
    this folder wrote, if this process published it (the folder is still read and checked)."""
    release = _folder_release(folder, written)
    version = folder.name
    head = release.inference
    package = json.loads((folder / DATAPACKAGE).read_text(encoding="utf-8"))
    hashes = {r["path"]: r["hash"] for r in package["resources"]}
    try:
        changes = _folder_changes(folder, written)
        previous = (changes.get("from") or {}).get("version")
        summary = summary_line(changes)
    except (OSError, ValueError, KeyError, TypeError):
        previous, summary = None, "no changes.json in this release"
    exports = (release.inference, release.platforms, release.catalog)
    snapshots = sorted({s.id for export in exports for s in export.snapshots})
    read = written.view.indexes["figures"] if written and release is written.release else None
    live = figure_rows(version, release, read)
    row = {
        "version": version,
        "data_date": _time(head.data_date),
        "as_of": _time(head.as_of),
        "schema_version": head.schema_version,
        "built_at": built_at,
        "previous_version": previous,
        "summary": summary,
        "content_hashes": sorted(hashes.items()),
        "snapshots": snapshots,
        "snapshot_count": len(snapshots),
        "providers": len(head.providers),
        "figures": len(live),
    }
    return row, live


def record_releases(
    con: duckdb.DuckDBPyConnection,
    exports_dir: Path,
    built_at: Mapping[str, datetime] | None = None,
    written: Mapping[str, Written] | None = None,
    lake_snapshots: Mapping[str, int] | None = None,
) -> list[str]:
    """Add every complete release folder that history.releases lacks, in one transaction;
    returns the versions added. `built_at` gives the publish time of releases just published;
    others get their folder's modification time. `written`: what this process published, by
    version (publish_release's `written`), so those folders are checked but not parsed again.
    `lake_snapshots`: the lake snapshot each release just published was built from (`speedbook
    sql --release` reads it); a release found on disk has none."""
    with transaction(con):  # one lake snapshot, when anything is to be created at all
        ensure_history(con)
    known = {row[0] for row in con.execute("SELECT version FROM history.releases").fetchall()}
    releases, release_figures = [], []
    for version in list_versions(exports_dir):
        folder = exports_dir / version
        if version in known:
            continue  # recorded already: never re-read (or re-hash) an old release
        when = (built_at or {}).get(version) or datetime.fromtimestamp(
            folder.stat().st_mtime, tz=UTC
        )
        try:
            row, rows = release_row(folder, when, (written or {}).get(version))  # hashes once
        except (ReleaseDamaged, UnreadableRelease):
            continue  # not a complete release, or not one the contract reads: nothing to record
        releases.append(row | {"lake_snapshot": (lake_snapshots or {}).get(version)})
        release_figures += rows
    if not releases:
        return []
    con.execute("BEGIN TRANSACTION")
    try:
        for table, schema, rows in (
            ("history.releases", RELEASES_SCHEMA, releases),
            ("history.release_figures", FIGURES_SCHEMA, release_figures),
        ):
            with registered(con, "incoming", pa.Table.from_pylist(rows, schema=schema)):
                con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM incoming")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return [row["version"] for row in releases]

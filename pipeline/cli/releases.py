"""`speedbook releases`: every published release with its data date and what changed."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from pipeline.cli.tables import render_table
from pipeline.support.settings import Settings

NAME = "releases"
HELP = "list the published releases with data date and a one-line summary of what changed"
DESCRIPTION = (
    "List every release in --exports in the order they were published: version, data date, "
    "export schema version, whether `latest` points at it, the release it is compared with and "
    "what changed since. A release is compared with the one its changelog names (the release "
    "`latest` named before it, which after `speedbook snapshot remove` can be a newer one that "
    "it replaced), else the one listed before it. A damaged release folder is listed as "
    "damaged, with the reason."
)
EXAMPLES = (
    "speedbook releases",
    "speedbook releases --json | jq '.[-1]'   # the last published",
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def _stored_summary(changes: dict[str, Any] | None, readable: set[str]) -> str | None:
    """The summary from a release's own changes.json, when it compares with a release still
    readable and is complete: one written before cited snapshots were compared lacks
    "snapshots", and its summary could say "no content changed" of a release that cites other
    snapshots. A first release's says so only when nothing readable was published before it."""
    from pipeline.release.changelog import summary_line
    from pipeline.release.lineage import compared_with

    try:
        if changes is None or changes.get("first_release"):
            return None
        if "snapshots" in changes and compared_with(changes) in readable:
            return summary_line(changes)
    except (ValueError, KeyError, TypeError, AttributeError):
        pass
    return None


def release_rows(exports: Path) -> list[dict[str, Any]]:
    """One row per release folder, in publication order (pipeline/release/lineage.py). The
    summary is the one its changes.json holds, against the release it names; else (no such
    release readable, or no changes.json) against the newest readable release listed before it."""
    from pipeline.release.changelog import UnreadableRelease, compare, release_info, summary_line
    from pipeline.release.lineage import compared_with, published_releases
    from pipeline.release.publish import ReleaseDamaged, latest_version, read_release

    latest = latest_version(exports)
    rows: list[dict[str, Any]] = []
    readable: set[str] = set()
    previous: tuple[str, dict[str, Any]] | None = None
    for version, changes in published_releases(exports):
        folder = exports / version
        row: dict[str, Any] = {"version": version, "latest": version == latest}
        try:
            documents = read_release(folder)
            info = release_info(documents)
        except (ReleaseDamaged, UnreadableRelease) as error:
            reason = str(error).removeprefix(f"{folder}: ")
            rows.append(
                row
                | {"data_date": None, "schema_version": None, "damaged": reason}
                | {"compared_with": None, "summary": f"damaged: {reason}"}
            )
            continue
        summary = _stored_summary(changes, readable)
        since = compared_with(changes) if summary is not None else None
        if summary is None:
            since = previous[0] if previous else None
            try:
                summary = summary_line(compare(previous[1] if previous else None, documents))
            except UnreadableRelease as error:
                summary = f"not comparable: {error}"
        rows.append(
            row
            | {
                "data_date": info["data_date"],
                "schema_version": info["schema_version"],
                "damaged": None,
                "compared_with": since,
                "summary": summary,
            }
        )
        readable.add(version)
        previous = (version, documents)
    return rows


def run(args: argparse.Namespace, settings: Settings) -> int:
    rows = release_rows(settings.exports)
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    if not rows:
        print(f"no releases in {settings.exports} yet (`speedbook build` publishes one)")
        return 0
    table = [
        [
            r["version"] + (" *" if r["latest"] else ""),
            (r["data_date"] or "")[:10] or None,
            r["schema_version"],
            r["compared_with"],
            r["summary"],
        ]
        for r in rows
    ]
    print(render_table(("version", "data_date", "schema", "since", "changes"), table))
    print(f"\n{len(rows)} release(s) in {settings.exports}; * = latest")
    return 0

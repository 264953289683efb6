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
    "List every release in --exports, oldest first: version, data date, export schema version, "
    "whether `latest` points at it, and what changed since the release before it (by version). "
    "A damaged release folder is listed as damaged, with the reason."
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def _stored_summary(folder: Path, previous: str | None) -> str | None:
    """The summary from the release's own changes.json, if it compares with `previous` and is
    complete: one written before cited snapshots were compared lacks "snapshots", and its
    summary could say "no content changed" of a release that cites other snapshots."""
    from pipeline.release.changelog import summary_line
    from pipeline.release.publish import CHANGES_JSON

    try:
        changes = json.loads((folder / CHANGES_JSON).read_text(encoding="utf-8"))
        current = changes.get("first_release") or "snapshots" in changes
        if current and (changes.get("from") or {}).get("version") == previous:
            return summary_line(changes)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    return None


def release_rows(exports: Path) -> list[dict[str, Any]]:
    """One row per release folder, oldest first. The summary compares with the newest readable
    release before it; changes.json supplies it when it compares with that same release."""
    from pipeline.release.changelog import UnreadableRelease, compare, release_info, summary_line
    from pipeline.release.publish import ReleaseDamaged, latest_version, list_versions, read_release

    latest = latest_version(exports)
    rows: list[dict[str, Any]] = []
    previous: tuple[str, dict[str, Any]] | None = None
    for version in list_versions(exports):
        folder = exports / version
        row: dict[str, Any] = {"version": version, "latest": version == latest}
        try:
            documents = read_release(folder)
            info = release_info(documents)
        except (ReleaseDamaged, UnreadableRelease) as error:
            reason = str(error).removeprefix(f"{folder}: ")
            rows.append(row | {"data_date": None, "schema_version": None, "damaged": reason})
            rows[-1]["summary"] = f"damaged: {reason}"
            continue
        summary = _stored_summary(folder, previous[0] if previous else None)
        if summary is None:
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
                "summary": summary,
            }
        )
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
            r["summary"],
        ]
        for r in rows
    ]
    print(render_table(("version", "data_date", "schema", "changes"), table))
    print(f"\n{len(rows)} release(s) in {settings.exports}; * = latest")
    return 0

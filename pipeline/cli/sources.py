"""`speedbook sources`: every registered source with its cadence, newest snapshot, age, whether it
is stale (now, by the rule of pipeline/raw/freshness.py) and its last fetch."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from pipeline.cli.tables import render_table
from pipeline.raw.freshness import confirmation, freshness
from pipeline.raw.inventory import take_inventory
from pipeline.raw.outcomes import latest_outcomes
from pipeline.raw.snapshots import SnapshotMeta, format_utc
from pipeline.raw.store import open_store
from pipeline.sources.registry import RegistryError, load_registry
from pipeline.support.errors import CommandError
from pipeline.support.settings import Settings
from pipeline.warehouse.connection import connect, lake_of
from pipeline.warehouse.lake import LakeError

NAME = "sources"
HELP = "list every source with kind, tier, cadence, newest snapshot, its age, stale and last fetch"
DESCRIPTION = (
    "List the sources in the registry with their kind, tier, format, cadence, newest snapshot, "
    "when it was retrieved, how old it is and whether it is stale (relative to now), and the "
    "outcome of the last `speedbook fetch` of it. Stale is mart.source_health's rule measured "
    "from now: the newest usable snapshot's retrieval, or a later fetch that found it unchanged, "
    "is older than the source's cadence (a snapshot the last build found damaged or could not "
    "parse is not usable). Snapshots the build would skip (unreadable or invalid metadata, a "
    "folder of a source not in the registry) are listed as warnings on stderr."
)


EXAMPLES = (
    "speedbook sources",
    "speedbook sources --json | jq -r '.[] | select(.stale) | .id'   # the stale ones",
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def _age_days(retrieved_at: datetime, now: datetime) -> float:
    return round((now - retrieved_at).total_seconds() / 86400, 1)


def _last_fetch(row: dict[str, object]) -> str | None:
    """``new 2026-11-29T10:00:00Z``: the outcome word and when; None if never fetched."""
    if not row["last_outcome"]:
        return None
    word = str(row["last_outcome"]).split(":", 1)[0]
    return f"{word} {row['last_outcome_at']}"


def unusable_snapshots(settings: Settings) -> set[str] | None:
    """The snapshots the last build could not use (damaged, or their parser failed), from the
    warehouse's core.extractions; None when there is no warehouse to ask."""
    lake = lake_of(settings)
    if lake.local and not Path(lake.target).is_file():
        return set()
    try:
        with connect(settings, read_only=True) as con:
            rows = con.execute(
                "SELECT snapshot_id FROM core.extractions WHERE status <> 'ok'"
            ).fetchall()
    except (duckdb.Error, LakeError):  # no build finished yet, or the lake is unreachable
        return None
    return {row[0] for row in rows}


def _newest_usable(snapshots: tuple[SnapshotMeta, ...], unusable: set[str]) -> SnapshotMeta | None:
    return next((m for m in reversed(snapshots) if m.snapshot_id not in unusable), None)


def source_rows(
    settings: Settings,
    now: datetime | None = None,
    problems: list[str] | None = None,
    unusable: set[str] | None = None,
) -> list[dict[str, object]]:
    """One row per registered source. What the build would skip is appended to ``problems``;
    `unusable` are snapshot ids freshness does not count (default: none)."""
    try:
        sources = load_registry(settings.registry)
    except RegistryError as error:
        raise CommandError(str(error)) from None
    now = now or datetime.now(UTC)
    # The build's own inventory, so this lists exactly the snapshots a build would use.
    inventory = take_inventory(open_store(settings.snapshot_store), sources)
    if problems is not None:
        problems.extend(inventory.problems)
    outcomes = latest_outcomes(settings.raw_dir)
    rows: list[dict[str, object]] = []
    for source in sources.values():
        snapshots = inventory.sources[source.id].snapshots
        latest = snapshots[-1] if snapshots else None
        used = _newest_usable(snapshots, unusable or set())
        outcome = outcomes.get(source.id)
        fresh = (
            freshness(used, latest, confirmation(outcome, latest), source.max_age, now)
            if used is not None and latest is not None
            else None
        )
        rows.append(
            {
                "id": source.id,
                "kind": source.kind,
                "tier": source.tier,
                "format": source.format,
                "cadence": source.cadence,
                "publisher": source.publisher,
                "url": source.url,
                "snapshots": len(snapshots),
                "latest_snapshot": latest.snapshot_id if latest else None,
                "retrieved_at": latest.retrieved_at if latest else None,
                "obtained_by": latest.obtained_by if latest else None,
                "age_days": _age_days(latest.retrieved, now) if latest else None,
                "used_snapshot": used.snapshot_id if used else None,
                "confirmed_at": format_utc(fresh.confirmed_at)
                if fresh and fresh.confirmed_at
                else None,
                "fresh_as_of": format_utc(fresh.fresh_as_of) if fresh else None,
                "stale": fresh.stale if fresh else None,
                "last_outcome": outcome.label if outcome else None,
                "last_outcome_at": outcome.at if outcome else None,
            }
        )
    return rows


def _warn(problems: list[str]) -> None:
    # stderr, so `--json` output stays parseable; each line names the file and the reason.
    for problem in problems:
        print(f"warning: snapshot skipped: {problem}", file=sys.stderr)


def _stale(row: dict[str, object]) -> str | None:
    return None if row["stale"] is None else ("yes" if row["stale"] else "no")


def run(args: argparse.Namespace, settings: Settings) -> int:
    problems: list[str] = []
    unusable = unusable_snapshots(settings)
    rows = source_rows(settings, problems=problems, unusable=unusable)
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        _warn(problems)
        return 0
    columns = ("id", "kind", "tier", "format", "cadence", "snapshots")
    table = [
        [
            *(row[c] for c in columns),
            _file(row["latest_snapshot"]),
            row["retrieved_at"],
            row["age_days"],
            _stale(row),
            _last_fetch(row),
        ]
        for row in rows
    ]
    headers = (*columns, "newest", "retrieved_at", "age_days", "stale", "last_fetch")
    print(render_table(headers, table))
    missing = [row["id"] for row in rows if not row["snapshots"]]
    stale = [row["id"] for row in rows if row["stale"]]
    print(f"\n{len(rows)} sources, {len(rows) - len(missing)} with a snapshot, {len(stale)} stale")
    if missing:
        print("no snapshot yet: " + ", ".join(map(str, missing)))
    for row in rows:  # the newest is damaged or unparseable: freshness counts an older one
        if row["used_snapshot"] != row["latest_snapshot"]:
            used = row["used_snapshot"] or "none"
            print(
                f"{row['id']}: the last build could not use its newest snapshot; fresh from {used}"
            )
    failed = [row for row in rows if str(row["last_outcome"] or "").startswith("failed")]
    for row in failed:  # the reason is too long for the table
        print(f"last fetch {row['last_outcome']} ({row['id']}, {row['last_outcome_at']})")
    if unusable is None:
        print(
            "note: the warehouse is busy or has no build yet: snapshots are counted as usable",
            file=sys.stderr,
        )
    _warn(problems)
    return 0


def _file(snapshot_id: object) -> str | None:
    """The file name of a snapshot id: the table's first column already names the source."""
    return str(snapshot_id).split("/", 1)[1] if snapshot_id else None

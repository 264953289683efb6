"""`speedbook sources`: every registered source with its newest snapshot, age and last fetch."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime

from pipeline.cli.tables import render_table
from pipeline.raw.inventory import take_inventory
from pipeline.raw.outcomes import latest_outcomes
from pipeline.raw.snapshots import SnapshotStore
from pipeline.sources.registry import RegistryError, load_registry
from pipeline.support.errors import CommandError
from pipeline.support.settings import Settings

NAME = "sources"
HELP = "list every source with kind, tier, newest snapshot, its age and the last fetch"
DESCRIPTION = (
    "List the sources in the registry with their kind, tier, format, cadence, newest snapshot, "
    "when it was retrieved, how old it is (relative to now) and the outcome of the last "
    "`speedbook fetch` of it. Snapshots the build would skip (unreadable or invalid metadata, "
    "a folder of a source not in the registry) are listed as warnings on stderr."
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


def source_rows(
    settings: Settings, now: datetime | None = None, problems: list[str] | None = None
) -> list[dict[str, object]]:
    """One row per registered source. What the build would skip is appended to ``problems``."""
    try:
        sources = load_registry(settings.registry)
    except RegistryError as error:
        raise CommandError(str(error)) from None
    now = now or datetime.now(UTC)
    # The build's own inventory, so this lists exactly the snapshots a build would use.
    inventory = take_inventory(SnapshotStore(settings.raw_dir), sources)
    if problems is not None:
        problems.extend(inventory.problems)
    outcomes = latest_outcomes(settings.raw_dir)
    rows: list[dict[str, object]] = []
    for source in sources.values():
        snapshots = inventory.sources[source.id].snapshots
        latest = snapshots[-1] if snapshots else None
        outcome = outcomes.get(source.id)
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
                "last_outcome": outcome.label if outcome else None,
                "last_outcome_at": outcome.at if outcome else None,
            }
        )
    return rows


def _warn(problems: list[str]) -> None:
    # stderr, so `--json` output stays parseable; each line names the file and the reason.
    for problem in problems:
        print(f"warning: snapshot skipped: {problem}", file=sys.stderr)


def run(args: argparse.Namespace, settings: Settings) -> int:
    problems: list[str] = []
    rows = source_rows(settings, problems=problems)
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        _warn(problems)
        return 0
    columns = ("id", "kind", "tier", "format", "snapshots", "retrieved_at", "age_days")
    table = [[row[c] for c in columns] + [_last_fetch(row)] for row in rows]
    print(render_table((*columns, "last_fetch"), table))
    missing = [row["id"] for row in rows if not row["snapshots"]]
    print(f"\n{len(rows)} sources, {len(rows) - len(missing)} with a snapshot")
    if missing:
        print("no snapshot yet: " + ", ".join(map(str, missing)))
    failed = [row for row in rows if str(row["last_outcome"] or "").startswith("failed")]
    for row in failed:  # the reason is too long for the table
        print(f"last fetch {row['last_outcome']} ({row['id']}, {row['last_outcome_at']})")
    _warn(problems)
    return 0

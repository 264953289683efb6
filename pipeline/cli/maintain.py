"""`speedbook maintain`: merge the lake's small files, expire old snapshots no release names, and
delete the files nothing needs (pipeline/warehouse/maintenance.py)."""

from __future__ import annotations

import argparse
from datetime import timedelta

from pipeline.support.errors import CommandError
from pipeline.support.locking import LockBusy
from pipeline.support.settings import Settings
from pipeline.warehouse.maintenance import RETENTION

NAME = "maintain"
HELP = "merge the lake's small files and expire old snapshots (keeps every fact)"
DESCRIPTION = (
    "Run DuckLake's maintenance on the warehouse: flush inlined rows, merge the small Parquet "
    "files polls leave, expire the snapshots older than --retention-days that no release names "
    "(time travel to them ends; `speedbook sql --release` still works for every release), and "
    "delete the files nothing needs any more. Every staged fact stays: only old, unreleased "
    "states of the warehouse go. Takes the build lock, so it never runs beside a build; the "
    "daily schedule runs it too (`speedbook ui`)."
)
EXAMPLES = (
    "speedbook maintain                      # keep 30 days of snapshots",
    "speedbook maintain --retention-days 7",
)


def _days(text: str) -> int:
    try:
        days = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--retention-days {text!r} is not a whole number"
        ) from None
    if days < 1:
        raise argparse.ArgumentTypeError(f"--retention-days {text!r} must be 1 or more")
    return days


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--retention-days",
        type=_days,
        default=RETENTION.days,
        metavar="N",
        help=f"keep the snapshots of the last N days (default {RETENTION.days})",
    )
    parser.add_argument(
        "--wait",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="wait this long for a running build to finish (default: do not wait)",
    )


def run(args: argparse.Namespace, settings: Settings) -> int:
    from pipeline.warehouse.build_lock import build_lock
    from pipeline.warehouse.connection import connect
    from pipeline.warehouse.lake import LakeError
    from pipeline.warehouse.maintenance import maintain

    try:
        with build_lock(settings, args.wait), connect(settings) as con:
            done = maintain(con, retention=timedelta(days=args.retention_days))
    except LockBusy as error:
        raise CommandError(str(error), status=3) from None
    except LakeError as error:
        raise CommandError(str(error)) from None
    print(
        f"data files: {done.files_before:,} -> {done.files_after:,}; snapshots expired: "
        f"{done.snapshots_expired:,} (kept: the newest and every release's: "
        f"{done.snapshots_kept:,})"
    )
    return 0

"""`speedbook build`: materialise the whole asset graph in-process."""

from __future__ import annotations

import argparse
import math
from datetime import UTC, datetime, time, timedelta

from pipeline.raw.snapshots import TimeOutOfRange, parse_utc
from pipeline.sources.registry import RegistryError, load_registry
from pipeline.support.errors import CommandError
from pipeline.support.locking import LockBusy, warehouse_lock
from pipeline.support.progress import report
from pipeline.support.settings import Settings

NAME = "build"
HELP = "build the dataset from the raw snapshots (offline unless --live)"
DESCRIPTION = (
    "Materialise the asset graph (raw -> staged -> core -> release) in-process against the "
    "Dagster instance in <warehouse>/dagster, so the run shows up in the Dagster UI. Uses the "
    "snapshots already on disk; nothing is fetched unless --live is given."
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--as-of",
        metavar="DATE",
        help="build the dataset as it stood on DATE (YYYY-MM-DD, or an ISO 8601 time): only "
        "snapshots retrieved up to then are used",
    )
    parser.add_argument(
        "--live",
        action="store_true",
        help="fetch every source first (as `speedbook fetch` does), then build",
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--strict",
        action="store_true",
        help="with --live: do not build if any source failed to fetch",
    )
    mode.add_argument(
        "--keep-going",
        action="store_true",
        help="with --live: build with the last good snapshot of a failed source (the default); "
        "the exit status is still 1 when a fetch failed",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="run the whole graph even when nothing changed since the last build",
    )
    parser.add_argument(
        "--wait",
        type=wait_seconds,
        default=0.0,
        metavar="SECONDS",
        help="if another build holds the warehouse, wait this long for it (default: exit at once)",
    )


def wait_seconds(text: str) -> float:
    """A --wait value. Plain float() takes `nan`, which never times out (every comparison with
    the deadline is false), `inf` and negatives: none is a wait anyone means."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite, non-negative number")
    return value


def parse_as_of(text: str | None) -> datetime | None:
    """A date means the end of that day in UTC; a time is taken as given."""
    if text is None:
        return None
    try:
        if len(text.strip()) == 10:
            day = datetime.strptime(text.strip(), "%Y-%m-%d").date()
            return datetime.combine(day, time(23, 59, 59), tzinfo=UTC)
        return parse_utc(text)
    except TimeOutOfRange:
        raise CommandError(f"--as-of {text!r} is out of range") from None
    except ValueError:
        raise CommandError(
            f"--as-of {text!r} is not a date (YYYY-MM-DD) or ISO 8601 time"
        ) from None


def run(args: argparse.Namespace, settings: Settings) -> int:
    from pipeline.dagster.runner import execute

    as_of = parse_as_of(args.as_of)
    if as_of is not None and as_of > datetime.now(UTC) + timedelta(days=1):
        raise CommandError(f"--as-of {args.as_of!r} is in the future")
    try:
        load_registry(settings.registry)
    except RegistryError as error:
        raise CommandError(str(error)) from None
    if (args.strict or args.keep_going) and not args.live:
        raise CommandError("--strict and --keep-going only apply with --live")
    fetch_failed = False
    try:
        if args.live:
            from pipeline.cli.fetch import fetch_and_report

            # No fetch for a build that could not start; then fetch without the lock, so a slow
            # source never holds the warehouse (a fetch only adds snapshots, as `fetch` does
            # beside a running build).
            with warehouse_lock(settings.lock_file, args.wait):
                pass
            fetched = fetch_and_report(settings, None, strict=args.strict)
            fetch_failed = not fetched.ok
            if fetch_failed and args.strict:
                print("not building: a source failed to fetch (--strict)")
                return 1
        with warehouse_lock(settings.lock_file, args.wait):
            report(f"build started (as of {as_of.isoformat() if as_of else 'all snapshots'})")
            outcome = execute(settings, as_of, force=args.force)
    except LockBusy as error:
        raise CommandError(str(error), status=3) from None
    for failure in outcome.failures:
        print(f"failed: {failure}")
    for check in outcome.failed_checks:
        print(f"failed check: {check}")
    if not outcome.success:
        print(f"build failed (Dagster run {outcome.run_id}); the last release is unchanged")
        return 1
    if outcome.skipped:
        print("nothing new: no snapshot, code or reviewed file changed since the last build")
        print(f"  releases: {settings.exports} (newest: {settings.exports / 'latest'})")
        return 1 if fetch_failed else 0
    print(f"build finished in {outcome.wall_seconds:.1f} s (Dagster run {outcome.run_id})")
    print(f"  warehouse: {settings.database}")
    print(f"  releases: {settings.exports} (newest: {settings.exports / 'latest'})")
    print(f"  Dagster instance: {settings.dagster_home} (open it with `speedbook ui`)")
    if fetch_failed:
        print("some sources failed to fetch; the build used their last good snapshots")
        return 1
    return 0

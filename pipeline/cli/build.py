"""`speedbook build`: materialise the whole asset graph in-process.

Exit status: 0 built (or nothing new); 1 the build failed (nothing published; the warehouse as
the last successful build left it, or, when only the release failed, with this build's core and
mart), or with --live a source failed to fetch; 2 refused before
starting (usage, nothing to read, the warehouse open for writing elsewhere); 3 another build
holds the warehouse; 4 built, but a snapshot newer than the one its source is read from could
not be used (rejected by its parser or its check, or damaged). A failed or partly failed build
ends with a short summary on stderr: what failed, and the file to edit or the command to run.
"""

from __future__ import annotations

import argparse
import math
import sys
from datetime import UTC, datetime, time, timedelta
from typing import TYPE_CHECKING

from pipeline.raw.snapshots import TimeOutOfRange, parse_utc
from pipeline.sources.registry import RegistryError, Source, load_registry
from pipeline.support.errors import CommandError, LakeError
from pipeline.support.locking import LockBusy
from pipeline.support.progress import report
from pipeline.support.settings import Settings

if TYPE_CHECKING:
    from pipeline.dagster.envelope import BuildOutcome

PUBLISHED_WITH_UNUSED = 4  # built, but some newer snapshot could not be used
SUMMARY_NOTES = 5  # notes the summary prints; the changelog and mart.source_health have all

NAME = "build"
HELP = "build the dataset from the raw snapshots (offline unless --live)"
DESCRIPTION = (
    "Materialise the asset graph (raw -> staged -> core -> release) in-process against the "
    "Dagster instance in <warehouse>/dagster, so the run shows up in the Dagster UI. Uses the "
    "snapshots already on disk; nothing is fetched unless --live is given. Every build commits "
    "the lake; it publishes a release when content changed and one is due "
    "(SPEEDBOOK_RELEASE_CADENCE: hourly, daily...; unset, every build). Exit status: 0 "
    "built; 1 failed (nothing published, the warehouse unchanged) or a fetch failed; 2 refused "
    "before starting; 3 another build holds the warehouse; 4 built, but a source's newest "
    "snapshot could not be used (rejected or damaged: the summary names it)."
)

EXAMPLES = (
    "speedbook build                    # offline, from the snapshots on disk",
    "speedbook build --as-of 2026-06-30 # the dataset as it stood then",
    "speedbook build --live --strict    # fetch every source first; no build if one fails",
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
        help="fetch every source first (as `speedbook fetch` does), then build; not with --as-of",
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--strict",
        action="store_true",
        help="publish no release while a snapshot newer than the one its source is read from "
        "was rejected or is damaged (exit status 1); with --live, do not build at all if a "
        "source failed to fetch",
    )
    mode.add_argument(
        "--keep-going",
        action="store_true",
        help="the default: a source whose newest snapshot cannot be used (or, with --live, "
        "cannot be fetched) is read from its last good snapshot; the exit status says so (4, "
        "or 1 when a fetch failed)",
    )
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="show Dagster's own log (step failures with their stack traces) as well",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="run the whole graph even when nothing changed since the last build, and make every "
        "measured figure again from staging (none kept from earlier builds)",
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


AS_OF_WITH_LIVE = (
    "--as-of and --live cannot go together: --as-of DATE builds the dataset as it stood on DATE "
    "from the snapshots stored up to then, while --live first fetches the sources now, and "
    "what it fetched would be left out of that build; run `speedbook fetch`, then "
    "`speedbook build --as-of DATE`, if both are wanted"
)


def run(args: argparse.Namespace, settings: Settings) -> int:
    from pipeline.dagster.envelope import BuildRefused, execute
    from pipeline.warehouse.build_lock import build_lock

    if args.live and args.as_of is not None:
        raise CommandError(AS_OF_WITH_LIVE)
    as_of = parse_as_of(args.as_of)
    if as_of is not None and as_of > datetime.now(UTC) + timedelta(days=1):
        raise CommandError(f"--as-of {args.as_of!r} is in the future")
    try:
        sources = load_registry(settings.registry)
    except RegistryError as error:
        raise CommandError(str(error)) from None
    fetch_failed = False
    try:
        if args.live:
            from pipeline.cli.fetch import fetch_and_report

            # No fetch for a build that could not start; then fetch without the lock, so a slow
            # source never holds the warehouse (a fetch only adds snapshots, as `fetch` does
            # beside a running build).
            with build_lock(settings, args.wait):
                pass
            fetched = fetch_and_report(settings, None, strict=args.strict)
            fetch_failed = not fetched.ok
            if fetch_failed and args.strict:
                print("not building: a source failed to fetch (--strict)")
                return 1
        report(f"build started (as of {as_of.isoformat() if as_of else 'all snapshots'})")
        outcome = execute(
            settings,
            as_of,
            force=args.force,
            strict=args.strict,
            wait=args.wait,
            verbose=args.verbose,
        )
    except LockBusy as error:
        raise CommandError(str(error), status=3) from None
    except BuildRefused as error:
        raise CommandError(str(error)) from None
    except LakeError as error:
        raise CommandError(str(error)) from None
    if not outcome.success:
        _summary(failure_summary(outcome, settings, sources))
        return 1
    if outcome.skipped:
        print("nothing new: no snapshot, code or reviewed file changed since the last build")
        print(f"  releases: {settings.exports} (newest: {settings.exports / 'latest'})")
    else:
        from pipeline.warehouse.connection import lake_of

        print(f"build finished in {outcome.wall_seconds:.1f} s (Dagster run {outcome.run_id})")
        lake = lake_of(settings).describe()
        if as_of:
            print(f"  warehouse: {lake} unchanged (an --as-of build publishes a release only)")
        else:
            print(f"  warehouse: {lake}, snapshot {outcome.lake_snapshot}")
        print(f"  releases: {settings.exports} (newest: {settings.exports / 'latest'})")
        if outcome.release_due_at:
            print(f"  {outcome.message}")
        where = " (its storage in PostgreSQL)" if settings.dagster_storage else ""
        print(f"  Dagster instance: {settings.dagster_home}{where} (open it with `speedbook ui`)")
        if outcome.names:
            print(f"  {outcome.names}")
    if outcome.not_used:
        _summary(unused_summary(outcome, sources))
    if fetch_failed:
        print("some sources failed to fetch; the build used their last good snapshots")
        return 1
    return PUBLISHED_WITH_UNUSED if outcome.not_used else 0


def _summary(lines: list[str]) -> None:
    for line in lines:
        print(line, file=sys.stderr)


def _details(outcome: BuildOutcome) -> str:
    run = f"Dagster run {outcome.run_id}" if outcome.run_id else "the last Dagster run"
    return f"details: {run} (`speedbook ui`), or build again with --verbose"


def _parser_file(sources: dict[str, Source], note: str) -> str:
    """The parser module of the source a note names (`<source>: snapshot ...`)."""
    from pipeline.extract import PARSERS

    source = sources.get(note.split(":", 1)[0])
    if source is None:
        return "pipeline/extract/"
    return PARSERS[source.format].parse.__module__.replace(".", "/") + ".py"


def _note_lines(outcome: BuildOutcome, sources: dict[str, Source]) -> list[str]:
    shown = outcome.notes[:SUMMARY_NOTES]
    lines = [f"  {note}" for note in shown]
    if outcome.not_used > len(shown):
        lines.append(f"  ... and {outcome.not_used - len(shown):,} more (mart.source_health)")
    if shown:
        first = shown[0]
        source, _, rest = first.partition(": snapshot ")
        file, _, rest = rest.partition(" ")
        repair = (
            "restore its bytes (`speedbook snapshot verify` lists what is damaged)"
            if rest.startswith("damaged")
            else f"fix its parser ({_parser_file(sources, first)})"
        )
        lines.append(f"  fix: {repair}, or withdraw it: speedbook snapshot remove {source} {file}")
    return lines


def unused_summary(outcome: BuildOutcome, sources: dict[str, Source]) -> list[str]:
    """A build that went out with snapshots it could not use: which, and what to do."""
    head = (
        f"published release {outcome.release}"
        if outcome.published
        else f"release {outcome.release} stands"
    )
    return [
        f"{head}; {outcome.not_used} newer snapshot(s) could not be used (exit status 4):",
        *_note_lines(outcome, sources),
        _details(outcome),
    ]


def failure_summary(
    outcome: BuildOutcome, settings: Settings, sources: dict[str, Source]
) -> list[str]:
    """At most about ten lines: what failed, with its fix, and where the whole log is."""
    warehouse = (
        f"the warehouse holds this build's core and mart (lake snapshot {outcome.lake_snapshot})"
        if outcome.lake_snapshot is not None
        else "the warehouse is as the last successful build left it"
    )
    lines = [f"build failed: nothing published; {warehouse}"]
    for problem in outcome.problems[:3]:
        lines.append(f"{problem.what}: {problem.message}")
        if problem.message.startswith("not published (--strict)"):
            lines += _note_lines(outcome, sources)[:SUMMARY_NOTES]
        else:
            lines.append(f"  fix: {problem.fix}")
    if len(outcome.problems) > 3:
        lines.append(f"... and {len(outcome.problems) - 3} more")
    if not outcome.problems:
        lines.append("the run did not finish (no step reported an error)")
    lines.append(_details(outcome))
    return lines

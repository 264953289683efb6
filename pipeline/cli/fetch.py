"""`speedbook fetch`: bring sources up to date from the web, one recorded outcome each."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from pipeline.cli.tables import render_table
from pipeline.sources.registry import RegistryError
from pipeline.support.errors import CommandError
from pipeline.support.settings import Settings

if TYPE_CHECKING:
    from pipeline.fetch import FetchReport

NAME = "fetch"
HELP = "fetch sources from the web and store what changed as new snapshots"
DESCRIPTION = (
    "Fetch every source in the registry (or only SOURCE_ID...) and store each response whose "
    "bytes are new as a snapshot (obtained_by=fetched); a poll source (one request per model) "
    "stores its round of responses as one bundle. API keys come from the environment variables "
    "the registry names and are never stored. Each source ends as new, unchanged, not_modified, "
    "skipped: <reason> (its API key is not set) or failed: <reason>, recorded in its fetch log "
    "<warehouse>/state/fetch/<source_id>.jsonl (not part of the snapshot store). A failed source "
    "keeps its last good snapshot. When no host can be reached, the fetch says once that the "
    "network looks unreachable and ends. "
    "Exit status 0 when nothing failed (skipped is no failure), 1 when any source failed."
)

EXAMPLES = (
    "speedbook fetch                            # every source",
    "speedbook fetch openrouter models-dev      # only these",
    "OPENROUTER_API_KEY=... speedbook fetch openrouter-endpoints",
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "source_ids", nargs="*", metavar="SOURCE_ID", help="sources to fetch (default: all)"
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--strict",
        action="store_true",
        help="stop at the first failure: start no new requests and record the remaining "
        "sources as skipped",
    )
    mode.add_argument(
        "--keep-going",
        action="store_true",
        help="fetch every source even when some fail (the default; for explicit scripts)",
    )


def fetch_and_report(
    settings: Settings, source_ids: list[str] | None, *, strict: bool
) -> FetchReport:
    """Fetch, print the outcome table and summary; shared by `fetch` and `build --live`."""
    from pipeline.fetch import FetchError, fetch_sources  # httpx only when fetching

    try:
        result = fetch_sources(settings, source_ids or None, strict=strict)
    except (RegistryError, FetchError) as error:
        raise CommandError(str(error)) from None
    rows = [[record.source_id, record.outcome, record.detail or "-"] for record in result.records]
    print(render_table(("source", "outcome", "detail"), rows))
    print(f"\n{result.summary()}")
    if result.failed:
        print("failed sources keep their last good snapshot")
    return result


def run(args: argparse.Namespace, settings: Settings) -> int:
    return 0 if fetch_and_report(settings, args.source_ids, strict=args.strict).ok else 1

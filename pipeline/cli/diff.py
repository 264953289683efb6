"""`speedbook diff [OLD] [NEW]`: what changed between two releases."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.support.errors import CommandError
from pipeline.support.settings import Settings

if TYPE_CHECKING:
    from pipeline.release.contract import Release

NAME = "diff"
HELP = "show what changed between two releases (default: what the last publish changed)"
DESCRIPTION = (
    "Print the changelog between two releases: providers, models, platforms and catalogue "
    "entries added and removed, figures changed (old and new value, relative change), headline "
    "changes, source tier changes and newly stale figures. OLD and NEW are versions "
    "(2026.11.29), `latest`, or paths to release folders. Without them: what the last publish "
    "of `latest` changed, from the release its changelog compares it with (the release "
    "`latest` named before; after `speedbook snapshot remove` that can be a newer version it "
    "replaced) to `latest`. With only OLD, NEW is `latest`."
)
EXAMPLES = (
    "speedbook diff                 # what the last publish changed",
    "speedbook diff 2026.06.28 latest",
    "speedbook diff 2026.06.28 2026.11.29 --json > changes.json",
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "old",
        nargs="?",
        metavar="OLD",
        help="version, `latest` or folder (default: the release latest's changelog compares with)",
    )
    parser.add_argument(
        "new", nargs="?", metavar="NEW", help="version, `latest` or folder (default: latest)"
    )
    parser.add_argument(
        "--json", action="store_true", help="print the changes as JSON (the form of changes.json)"
    )


def _pick(exports: Path, old: str | None, new: str | None) -> tuple[Path, Path]:
    from pipeline.release.lineage import last_change
    from pipeline.release.publish import LATEST, find_release, list_versions

    versions = list_versions(exports)
    try:
        if old is None:
            pair = last_change(exports)
            if pair is None:
                have = ", ".join(versions) if versions else "none"
                raise CommandError(
                    f"need two releases to compare; {exports} has {len(versions)} ({have})"
                    + ("; name them: speedbook diff OLD NEW" if len(versions) > 1 else "")
                )
            return exports / pair[0], exports / pair[1]
        if new is None:
            if not versions:
                raise CommandError(f"no releases in {exports} to compare {old} with")
            return find_release(exports, old), find_release(exports, LATEST)
        return find_release(exports, old), find_release(exports, new)
    except LookupError as error:
        raise CommandError(str(error)) from None


def _read(folder: Path) -> Release:
    from pipeline.release.changelog import UnreadableRelease, parse_release
    from pipeline.release.publish import ReleaseDamaged, read_release

    try:
        return parse_release(read_release(folder))
    except ReleaseDamaged as error:
        raise CommandError(f"damaged release: {error}") from None
    except UnreadableRelease as error:
        raise CommandError(f"{folder}: not a release this version reads: {error}") from None


def run(args: argparse.Namespace, settings: Settings) -> int:
    from pipeline.release.changelog import compare, render_markdown

    old_folder, new_folder = _pick(settings.exports, args.old, args.new)
    changes = compare(_read(old_folder), _read(new_folder))
    if args.json:
        print(json.dumps(changes, indent=2, ensure_ascii=False, sort_keys=True))
    else:
        print(render_markdown(changes), end="")
    return 0

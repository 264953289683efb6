"""`speedbook validate [DIR]`: check a folder of exports against the JSON Schemas, and a release
folder whole: every export also against the sha256 its datapackage.json records."""

from __future__ import annotations

import argparse
from pathlib import Path

from pipeline.support.errors import CommandError
from pipeline.support.settings import Settings

NAME = "validate"
HELP = "validate a release (or a folder of exports): schemas, and the sha256 of every export"
DESCRIPTION = (
    "Validate inference.json, model_platforms.json and inference_catalog.json in DIR (default: "
    "the latest release) against their JSON Schemas (draft 2020-12), and, when DIR is a release "
    "(it holds datapackage.json), each export against the size and sha256 datapackage.json "
    "records, as `releases`, `diff` and `preview` do. Prints every problem with the path inside "
    "the document; exit status 1 when any export is missing, invalid or not the bytes released."
)


EXAMPLES = (
    "speedbook validate                       # the latest release",
    "speedbook validate exports/2026.06.28",
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "directory",
        nargs="?",
        type=Path,
        metavar="DIR",
        help="folder holding the exports (default: <exports>/latest)",
    )


def run(args: argparse.Namespace, settings: Settings) -> int:
    from pipeline.release.contracts import validate_directory
    from pipeline.release.publish import DATAPACKAGE, release_problems

    directory = args.directory or settings.exports / "latest"
    if not directory.is_dir():
        raise CommandError(f"{directory}: no such folder (build first, or name a folder)")
    report = validate_directory(directory)
    failed = False
    if (directory / DATAPACKAGE).exists():
        # a release is only valid whole: the bytes its manifest records, not merely valid JSON
        for problem in release_problems(directory):
            failed = True
            print(f"invalid: {problem}")
    else:
        print(f"note: {directory} holds no {DATAPACKAGE}: only the schemas were checked")
    for name, problems in report.items():
        if problems:
            failed = True
            for problem in problems:
                print(f"invalid: {problem}")
        else:
            print(f"valid: {name}")
    return 1 if failed else 0

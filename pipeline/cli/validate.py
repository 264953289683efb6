"""`speedbook validate [DIR]`: check a folder of exports against the JSON Schemas."""

from __future__ import annotations

import argparse
from pathlib import Path

from pipeline.support.errors import CommandError
from pipeline.support.settings import Settings

NAME = "validate"
HELP = "validate a folder of exports against schemas/*.schema.json"
DESCRIPTION = (
    "Validate inference.json, model_platforms.json and inference_catalog.json in DIR (default: "
    "the latest release) against their JSON Schemas (draft 2020-12). Prints every problem with "
    "the path inside the document; exit status 1 when any export is missing or invalid."
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

    directory = args.directory or settings.exports / "latest"
    if not directory.is_dir():
        raise CommandError(f"{directory}: no such folder (build first, or name a folder)")
    report = validate_directory(directory)
    failed = False
    for name, problems in report.items():
        if problems:
            failed = True
            for problem in problems:
                print(f"invalid: {problem}")
        else:
            print(f"valid: {name}")
    return 1 if failed else 0

"""`speedbook schemas [--check]`: write (or check) the exports' JSON Schemas from the models."""

from __future__ import annotations

import argparse
from pathlib import Path

from pipeline.cli.generated import bring_up_to_date
from pipeline.support.settings import SCHEMAS_DIR, Settings

NAME = "schemas"
HELP = "write the exports' JSON Schemas (schemas/) from the contract's models"
DESCRIPTION = (
    "Generate the JSON Schema (draft 2020-12) of each export from its model in "
    "pipeline/release/contract/ and write it to schemas/. With --check, write "
    "nothing and exit 1 when a committed schema differs from what the models give."
)


EXAMPLES = (
    "speedbook schemas              # rewrite pipeline/release/schemas/*.schema.json",
    "speedbook schemas --check      # in CI: exit 1 if one is out of date",
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--check",
        action="store_true",
        help="exit 1 if a schema file differs from what the models produce; write nothing",
    )
    parser.add_argument(
        "--output",
        metavar="DIR",
        type=Path,
        default=SCHEMAS_DIR,
        help="the folder of the schema files (default: schemas)",
    )


def run(args: argparse.Namespace, settings: Settings) -> int:
    from pipeline.release.contract import MODELS  # pydantic: only when used
    from pipeline.release.contract.schemas import render_schema, schema_file_name

    folder: Path = args.output
    outdated = [
        bring_up_to_date(
            folder / schema_file_name(export_file),
            render_schema(export_file, model),
            check=args.check,
            command=NAME,
        )
        for export_file, model in MODELS.items()
    ]
    return 1 if any(outdated) else 0

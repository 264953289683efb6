"""`speedbook dictionary [--check]`: write (or check) sql/DATA_DICTIONARY.md from the comments."""

from __future__ import annotations

import argparse
from pathlib import Path

from pipeline.cli.generated import bring_up_to_date
from pipeline.support.settings import DICTIONARY_PATH, Settings

NAME = "dictionary"
HELP = "write the data dictionary (sql/DATA_DICTIONARY.md) from the warehouse's comments"
DESCRIPTION = (
    "Render every core table and mart view with its columns, from the comments the code puts "
    "in the warehouse (Pandera descriptions, COMMENT ON in sql/mart), and write it as markdown. "
    "Needs no build: the schema is created in memory. With --check, write nothing and exit 1 "
    "when the file is out of date."
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--check",
        action="store_true",
        help="exit 1 if the file differs from what the code produces; write nothing",
    )
    parser.add_argument(
        "--output",
        metavar="FILE",
        type=Path,
        default=DICTIONARY_PATH,
        help="where the dictionary lives (default: sql/DATA_DICTIONARY.md)",
    )


def run(args: argparse.Namespace, settings: Settings) -> int:
    path: Path = args.output
    from pipeline.warehouse.dictionary import current_dictionary  # pandas, Pandera: only when used

    outdated = bring_up_to_date(path, current_dictionary(), check=args.check, command=NAME)
    return 1 if outdated else 0

"""`speedbook dictionary [--check]`: write (or check) docs/data-dictionary.md from the code's
descriptions of every relation of the built warehouse."""

from __future__ import annotations

import argparse
from pathlib import Path

from pipeline.cli.generated import bring_up_to_date
from pipeline.support.settings import DICTIONARY_PATH, Settings

NAME = "dictionary"
HELP = "write the data dictionary (docs/data-dictionary.md) of the built warehouse"
DESCRIPTION = (
    "Render every relation of the warehouse (mart, core, staging, history) with its columns and "
    "types, described by the code's one description of each (the Pandera models, the mart's "
    "registry in pipeline/schema/mart.py, the history tables' comments), and write it as "
    "markdown. Reads the last completed build: run `speedbook build` first. With --check, write "
    "nothing and exit 1 when the file is out of date."
)


EXAMPLES = (
    "speedbook dictionary           # rewrite docs/data-dictionary.md",
    "speedbook dictionary --check   # in CI: exit 1 if it is out of date",
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
        help="where the dictionary lives (default: docs/data-dictionary.md)",
    )


def run(args: argparse.Namespace, settings: Settings) -> int:
    path: Path = args.output
    from pipeline.cli.sql import open_lake  # pandas, Pandera: only when used
    from pipeline.warehouse.dictionary import render_dictionary

    with open_lake(settings) as con:
        text = render_dictionary(con)
    outdated = bring_up_to_date(path, text, check=args.check, command=NAME)
    return 1 if outdated else 0

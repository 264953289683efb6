"""`speedbook schemas [--check]`: write (or check) the exports' JSON Schemas from the models."""

from __future__ import annotations

import argparse
from pathlib import Path

from pipeline.support.errors import CommandError
from pipeline.support.settings import SCHEMAS_DIR, Settings

NAME = "schemas"
HELP = "write the exports' JSON Schemas (pipeline/release/schemas/) from the contract's models"
DESCRIPTION = (
    "Generate the JSON Schema (draft 2020-12) of each export from its model in "
    "pipeline/release/contract/ and write it to pipeline/release/schemas/. With --check, write "
    "nothing and exit 1 when a committed schema differs from what the models give."
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
        help="the folder of the schema files (default: pipeline/release/schemas)",
    )


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8") if path.exists() else None
    except (OSError, UnicodeDecodeError) as error:
        raise CommandError(f"cannot read {path}: {error}") from None


def _write(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.tmp")
        temporary.write_text(text, encoding="utf-8")
        temporary.replace(path)
    except OSError as error:
        raise CommandError(f"cannot write {path}: {error}") from None


def run(args: argparse.Namespace, settings: Settings) -> int:
    from pipeline.release.contract import MODELS  # pydantic: only when used
    from pipeline.release.contract.schemas import render_schema, schema_file_name

    folder: Path = args.output
    outdated = []
    for export_file, model in MODELS.items():
        path = folder / schema_file_name(export_file)
        text = render_schema(export_file, model)
        if _read(path) == text:
            print(f"{path} {'is up to date' if args.check else 'unchanged'}")
            continue
        if args.check:
            print(f"{path} is out of date: run `speedbook schemas`")
            outdated.append(path)
            continue
        _write(path, text)
        print(f"wrote {path}")
    return 1 if outdated else 0

"""`speedbook preview`: render a release's preview page (index.html) from its own exports."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from pipeline.support.errors import CommandError
from pipeline.support.settings import Settings

NAME = "preview"
HELP = "render a release's preview page (index.html) from its exports"
DESCRIPTION = (
    "Render the self-contained preview page of a release (headline throughput bars, endpoints "
    "by model with percentile strips, sparklines and latency charts, live versus record claims, "
    "platforms, edge catalogue) from the release's inference.json, model_platforms.json and "
    "inference_catalog.json, and the history in its parquet/history/ (docs/preview.md). The "
    "release is checked first: every export present and matching the sha256 in its "
    "datapackage.json, and valid against its schema. Writes to stdout unless --output is given."
)


EXAMPLES = (
    "speedbook preview -o preview.html                  # the latest release",
    "speedbook preview exports/2026.06.28 > june.html",
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "release",
        nargs="?",
        metavar="RELEASE_DIR",
        type=Path,
        help="a release folder (default: <exports>/latest)",
    )
    parser.add_argument(
        "--output",
        "-o",
        metavar="FILE",
        help="write the page to FILE (default: stdout; '-' also means stdout)",
    )


def read_release(directory: Path) -> dict[str, dict[str, Any]]:
    """The three exports of a release folder: complete (publish.read_release checks the files
    against datapackage.json, as `diff` and `releases` do), read in today's shape when an earlier
    schema version wrote them (contract/legacy.py), and valid against today's schemas."""
    if not directory.is_dir():
        raise CommandError(f"{directory}: no such release folder (run `speedbook build` first)")
    from pipeline.release import publish
    from pipeline.release.contract.legacy import upgrade
    from pipeline.release.contracts import problems

    try:
        documents = publish.read_release(directory)
    except publish.ReleaseDamaged as error:
        raise CommandError(f"damaged release: {error}") from None
    upgraded = {}
    for name, document in documents.items():
        upgraded[name] = upgrade(name, document) if isinstance(document, dict) else document
        found = problems(name, upgraded[name], limit=1)
        if found:
            raise CommandError(f"{directory / name}: does not match its schema: {found[0]}")
    return upgraded


def _write(path: Path, text: str) -> None:
    """Through a temporary file and a rename, so a reader never sees half a page."""
    if path.is_dir():
        raise CommandError(f"{path}: is a folder; give a file name")
    if not path.parent.is_dir():
        raise CommandError(f"{path.parent}: no such folder")
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(text.encode("utf-8"))
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except OSError as error:
        Path(temporary).unlink(missing_ok=True)
        raise CommandError(f"{path}: cannot write: {error.strerror or error}") from None


def run(args: argparse.Namespace, settings: Settings) -> int:
    directory = args.release if args.release is not None else settings.exports / "latest"
    from pipeline.release.preview import render_preview
    from pipeline.release.preview_history import HistoryUnreadable, read_history

    documents = read_release(directory)
    try:
        history = read_history(directory)
    except HistoryUnreadable as error:
        raise CommandError(f"damaged release: {error}") from None
    page = render_preview(documents, history=history)
    if args.output in (None, "-"):
        sys.stdout.write(page)
        return 0
    output = Path(args.output)
    _write(output, page)
    print(f"wrote {output} ({len(page.encode('utf-8')):,} bytes) from {directory}")
    return 0

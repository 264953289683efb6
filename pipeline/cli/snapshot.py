"""`speedbook snapshot add|list|verify`: manage the raw snapshot store by hand."""

from __future__ import annotations

import argparse
import mimetypes
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

from pipeline.raw.snapshots import (
    MAX_SNAPSHOT_BYTES,
    SnapshotDamaged,
    SnapshotError,
    SnapshotStore,
    TimeOutOfRange,
    check_source_id,
    parse_utc,
    retrieval_problem,
)
from pipeline.sources.formats import EXTENSION_CONTENT_TYPES, FORMATS
from pipeline.sources.registry import RegistryError, Source, load_registry
from pipeline.support.errors import CommandError
from pipeline.support.settings import Settings
from pipeline.support.sizes import format_size
from pipeline.support.text import url_for_message, url_problem

NAME = "snapshot"
HELP = "add a page captured by hand, list or verify stored snapshots"
DESCRIPTION = (
    "Manage the raw snapshot store under <warehouse>/raw. `add` stores a file a maintainer "
    "captured by hand (obtained_by=manual); identical bytes for a source are stored once."
)


def configure(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = actions.add_parser("add", help="store a captured page or response as a new snapshot")
    add.add_argument("source_id", metavar="SOURCE_ID", help="a source id from the registry")
    add.add_argument("file", metavar="FILE", type=Path, help="the captured bytes")
    add.add_argument(
        "--retrieved-at",
        metavar="ISO8601",
        help="when the page was captured (default: now); a time without zone is UTC",
    )
    add.add_argument("--url", help="the URL it came from (default: the source's registry URL)")
    add.add_argument("--content-type", help="media type (default: from the source's format)")
    add.add_argument("--note", default="", help="provenance note kept in the metadata record")
    add.add_argument(
        "--bundled",
        action="store_true",
        help="mark as part of the committed offline corpus (obtained_by=bundled)",
    )
    listing = actions.add_parser("list", help="list stored snapshots, oldest first")
    listing.add_argument(
        "source_id",
        nargs="?",
        metavar="SOURCE_ID",
        help="only this source (in the registry, or with a folder in the store)",
    )
    actions.add_parser("verify", help="check every snapshot's bytes against its sha256")


def _source(settings: Settings, source_id: str) -> Source:
    try:
        sources = load_registry(settings.registry)
    except RegistryError as error:
        raise CommandError(str(error)) from None
    if source_id not in sources:
        raise CommandError(f"unknown source id {source_id!r} (see `speedbook sources`)")
    return sources[source_id]


@contextmanager
def _open_capture(path: Path) -> Iterator[BinaryIO]:
    """The captured file, open for streaming into the store, after the checks that need no
    reading: it exists, is a regular file, is not empty and not over the store's cap."""
    if not path.exists():
        raise CommandError(f"{path}: no such file")
    if not path.is_file():
        raise CommandError(f"{path}: not a regular file")
    try:
        reader = path.open("rb")
    except OSError as error:
        raise CommandError(f"{path}: cannot read: {error.strerror or error}") from None
    with reader:
        size = os.fstat(reader.fileno()).st_size
        if not size:
            raise CommandError(f"{path}: file is empty")
        if size > MAX_SNAPSHOT_BYTES:
            raise CommandError(
                f"{path}: {format_size(size)} is larger than {format_size(MAX_SNAPSHOT_BYTES)}, "
                "the store's cap for one snapshot"
            )
        yield reader


def _report_cleaned(store: SnapshotStore) -> None:
    for path in store.cleaned:
        print(f"removed a temporary file a killed writer left: {path}", file=sys.stderr)


def _retrieved_at(text: str | None) -> datetime:
    now = datetime.now(UTC).replace(microsecond=0)
    if text is None:
        return now
    try:
        value = parse_utc(text)
    except TimeOutOfRange:
        raise CommandError(f"--retrieved-at {text!r} is out of range") from None
    except ValueError:
        raise CommandError(f"--retrieved-at {text!r} is not an ISO 8601 date or time") from None
    if value > now:
        raise CommandError(f"--retrieved-at {text!r} is in the future")
    problem = retrieval_problem(value)
    if problem:
        raise CommandError(f"--retrieved-at {text!r} {problem}")
    return value


def add(args: argparse.Namespace, settings: Settings) -> int:
    source = _source(settings, args.source_id)
    retrieved_at = _retrieved_at(args.retrieved_at)
    url = source.url if args.url is None else args.url
    problem = url_problem(url)
    if problem:
        raise CommandError(f"--url {url_for_message(url)} {problem}")
    spec = FORMATS[source.format]
    content_type = (
        args.content_type
        or mimetypes.guess_type(args.file.name)[0]
        or EXTENSION_CONTENT_TYPES[spec.extension]
    )
    store = SnapshotStore(settings.raw_dir)
    with _open_capture(args.file) as reader:
        try:
            result = store.add_stream(
                source.id,
                reader,
                url=url,
                retrieved_at=retrieved_at,
                content_type=content_type,
                obtained_by="bundled" if args.bundled else "manual",
                extension=spec.extension_for(content_type),
                note=args.note,
            )
        except SnapshotError as error:
            raise CommandError(str(error)) from None
        except OSError as error:
            raise CommandError(f"{args.file}: cannot store it: {error}") from None
        finally:
            _report_cleaned(store)
    for problem in result.skipped:
        print(f"warning: snapshot skipped: {problem}", file=sys.stderr)
    meta = result.meta
    if result.created:
        print(f"stored {meta.snapshot_id} ({meta.size} bytes, sha256 {meta.sha256[:12]})")
    else:
        print(f"unchanged: identical bytes already stored as {meta.snapshot_id}")
    return 0


def _listed_source(settings: Settings, source_id: str) -> str:
    """A source id to list: a slug (never a path), with a folder in the store or in the registry.
    A snapshot folder is enough, so a source removed from the registry can still be listed."""
    try:
        check_source_id(source_id)
    except SnapshotError as error:
        raise CommandError(str(error)) from None
    if not (settings.raw_dir / source_id).is_dir():
        _source(settings, source_id)  # unknown: a clear error rather than an empty listing
    return source_id


def listing(args: argparse.Namespace, settings: Settings) -> int:
    source_id = None if args.source_id is None else _listed_source(settings, args.source_id)
    errors: list[str] = []
    store = SnapshotStore(settings.raw_dir)
    snapshots = store.list(source_id, errors=errors)
    _report_cleaned(store)
    for meta in snapshots:
        print(f"{meta.retrieved_at}  {meta.obtained_by:<13} {meta.size:>9}  {meta.snapshot_id}")
    if source_id is not None and not snapshots and not errors:
        print(f"no snapshot of {source_id} yet", file=sys.stderr)
    for error in errors:
        print(f"warning: {error}", file=sys.stderr)
    return 1 if errors else 0


def verify(_args: argparse.Namespace, settings: Settings) -> int:
    store = SnapshotStore(settings.raw_dir)
    problems: list[str] = []
    snapshots = store.list(errors=problems)
    for meta in snapshots:
        try:
            store.read(meta)
        except SnapshotDamaged as error:
            problems.append(str(error))
    for problem in problems:
        print(f"damaged: {problem}", file=sys.stderr)
    print(f"{len(snapshots)} snapshots checked, {len(problems)} problem(s)")
    return 1 if problems else 0


def run(args: argparse.Namespace, settings: Settings) -> int:
    return {"add": add, "list": listing, "verify": verify}[args.action](args, settings)

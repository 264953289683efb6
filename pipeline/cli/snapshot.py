"""`speedbook snapshot add|list|verify|remove`: manage the raw snapshot store by hand."""

from __future__ import annotations

import argparse
import io
import mimetypes
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

from pipeline.cli.examples import with_examples
from pipeline.raw.snapshots import (
    MAX_SNAPSHOT_BYTES,
    SnapshotError,
    SnapshotMeta,
    TimeOutOfRange,
    check_source_id,
    format_utc,
    parse_utc,
    retrieval_problem,
    sha256_hex,
    snapshot_file_name,
)
from pipeline.raw.store import Store, is_local, open_store, verify
from pipeline.sources.formats import EXTENSION_CONTENT_TYPES, FORMATS
from pipeline.sources.registry import RegistryError, Source, load_registry
from pipeline.sources.suggest import did_you_mean, unknown_sources
from pipeline.support.errors import CommandError
from pipeline.support.settings import Settings
from pipeline.support.sizes import format_size
from pipeline.support.text import url_for_message, url_problem

NAME = "snapshot"
HELP = "add a page captured by hand, list, verify or withdraw stored snapshots"
DESCRIPTION = (
    "Manage the raw snapshot store: <warehouse>/raw, or the folder or s3://bucket/prefix "
    "--snapshots or $SPEEDBOOK_SNAPSHOTS names (S3 credentials from the AWS_* variables). "
    "`add` stores a file a maintainer captured by hand (obtained_by=manual) once its source's "
    "parser reads it; identical bytes for a source are stored once. `remove` withdraws a "
    "snapshot stored by mistake (its bytes stay, no later build uses it)."
)
EXAMPLES = (
    "speedbook snapshot list aa-kimi-k2-6",
    "speedbook snapshot add aa-kimi-k2-6 page.html --retrieved-at 2026-11-30T06:00:00Z",
    "speedbook snapshot remove aa-kimi-k2-6 20261130T060000Z-45061be0552a.html --reason typo",
    "speedbook snapshot verify",
)
ACTION_EXAMPLES = {
    "add": (
        "speedbook snapshot add aa-kimi-k2-6 page.html --retrieved-at 2026-11-30T06:00:00Z "
        '--note "saved from the browser"',
        "speedbook snapshot add openrouter models.json --url https://openrouter.ai/api/v1/models",
    ),
    "list": (
        "speedbook snapshot list                  # every source, oldest first",
        "speedbook snapshot list aa-kimi-k2-6",
    ),
    "verify": ("speedbook snapshot verify",),
    "remove": (
        "speedbook snapshot remove aa-kimi-k2-6 20261130T060000Z-45061be0552a.html "
        '--reason "a typo in the capture"',
    ),
}


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
    add.add_argument(
        "--force",
        action="store_true",
        help="store the file even if the source's parser cannot read it (a build then rejects "
        "it and reads the source from its last good snapshot); streamed, never read whole",
    )
    listing = actions.add_parser("list", help="list stored snapshots, oldest first")
    listing.add_argument(
        "source_id",
        nargs="?",
        metavar="SOURCE_ID",
        help="only this source (in the registry, or with a folder in the store)",
    )
    actions.add_parser("verify", help="check every snapshot's bytes against its sha256")
    remove = actions.add_parser(
        "remove",
        help="withdraw a snapshot stored by mistake: out of every later build, bytes kept",
    )
    remove.add_argument("source_id", metavar="SOURCE_ID", help="the snapshot's source")
    remove.add_argument(
        "snapshot_id",
        metavar="SNAPSHOT_ID",
        help="its file name or id, as `snapshot list` prints it (SOURCE_ID/FILE)",
    )
    remove.add_argument("--reason", default="", help="why, kept in the withdrawal record")
    for action, examples in ACTION_EXAMPLES.items():
        with_examples(actions.choices[action], examples)


def _source(settings: Settings, source_id: str) -> Source:
    try:
        sources = load_registry(settings.registry)
    except RegistryError as error:
        raise CommandError(str(error)) from None
    if source_id not in sources:
        raise CommandError(unknown_sources([source_id], sources))
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


def _open(settings: Settings) -> Store:
    try:
        return open_store(settings.snapshot_store)
    except SnapshotError as error:
        raise CommandError(f"--snapshots: {error}") from None


def _report_cleaned(store: Store) -> None:
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


def _check_parses(
    settings: Settings,
    source: Source,
    data: bytes,
    url: str,
    retrieved_at: datetime,
    content_type: str,
    path: Path,
) -> None:
    """Refuse bytes the source's parser rejects, with the parser's own message."""
    from pipeline.extract import PARSERS
    from pipeline.sources.reviewed import ReviewedFiles
    from pipeline.warehouse.staging import parse_problem

    digest = sha256_hex(data)
    extension = FORMATS[source.format].extension_for(content_type)
    meta = SnapshotMeta(
        source_id=source.id,
        url=url,
        retrieved_at=format_utc(retrieved_at),
        sha256=digest,
        size=len(data),
        content_type=content_type,
        obtained_by="manual",
        file=snapshot_file_name(retrieved_at, digest, extension),
    )
    reviewed = None
    if PARSERS[source.format].reads:  # claim pages and compilations are read through them
        try:
            reviewed = ReviewedFiles.load(settings.metadata)
        except (OSError, ValueError) as error:
            raise CommandError(f"cannot read the reviewed files to check {path}: {error}") from None
    problem = parse_problem(meta, source, data, reviewed)
    if problem is not None:
        reason = problem.removeprefix(f"{meta.snapshot_id}: ")
        raise CommandError(
            f"{path}: the {source.format} parser cannot read it: {reason}; nothing stored "
            "(--force stores it anyway)"
        )


def add(args: argparse.Namespace, settings: Settings) -> int:
    source = _source(settings, args.source_id)
    retrieved_at = _retrieved_at(args.retrieved_at)
    url = source.url if args.url is None else args.url
    problem = url_problem(url)
    if problem:
        raise CommandError(f"--url {url_for_message(url)} {problem}")
    spec = FORMATS[source.format]
    guessed, encoding = mimetypes.guess_type(args.file.name)
    if encoding is not None:  # 'x.json.gz' holds gzip bytes, whatever is inside them
        guessed = "application/gzip" if encoding == "gzip" else "application/octet-stream"
    content_type = args.content_type or guessed or EXTENSION_CONTENT_TYPES[spec.extension]
    store = _open(settings)
    with _open_capture(args.file) as reader:
        if not args.force:
            # read as a build would read it (whole, in memory): refused before anything is stored
            data = reader.read(MAX_SNAPSHOT_BYTES + 1)
            _check_parses(settings, source, data, url, retrieved_at, content_type, args.file)
            reader = io.BytesIO(data)
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


def _listed_source(settings: Settings, store: Store, source_id: str) -> str:
    """A source id to list: a slug (never a path), with snapshots in the store (a folder, for
    the local store) or in the registry. Snapshots are enough, so a source removed from the
    registry can still be listed."""
    try:
        check_source_id(source_id)
    except SnapshotError as error:
        try:
            hint = did_you_mean(source_id, load_registry(settings.registry))
        except RegistryError:
            hint = ""
        raise CommandError(f"{error}{hint}") from None
    if is_local(store):
        present = (settings.raw_dir / source_id).is_dir()
    else:
        present = bool(store.list(source_id, errors=[], include_withdrawn=True))
    if not present:
        _source(settings, source_id)  # unknown: a clear error rather than an empty listing
    return source_id


def listing(args: argparse.Namespace, settings: Settings) -> int:
    errors: list[str] = []
    store = _open(settings)
    try:
        source_id = (
            None if args.source_id is None else _listed_source(settings, store, args.source_id)
        )
        snapshots, withdrawals = store.list_and_withdrawals(source_id, errors=errors)
    except SnapshotError as error:
        raise CommandError(str(error)) from None
    _report_cleaned(store)
    withdrawn = {w.snapshot_id: w for w in withdrawals}
    everything = sorted(
        [*snapshots, *(w.meta for w in withdrawals)],
        key=lambda m: (m.retrieved_at, m.source_id, m.file),
    )
    for meta in everything:
        line = f"{meta.retrieved_at}  {meta.obtained_by:<13} {meta.size:>9}  {meta.snapshot_id}"
        withdrawal = withdrawn.get(meta.snapshot_id)
        if withdrawal is not None:
            why = f": {withdrawal.reason}" if withdrawal.reason else ""
            line += f"  (withdrawn {withdrawal.withdrawn_at}{why})"
        print(line)
    if source_id is not None and not everything and not errors:
        print(f"no snapshot of {source_id} yet", file=sys.stderr)
    for error in errors:
        print(f"warning: {error}", file=sys.stderr)
    return 1 if errors else 0


def verify_all(_args: argparse.Namespace, settings: Settings) -> int:
    """Read every snapshot's bytes again (on S3: every object) and check its sha256."""
    try:
        checked, problems = verify(_open(settings))
    except SnapshotError as error:
        raise CommandError(str(error)) from None
    for problem in problems:
        print(f"damaged: {problem}", file=sys.stderr)
    print(f"{checked} snapshots checked, {len(problems)} problem(s)")
    return 1 if problems else 0


def remove(args: argparse.Namespace, settings: Settings) -> int:
    """Withdraw a snapshot: a marker beside its record; its bytes and record stay."""
    store = _open(settings)
    try:
        source_id = _listed_source(settings, store, args.source_id)
        meta = store.find(source_id, args.snapshot_id)
        withdrawal = store.withdraw(meta, " ".join(args.reason.split()), datetime.now(UTC))
    except SnapshotError as error:
        raise CommandError(str(error)) from None
    except OSError as error:
        raise CommandError(f"cannot withdraw {args.snapshot_id}: {error}") from None
    print(
        f"withdrawn {meta.snapshot_id} at {withdrawal.withdrawn_at}: later builds leave it out "
        "(its bytes and record stay)"
    )
    return 0


def run(args: argparse.Namespace, settings: Settings) -> int:
    actions = {"add": add, "list": listing, "verify": verify_all, "remove": remove}
    return actions[args.action](args, settings)

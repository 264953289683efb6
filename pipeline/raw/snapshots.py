"""The raw snapshot store: bytes exactly as received, with a provenance record beside each file.

Layout: ``<raw>/<source_id>/<YYYYMMDDTHHMMSSZ>-<sha256[:12]>.<ext>`` plus ``<same>.meta.json``.
Identical bytes for one source are stored once. When a page comes back to bytes it had before
(A, then B, then A again), a new metadata record points at the old bytes (`bytes_file`), so the
timeline says A is current again without a second copy.
The data file is written before its metadata and both are renamed into place, so a reader never
sees a snapshot whose bytes are incomplete. Both are readable by everyone the umask allows (0644
under the usual 022). A metadata record is checked field by field when read; a bad one is an
error naming its file, and a listing that collects errors skips just that snapshot.

Bytes are streamed into a temporary file (`.tmp-*`, hashed while copied, at most
MAX_SNAPSHOT_BYTES). A writer holds a shared flock on the folder while its temporary file exists;
an exclusive flock taken without waiting therefore proves that no writer is live there, and
under it an add or a listing deletes the temporary files killed writers left (the kernel drops a
dead writer's lock), as the publisher does with its folders.

A snapshot stored by mistake is withdrawn, never deleted: ``<same>.withdrawn.json`` beside its
record says when and why; listings and builds leave it out, its bytes and record stay.

Bytes of COMPRESS_FROM or more are stored gzip-compressed, as ``<file>.gz`` (a half-hourly poll
bundle is megabytes of repetitive JSON, a tenth of that compressed); the record's sha256 and size
stay those of the bytes as received, and reading decompresses under the same cap as a plain
file. Smaller snapshots, and every snapshot stored before compression, stay plain files.
"""

from __future__ import annotations

import errno
import fcntl
import functools
import hashlib
import io
import json
import os
import re
import stat
import tempfile
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

import orjson

from pipeline.schema.vocabulary import OBTAINED_BY, TIME_BOUNDS
from pipeline.sources.registry import SLUG
from pipeline.support.faults import pause_point
from pipeline.support.file_keys import FileKey, file_key
from pipeline.support.sizes import format_size
from pipeline.support.text import url_for_message, url_problem

META_SUFFIX = ".meta.json"
# `<file>.withdrawn.json` beside a record: the snapshot was withdrawn by hand (when, why). Its
# bytes and record stay for provenance; listings leave it out unless asked.
WITHDRAWN_SUFFIX = ".withdrawn.json"
TMP_PREFIX = ".tmp-"  # a file being written; hidden, so no listing takes it for a snapshot
COPY_CHUNK = 1 << 20
SHA256 = re.compile(r"[0-9a-f]{64}")
# What is read of one store file: a record is a few hundred bytes; a snapshot's bytes are capped
# where they come in (25 MB from the web, MAX_SNAPSHOT_BYTES by hand).
MAX_RECORD_BYTES = 64_000
MAX_SNAPSHOT_BYTES = 256_000_000
MAX_INDEX_BYTES = 256_000_000  # the listing cache: a few hundred bytes per record
COMPRESSED_SUFFIX = ".gz"  # `<file>.gz`: the snapshot's bytes, gzip-compressed
COMPRESS_FROM = 64 * 1024  # smaller snapshots gain little and stay plain (readable with less)
COMPRESS_LEVEL = 6
# No snapshot is older than the web; an earlier retrieval time is a typo (0001-01-01, 0026-...).
EARLIEST_RETRIEVAL = datetime(1990, 1, 1, tzinfo=UTC)


class SnapshotError(ValueError):
    """A snapshot cannot be stored or read; the message names the snapshot."""


class SnapshotDamaged(SnapshotError):
    """The bytes on disk no longer match the sha256 recorded when they were stored."""


@dataclass(frozen=True)
class SnapshotMeta:
    source_id: str
    url: str
    retrieved_at: str  # ISO 8601, UTC, "Z" suffix, second precision
    sha256: str
    size: int
    content_type: str
    obtained_by: str
    file: str
    note: str = ""
    http: dict[str, str] = field(default_factory=dict)
    bytes_file: str = ""  # set when this record re-uses an older snapshot's bytes
    # obtained_by "reconstructed" only: the document the bytes were rebuilt from
    reconstructed_from: dict[str, str | None] | None = None
    # "exact", or "lower_bound" when the capture time was not recorded and retrieved_at is the
    # earliest it can have been (a time the response itself gives)
    retrieved_at_bound: str = "exact"

    @property
    def data_file(self) -> str:
        return self.bytes_file or self.file

    @property
    def snapshot_id(self) -> str:
        return f"{self.source_id}/{self.file}"

    @property
    def retrieved(self) -> datetime:
        return parse_utc(self.retrieved_at)

    def to_json(self) -> str:
        record = asdict(self)
        if not record["bytes_file"]:
            del record["bytes_file"]  # keeps the common record as it always was
        if record["reconstructed_from"] is None:
            del record["reconstructed_from"]
        if record["retrieved_at_bound"] == "exact":
            del record["retrieved_at_bound"]  # keeps the common record as it always was
        return json.dumps(record, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


@dataclass(frozen=True)
class AddResult:
    meta: SnapshotMeta
    created: bool
    skipped: tuple[str, ...] = ()  # the source's unreadable records, left out of the comparison


@dataclass(frozen=True)
class Withdrawal:
    """A snapshot taken out of every later build by hand (`speedbook snapshot remove`)."""

    meta: SnapshotMeta
    withdrawn_at: str  # ISO 8601, UTC, "Z"
    reason: str

    @property
    def snapshot_id(self) -> str:
        return self.meta.snapshot_id

    @property
    def withdrawn(self) -> datetime:
        return parse_utc(self.withdrawn_at)


class TimeOutOfRange(ValueError):
    """A well-formed time that has no UTC equivalent (year 1 or 9999 with an offset)."""


def parse_utc(text: str) -> datetime:
    """Parse ISO 8601; a naive value is taken as UTC. Raises ValueError on anything else,
    including a time whose UTC equivalent falls outside years 1-9999 (TimeOutOfRange)."""
    value = datetime.fromisoformat(text.strip().replace("z", "Z"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC).replace(microsecond=0)
    except OverflowError:  # e.g. 0001-01-01T00:00:00+05:00: callers expect only ValueError
        raise TimeOutOfRange(f"{text!r} is out of range") from None


def snapshot_file_name(retrieved_at: datetime, digest: str, extension: str) -> str:
    """The data file's name in its source folder: ``<YYYYMMDDTHHMMSSZ>-<sha256[:12]>.<ext>``."""
    stamp = format_utc(retrieved_at).replace("-", "").replace(":", "")
    return f"{stamp}-{digest[:12]}.{extension.lstrip('.')}"


def format_utc(value: datetime) -> str:
    """``YYYY-MM-DDTHH:MM:SSZ``, the year always four digits (strftime's %Y drops the zeros of
    year 1 on Linux, and such a time cannot be parsed back)."""
    return value.astimezone(UTC).replace(microsecond=0, tzinfo=None).isoformat() + "Z"


def retrieval_problem(retrieved_at: datetime) -> str | None:
    """Why no snapshot can have been retrieved at this time, or None."""
    if retrieved_at < EARLIEST_RETRIEVAL:
        return (
            f"is before {format_utc(EARLIEST_RETRIEVAL)[:10]}: no page was captured that early "
            "(a typo?)"
        )
    return None


_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a plain file")


def read_store_file(path: str | os.PathLike[str], max_bytes: int, *, tail: bool = False) -> bytes:
    """The bytes of one file of the store, read safely whatever sits under its name.

    The last component is never followed (O_NOFOLLOW: a link to /dev/zero is refused, not
    read) and the open never blocks (O_NONBLOCK: a FIFO is refused, not waited on); anything but a
    regular file is refused, and at most `max_bytes` are read: a larger file is refused, or with
    `tail` its last `max_bytes` are returned. Raises OSError (FileNotFoundError when absent)."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise OSError(errno.ELOOP, "a symbolic link, not followed") from None
        raise
    try:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, f"not a regular file ({_kind(info.st_mode)})")
        if info.st_size > max_bytes:
            if not tail:
                raise OSError(errno.EFBIG, f"larger than {format_size(max_bytes)}")
            os.lseek(handle, info.st_size - max_bytes, os.SEEK_SET)
        chunks: list[bytes] = []
        left = max_bytes + 1  # one byte more than allowed proves a file that grew meanwhile
        while left > 0 and (chunk := os.read(handle, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
        if left <= 0 and not tail:
            raise OSError(errno.EFBIG, f"larger than {format_size(max_bytes)}")
        data = b"".join(chunks)
        return data[-max_bytes:] if tail else data
    finally:
        os.close(handle)


def still_verified(
    verified: tuple[str, FileKey] | None, meta: SnapshotMeta, info: os.stat_result
) -> bool:
    """Whether bytes found to hash to a sha256 (`verified`: that sha256 and the file's key then)
    still stand without reading them again: the record names that sha256, and the data file
    (`info`, stat'ed without following a link) is a plain file with that key."""
    if verified is None:
        return False
    sha256, key = verified
    return sha256 == meta.sha256 and stat.S_ISREG(info.st_mode) and file_key(info) == tuple(key)


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def compress(data: bytes) -> bytes:
    """The gzip form the store keeps of large snapshots: no name and no time in the header, so
    the same bytes always compress to the same file."""
    packer = _packer()
    return packer.compress(data) + packer.flush()


def _packer() -> zlib._Compress:
    return zlib.compressobj(COMPRESS_LEVEL, zlib.DEFLATED, 31)  # 31: a gzip header, no name


def decompress(data: bytes, max_bytes: int) -> bytes:
    """The bytes a `compress`ed file holds, at most `max_bytes` of them: output stops one byte
    past the cap, so a gzip bomb costs no more than a file of the cap. Raises OSError when the
    file is not one whole gzip stream, holds more than the cap, or trails other bytes."""
    unpacker = zlib.decompressobj(31)
    try:
        out = unpacker.decompress(data, max_bytes + 1)
    except zlib.error as error:
        raise OSError(errno.EINVAL, f"not a readable gzip file ({error})") from None
    if len(out) > max_bytes:
        raise OSError(errno.EFBIG, f"decompresses to more than {max_bytes:,} bytes")
    if not unpacker.eof:
        raise OSError(errno.EINVAL, "not a whole gzip file (truncated)")
    if unpacker.unused_data:
        raise OSError(errno.EINVAL, "bytes after the end of its gzip stream")
    return out


@functools.cache
def _file_mode() -> int:
    """0o666 less the umask: what `open()` would give. mkstemp makes 0600 files, which would hide
    fetched and hand-captured snapshots from every other user of the warehouse."""
    try:  # Linux reports the umask without changing it (os.umask would, for every thread)
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


@contextmanager
def _writing(directory: Path) -> Iterator[None]:
    """Hold a shared flock on `directory` while a temporary file of ours exists in it."""
    handle = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(handle, fcntl.LOCK_SH)
        yield
    finally:
        os.close(handle)  # releases the lock


def clean_leftovers(directory: Path) -> list[Path]:
    """Delete the temporary files killed writers left in `directory`, if no writer is live there
    (an exclusive flock, not waited for: a live writer holds it shared). Returns what was
    deleted; a store that cannot be written is left as it is."""
    try:
        names = [entry.name for entry in os.scandir(directory) if entry.name.startswith(TMP_PREFIX)]
    except OSError:
        return []
    if not names:
        return []
    removed: list[Path] = []
    try:
        handle = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return []
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        for name in names:
            path = directory / name
            with suppress(FileNotFoundError):
                path.unlink()
                removed.append(path)
    except OSError:  # BlockingIOError: a writer is live; PermissionError: a read-only store
        pass
    finally:
        os.close(handle)
    return removed


@contextmanager
def _temporary(directory: Path, suffix: str) -> Iterator[tuple[BinaryIO, Path]]:
    """A new temporary file in `directory`, readable as the umask allows, deleted on the way out
    unless the caller renamed it; the folder's writer lock is held meanwhile."""
    directory.mkdir(parents=True, exist_ok=True)
    with _writing(directory):
        handle, name = tempfile.mkstemp(dir=directory, prefix=TMP_PREFIX, suffix=suffix)
        path = Path(name)
        try:
            os.fchmod(handle, _file_mode())
            with os.fdopen(handle, "wb") as out:
                yield out, path
        finally:
            path.unlink(missing_ok=True)


def _durable_rename(out: BinaryIO, tmp: Path, path: Path) -> None:
    out.flush()
    os.fsync(out.fileno())
    os.replace(tmp, path)


def _atomic_write(path: Path, data: bytes) -> None:
    with _temporary(path.parent, path.suffix) as (out, tmp):
        out.write(data)
        _durable_rename(out, tmp, path)


def _compress_into(out: BinaryIO, tmp: Path, path: Path) -> None:
    """Compress the temporary file `tmp` (being written through `out`) into `path`, durably,
    a chunk at a time."""
    out.flush()
    packer = _packer()
    with _temporary(path.parent, COMPRESSED_SUFFIX) as (packed, packed_tmp), tmp.open("rb") as raw:
        while chunk := raw.read(COPY_CHUNK):
            packed.write(packer.compress(chunk))
        packed.write(packer.flush())
        _durable_rename(packed, packed_tmp, path)


def write_data_file(path: Path, data: bytes) -> Path:
    """Write a new snapshot's bytes at `path` (its data file in a source folder) as the store
    keeps them: compressed beside the name (`<path>.gz`) when COMPRESS_FROM or larger. Not
    durable (no fsync) and not locked: for writers of disposable stores (the benchmark corpus),
    which add the record after. Returns the file written."""
    if len(data) >= COMPRESS_FROM:
        path = path.with_name(path.name + COMPRESSED_SUFFIX)
        data = compress(data)
    path.write_bytes(data)
    return path


class _Copied:
    """What a stream copied into a temporary file held: its sha256 and size."""

    def __init__(self) -> None:
        self.digest = hashlib.sha256()
        self.size = 0


def _copy(reader: BinaryIO, out: BinaryIO, source_id: str) -> _Copied:
    """Copy `reader` into `out`, hashing as it goes, refusing more than MAX_SNAPSHOT_BYTES."""
    copied = _Copied()
    while chunk := reader.read(COPY_CHUNK):
        copied.size += len(chunk)
        if copied.size > MAX_SNAPSHOT_BYTES:
            raise SnapshotError(
                f"{source_id}: the bytes are larger than {format_size(MAX_SNAPSHOT_BYTES)}, "
                "the store's cap for one snapshot"
            )
        copied.digest.update(chunk)
        out.write(chunk)
        if copied.size == len(chunk):
            pause_point("snapshot-copy")  # crash tests kill a writer here, mid-copy
    return copied


def check_source_id(source_id: str) -> str:
    """A source id names a folder of the store: only a slug, so `../x` cannot leave it."""
    if not isinstance(source_id, str) or not SLUG.fullmatch(source_id):
        raise SnapshotError(
            f"{source_id!r} is not a source id (a lower-case slug: a-z, 0-9, single hyphens)"
        )
    return source_id


def _plain_name(name: str) -> bool:
    """A file name inside one source folder: no separator, not hidden, not `.`/`..`."""
    return bool(name) and "/" not in name and "\\" not in name and not name.startswith(".")


# What a reconstructed snapshot's `reconstructed_from` holds: the document's title, and where
# known its address and the id (<source_id>/<file>) of the snapshot of it in this store.
RECONSTRUCTED_FROM = ("title", "url", "snapshot")
# Optional: how the document gives the figures the reconstruction carries ("approx": it rounds
# them); every figure read from the reconstruction carries that qualifier.
RECONSTRUCTED_QUALIFIERS = ("approx",)


def reconstruction_problem(obtained_by: str, reconstructed_from: object) -> str | None:
    """Why a record's `reconstructed_from` does not fit its `obtained_by`, or None: a
    reconstructed snapshot names the document it was rebuilt from, and no other snapshot does."""
    if obtained_by != "reconstructed":
        if reconstructed_from is not None:
            return "reconstructed_from is only for obtained_by 'reconstructed'"
        return None
    if not isinstance(reconstructed_from, dict):
        return "obtained_by 'reconstructed' needs reconstructed_from: {title, url, snapshot}"
    if sorted(k for k in reconstructed_from if k != "qualifier") != sorted(RECONSTRUCTED_FROM):
        return (
            f"reconstructed_from must have exactly the keys {', '.join(RECONSTRUCTED_FROM)} "
            "(and, optionally, qualifier)"
        )
    qualifier = reconstructed_from.get("qualifier")
    if qualifier is not None and qualifier not in RECONSTRUCTED_QUALIFIERS:
        return f"reconstructed_from.qualifier {qualifier!r} is not one of approx"
    title, url, snapshot = (reconstructed_from[key] for key in RECONSTRUCTED_FROM)
    if not isinstance(title, str) or not title.strip():
        return "reconstructed_from.title must be a non-empty string"
    if url is not None and (problem := url_problem(url)):
        return f"reconstructed_from.url {url_for_message(str(url))} {problem}"
    if snapshot is not None:
        source, _, name = snapshot.partition("/") if isinstance(snapshot, str) else ("", "", "")
        if not SLUG.fullmatch(source) or not _plain_name(name):
            return f"reconstructed_from.snapshot {snapshot!r} is not a <source_id>/<file> id"
    return None


def _check_record(record: object, folder: str) -> SnapshotMeta:
    """A metadata record as read from disk, checked field by field: a hand-edited or damaged
    record must be reported and skipped, never reach the sort, the ages or the build's dates."""
    if not isinstance(record, dict):
        raise ValueError(f"expected a JSON object, got {type(record).__name__}")
    try:
        meta = SnapshotMeta(**record)
    except TypeError as error:  # a missing or unknown field
        raise ValueError(str(error).replace("SnapshotMeta.__init__() ", "")) from None
    texts = ("source_id", "url", "retrieved_at", "sha256", "content_type", "obtained_by", "file")
    for name in (*texts, "note", "bytes_file"):
        if not isinstance(getattr(meta, name), str):
            raise ValueError(f"{name} must be a string, got {getattr(meta, name)!r}")
    if meta.source_id != folder:
        raise ValueError(f"source_id {meta.source_id!r} does not match its folder {folder!r}")
    problem = url_problem(meta.url)
    if problem:
        raise ValueError(f"url {url_for_message(meta.url)} {problem}")
    try:
        retrieved = parse_utc(meta.retrieved_at)
    except ValueError:
        raise ValueError(f"retrieved_at {meta.retrieved_at!r} is not an ISO 8601 time") from None
    problem = retrieval_problem(retrieved)
    if problem:
        raise ValueError(f"retrieved_at {meta.retrieved_at!r} {problem}")
    retrieved_at = format_utc(retrieved)
    if not SHA256.fullmatch(meta.sha256):
        raise ValueError(f"sha256 {meta.sha256!r} is not 64 lower-case hex digits")
    if isinstance(meta.size, bool) or not isinstance(meta.size, int) or meta.size < 0:
        raise ValueError(f"size {meta.size!r} is not a non-negative integer")
    if meta.obtained_by not in OBTAINED_BY:
        raise ValueError(f"obtained_by {meta.obtained_by!r} is not one of {', '.join(OBTAINED_BY)}")
    if meta.retrieved_at_bound not in TIME_BOUNDS:
        raise ValueError(
            f"retrieved_at_bound {meta.retrieved_at_bound!r} is not one of {', '.join(TIME_BOUNDS)}"
        )
    problem = reconstruction_problem(meta.obtained_by, meta.reconstructed_from)
    if problem:
        raise ValueError(problem)
    if not _plain_name(meta.file) or (meta.bytes_file and not _plain_name(meta.bytes_file)):
        raise ValueError("file and bytes_file must be plain file names in the source's folder")
    if not isinstance(meta.http, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in meta.http.items()
    ):
        raise ValueError("http must map header names to strings")
    # One spelling of the time, so that sorting by the text sorts by time.
    return replace(meta, retrieved_at=retrieved_at)


def record_from_bytes(data: bytes, where: str, folder: str, name: str) -> SnapshotMeta:
    """A metadata record read from the store (`name` in the source folder `folder`; `where`
    says where, for messages), checked field by field; SnapshotError naming `where` when it is
    not a record, not valid, or names another file."""
    try:
        record = json.loads(data.decode("utf-8"))
    except ValueError as error:  # UnicodeDecodeError and JSONDecodeError alike
        raise SnapshotError(f"{where}: unreadable snapshot metadata: {error}") from None
    try:
        meta = _check_record(record, folder)
    except ValueError as error:
        raise SnapshotError(f"{where}: invalid snapshot metadata: {error}") from None
    if name != meta.file + META_SUFFIX:
        raise SnapshotError(f"{where}: metadata names another file ({meta.file})")
    return meta


def withdrawal_from_bytes(meta: SnapshotMeta, data: bytes | None, name: str) -> Withdrawal:
    """A withdrawal marker as read (`data`; None when it could not be read at all); a marker
    that cannot be read still withdraws its snapshot (its presence is what counts), with a
    reason that says so."""
    try:
        if data is None:
            raise OSError("cannot be read")
        record = json.loads(data.decode("utf-8"))
        withdrawn_at = format_utc(parse_utc(record["withdrawn_at"]))
        reason = record.get("reason", "")
        if not isinstance(reason, str):
            raise ValueError("reason is not a string")
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        return Withdrawal(meta, meta.retrieved_at, f"(unreadable marker {name}: {error})")
    return Withdrawal(meta, withdrawn_at, reason)


def withdrawal_record(meta: SnapshotMeta, reason: str, when: datetime) -> tuple[Withdrawal, bytes]:
    """The withdrawal of `meta`, and the bytes of its marker."""
    record = {"snapshot_id": meta.snapshot_id, "withdrawn_at": format_utc(when), "reason": reason}
    text = json.dumps(record, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    return Withdrawal(meta, record["withdrawn_at"], reason), text.encode("utf-8")


def addition_problem(
    source_id: str,
    url: str,
    retrieved_at: datetime,
    obtained_by: str,
    reconstructed_from: dict[str, str | None] | None,
) -> str | None:
    """Why a new snapshot cannot be stored with this provenance, or None: the rules every
    record is read with, so that nothing is stored that no reader accepts."""
    if obtained_by not in OBTAINED_BY:
        return f"obtained_by must be one of {OBTAINED_BY}, got {obtained_by!r}"
    problem = reconstruction_problem(obtained_by, reconstructed_from)
    if problem:
        return f"{source_id}: {problem}"
    problem = url_problem(url)
    if problem:
        return f"{source_id}: url {url_for_message(url)} {problem}"
    problem = retrieval_problem(retrieved_at)
    if problem:
        return f"{source_id}: retrieved_at {format_utc(retrieved_at)} {problem}"
    return None


def already_stored(
    snapshots: list[SnapshotMeta], digest: str, retrieved_at: datetime
) -> SnapshotMeta | None:
    """The snapshot that already stands for these bytes (`snapshots`: the source's, oldest
    first): the newest with this sha256, when it is the source's newest or when the new one
    would be no later than the newest. None: a new record is due."""
    same = [m for m in snapshots if m.sha256 == digest]
    newest = snapshots[-1] if snapshots else None
    if same and newest is not None and (same[-1] == newest or retrieved_at <= newest.retrieved):
        return same[-1]
    return None


def new_record(
    snapshots: list[SnapshotMeta],
    source_id: str,
    digest: str,
    size: int,
    *,
    url: str,
    retrieved_at: datetime,
    content_type: str,
    obtained_by: str,
    extension: str,
    note: str,
    http: dict[str, str] | None,
    reconstructed_from: dict[str, str | None] | None,
) -> SnapshotMeta:
    """The record of a new snapshot of these bytes. Bytes seen before (the page came back to
    them) get a record pointing at the older copy (`bytes_file`), not a second copy."""
    same = [m for m in snapshots if m.sha256 == digest]
    reused = same[-1] if same else None
    if reused is not None:
        note = (note + " " if note else "") + f"(same bytes as {reused.file})"
    return SnapshotMeta(
        source_id=source_id,
        url=url,
        retrieved_at=format_utc(retrieved_at),
        sha256=digest,
        size=size,
        content_type=content_type,
        obtained_by=obtained_by,
        file=snapshot_file_name(retrieved_at, digest, extension),
        note=note,
        http=dict(sorted((http or {}).items())),
        bytes_file=reused.data_file if reused else "",
        reconstructed_from=reconstructed_from,
    )


def taken_name_problem(
    source_id: str, name: str, withdrawn: bool, recorded: bool, where: str
) -> str | None:
    """Why a new snapshot cannot take the name `name` (its record is `where`): a withdrawn
    snapshot holds it, or a record no listing could read."""
    if withdrawn:
        return (
            f"{source_id}/{name} holds these bytes at this time and was withdrawn; "
            "store them again with another --retrieved-at"
        )
    if recorded:  # only an unreadable record gets here
        return f"{where} exists but cannot be read; move it away to store these bytes at this time"
    return None


def verified_bytes(meta: SnapshotMeta, data: bytes, compressed: bool, where: str) -> bytes:
    """The snapshot's bytes from what its data file holds (`compressed`: the `.gz` one,
    decompressed never to more than the recorded size), checked against the recorded sha256;
    SnapshotDamaged naming the snapshot and `where` otherwise."""
    if compressed:
        try:
            data = decompress(data, min(meta.size, MAX_SNAPSHOT_BYTES))
        except OSError as error:
            reason = error.strerror if error.filename is None and error.strerror else error
            raise SnapshotDamaged(f"{meta.snapshot_id}: cannot read {where}: {reason}") from None
    if sha256_hex(data) != meta.sha256:
        raise SnapshotDamaged(
            f"{meta.snapshot_id}: sha256 mismatch (recorded {meta.sha256[:12]}…, "
            f"on disk {sha256_hex(data)[:12]}…): the file was changed or damaged"
        )
    return data


def stored_names(meta: SnapshotMeta) -> tuple[str, str]:
    """Where a snapshot's bytes may be in its source's folder, in the order they are looked for:
    its plain data file, else the compressed one beside it."""
    return meta.data_file, meta.data_file + COMPRESSED_SUFFIX


class StoreBase:
    """A snapshot store, whatever holds it: the type callers use (`pipeline.raw.store.Store`),
    so they do not know which they have. What every store does the same way comes from its
    backend's `add_stream` (store bytes and their record), `_scan` (every readable record and
    the withdrawn ones) and `_withdrawal` (a withdrawn snapshot's marker as read); the rest each
    backend does its own way: the local folder (SnapshotStore) and an S3 prefix
    (pipeline.raw.s3_store). Callers use `pipeline.raw.store.open_store`."""

    cleaned: list[Path]  # temporary files of killed writers deleted (the local store only)

    @property
    def location(self) -> str:
        """Where the store is, as `open_store` takes it."""
        raise NotImplementedError

    def read(self, meta: SnapshotMeta) -> bytes:
        raise NotImplementedError

    def withdraw(self, meta: SnapshotMeta, reason: str, when: datetime) -> Withdrawal:
        raise NotImplementedError

    def withdrawal(self, meta: SnapshotMeta) -> Withdrawal | None:
        raise NotImplementedError

    def has_record(self, meta: SnapshotMeta) -> bool:
        raise NotImplementedError

    def has_snapshots(self) -> bool:
        raise NotImplementedError

    def stat_of(self, meta: SnapshotMeta) -> os.stat_result | None:
        raise NotImplementedError

    def stats_of(self, metas: Iterable[SnapshotMeta]) -> list[os.stat_result | None]:
        raise NotImplementedError

    def add_stream(
        self,
        source_id: str,
        reader: BinaryIO,
        *,
        url: str,
        retrieved_at: datetime,
        content_type: str,
        obtained_by: str,
        extension: str,
        note: str = "",
        http: dict[str, str] | None = None,
        reconstructed_from: dict[str, str | None] | None = None,
    ) -> AddResult:
        raise NotImplementedError

    def _scan(
        self, source_id: str | None, as_of: datetime | None, errors: list[str] | None
    ) -> tuple[list[SnapshotMeta], set[str]]:
        raise NotImplementedError

    def _withdrawal(self, meta: SnapshotMeta) -> Withdrawal:
        raise NotImplementedError

    def add(
        self,
        source_id: str,
        data: bytes,
        *,
        url: str,
        retrieved_at: datetime,
        content_type: str,
        obtained_by: str,
        extension: str,
        note: str = "",
        http: dict[str, str] | None = None,
        reconstructed_from: dict[str, str | None] | None = None,
    ) -> AddResult:
        """Store `data` (bytes already in memory, such as a fetched body); see add_stream."""
        return self.add_stream(
            source_id,
            io.BytesIO(data),
            url=url,
            retrieved_at=retrieved_at,
            content_type=content_type,
            obtained_by=obtained_by,
            extension=extension,
            note=note,
            http=http,
            reconstructed_from=reconstructed_from,
        )

    def list(
        self,
        source_id: str | None = None,
        *,
        as_of: datetime | None = None,
        errors: list[str] | None = None,
        include_withdrawn: bool = False,
    ) -> list[SnapshotMeta]:
        """Snapshots oldest first, without the withdrawn ones unless `include_withdrawn`.
        Unreadable metadata is skipped and reported into ``errors`` when given, otherwise
        raised."""
        found, withdrawn = self._scan(source_id, as_of, errors)
        if include_withdrawn or not withdrawn:
            return found
        return [meta for meta in found if meta.snapshot_id not in withdrawn]

    def withdrawals(
        self,
        source_id: str | None = None,
        *,
        as_of: datetime | None = None,
        errors: list[str] | None = None,
    ) -> list[Withdrawal]:
        """The withdrawn snapshots, oldest first, each with when and why it was withdrawn."""
        return self.list_and_withdrawals(source_id, as_of=as_of, errors=errors)[1]

    def list_and_withdrawals(
        self,
        source_id: str | None = None,
        *,
        as_of: datetime | None = None,
        errors: list[str] | None = None,
    ) -> tuple[list[SnapshotMeta], list[Withdrawal]]:
        """`list()` and `withdrawals()` from one scan of the store."""
        found, withdrawn = self._scan(source_id, as_of, errors)
        if not withdrawn:  # the common store: nothing to sort out of 110,000 records
            return found, []
        return (
            [meta for meta in found if meta.snapshot_id not in withdrawn],
            [self._withdrawal(meta) for meta in found if meta.snapshot_id in withdrawn],
        )

    def find(self, source_id: str, name: str) -> SnapshotMeta:
        """A snapshot of a source by its file name or its id (`<source_id>/<file>`), withdrawn
        ones included; raises SnapshotError naming what was asked for when there is none."""
        file = name.removeprefix(f"{source_id}/")
        errors: list[str] = []
        for meta in self.list(source_id, errors=errors, include_withdrawn=True):
            if meta.file == file:
                return meta
        raise SnapshotError(
            f"no snapshot {name!r} of source {source_id!r} "
            f"(see `speedbook snapshot list {source_id}`)"
        )

    def latest(self, source_id: str, *, as_of: datetime | None = None) -> SnapshotMeta | None:
        snapshots = self.list(source_id, as_of=as_of)
        return snapshots[-1] if snapshots else None


class SnapshotStore(StoreBase):
    def __init__(self, root: Path) -> None:
        self.root = root
        self.cleaned: list[Path] = []  # temporary files of killed writers this store deleted

    @property
    def location(self) -> str:
        """Where the store is, as `open_store` takes it: its folder."""
        return str(self.root)

    def source_dir(self, source_id: str) -> Path:
        return self.root / check_source_id(source_id)

    def add_stream(
        self,
        source_id: str,
        reader: BinaryIO,
        *,
        url: str,
        retrieved_at: datetime,
        content_type: str,
        obtained_by: str,
        extension: str,
        note: str = "",
        http: dict[str, str] | None = None,
        reconstructed_from: dict[str, str | None] | None = None,
    ) -> AddResult:
        """Store what `reader` yields as a new snapshot, unless the source already has these
        bytes as its newest (or at a later time). The bytes are copied into a temporary file and
        hashed as they come, never held in memory whole; more than MAX_SNAPSHOT_BYTES is refused.
        Temporary files of killed writers in the source's folder are deleted first."""
        problem = addition_problem(source_id, url, retrieved_at, obtained_by, reconstructed_from)
        if problem:
            raise SnapshotError(problem)
        directory = self.source_dir(source_id)
        if directory.is_dir():
            self.cleaned += clean_leftovers(directory)
        with _temporary(directory, "." + extension.lstrip(".")) as (out, tmp):
            copied = _copy(reader, out, source_id)
            if not copied.size:
                raise SnapshotError(f"{source_id}: refusing to store an empty snapshot")
            digest = copied.digest.hexdigest()
            # an unreadable old record skips only its snapshot, here as in every listing
            skipped: list[str] = []
            snapshots = self.list(source_id, errors=skipped)
            stored = already_stored(snapshots, digest, retrieved_at)
            if stored is not None:
                return AddResult(stored, created=False, skipped=tuple(skipped))
            meta = new_record(
                snapshots,
                source_id,
                digest,
                copied.size,
                url=url,
                retrieved_at=retrieved_at,
                content_type=content_type,
                obtained_by=obtained_by,
                extension=extension,
                note=note,
                http=http,
                reconstructed_from=reconstructed_from,
            )
            name = meta.file
            record = directory / (name + META_SUFFIX)
            problem = taken_name_problem(
                source_id,
                name,
                (directory / (name + WITHDRAWN_SUFFIX)).exists(),
                record.exists(),
                str(record),
            )
            if problem:
                raise SnapshotError(problem)
            if not meta.bytes_file:  # the bytes before the record that names them
                if copied.size >= COMPRESS_FROM:
                    _compress_into(out, tmp, directory / (name + COMPRESSED_SUFFIX))
                else:
                    _durable_rename(out, tmp, directory / name)
        pause_point("snapshot-record")  # crash tests stop a writer here: bytes in, no record yet
        _atomic_write(record, meta.to_json().encode("utf-8"))
        return AddResult(meta, created=True, skipped=tuple(skipped))

    def _read_meta(self, path: Path) -> SnapshotMeta:
        try:
            data = read_store_file(path, MAX_RECORD_BYTES)
        except OSError as error:
            reason = error.strerror if error.filename is None and error.strerror else error
            raise SnapshotError(f"{path}: unreadable snapshot metadata: {reason}") from None
        return record_from_bytes(data, str(path), path.parent.name, path.name)

    def withdraw(self, meta: SnapshotMeta, reason: str, when: datetime) -> Withdrawal:
        """Mark a snapshot withdrawn: `<file>.withdrawn.json` beside its record, written
        atomically. The bytes and the record are kept; no later build or listing uses it."""
        marker = self._marker_path(meta)
        if marker.exists() or marker.is_symlink():
            raise SnapshotError(f"{meta.snapshot_id} is already withdrawn ({marker})")
        withdrawal, data = withdrawal_record(meta, reason, when)
        _atomic_write(marker, data)
        return withdrawal

    def _withdrawal(self, meta: SnapshotMeta) -> Withdrawal:
        """A withdrawn snapshot's marker as read; a marker that cannot be read still withdraws
        its snapshot (the file's presence is what counts), with a reason that says so."""
        path = self._marker_path(meta)
        try:
            data: bytes | None = read_store_file(path, MAX_RECORD_BYTES)
        except OSError:
            data = None
        return withdrawal_from_bytes(meta, data, path.name)

    def has_snapshots(self) -> bool:
        """Whether `list()` would find anything: stops at the first readable record that is not
        withdrawn, so that a large store answers without being listed."""
        if not self.root.is_dir():
            return False
        for directory in sorted(self.root.iterdir()):
            if not directory.is_dir() or directory.name.startswith("."):
                continue
            names = {entry.name for entry in os.scandir(directory)}
            for name in sorted(names):
                if name.startswith(".") or not name.endswith(META_SUFFIX):
                    continue
                if name.removesuffix(META_SUFFIX) + WITHDRAWN_SUFFIX in names:
                    continue
                try:
                    self._read_meta(directory / name)
                except SnapshotError:
                    continue
                return True
        return False

    def withdrawal(self, meta: SnapshotMeta) -> Withdrawal | None:
        """The snapshot's withdrawal as the store holds it now, or None (one look on disk)."""
        return self._withdrawal(meta) if os.path.lexists(self._marker_path(meta)) else None

    def has_record(self, meta: SnapshotMeta) -> bool:
        """Whether the snapshot's metadata record is still in the store (one look on disk)."""
        return os.path.lexists(self.source_dir(meta.source_id) / (meta.file + META_SUFFIX))

    def _marker_path(self, meta: SnapshotMeta) -> Path:
        """Where the snapshot's withdrawal marker is (or would be)."""
        return self.source_dir(meta.source_id) / (meta.file + WITHDRAWN_SUFFIX)

    def _scan(
        self, source_id: str | None, as_of: datetime | None, errors: list[str] | None
    ) -> tuple[list[SnapshotMeta], set[str]]:
        """Every readable record (oldest first), and the ids of those withdrawn."""
        if source_id is None:
            directories: Iterable[Path] = (
                sorted(p for p in self.root.iterdir() if p.is_dir() and not p.name.startswith("."))
                if self.root.exists()
                else ()
            )
            if self.root.is_dir():  # the listing cache is written through a temporary file too
                self.cleaned += clean_leftovers(self.root)
        else:
            directories = (self.source_dir(source_id),)
        index = _MetaIndex.load(self.root)
        found: list[SnapshotMeta] = []
        withdrawn: set[str] = set()
        for directory in directories:
            if not directory.is_dir():
                continue
            entries = [entry.name for entry in os.scandir(directory)]
            if any(name.startswith(TMP_PREFIX) for name in entries):
                self.cleaned += clean_leftovers(directory)
            markers = {
                name.removesuffix(WITHDRAWN_SUFFIX)
                for name in entries
                if name.endswith(WITHDRAWN_SUFFIX) and not name.startswith(".")
            }
            names = sorted(
                name for name in entries if name.endswith(META_SUFFIX) and not name.startswith(".")
            )
            for name in names:
                try:
                    meta = index.get(directory.name, name) or index.put(
                        directory.name, name, self._read_meta(directory / name)
                    )
                except SnapshotError as error:
                    if errors is None:
                        raise
                    errors.append(str(error))
                    continue
                if as_of is None or meta.retrieved <= as_of:
                    found.append(meta)
                    if meta.file in markers:
                        withdrawn.add(meta.snapshot_id)
            index.keep_only(directory.name, names)
        index.save()
        found.sort(key=lambda m: (m.retrieved_at, m.source_id, m.file))
        return found, withdrawn

    def path_of(self, meta: SnapshotMeta) -> Path:
        """The file holding the snapshot's bytes: its plain data file, or when there is none
        (nothing at all under that name, not even a link) the compressed one beside it."""
        return Path(self._located(meta)[0])

    def stat_of(self, meta: SnapshotMeta) -> os.stat_result | None:
        """The status of `path_of`'s file, never following a link (what is read is what was
        looked at: the store refuses links); None when there is no such file."""
        return self._located(meta)[1]

    def stats_of(self, metas: Iterable[SnapshotMeta]) -> list[os.stat_result | None]:
        """`stat_of` of each snapshot, each stat made relative to its source's folder, opened
        once: no path walked per file (a year of pages' 120,000 files: 0.65 s by path, 0.35 s
        so). A folder that cannot be opened is looked at by path, as `stat_of` does."""
        folders: dict[str, int | None] = {}
        found: list[os.stat_result | None] = []
        try:
            for meta in metas:
                if meta.source_id not in folders:
                    path = os.path.join(self.root, check_source_id(meta.source_id))
                    try:
                        folders[meta.source_id] = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
                    except OSError:
                        folders[meta.source_id] = None
                folder = folders[meta.source_id]
                if folder is None:
                    found.append(self.stat_of(meta))
                    continue
                info = None
                for name in stored_names(meta):
                    try:
                        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
                        break
                    except OSError:
                        continue
                found.append(info)
        finally:
            for folder in folders.values():
                if folder is not None:
                    os.close(folder)
        return found

    def _located(self, meta: SnapshotMeta) -> tuple[str, os.stat_result | None]:
        # strings and one lstat per candidate: a build looks up every snapshot of the history,
        # and pathlib with an lexists then a stat took three times as long
        folder = os.path.join(self.root, check_source_id(meta.source_id))
        for name in stored_names(meta):
            candidate = os.path.join(folder, name)
            try:
                return candidate, os.stat(candidate, follow_symlinks=False)
            except OSError:
                continue
        return os.path.join(folder, meta.data_file), None

    def read(self, meta: SnapshotMeta) -> bytes:
        """The snapshot's bytes, verified against the recorded sha256 (decompressed first when
        stored compressed, never to more than the recorded size). SnapshotDamaged names what is
        wrong: missing, not a plain file, not whole gzip, too large, another sha256."""
        # path_of's choice, made by the opens themselves: a stat and a Path first cost a third
        # of the read of a page
        folder = os.path.join(self.root, check_source_id(meta.source_id))
        plain, compressed = (os.path.join(folder, name) for name in stored_names(meta))
        path = plain
        try:
            try:
                data = read_store_file(plain, MAX_SNAPSHOT_BYTES)
            except FileNotFoundError as missing:  # nothing under that name, not even a link
                path = compressed
                try:
                    data = read_store_file(compressed, MAX_SNAPSHOT_BYTES)
                except FileNotFoundError:
                    path = plain  # neither: the plain file is missing, as path_of says
                    raise missing from None
        except OSError as error:
            reason = error.strerror if error.filename is None and error.strerror else error
            raise SnapshotDamaged(f"{meta.snapshot_id}: cannot read {path}: {reason}") from None
        # never more than was received: a bomb stops one byte past the recorded size
        return verified_bytes(meta, data, path == compressed, path)


class _MetaIndex:
    """A cache of parsed metadata records, in `<raw>/.snapshot-index.json`.

    Metadata files are written once and never changed, so a record read before can be reused as
    long as its file is still listed; a large store's listing then costs a directory scan instead
    of reading every record again. The cache is only ever an optimisation: deleting it is safe,
    and a failed write is ignored."""

    # 2: records are validated before they are cached; 3: the URL rule of support.text.url_problem
    # (no credentials, no whitespace or markup); 4: obtained_by "reconstructed" and its
    # reconstructed_from (the bundled records were rewritten in place); 5: each record as the
    # list of its values in FIELDS order, not an object (a year of pages, 111,902 records:
    # 51 MB instead of 66, read in about half the time). Caches of another version are dropped.
    VERSION = 6
    NAME = ".snapshot-index.json"
    FIELDS = tuple(f.name for f in fields(SnapshotMeta))

    def __init__(self, root: Path, entries: dict[str, dict[str, list[object]]]) -> None:
        self.root = root
        self.entries = entries
        self.changed = False

    @classmethod
    def load(cls, root: Path) -> _MetaIndex:
        try:
            record = orjson.loads(read_store_file(root / cls.NAME, MAX_INDEX_BYTES))
            if (
                isinstance(record, dict)
                and record.get("version") == cls.VERSION
                and record.get("fields") == list(cls.FIELDS)
                and isinstance(record.get("entries"), dict)
            ):
                return cls(root, record["entries"])
        except (OSError, ValueError):
            pass
        return cls(root, {})

    def get(self, source: str, name: str) -> SnapshotMeta | None:
        values = self.entries.get(source, {}).get(name)
        if not isinstance(values, list) or len(values) != len(self.FIELDS):
            return None
        return SnapshotMeta(*values)  # type: ignore[arg-type]

    def put(self, source: str, name: str, meta: SnapshotMeta) -> SnapshotMeta:
        self.entries.setdefault(source, {})[name] = [getattr(meta, f) for f in self.FIELDS]
        self.changed = True
        return meta

    def keep_only(self, source: str, names: list[str]) -> None:
        known = self.entries.get(source)
        if known and len(known) != len(names):
            wanted = set(names)
            for name in [n for n in known if n not in wanted]:
                del known[name]
                self.changed = True

    def save(self) -> None:
        if not self.changed or not self.root.is_dir():
            return
        try:
            data = orjson.dumps(
                {"version": self.VERSION, "fields": self.FIELDS, "entries": self.entries}
            )
            _atomic_write(self.root / self.NAME, data)
        except (OSError, TypeError):  # TypeError: orjson refuses a value it cannot encode
            pass  # a read-only store still lists correctly, only more slowly

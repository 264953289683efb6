"""Fetch outcomes: an append-only JSON-lines log per source,
``<warehouse>/state/fetch/<source_id>.jsonl`` (pipeline/raw/state.py).

Every fetch of a source appends exactly one line, whatever happened, so "when did we last try,
and what went wrong" survives the process. Appends use O_APPEND with one write per line and an
fsync, so concurrent writers never interleave inside a line and a crash loses at most the line
being written; readers skip a torn line. Like every store file, a log is opened without
following a link or blocking on a FIFO, and only a regular file is read or appended to; a reader
reads at most its last MAX_LOG_BYTES (the newest outcomes, tens of thousands of lines).

The logs used to be kept in the snapshot store, ``<raw>/<source_id>/_outcomes.jsonl``, where every
fetch left an untracked file in the committed corpus. A log found there is adopted the first time
its source's log is read or written: its lines go first into the new log (none twice), then the
old file is removed, so no history is lost.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, fields
from datetime import UTC, datetime
from pathlib import Path

from pipeline.raw.snapshots import check_source_id, format_utc, parse_utc, read_store_file
from pipeline.raw.state import fetch_log_dir
from pipeline.schema.vocabulary import FETCH_OUTCOMES
from pipeline.sources.registry import SLUG

OUTCOMES = FETCH_OUTCOMES
# Outcomes whose detail is the reason, shown as `<outcome>: <detail>`.
WITH_REASON = ("skipped", "failed")
LOG_SUFFIX = ".jsonl"
OLD_LOG_NAME = "_outcomes.jsonl"  # the log's name in the store's source folder, before
MAX_LOG_BYTES = 16_000_000
MAX_ADOPTED_BYTES = 1 << 31  # an old log is adopted whole: all of its history
LOCK_NAME = ".adopt.lock"


@dataclass(frozen=True)
class OutcomeRecord:
    source_id: str
    outcome: str  # one of OUTCOMES
    detail: str  # for "skipped" and "failed", the reason; otherwise what was stored or matched
    at: str  # ISO 8601, UTC, "Z" suffix, second precision
    snapshot: str | None = None  # file name of the new or identical snapshot
    http_status: int | None = None  # the final response's status, if one arrived
    bytes: int | None = None  # decoded body size, if a body was read
    attempts: int = 0  # requests made, redirects not counted; 0 when skipped

    @property
    def label(self) -> str:
        """``new``, ``unchanged``, ``not_modified``, ``skipped: <reason>`` or ``failed: <reason>``.
        A skipped source (no API key for a source that needs one) made no request: it is no
        failure, and it re-confirms nothing."""
        return f"{self.outcome}: {self.detail}" if self.outcome in WITH_REASON else self.outcome

    @property
    def failed(self) -> bool:
        return self.outcome == "failed"

    @property
    def when(self) -> datetime:
        return parse_utc(self.at)

    def to_line(self) -> bytes:
        text = json.dumps(asdict(self), ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        return (text + "\n").encode("utf-8")

    @classmethod
    def from_json(cls, record: dict[str, object]) -> OutcomeRecord:
        known = {f.name for f in fields(cls)}
        # Unknown keys are ignored so an older reader copes with a newer writer's lines.
        record = {key: value for key, value in record.items() if key in known}
        result = cls(**record)  # type: ignore[arg-type]
        if result.outcome not in OUTCOMES:
            raise ValueError(f"unknown outcome {result.outcome!r}")
        if not isinstance(result.at, str):
            raise ValueError(f"at must be a string, got {result.at!r}")
        parse_utc(result.at)  # raises ValueError on a damaged or out-of-range time
        return result


def log_path(raw_dir: Path, source_id: str) -> Path:
    # a slug only, so the path stays inside its folder (SnapshotError is a ValueError)
    return fetch_log_dir(raw_dir) / f"{check_source_id(source_id)}{LOG_SUFFIX}"


def old_log_path(raw_dir: Path, source_id: str) -> Path:
    """Where the source's log was kept before: in its folder of the snapshot store."""
    return raw_dir / check_source_id(source_id) / OLD_LOG_NAME


def _fsync_dir(path: Path) -> None:
    handle = os.open(path, os.O_RDONLY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)


@contextmanager
def _adopting(folder: Path) -> Iterator[None]:
    """One adopter at a time per warehouse (an flock the kernel drops with its holder)."""
    folder.mkdir(parents=True, exist_ok=True)
    handle = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)


def _lines(data: bytes) -> list[bytes]:
    return [line for line in data.split(b"\n") if line.strip()]


def adopt_old_log(raw_dir: Path, source_id: str) -> bool:
    """Move a log left in the snapshot store into the state folder: its lines first, then those
    the new log has (none twice, so an adoption cut short by a crash can run again), written
    through a rename; then the old file goes. True when one was adopted. A link or a FIFO under
    the old name is left alone (never read). Raises OSError when the folders cannot be written."""
    old = old_log_path(raw_dir, source_id)
    if not os.path.lexists(old):
        return False
    new = log_path(raw_dir, source_id)
    with _adopting(new.parent):
        if not os.path.lexists(old):
            return False  # another process adopted it meanwhile
        try:
            adopted = _lines(read_store_file(old, MAX_ADOPTED_BYTES))
        except OSError:
            return False  # not a regular file: never read, as before
        try:
            current = _lines(read_store_file(new, MAX_ADOPTED_BYTES))
        except FileNotFoundError:
            current = []
        have = set(current)
        merged = [line for line in adopted if line not in have] + current
        handle, tmp = tempfile.mkstemp(prefix=".adopt-", dir=new.parent)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(b"".join(line + b"\n" for line in merged))
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, new)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        _fsync_dir(new.parent)
        old.unlink()
        _fsync_dir(old.parent)
    return True


def append_record(raw_dir: Path, record: OutcomeRecord) -> None:
    """Append one line durably. If an earlier writer died mid-line, start on a fresh line so
    this record is not glued to the torn one (and lost with it)."""
    adopt_old_log(raw_dir, record.source_id)
    path = log_path(raw_dir, record.source_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    created = not path.exists()
    line = record.to_line()
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        handle = os.open(path, flags, 0o644)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise OSError(errno.ELOOP, f"{path}: a symbolic link, not followed") from None
        raise
    try:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, f"{path}: not a regular file")
        size = info.st_size
        if size and os.pread(handle, 1, size - 1) != b"\n":
            line = b"\n" + line
        written = os.write(handle, line)
        if written != len(line):
            raise OSError(f"{path}: short write ({written} of {len(line)} bytes)")
        os.fsync(handle)
    finally:
        os.close(handle)
    if created:  # make the new directory entry durable too
        _fsync_dir(path.parent)


def record_outcome(
    raw_dir: Path,
    source_id: str,
    outcome: str,
    detail: str = "",
    *,
    at: datetime | None = None,
    snapshot: str | None = None,
    http_status: int | None = None,
    size: int | None = None,
    attempts: int = 0,
) -> OutcomeRecord:
    """Build a record (stamped now unless ``at`` is given), append it to the source's log and
    return it."""
    if outcome not in OUTCOMES:
        raise ValueError(f"outcome must be one of {OUTCOMES}, got {outcome!r}")
    record = OutcomeRecord(
        source_id=source_id,
        outcome=outcome,
        detail=detail,
        at=format_utc(at or datetime.now(UTC)),
        snapshot=snapshot,
        http_status=http_status,
        bytes=size,
        attempts=attempts,
    )
    append_record(raw_dir, record)
    return record


def _log_bytes(raw_dir: Path, source_id: str) -> bytes:
    """The last MAX_LOG_BYTES of the source's log; a log still at the old place is adopted
    first, or (a warehouse this process cannot write) read where it is, before the new one."""
    with suppress(OSError):
        adopt_old_log(raw_dir, source_id)
    data = b""
    for path in (old_log_path(raw_dir, source_id), log_path(raw_dir, source_id)):
        try:
            part = read_store_file(path, MAX_LOG_BYTES, tail=True)
        except OSError:
            continue
        data = (data + b"\n" + part if data else part)[-MAX_LOG_BYTES:]
    return data


def read_outcomes(raw_dir: Path, source_id: str) -> list[OutcomeRecord]:
    """A source's log, oldest first (at most its last MAX_LOG_BYTES). Torn or unreadable lines (a
    crash mid-append, a hand edit) are skipped: the log is a history, and one bad line must not
    hide the rest. A log that is not a regular file (a FIFO, a link) reads as empty."""
    data = _log_bytes(raw_dir, source_id)
    lines = data.split(b"\n")
    if len(data) == MAX_LOG_BYTES:
        lines = lines[1:]  # the first line may be cut: only whole lines are read
    records: list[OutcomeRecord] = []
    for line in lines:
        if not line.strip():
            continue
        try:
            record = OutcomeRecord.from_json(json.loads(line))
        except (ValueError, TypeError):
            continue
        if record.source_id == source_id:
            records.append(record)
    return records


def logged_sources(raw_dir: Path) -> list[str]:
    """Every source id with a log, in the state folder or still at the old place."""
    found: set[str] = set()
    logs = fetch_log_dir(raw_dir)
    if logs.is_dir():
        found |= {p.name.removesuffix(LOG_SUFFIX) for p in logs.glob(f"*{LOG_SUFFIX}")}
    if raw_dir.is_dir():
        found |= {p.name for p in raw_dir.iterdir() if os.path.lexists(p / OLD_LOG_NAME)}
    return sorted(source_id for source_id in found if SLUG.fullmatch(source_id))


def latest_outcomes(raw_dir: Path) -> dict[str, OutcomeRecord]:
    """The last readable outcome of every source that has a log, by source id."""
    latest: dict[str, OutcomeRecord] = {}
    for source_id in logged_sources(raw_dir):
        records = read_outcomes(raw_dir, source_id)
        if records:
            latest[source_id] = records[-1]
    return latest

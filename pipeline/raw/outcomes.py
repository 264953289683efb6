"""Fetch outcomes: an append-only JSON-lines log per source, ``<raw>/<source_id>/_outcomes.jsonl``.

Every fetch of a source appends exactly one line, whatever happened, so "when did we last try,
and what went wrong" survives the process. Appends use O_APPEND with one write per line and an
fsync, so concurrent writers never interleave inside a line and a crash loses at most the line
being written; readers skip a torn line. The snapshot store only reads ``*.meta.json``, so the
log never looks like a snapshot. Like every store file, a log is opened without following a link
or blocking on a FIFO, and only a regular file is read or appended to; a reader reads at most its
last MAX_LOG_BYTES (the newest outcomes, tens of thousands of lines).
"""

from __future__ import annotations

import errno
import json
import os
import stat
from dataclasses import asdict, dataclass, fields
from datetime import UTC, datetime
from pathlib import Path

from pipeline.raw.snapshots import check_source_id, format_utc, parse_utc, read_store_file
from pipeline.schema.vocabulary import FETCH_OUTCOMES
from pipeline.sources.registry import SLUG

OUTCOMES = FETCH_OUTCOMES
# Outcomes whose detail is the reason, shown as `<outcome>: <detail>`.
WITH_REASON = ("skipped", "failed")
LOG_NAME = "_outcomes.jsonl"
MAX_LOG_BYTES = 16_000_000


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
    # a slug only, so the path stays inside the store (SnapshotError is a ValueError)
    return raw_dir / check_source_id(source_id) / LOG_NAME


def append_record(raw_dir: Path, record: OutcomeRecord) -> None:
    """Append one line durably. If an earlier writer died mid-line, start on a fresh line so
    this record is not glued to the torn one (and lost with it)."""
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
        directory = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)


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


def read_outcomes(raw_dir: Path, source_id: str) -> list[OutcomeRecord]:
    """A source's log, oldest first (at most its last MAX_LOG_BYTES). Torn or unreadable lines (a
    crash mid-append, a hand edit) are skipped: the log is a history, and one bad line must not
    hide the rest. A log that is not a regular file (a FIFO, a link) reads as empty."""
    try:
        data = read_store_file(log_path(raw_dir, source_id), MAX_LOG_BYTES, tail=True)
    except OSError:
        return []
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


def latest_outcomes(raw_dir: Path) -> dict[str, OutcomeRecord]:
    """The last readable outcome of every source that has a log, by source id."""
    latest: dict[str, OutcomeRecord] = {}
    if not raw_dir.is_dir():
        return latest
    for directory in sorted(p for p in raw_dir.iterdir() if p.is_dir()):
        if not SLUG.fullmatch(directory.name):
            continue
        records = read_outcomes(raw_dir, directory.name)
        if records:
            latest[directory.name] = records[-1]
    return latest

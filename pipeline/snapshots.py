"""The raw snapshot store: bytes exactly as received, with a provenance record beside each file.

Layout: ``<raw>/<source_id>/<YYYYMMDDTHHMMSSZ>-<sha256[:12]>.<ext>`` plus ``<same>.meta.json``.
Identical bytes for one source are stored once. When a page comes back to bytes it had before
(A, then B, then A again), a new metadata record points at the old bytes (`bytes_file`), so the
timeline says A is current again without a second copy.
The data file is written before its metadata and both are renamed into place, so a reader never
sees a snapshot whose bytes are incomplete.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

OBTAINED_BY = ("bundled", "fetched", "manual")
META_SUFFIX = ".meta.json"


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
        return json.dumps(record, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


@dataclass(frozen=True)
class AddResult:
    meta: SnapshotMeta
    created: bool


def parse_utc(text: str) -> datetime:
    """Parse ISO 8601; a naive value is taken as UTC. Raises ValueError on anything else."""
    value = datetime.fromisoformat(text.strip().replace("z", "Z"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).replace(microsecond=0)


def format_utc(value: datetime) -> str:
    return value.astimezone(UTC).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    try:
        with os.fdopen(handle, "wb") as tmp:
            tmp.write(data)
            tmp.flush()
            os.fsync(tmp.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


class SnapshotStore:
    def __init__(self, root: Path) -> None:
        self.root = root

    def source_dir(self, source_id: str) -> Path:
        return self.root / source_id

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
    ) -> AddResult:
        if obtained_by not in OBTAINED_BY:
            raise SnapshotError(f"obtained_by must be one of {OBTAINED_BY}, got {obtained_by!r}")
        if not data:
            raise SnapshotError(f"{source_id}: refusing to store an empty snapshot")
        digest = sha256_hex(data)
        snapshots = self.list(source_id)
        same = [m for m in snapshots if m.sha256 == digest]
        newest = snapshots[-1] if snapshots else None
        if same and (same[-1] == newest or retrieved_at <= newest.retrieved):  # type: ignore[union-attr]
            return AddResult(same[-1], created=False)
        stamp = format_utc(retrieved_at).replace("-", "").replace(":", "")
        name = f"{stamp}-{digest[:12]}.{extension.lstrip('.')}"
        if same:  # the page came back to bytes stored before: new record, no second copy
            meta = SnapshotMeta(
                source_id=source_id,
                url=url,
                retrieved_at=format_utc(retrieved_at),
                sha256=digest,
                size=len(data),
                content_type=content_type,
                obtained_by=obtained_by,
                file=name,
                note=(note + " " if note else "") + f"(same bytes as {same[-1].file})",
                http=dict(sorted((http or {}).items())),
                bytes_file=same[-1].data_file,
            )
            directory = self.source_dir(source_id)
            _atomic_write(directory / (name + META_SUFFIX), meta.to_json().encode("utf-8"))
            return AddResult(meta, created=True)
        meta = SnapshotMeta(
            source_id=source_id,
            url=url,
            retrieved_at=format_utc(retrieved_at),
            sha256=digest,
            size=len(data),
            content_type=content_type,
            obtained_by=obtained_by,
            file=name,
            note=note,
            http=dict(sorted((http or {}).items())),
        )
        directory = self.source_dir(source_id)
        _atomic_write(directory / name, data)
        _atomic_write(directory / (name + META_SUFFIX), meta.to_json().encode("utf-8"))
        return AddResult(meta, created=True)

    def _read_meta(self, path: Path) -> SnapshotMeta:
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            meta = SnapshotMeta(**record)
        except (OSError, ValueError, TypeError) as error:
            raise SnapshotError(f"{path}: unreadable snapshot metadata: {error}") from None
        if path.name != meta.file + META_SUFFIX:
            raise SnapshotError(f"{path}: metadata names another file ({meta.file})")
        return meta

    def list(
        self,
        source_id: str | None = None,
        *,
        as_of: datetime | None = None,
        errors: list[str] | None = None,
    ) -> list[SnapshotMeta]:
        """Snapshots oldest first. Unreadable metadata is skipped and reported into ``errors``
        when given, otherwise raised."""
        if source_id is None:
            directories: Iterable[Path] = (
                sorted(p for p in self.root.iterdir() if p.is_dir() and not p.name.startswith("."))
                if self.root.exists()
                else ()
            )
        else:
            directories = (self.source_dir(source_id),)
        index = _MetaIndex.load(self.root)
        found: list[SnapshotMeta] = []
        for directory in directories:
            if not directory.is_dir():
                continue
            names = sorted(
                entry.name
                for entry in os.scandir(directory)
                if entry.name.endswith(META_SUFFIX) and not entry.name.startswith(".")
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
            index.keep_only(directory.name, names)
        index.save()
        found.sort(key=lambda m: (m.retrieved_at, m.source_id, m.file))
        return found

    def latest(self, source_id: str, *, as_of: datetime | None = None) -> SnapshotMeta | None:
        snapshots = self.list(source_id, as_of=as_of)
        return snapshots[-1] if snapshots else None

    def path_of(self, meta: SnapshotMeta) -> Path:
        return self.source_dir(meta.source_id) / meta.data_file

    def read(self, meta: SnapshotMeta) -> bytes:
        """The snapshot's bytes, verified against the recorded sha256."""
        path = self.path_of(meta)
        try:
            data = path.read_bytes()
        except OSError as error:
            raise SnapshotDamaged(f"{meta.snapshot_id}: cannot read {path}: {error}") from None
        if sha256_hex(data) != meta.sha256:
            raise SnapshotDamaged(
                f"{meta.snapshot_id}: sha256 mismatch (recorded {meta.sha256[:12]}…, "
                f"on disk {sha256_hex(data)[:12]}…): the file was changed or damaged"
            )
        return data


class _MetaIndex:
    """A cache of parsed metadata records, in `<raw>/.snapshot-index.json`.

    Metadata files are written once and never changed, so a record read before can be reused as
    long as its file is still listed; a large store's listing then costs a directory scan instead
    of reading every record again. The cache is only ever an optimisation: deleting it is safe,
    and a failed write is ignored."""

    VERSION = 1
    NAME = ".snapshot-index.json"

    def __init__(self, root: Path, entries: dict[str, dict[str, dict[str, object]]]) -> None:
        self.root = root
        self.entries = entries
        self.changed = False

    @classmethod
    def load(cls, root: Path) -> _MetaIndex:
        try:
            record = json.loads((root / cls.NAME).read_text(encoding="utf-8"))
            if record.get("version") == cls.VERSION and isinstance(record.get("entries"), dict):
                return cls(root, record["entries"])
        except (OSError, ValueError):
            pass
        return cls(root, {})

    def get(self, source: str, name: str) -> SnapshotMeta | None:
        fields_ = self.entries.get(source, {}).get(name)
        if fields_ is None:
            return None
        try:
            return SnapshotMeta(**fields_)  # type: ignore[arg-type]
        except TypeError:
            return None

    def put(self, source: str, name: str, meta: SnapshotMeta) -> SnapshotMeta:
        self.entries.setdefault(source, {})[name] = asdict(meta)
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
            data = json.dumps({"version": self.VERSION, "entries": self.entries}).encode("utf-8")
            _atomic_write(self.root / self.NAME, data)
        except OSError:
            pass  # a read-only store still lists correctly, only more slowly

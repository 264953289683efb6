"""The snapshot store on object storage: the layout and records of the local store
(pipeline/raw/snapshots.py) under an S3 prefix, `s3://bucket/prefix`.

Layout, as on disk: ``<prefix>/<source_id>/<YYYYMMDDTHHMMSSZ>-<sha256[:12]>.<ext>`` (or ``.gz``
when COMPRESS_FROM or larger), ``<same>.meta.json`` beside it, ``<same>.withdrawn.json`` when
withdrawn. The records are the same bytes and are read with the same checks.

Through obstore (the Rust `object_store` crate of Apache Arrow, as a wheel with no dependencies):
it puts an object only if none is there (`If-None-Match: *`, which AWS S3 and SeaweedFS honour),
and that is what replaces the local store's temporary files and flocks:
- a PUT is visible whole or not at all, so there is no temporary object, nothing a killed writer
  leaves for a reader to trip on, and nothing to clean (an unfinished multipart upload is never
  listed; a bucket lifecycle rule expires its parts);
- every object is written once: bytes, record and withdrawal marker are put create-only, so a
  second writer can never replace what a first one wrote. Two writers of the same snapshot at the
  same second race for one name and one wins; the other finds the same bytes and reports them as
  already stored;
- bytes first, record last: a listing finds snapshots by their records, and a record is put only
  once its bytes are complete, so a reader never lists a snapshot whose bytes are missing.
pyarrow's S3 filesystem (already a dependency) has no create-only put, and s3fs would bring
botocore and aiohttp for the same.

Credentials come only from the standard AWS variables (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
AWS_SESSION_TOKEN; AWS_REGION; AWS_ENDPOINT_URL for a server other than AWS). Both keys are
required: the store never falls back to files or to an instance metadata service. No error
message carries the server's text: each says what failed, where (the s3:// address) and the S3
error code, and any secret value is scrubbed from it all the same.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import tempfile
import zlib
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import IO, Any, BinaryIO
from urllib.parse import urlsplit

from pipeline.raw.snapshots import (
    COMPRESS_FROM,
    COMPRESSED_SUFFIX,
    COPY_CHUNK,
    MAX_RECORD_BYTES,
    MAX_SNAPSHOT_BYTES,
    META_SUFFIX,
    WITHDRAWN_SUFFIX,
    AddResult,
    SnapshotDamaged,
    SnapshotError,
    SnapshotMeta,
    StoreBase,
    Withdrawal,
    _copy,
    _packer,
    addition_problem,
    already_stored,
    check_source_id,
    new_record,
    record_from_bytes,
    stored_names,
    taken_name_problem,
    verified_bytes,
    withdrawal_from_bytes,
    withdrawal_record,
)
from pipeline.sources.registry import SLUG
from pipeline.support.faults import pause_point
from pipeline.support.sizes import format_size

SCHEME = "s3://"
DEFAULT_REGION = "us-east-1"
# Bucket names as S3 allows them (3-63 characters: lower-case letters, digits, dots, hyphens).
BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
PREFIX_PART = re.compile(r"[A-Za-z0-9._=+-]+")  # one folder of a prefix: no spaces, no escapes
READERS = 16  # records fetched at once while listing
ENV_KEYS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")
ENV_SECRETS = ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")
# S3 error codes worth naming in words; any other is given as the server's code
_CODES = {
    "NoSuchBucket": "the bucket does not exist",
    "AccessDenied": "access denied (check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)",
    "InvalidAccessKeyId": "the server does not know AWS_ACCESS_KEY_ID",
    "SignatureDoesNotMatch": "the signature does not match (check AWS_SECRET_ACCESS_KEY)",
    "ExpiredToken": "the session token has expired (AWS_SESSION_TOKEN)",
}


class StoreUnavailable(SnapshotError):
    """The object store cannot be used (no credentials, no bucket, access denied, no answer):
    a problem of the whole store, never of one snapshot."""


def is_object_location(location: str | os.PathLike[str]) -> bool:
    """Whether a store location names an S3 prefix rather than a local folder."""
    return str(location).startswith(SCHEME)


@dataclass(frozen=True)
class S3Location:
    bucket: str
    prefix: str  # folders without a leading or trailing slash; "" for the bucket's top

    @classmethod
    def parse(cls, location: str) -> S3Location:
        """`s3://bucket[/prefix]`; SnapshotError saying what is wrong otherwise (credentials in
        the URL are refused without being repeated)."""
        if not location.startswith(SCHEME):
            raise SnapshotError(f"{location!r:.120} is not an s3://bucket/prefix address")
        try:
            parts = urlsplit(location)
        except ValueError:
            raise SnapshotError(f"{location!r:.120} is not an s3://bucket/prefix address") from None
        if "@" in parts.netloc:
            raise SnapshotError(
                "an s3:// store address must not carry credentials: set AWS_ACCESS_KEY_ID and "
                "AWS_SECRET_ACCESS_KEY instead"
            )
        shown = f"{SCHEME}{parts.netloc}{parts.path}"
        if parts.query or parts.fragment:
            raise SnapshotError(f"{shown!r:.120}: an s3:// store address takes no ?query or #part")
        if not BUCKET.fullmatch(parts.netloc):
            raise SnapshotError(
                f"{shown!r:.120}: {parts.netloc!r:.80} is not an S3 bucket name (3-63 "
                "lower-case letters, digits, dots and hyphens)"
            )
        folders = [part for part in parts.path.strip("/").split("/") if part]
        for folder in folders:
            if folder in (".", "..") or not PREFIX_PART.fullmatch(folder):
                raise SnapshotError(
                    f"{shown!r:.120}: {folder!r:.80} is not a folder name for the store "
                    "(letters, digits and . _ = + -; no . or ..)"
                )
        return cls(parts.netloc, "/".join(folders))

    @property
    def url(self) -> str:
        return f"{SCHEME}{self.bucket}/{self.prefix}" if self.prefix else f"{SCHEME}{self.bucket}"

    def url_of(self, key: str) -> str:
        return f"{self.url}/{key}"


@dataclass(frozen=True)
class Credentials:
    """What the standard AWS variables say; `secrets` are the values no message may carry."""

    config: dict[str, str]
    allow_http: bool
    secrets: tuple[str, ...]

    @classmethod
    def from_env(cls, env: Mapping[str, str], where: str) -> Credentials:
        missing = [name for name in ENV_KEYS if not env.get(name)]
        if missing:
            raise StoreUnavailable(
                f"{where}: no credentials for the object store: set {' and '.join(missing)} "
                "(and AWS_SESSION_TOKEN for temporary ones; AWS_ENDPOINT_URL for a server "
                "other than AWS)"
            )
        config = {
            "access_key_id": env["AWS_ACCESS_KEY_ID"],
            "secret_access_key": env["AWS_SECRET_ACCESS_KEY"],
            "region": env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or DEFAULT_REGION,
        }
        if env.get("AWS_SESSION_TOKEN"):
            config["token"] = env["AWS_SESSION_TOKEN"]
        endpoint = env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL") or ""
        if endpoint:
            scheme = urlsplit(endpoint).scheme
            if scheme not in ("http", "https"):
                raise StoreUnavailable(f"{where}: AWS_ENDPOINT_URL must be an http(s) URL")
            config["endpoint"] = endpoint
        secrets = tuple(env[name] for name in ENV_SECRETS if env.get(name))
        # plain http only where the operator named an http:// endpoint (a server on this host)
        return cls(config, endpoint.startswith("http://"), secrets)


def s3_client(where: S3Location, credentials: Credentials) -> Any:
    """An obstore S3Store on `where` (keys relative to its prefix), with the timeouts and retries
    every writer of ours uses (the snapshot store, release publishing)."""
    from obstore.store import S3Store

    return S3Store(
        where.bucket,
        prefix=where.prefix or None,
        config=credentials.config,  # type: ignore[arg-type]
        client_options={
            "allow_http": credentials.allow_http,
            "connect_timeout": timedelta(seconds=5),
            "timeout": timedelta(seconds=120),
        },
        retry_config={
            "max_retries": 3,
            "retry_timeout": timedelta(seconds=30),
            "backoff": {"init_backoff": timedelta(milliseconds=100)},
        },
    )


def _status(text: str) -> str | None:
    found = re.search(r"status code: (\d{3})", text)
    return found.group(1) if found else None


def problem_of(error: BaseException) -> str:
    """What went wrong with a request, in words, from obstore's error: its kind, the S3 error
    code and HTTP status; never the server's text, the request or the credentials."""
    import obstore.exceptions as failures

    text = str(error)
    code = re.search(r"<Code>([A-Za-z]{1,64})</Code>", text)
    if code and code.group(1) in _CODES:
        return _CODES[code.group(1)]
    if isinstance(error, FileNotFoundError):
        return "no such object"
    if isinstance(error, failures.AlreadyExistsError):
        return "an object is already there"
    if isinstance(error, failures.PermissionDeniedError | failures.UnauthenticatedError):
        return "access denied (check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)"
    if code:
        status = _status(text)
        return f"the server answered {code.group(1)}" + (f" (HTTP {status})" if status else "")
    if status := _status(text):
        return f"the server answered HTTP {status}"
    lowered = text.lower()
    if "error sending request" in lowered or "connect" in lowered or "dns" in lowered:
        return "no answer from the endpoint (is AWS_ENDPOINT_URL right, and the server up?)"
    if "timed out" in lowered or "timeout" in lowered:
        return "the request timed out"
    return f"the request failed ({type(error).__name__})"


def _stat_of(meta: Mapping[str, Any]) -> os.stat_result:
    """An object's listing as a file's status, for callers that key a snapshot's bytes by
    (size, mtime, ctime) (`file_keys.file_key`): the size, the last-modified time as mtime and
    a number from the ETag as ctime, since a write changes the ETag as it does a ctime."""
    modified = meta.get("last_modified")
    mtime_ns = int(modified.timestamp() * 1_000_000_000) if modified else 0
    etag = str(meta.get("e_tag") or "").encode("utf-8")
    change = int.from_bytes(hashlib.sha256(etag).digest()[:7], "big")  # fits a stat's int64
    seconds = mtime_ns // 1_000_000_000
    mode = stat.S_IFREG | 0o444
    times = (seconds, seconds, seconds, seconds, seconds, seconds, mtime_ns, mtime_ns, change)
    return os.stat_result((mode, 0, 0, 1, 0, 0, int(meta["size"]), *times))


class S3SnapshotStore(StoreBase):
    """The snapshot store under an S3 prefix; the same interface as the local SnapshotStore."""

    def __init__(self, location: str, env: Mapping[str, str] | None = None) -> None:
        self.where = S3Location.parse(location)
        self._env = dict(os.environ if env is None else env)
        self._client: Any = None
        self._secrets: tuple[str, ...] = ()
        self._objects: dict[str, Mapping[str, Any]] = {}  # key -> its listing, from the last scan
        # Records already read, by key: a record is put once and never replaced (create-only
        # puts), so one read with the same ETag still stands. Per store, never per process: a
        # build's inputs live in its resources (tests/test_module_state.py).
        self._records: dict[str, tuple[str, SnapshotMeta]] = {}
        self.cleaned: list[Path] = []  # always empty: there are no temporary objects to clean

    @property
    def location(self) -> str:
        return self.where.url

    # -- requests

    def _store(self) -> Any:
        if self._client is None:
            credentials = Credentials.from_env(self._env, self.where.url)
            self._secrets = credentials.secrets
            self._client = s3_client(self.where, credentials)
        return self._client

    def _scrub(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "[secret]")
        return text

    def _failure(self, key: str, doing: str, error: BaseException) -> StoreUnavailable:
        problem = problem_of(error)
        where = self.where.url_of(key) if key else self.where.url
        return StoreUnavailable(self._scrub(f"{where}: cannot {doing}: {problem}"))

    def _get(self, key: str, limit: int) -> bytes | None:
        """The object's bytes, None when there is none; an object over `limit` bytes, or any
        other failure, raises (StoreUnavailable, or SnapshotError for the size)."""
        import obstore

        client = self._store()  # no credentials: raised as they are, before any request
        try:
            result = obstore.get(client, key)
        except FileNotFoundError:
            return None
        except Exception as error:
            raise self._failure(key, "read it", error) from None
        size = int(result.meta["size"])
        if size > limit:
            raise SnapshotError(f"{self.where.url_of(key)}: larger than {format_size(limit)}")
        try:
            return bytes(result.bytes())
        except Exception as error:
            raise self._failure(key, "read it", error) from None

    def _put_once(self, key: str, data: bytes | IO[bytes]) -> bool:
        """Put an object only if there is none (If-None-Match: *); False when one was there."""
        import obstore
        import obstore.exceptions as failures

        client = self._store()
        try:
            obstore.put(client, key, data, mode="create")
        except failures.AlreadyExistsError:
            return False
        except Exception as error:
            raise self._failure(key, "write it", error) from None
        return True

    def _exists(self, key: str) -> bool:
        import obstore

        client = self._store()
        try:
            obstore.head(client, key)
        except FileNotFoundError:
            return False
        except Exception as error:
            raise self._failure(key, "look it up", error) from None
        return True

    def _listing(self, source_id: str | None) -> Iterator[Mapping[str, Any]]:
        import obstore

        prefix = None if source_id is None else f"{check_source_id(source_id)}/"
        client = self._store()
        try:
            for batch in obstore.list(client, prefix, chunk_size=1000):
                yield from batch
        except Exception as error:
            raise self._failure(prefix or "", "list the store", error) from None

    def object_lines(self) -> list[str]:
        """One line per object (key, size, ETag), sorted: what a build's fingerprint hashes of a
        store on S3, where an object is never changed in place, only added or withdrawn."""
        return sorted(
            f"{entry['path']}:{entry['size']}:{entry.get('e_tag') or ''}\n"
            for entry in self._listing(None)
        )

    @staticmethod
    def _key(source_id: str, name: str) -> str:
        return f"{check_source_id(source_id)}/{name}"

    # -- writing

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
        bytes as its newest (or at a later time). The bytes are spooled into a local temporary
        file and hashed as they come (at most MAX_SNAPSHOT_BYTES), put create-only, and only then
        the record that names them."""
        problem = addition_problem(source_id, url, retrieved_at, obtained_by, reconstructed_from)
        if problem:
            raise SnapshotError(problem)
        check_source_id(source_id)
        with tempfile.TemporaryFile() as spool:
            copied = _copy(reader, spool, source_id)  # type: ignore[arg-type]
            if not copied.size:
                raise SnapshotError(f"{source_id}: refusing to store an empty snapshot")
            digest = copied.digest.hexdigest()
            skipped: list[str] = []
            found, withdrawn, keys = self._scan_source(source_id, skipped)
            snapshots = [meta for meta in found if meta.snapshot_id not in withdrawn]  # as list()
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
            record = self._key(source_id, meta.file + META_SUFFIX)
            problem = taken_name_problem(
                source_id,
                meta.file,
                self._key(source_id, meta.file + WITHDRAWN_SUFFIX) in keys,
                record in keys,
                self.where.url_of(record),
            )
            if problem:
                raise SnapshotError(problem)
            if not meta.bytes_file:  # the bytes before the record that names them
                spool.seek(0)
                self._put_bytes(meta, spool, copied.size)
        pause_point("snapshot-record")  # crash tests stop a writer here: bytes in, no record yet
        if not self._put_once(record, meta.to_json().encode("utf-8")):
            return self._raced(meta, record, skipped)
        return AddResult(meta, created=True, skipped=tuple(skipped))

    def _put_bytes(self, meta: SnapshotMeta, spool: BinaryIO, size: int) -> None:
        """Put the snapshot's bytes (gzip-compressed from COMPRESS_FROM on, as on disk). When
        the name is taken, a writer stored the same bytes at the same second: checked, not
        trusted."""
        name = meta.file + (COMPRESSED_SUFFIX if size >= COMPRESS_FROM else "")
        key = self._key(meta.source_id, name)
        if size >= COMPRESS_FROM:
            with tempfile.TemporaryFile() as packed:
                _compress_stream(spool, packed)
                packed.seek(0)
                created = self._put_once(key, packed)
        else:
            created = self._put_once(key, spool)
        if not created:
            data = self._get(key, MAX_SNAPSHOT_BYTES)
            if data is None:
                raise SnapshotError(f"{self.where.url_of(key)}: was there, then gone: try again")
            try:
                verified_bytes(meta, data, name.endswith(COMPRESSED_SUFFIX), key)
            except SnapshotDamaged:
                raise SnapshotError(
                    f"{self.where.url_of(key)} already holds other bytes under this snapshot's "
                    "name; move it away to store these"
                ) from None

    def _raced(self, meta: SnapshotMeta, record: str, skipped: list[str]) -> AddResult:
        """Another writer put this snapshot's record first: the same bytes at the same second
        (the name holds both), so the snapshot is stored, by it."""
        theirs = self._read_record(record)
        if theirs.sha256 != meta.sha256:
            raise SnapshotError(f"{self.where.url_of(record)}: another writer stored other bytes")
        return AddResult(theirs, created=False, skipped=tuple(skipped))

    def withdraw(self, meta: SnapshotMeta, reason: str, when: datetime) -> Withdrawal:
        """Mark a snapshot withdrawn: `<file>.withdrawn.json` beside its record, put
        create-only. The bytes and the record are kept; no later build or listing uses it."""
        key = self._key(meta.source_id, meta.file + WITHDRAWN_SUFFIX)
        withdrawal, data = withdrawal_record(meta, reason, when)
        if not self._put_once(key, data):
            raise SnapshotError(
                f"{meta.snapshot_id} is already withdrawn ({self.where.url_of(key)})"
            )
        return withdrawal

    # -- reading

    def _read_record(self, key: str, listed: Mapping[str, Any] | None = None) -> SnapshotMeta:
        where = self.where.url_of(key)
        etag = str(listed.get("e_tag") or "") if listed else ""
        cached = self._records.get(key)
        if cached is not None and etag and cached[0] == etag:
            return cached[1]
        if listed is not None and int(listed["size"]) > MAX_RECORD_BYTES:
            limit = format_size(MAX_RECORD_BYTES)
            raise SnapshotError(f"{where}: unreadable snapshot metadata: larger than {limit}")
        try:
            data = self._get(key, MAX_RECORD_BYTES)
        except StoreUnavailable:
            raise
        except SnapshotError as error:
            raise SnapshotError(f"{where}: unreadable snapshot metadata: {error}") from None
        if data is None:
            raise SnapshotError(f"{where}: unreadable snapshot metadata: no such object")
        folder, _, name = key.partition("/")
        meta = record_from_bytes(data, where, folder, name)
        if etag:
            self._records[key] = (etag, meta)
        return meta

    def _scan_source(
        self, source_id: str | None, errors: list[str] | None, as_of: datetime | None = None
    ) -> tuple[list[SnapshotMeta], set[str], set[str]]:
        """Every readable record (oldest first), the ids of those withdrawn, and every key."""
        listed = {str(item["path"]): item for item in self._listing(source_id)}
        if source_id is None:
            self._objects = dict(listed)
        else:  # that source's objects as they are now, the others' as last listed
            folder = f"{source_id}/"
            kept = {k: v for k, v in self._objects.items() if not k.startswith(folder)}
            self._objects = {**kept, **listed}
        records: list[str] = []
        markers: set[str] = set()
        for key in listed:
            folder, _, name = key.partition("/")
            if not name or "/" in name or not SLUG.fullmatch(folder) or name.startswith("."):
                if errors is not None and key.endswith(META_SUFFIX):
                    errors.append(f"{self.where.url_of(key)}: not in the store's layout (left out)")
                continue
            if name.endswith(META_SUFFIX):
                records.append(key)
            elif name.endswith(WITHDRAWN_SUFFIX):
                markers.add(key.removesuffix(WITHDRAWN_SUFFIX))
        found: list[SnapshotMeta] = []
        withdrawn: set[str] = set()
        records.sort()
        for key, meta in zip(records, self._read_records(records, listed), strict=True):
            if isinstance(meta, SnapshotError):
                if errors is None or isinstance(meta, StoreUnavailable):
                    raise meta
                errors.append(str(meta))
                continue
            if as_of is None or meta.retrieved <= as_of:
                found.append(meta)
                if key.removesuffix(META_SUFFIX) in markers:
                    withdrawn.add(meta.snapshot_id)
        found.sort(key=lambda m: (m.retrieved_at, m.source_id, m.file))
        return found, withdrawn, set(listed)

    def _read_records(
        self, keys: list[str], listed: Mapping[str, Mapping[str, Any]]
    ) -> list[SnapshotMeta | SnapshotError]:
        def one(key: str) -> SnapshotMeta | SnapshotError:
            try:
                return self._read_record(key, listed.get(key))
            except SnapshotError as error:
                return error

        if len(keys) <= 1:
            return [one(key) for key in keys]
        self._store()  # made once, before the threads share it
        with ThreadPoolExecutor(min(READERS, len(keys))) as pool:
            return list(pool.map(one, keys))

    def _scan(
        self, source_id: str | None, as_of: datetime | None, errors: list[str] | None
    ) -> tuple[list[SnapshotMeta], set[str]]:
        found, withdrawn, _keys = self._scan_source(source_id, errors, as_of)
        return found, withdrawn

    def _withdrawal(self, meta: SnapshotMeta) -> Withdrawal:
        name = meta.file + WITHDRAWN_SUFFIX
        try:
            data = self._get(self._key(meta.source_id, name), MAX_RECORD_BYTES)
        except StoreUnavailable:
            raise
        except SnapshotError:
            data = None
        return withdrawal_from_bytes(meta, data, name)

    def withdrawal(self, meta: SnapshotMeta) -> Withdrawal | None:
        """The snapshot's withdrawal as the store holds it now, or None (one request)."""
        key = self._key(meta.source_id, meta.file + WITHDRAWN_SUFFIX)
        return self._withdrawal(meta) if self._exists(key) else None

    def has_record(self, meta: SnapshotMeta) -> bool:
        """Whether the snapshot's metadata record is still in the store (one request)."""
        return self._exists(self._key(meta.source_id, meta.file + META_SUFFIX))

    def has_snapshots(self) -> bool:
        """Whether `list()` would find anything: stops at the first readable record that is not
        withdrawn (one listing, then as few records as it takes)."""
        listed = {str(item["path"]): item for item in self._listing(None)}
        for key in sorted(k for k in listed if k.endswith(META_SUFFIX)):
            folder, _, name = key.partition("/")
            if "/" in name or not SLUG.fullmatch(folder) or name.startswith("."):
                continue
            if key.removesuffix(META_SUFFIX) + WITHDRAWN_SUFFIX in listed:
                continue
            try:
                self._read_record(key, listed[key])
            except StoreUnavailable:
                raise
            except SnapshotError:
                continue
            return True
        return False

    def url_of(self, meta: SnapshotMeta) -> str:
        """The s3:// address of the snapshot's plain data file (for messages)."""
        return self.where.url_of(self._key(meta.source_id, meta.data_file))

    def read(self, meta: SnapshotMeta) -> bytes:
        """The snapshot's bytes, verified against the recorded sha256 (decompressed first when
        stored compressed, never to more than the recorded size). SnapshotDamaged names what is
        wrong: missing, not whole gzip, too large, another sha256; StoreUnavailable when the
        store cannot be asked."""
        plain, packed = (self._key(meta.source_id, name) for name in stored_names(meta))
        for key, compressed in ((plain, False), (packed, True)):
            try:
                data = self._get(key, MAX_SNAPSHOT_BYTES)
            except StoreUnavailable:
                raise
            except SnapshotError as error:
                reason = str(error).removeprefix(f"{self.where.url_of(key)}: ")
                raise SnapshotDamaged(
                    f"{meta.snapshot_id}: cannot read {self.where.url_of(key)}: {reason}"
                ) from None
            if data is not None:
                return verified_bytes(meta, data, compressed, self.where.url_of(key))
        raise SnapshotDamaged(
            f"{meta.snapshot_id}: cannot read {self.where.url_of(plain)}: no such object"
        )

    def stat_of(self, meta: SnapshotMeta) -> os.stat_result | None:
        """The status of the object holding the snapshot's bytes (from the last listing, else
        one request per name), or None when there is none."""
        import obstore

        for name in stored_names(meta):
            key = self._key(meta.source_id, name)
            listed = self._objects.get(key)
            if listed is None:
                client = self._store()
                try:
                    listed = obstore.head(client, key)
                except FileNotFoundError:
                    continue
                except Exception as error:
                    raise self._failure(key, "look it up", error) from None
            return _stat_of(listed)
        return None

    def stats_of(self, metas: Iterable[SnapshotMeta]) -> list[os.stat_result | None]:
        return [self.stat_of(meta) for meta in metas]


def _compress_stream(source: IO[bytes], out: IO[bytes]) -> None:
    """gzip `source` into `out` a chunk at a time, as the local store compresses (same bytes)."""
    packer: zlib._Compress = _packer()
    while chunk := source.read(COPY_CHUNK):
        out.write(packer.compress(chunk))
    out.write(packer.flush())

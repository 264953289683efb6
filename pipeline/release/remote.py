"""Publishing releases to object storage, as PUDL publishes its builds and OWID its catalogue.

A release complete in `exports/<version>/` goes to an S3 prefix (`SPEEDBOOK_RELEASES`,
`s3://bucket/prefix`) in this order, so a reader who lists the bucket at any moment never takes a
half release for a whole one:

1. the lake's data files the release's catalog copy names (when it has one), under
   `<prefix>/lake/data/`: shared by every release, each written once (DuckLake never rewrites a
   data file);
2. every file of the release folder, under `<prefix>/<version>/`;
3. `<prefix>/<version>/_SUCCESS`, the marker: every file of 1 and 2 with its size and sha256,
   written only once all of them are there;
4. `<prefix>/latest`, the pointer: a small JSON naming the version and its marker, written last.

Every object but the pointer is put create-only (`If-None-Match: *`): an object already there
with the same bytes is skipped, and one with other bytes stops the publish before anything is
written, naming its key. The pointer is replaced with a conditional put (`If-Match` on the ETag
read), so two publishers cannot overwrite each other's pointer unseen. A publish killed at any
step leaves its version without a marker and the pointer where it was; publishing the same
release again completes it. Readers go through `latest`, or check `_SUCCESS`
(`complete_versions`, `read_latest`).

The lake: a release may carry `lake/catalog.sqlite`, a copy of the lake's DuckLake catalog
(`write_lake_catalog`, made while the release is written), whose data path names the published
data files. DuckDB reads a DuckLake whose catalog is a SQLite file over S3 or plain HTTP, so any
host serving the prefix serves the whole history, read-only (docs/releases.md has the ATTACH).

Credentials come only from the AWS variables (pipeline/raw/s3_store.py); no message carries
them or the server's text.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import mimetypes
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from pipeline.raw.s3_store import Credentials, S3Location, problem_of, s3_client
from pipeline.raw.snapshots import SnapshotError
from pipeline.release.publish import PAUSE_ENV, VERSION, version_key
from pipeline.schema.ddl import quote_literal
from pipeline.support.faults import pause_point
from pipeline.support.progress import report
from pipeline.support.sizes import format_size
from pipeline.warehouse import extensions
from pipeline.warehouse.lake import LAKE_ALIAS, LakeLocation, lake_snapshot, scrubbed

MARKER = "_SUCCESS"
POINTER = "latest"
LAKE_CATALOG = "lake/catalog.sqlite"  # inside a release folder
LAKE_DATA = "lake/data/"  # under the prefix, shared by every release
# The database DuckDB's ducklake extension attaches the lake's catalog as (any kind: SQLite,
# DuckDB, PostgreSQL): copying it copies the whole catalog, inlined rows included.
LAKE_METADATA = f"__ducklake_metadata_{LAKE_ALIAS}"
# The tables of a PostgreSQL catalog: DuckLake keeps them in the connection's current schema.
POSTGRES_TABLES = (
    "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() "
    "AND tablename LIKE 'ducklake\\_%'"
)
UPLOADERS = 8  # objects put at once
HASH_CHUNK = 1 << 20
CONTENT_TYPES = {".parquet": "application/vnd.apache.parquet", ".md": "text/markdown"}
# Test hook: pause points on publishing's variable (pipeline/release/publish.py, PAUSE_ENV):
# "remote-uploading" (the first object put), "remote-uploaded" (every file there, no marker yet),
# "remote-marked" (the marker there, the pointer not yet moved).


Reader = Callable[[], bytes]


class RemotePublishError(RuntimeError):
    """A release could not be published to object storage; the local release is untouched."""


# --- what a release is made of -------------------------------------------------------------------


@dataclass(frozen=True)
class Part:
    """One object of a publish: its key under the prefix, its bytes' size and hashes, and how to
    read them (a Path, or a function for bytes that live elsewhere)."""

    key: str
    size: int
    sha256: str
    md5: str
    source: Path | Reader

    def data(self) -> bytes | Path:
        return self.source if isinstance(self.source, Path) else self.source()


def _hashed(key: str, source: Path | Reader) -> Part:
    sha256, md5, size = hashlib.sha256(), hashlib.md5(usedforsecurity=False), 0
    if isinstance(source, Path):
        with source.open("rb") as handle:
            while chunk := handle.read(HASH_CHUNK):
                sha256.update(chunk)
                md5.update(chunk)
                size += len(chunk)
    else:
        data = source()
        sha256.update(data)
        md5.update(data)
        size = len(data)
    return Part(key, size, sha256.hexdigest(), md5.hexdigest(), source)


def release_parts(folder: Path) -> list[Part]:
    """Every file of a release folder as `<version>/<path>`, sorted (links are refused: a
    release folder holds files and folders only)."""
    version = folder.name
    if not VERSION.match(version) or not folder.is_dir():
        raise RemotePublishError(f"{folder} is not a release folder (exports/<version>/)")
    parts = []
    for path in sorted(folder.rglob("*")):
        if path.is_symlink():
            raise RemotePublishError(f"{path}: a link in a release folder; it holds files only")
        if path.is_file():
            relative = path.relative_to(folder).as_posix()
            if relative == MARKER:
                raise RemotePublishError(f"{path}: {MARKER} is the publish's own marker")
            parts.append(_hashed(f"{version}/{relative}", path))
    return parts


def lake_file_paths(catalog: Path) -> list[str]:
    """The data and delete files a DuckLake catalog copy (SQLite) names, relative to its data
    path, sorted: every file any of its snapshots reads."""
    try:
        with sqlite3.connect(f"{catalog.resolve().as_uri()}?mode=ro", uri=True) as con:
            rows = con.execute(
                """
                SELECT DISTINCT s.path, s.path_is_relative, t.path, t.path_is_relative,
                       f.path, f.path_is_relative
                FROM (SELECT table_id, path, path_is_relative FROM ducklake_data_file
                      UNION ALL
                      SELECT table_id, path, path_is_relative FROM ducklake_delete_file) AS f
                JOIN (SELECT DISTINCT table_id, schema_id, path, path_is_relative
                      FROM ducklake_table) AS t USING (table_id)
                JOIN (SELECT DISTINCT schema_id, path, path_is_relative
                      FROM ducklake_schema) AS s USING (schema_id)
                """
            ).fetchall()
    except sqlite3.Error as error:
        raise RemotePublishError(f"{catalog}: not a readable DuckLake catalog: {error}") from None
    paths = set()
    for schema_path, schema_rel, table_path, table_rel, file_path, file_rel in rows:
        if not (schema_rel and table_rel and file_rel):
            raise RemotePublishError(
                f"{catalog}: the lake's file {file_path} is not under its data path; only "
                "files under the data path can be published"
            )
        path = f"{schema_path}{table_path}{file_path}"
        if path.startswith("/") or ".." in path.split("/"):
            raise RemotePublishError(f"{catalog}: {path!r} is not a path inside the data path")
        paths.add(path)
    return sorted(paths)


def _lake_reader(lake_data: str, env: Mapping[str, str]) -> Callable[[str], Path | Reader]:
    """Where the lake's data files are read from: its folder (streamed from disk), or its S3
    prefix (each file read into memory, once to hash it and again to put it when new)."""
    if not lake_data.startswith("s3://"):
        folder = Path(lake_data)
        return lambda relative: folder / relative
    bucket = _Bucket(lake_data, env, "the lake's data path")
    return lambda relative: lambda: bucket.read(relative)


def lake_parts(folder: Path, lake_data: str, env: Mapping[str, str]) -> list[Part]:
    """The lake's data files the release's catalog copy names, as `lake/data/<path>`; none when
    the release has no catalog copy. A file the catalog names and the lake lacks is an error."""
    catalog = folder / LAKE_CATALOG
    if not catalog.is_file():
        return []
    read = _lake_reader(lake_data, env)
    parts = []
    for relative in lake_file_paths(catalog):
        try:
            parts.append(_hashed(LAKE_DATA + relative, read(relative)))
        except FileNotFoundError:
            raise RemotePublishError(
                f"the lake's data file {relative} (named by {catalog}) is not in {lake_data}"
            ) from None
    return parts


def marker_bytes(version: str, release: Iterable[Part], lake: Iterable[Part]) -> bytes:
    """The `_SUCCESS` marker: every file of the release and of the lake it names, with size and
    sha256 (the same release always gives the same bytes)."""

    def listed(parts: Iterable[Part], prefix: str) -> dict[str, dict[str, Any]]:
        return {
            p.key.removeprefix(prefix): {"sha256": p.sha256, "size": p.size}
            for p in sorted(parts, key=lambda p: p.key)
        }

    lake = list(lake)
    document = {
        "version": version,
        "files": listed(release, f"{version}/"),
        "lake": {"catalog": LAKE_CATALOG, "data_path": LAKE_DATA, "files": listed(lake, LAKE_DATA)}
        if lake
        else None,
    }
    return (json.dumps(document, indent=1, sort_keys=True) + "\n").encode("utf-8")


def pointer_bytes(version: str, where: S3Location) -> bytes:
    document = {
        "version": version,
        "success": f"{version}/{MARKER}",
        "success_url": where.url_of(f"{version}/{MARKER}"),
    }
    return (json.dumps(document, indent=1, sort_keys=True) + "\n").encode("utf-8")


# --- the bucket ---------------------------------------------------------------------------------


def parse_target(address: str) -> S3Location:
    try:
        return S3Location.parse(address.strip().rstrip("/"))
    except SnapshotError as error:
        raise RemotePublishError(f"the release target: {error}") from None


class _Bucket:
    """Requests on one S3 prefix; every failure says what, where and the S3 code, never a
    secret or the server's text."""

    def __init__(self, address: str, env: Mapping[str, str], what: str = "") -> None:
        self.where = parse_target(address)
        try:
            credentials = Credentials.from_env(env, what or self.where.url)
        except SnapshotError as error:
            raise RemotePublishError(str(error)) from None
        self._secrets = credentials.secrets
        self.client = s3_client(self.where, credentials)

    def failure(self, key: str, doing: str, error: BaseException) -> RemotePublishError:
        text = f"{self.where.url_of(key)}: cannot {doing}: {problem_of(error)}"
        for secret in self._secrets:
            text = text.replace(secret, "[secret]")
        return RemotePublishError(text)

    def listing(self, prefix: str) -> dict[str, Mapping[str, Any]]:
        import obstore

        try:
            return {
                str(item["path"]): item
                for batch in obstore.list(self.client, prefix, chunk_size=1000)
                for item in batch
            }
        except Exception as error:
            raise self.failure(prefix, "list it", error) from None

    def read(self, key: str) -> bytes:
        got = self.get(key)
        if got is None:
            raise FileNotFoundError(key)
        return got[0]

    def get(self, key: str) -> tuple[bytes, str] | None:
        """The object's bytes and ETag, None when there is none."""
        import obstore

        try:
            result = obstore.get(self.client, key)
            return bytes(result.bytes()), str(result.meta.get("e_tag") or "")
        except FileNotFoundError:
            return None
        except Exception as error:
            raise self.failure(key, "read it", error) from None

    def put(self, key: str, data: bytes | Path, mode: Any = "create") -> bool:
        """Put an object (create-only unless `mode` says otherwise); False when one was there
        (or, for a conditional put, when it changed since it was read)."""
        import obstore
        import obstore.exceptions as failures

        suffix = Path(key).suffix
        kind = CONTENT_TYPES.get(suffix) or mimetypes.guess_type(key)[0]
        if key.endswith((MARKER, POINTER)):
            kind = "application/json"
        try:
            obstore.put(
                self.client,
                key,
                data,
                mode=mode,
                attributes={"Content-Type": kind or "application/octet-stream"},
            )
        except (failures.AlreadyExistsError, failures.PreconditionError):
            return False
        except Exception as error:
            raise self.failure(key, "write it", error) from None
        return True


def _same(bucket: _Bucket, part: Part | None, listed: Mapping[str, Any], data: bytes = b"") -> bool:
    """Whether the object listed holds the part's bytes (or `data`): its size, then its ETag
    when it is the MD5 of the bytes (a plain PUT's), else the bytes themselves."""
    size, md5 = (part.size, part.md5) if part else (len(data), hashlib.md5(data).hexdigest())
    if int(listed["size"]) != size:
        return False
    if str(listed.get("e_tag") or "").strip('"') == md5:
        return True
    stored = bucket.get(str(listed["path"]))
    if stored is None:
        return False
    wanted = part.sha256 if part else hashlib.sha256(data).hexdigest()
    return hashlib.sha256(stored[0]).hexdigest() == wanted


# --- publishing ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class RemoteResult:
    version: str
    target: str  # s3://bucket/prefix
    files: int  # objects the release is made of (its files and the lake's), marker excluded
    bytes: int
    put: int  # objects this publish wrote
    put_bytes: int
    latest: str | None  # the version `latest` names afterwards
    seconds: float

    @property
    def message(self) -> str:
        there = self.files - self.put
        return (
            f"release {self.version} published to {self.target}: {self.files} files "
            f"({format_size(self.bytes)}), {self.put} put ({format_size(self.put_bytes)}), "
            f"{there} already there; latest: {self.latest or 'none'}; {self.seconds:.1f} s"
        )


def publish_remote(
    folder: Path,
    target: str,
    *,
    lake_data: str = "",
    take_latest: bool = True,
    may_go_back: bool = False,
    env: Mapping[str, str] | None = None,
) -> RemoteResult:
    """Publish the release folder `folder` (`exports/<version>/`, complete) under `target`.

    `lake_data`: the lake's data folder or S3 prefix, read for the files the release's catalog
    copy names. `take_latest`: the pointer may move to this version (an --as-of build's release
    never does); it moves when it names no version or an older one, and with `may_go_back` also
    from a newer one (the local `latest` was moved back: a build passed over a release whose
    snapshots it found bad, and the pointer follows it)."""
    started = time.perf_counter()
    env = dict(os.environ if env is None else env)
    bucket = _Bucket(target, env)
    version = folder.name
    release = release_parts(folder)
    lake = lake_parts(folder, lake_data, env)
    marker_key, marker = f"{version}/{MARKER}", marker_bytes(version, release, lake)
    where = bucket.where.url

    present = bucket.listing(f"{version}/")
    present_lake = bucket.listing(LAKE_DATA) if lake else {}
    todo: list[Part] = []
    conflicts: list[str] = []
    for part in [*lake, *release]:
        listed = (present_lake if part.key.startswith(LAKE_DATA) else present).get(part.key)
        if listed is None:
            todo.append(part)
        elif not _same(bucket, part, listed):
            conflicts.append(part.key)
    ours = {part.key for part in release} | {marker_key}
    conflicts += sorted(key for key in present if key not in ours)
    marked = present.get(marker_key)
    if marked is not None and not _same(bucket, None, marked, marker):
        conflicts.append(marker_key)
    if conflicts:
        raise RemotePublishError(
            f"release {version} is already at {bucket.where.url_of(version + '/')} with other "
            f"content: {bucket.where.url_of(conflicts[0])}"
            + (f" and {len(conflicts) - 1} more object(s)" if len(conflicts) > 1 else "")
            + " differ from the local release; releases are never overwritten, so nothing "
            "was written"
        )

    put_bytes = _put_all(bucket, todo)
    pause_point("remote-uploaded", PAUSE_ENV)
    if marked is None and not bucket.put(marker_key, marker):
        _check_raced(bucket, marker_key, None, marker)
    pause_point("remote-marked", PAUSE_ENV)
    latest = _move_latest(bucket, version, take_latest=take_latest, may_go_back=may_go_back)
    parts = [*lake, *release]
    result = RemoteResult(
        version,
        where,
        len(parts),
        sum(p.size for p in parts),
        len(todo),
        put_bytes,
        latest,
        time.perf_counter() - started,
    )
    report(result.message)
    return result


def _check_raced(bucket: _Bucket, key: str, part: Part | None, data: bytes = b"") -> None:
    """A create-only put found an object put since the listing: fine if it holds our bytes."""
    listed = bucket.listing(key).get(key)
    if listed is None or not _same(bucket, part, listed, data):
        raise RemotePublishError(
            f"{bucket.where.url_of(key)}: another publisher wrote other bytes there meanwhile"
        )


def _put_all(bucket: _Bucket, parts: list[Part]) -> int:
    """Put every part create-only, several at once; returns the bytes put."""

    def one(part: Part) -> int:
        if not bucket.put(part.key, part.data()):
            _check_raced(bucket, part.key, part)
            return 0
        return part.size

    if not parts:
        return 0
    total = one(parts[0])
    pause_point("remote-uploading", PAUSE_ENV)
    with ThreadPoolExecutor(UPLOADERS) as pool:
        return total + sum(pool.map(one, parts[1:]))


def _pointed(data: bytes) -> str | None:
    """The version a pointer names, None when it is not one of ours."""
    try:
        version = json.loads(data.decode("utf-8")).get("version")
    except (UnicodeDecodeError, ValueError, AttributeError):
        return None
    return version if isinstance(version, str) and VERSION.match(version) else None


def _move_latest(
    bucket: _Bucket, version: str, *, take_latest: bool, may_go_back: bool
) -> str | None:
    """Point `latest` at `version` when the rules allow; the version it names afterwards."""
    for _attempt in range(5):
        current = bucket.get(POINTER)
        named = _pointed(current[0]) if current else None
        if not take_latest or named == version:
            return named
        if named is not None and version_key(named) > version_key(version) and not may_go_back:
            return named
        mode: Any = "create" if current is None else {"e_tag": current[1]}
        if bucket.put(POINTER, pointer_bytes(version, bucket.where), mode):
            return version
        # another publisher moved it since it was read: read it again and decide again
    raise RemotePublishError(
        f"{bucket.where.url_of(POINTER)}: changed by another publisher at every attempt"
    )


# --- readers ------------------------------------------------------------------------------------


def read_latest(target: str, env: Mapping[str, str] | None = None) -> str | None:
    """The version `latest` names, None when there is none (or it is not a pointer of ours)."""
    bucket = _Bucket(target, dict(os.environ if env is None else env))
    current = bucket.get(POINTER)
    return _pointed(current[0]) if current else None


def complete_versions(target: str, env: Mapping[str, str] | None = None) -> list[str]:
    """The versions under `target` that have their marker, oldest first: what a reader that
    lists the bucket may take as published (a version without one is a publish under way, or
    killed)."""
    bucket = _Bucket(target, dict(os.environ if env is None else env))
    found = {key.split("/")[0] for key in bucket.listing("") if key.endswith(f"/{MARKER}")}
    return sorted((v for v in found if VERSION.match(v)), key=version_key)


# --- the lake's catalog, copied into a release --------------------------------------------------


def lake_data_url(target: str) -> str:
    """Where the published lake's data files are: `<target>/lake/data/`."""
    return parse_target(target).url_of(LAKE_DATA)


def write_lake_catalog(
    con: duckdb.DuckDBPyConnection, folder: Path, data_url: str, lake: LakeLocation
) -> Path:
    """Copy the catalog of the lake `con` has attached (`lake`) into
    `folder/lake/catalog.sqlite`, its data path set to `data_url` (where the data files are
    published): a DuckLake any DuckDB reads over S3 or HTTP, read-only, at every snapshot the
    lake kept. A SQLite file because DuckDB attaches one over HTTP (a DuckDB file too, but a
    DuckDB catalog's inlined rows are typed and a copy from SQLite or PostgreSQL would carry
    them as text)."""
    try:
        return _copy_catalog(con, folder, data_url, lake.kind)
    except duckdb.Error as error:
        text = scrubbed(str(error).strip().splitlines()[0] if str(error).strip() else "", lake)
        raise RemotePublishError(
            f"cannot copy the catalog of {lake.describe()} into {folder / LAKE_CATALOG}: "
            f"{text or type(error).__name__}"
        ) from None


def _copy_catalog(con: duckdb.DuckDBPyConnection, folder: Path, data_url: str, kind: str) -> Path:
    encrypted = con.execute(
        f"SELECT value FROM {LAKE_METADATA}.ducklake_metadata WHERE key = 'encrypted'"
    ).fetchone()
    if encrypted and str(encrypted[0]).lower() == "true":
        raise RemotePublishError("the lake is encrypted: its catalog holds the keys; not copied")
    extensions.load(con, extensions.SQLITE)
    target = folder / LAKE_CATALOG
    target.parent.mkdir(parents=True, exist_ok=True)
    alias = "published_lake_catalog"
    con.execute(f"ATTACH {quote_literal(str(target))} AS {alias} (TYPE sqlite)")
    try:
        if kind == "postgres":
            # its tables live in a schema, which a SQLite file has not: copied one by one
            for (table,) in con.execute(
                "SELECT tablename FROM postgres_query(?, ?) ORDER BY tablename",
                [LAKE_METADATA, POSTGRES_TABLES],
            ).fetchall():
                con.execute(
                    f"CREATE TABLE {alias}.{_identifier(table)} AS "
                    f"FROM {LAKE_METADATA}.{_identifier(table)}"
                )
        else:
            con.execute(f"COPY FROM DATABASE {LAKE_METADATA} TO {alias}")
        con.execute(
            f"UPDATE {alias}.ducklake_metadata SET value = ? "
            "WHERE key = 'data_path' AND scope IS NULL",
            [data_url],
        )
        copied = con.execute(f"SELECT max(snapshot_id) FROM {alias}.ducklake_snapshot").fetchone()
    finally:
        with contextlib.suppress(duckdb.Error):  # after a failure too: its error is the one
            con.execute(f"DETACH {alias}")
    if not copied or copied[0] != lake_snapshot(con):
        raise RemotePublishError(
            f"{target}: the copy ends at lake snapshot {copied[0] if copied else None}, the lake "
            f"at {lake_snapshot(con)}"
        )
    return target


def _identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'

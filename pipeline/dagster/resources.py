"""What every asset shares: where the data lives, which date a build describes, what the assets
of a run read in common, and how the values passed between assets are stored."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import Any

import dagster as dg
import duckdb
import orjson
from pydantic import PrivateAttr

from pipeline.normalise.entities import Resolver
from pipeline.raw.inventory import Inventory, Listing, take_inventory
from pipeline.raw.snapshots import parse_utc
from pipeline.raw.store import Store, open_store
from pipeline.sources.registry import Source, load_registry
from pipeline.sources.reviewed import ReviewedFiles
from pipeline.support.settings import Settings
from pipeline.warehouse.connection import SCRATCH_ALIAS, attach_as_of, connect, cursor
from pipeline.warehouse.staging import ensure_staging


class SpeedbookResource(dg.ConfigurableResource):
    """The locations and the as-of date of a build, and a per-run cache of what several assets
    read: the registry, the inventory, the alias tables and the reviewed files, each loaded on
    first use. Dagster makes one resource per run and process, so every asset of a
    `speedbook build` (in-process) shares one inventory, and a step in its own process (the
    UI's multiprocess executor) loads its own. Steps write the lake directly: the core build
    commits the core and the mart in one transaction, so readers see the previous build until
    it does."""

    registry: str
    warehouse: str
    exports: str
    metadata: str  # the folder of reviewed files
    catalog: str = ""  # the lake's catalog (pipeline/warehouse/lake.py); empty: the default
    lake_data: str = ""  # the lake's data folder or S3 prefix; empty: the default
    snapshots: str = ""  # the snapshot store (a folder or s3://...); empty: <warehouse>/raw
    releases: str = ""  # where releases are published beside exports/ (s3://...); empty: none
    release_cadence: str = ""  # how often a build publishes; empty: every build
    as_of: str = ""  # ISO 8601; empty means "every snapshot on disk"
    strict: bool = False  # publish no release while a snapshot in scope is rejected
    remake: bool = False  # make every measured figure again (--force), keeping none

    _lake: duckdb.DuckDBPyConnection | None = PrivateAttr(default=None)
    _staging_ready: bool = PrivateAttr(default=False)
    _as_of_ready: bool = PrivateAttr(default=False)
    _sources: dict[str, Source] | None = PrivateAttr(default=None)
    _inventories: dict[bool, Inventory] = PrivateAttr(default_factory=dict)
    _listing: Listing | None = PrivateAttr(default=None)
    _resolver: Resolver | None = PrivateAttr(default=None)
    _reviewed: ReviewedFiles | None = PrivateAttr(default=None)

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        as_of: datetime | None = None,
        *,
        strict: bool = False,
        remake: bool = False,
    ) -> SpeedbookResource:
        return cls(
            registry=str(settings.registry),
            warehouse=str(settings.warehouse),
            exports=str(settings.exports),
            metadata=str(settings.metadata),
            catalog=settings.catalog,
            lake_data=settings.lake_data,
            snapshots=settings.snapshots,
            releases=settings.releases,
            release_cadence=settings.release_cadence,
            as_of=as_of.isoformat() if as_of else "",
            strict=strict,
            remake=remake,
        )

    @property
    def settings(self) -> Settings:
        return Settings.resolve(
            self.registry,
            self.warehouse,
            self.exports,
            self.metadata,
            self.catalog or None,
            self.lake_data or None,
            snapshots=self.snapshots or None,
            releases=self.releases or None,
            release_cadence=self.release_cadence,
        )

    def _database(self) -> duckdb.DuckDBPyConnection:
        """The run's DuckDB, with the lake attached once per process: every asset of a run works
        in a session of its own on it (a cursor). Loading the lake's extensions and reading its
        catalog took 0.2-0.5 s per session when each asset opened its own database."""
        if self._lake is None:
            self._lake = connect(self.settings)
        return self._lake

    def connect(self, *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
        """A session on the lake (pipeline/warehouse/connection.py): where staging is written.
        `read_only` says what the caller does; every session reads the lake's snapshot as it
        was when the session's transaction began, whoever writes meanwhile."""
        return cursor(self._database())

    def staging(self) -> duckdb.DuckDBPyConnection:
        """A session on the lake whose staging tables fit their models (brought to them once
        per run: the catalog's queries cost half a second)."""
        session = self.connect()
        if not self._staging_ready:
            ensure_staging(session)
            self._staging_ready = True
        return session

    def build_session(self) -> duckdb.DuckDBPyConnection:
        """A session on where this build's core, mart and release history go: the lake, or for
        an --as-of build a database of its own beside it (`attach_as_of`)."""
        session = self.connect()
        if self.as_of:
            if not self._as_of_ready:
                attach_as_of(self._database(), self.settings)
                self._as_of_ready = True
            session.execute(f"USE {SCRATCH_ALIAS}")
        return session

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        if self._lake is not None:
            self._lake.close()
            self._lake = None

    @property
    def as_of_time(self) -> datetime | None:
        return parse_utc(self.as_of) if self.as_of else None

    def store(self) -> Store:
        """The snapshot store: a folder or an S3 prefix (Settings.snapshot_store)."""
        return open_store(self.settings.snapshot_store)

    def sources(self) -> dict[str, Source]:
        if self._sources is None:
            self._sources = load_registry(self.settings.registry)
        return self._sources

    def listing(self) -> Listing:
        """Every snapshot record of the store, read once per run (a large store takes seconds):
        the inventories and the release's citation check read it."""
        if self._listing is None:
            self._listing = Listing.of(self.store())
        return self._listing

    def inventory(self, *, whole_history: bool = False) -> Inventory:
        """The snapshots this build reads (up to its as-of time), or with `whole_history` every
        snapshot on disk. Read once per run: every asset of it sees the same snapshots."""
        whole = whole_history or not self.as_of
        if whole not in self._inventories:
            as_of = None if whole else self.as_of_time
            self._inventories[whole] = take_inventory(
                self.store(), self.sources(), as_of, listing=self.listing()
            )
        return self._inventories[whole]

    def resolver(self) -> Resolver:
        if self._resolver is None:
            self._resolver = Resolver.load(self.settings.metadata)
        return self._resolver

    def reviewed(self) -> ReviewedFiles:
        if self._reviewed is None:
            self._reviewed = ReviewedFiles.load(self.settings.metadata)
        return self._reviewed


class DocumentIOManager(dg.ConfigurableIOManager):
    """Passes JSON documents between assets (the exports, to the release) as one file per asset
    under the Dagster instance's storage: the same in a step of its own process as in-process.
    A step in the process that wrote a document (every step of `speedbook build`) takes the
    document itself while its file is still the one written: reading 30 MB of JSON back cost a
    poll build 0.2 s."""

    base_dir: str
    # file -> (what identifies the file as written, the document written into it)
    _written: dict[Path, tuple[tuple[int, int, int], dict[str, Any]]] = PrivateAttr(
        default_factory=dict
    )

    def _path(self, key: dg.AssetKey) -> Path:
        return Path(self.base_dir) / f"{key.to_python_identifier()}.json"

    def handle_output(self, context: dg.OutputContext, obj: dict[str, Any]) -> None:
        path = self._path(context.asset_key)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(_document_bytes(obj))
        os.replace(tmp, path)  # a reader sees the old document or the new, never half of one
        self._written[path] = (_identity(path), obj)

    def load_input(self, context: dg.InputContext) -> dict[str, Any]:
        path = self._path(context.asset_key)
        written = self._written.get(path)
        try:
            if written is not None and _identity(path) == written[0]:
                return written[1]
            data = path.read_bytes()
        except FileNotFoundError:
            raise dg.Failure(
                f"{path} is missing: materialise {context.asset_key.to_user_string()} first"
            ) from None
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError as error:
            raise dg.Failure(
                f"{path} is not the JSON document it should be ({error}): materialise "
                f"{context.asset_key.to_user_string()} again"
            ) from None


def _identity(path: Path) -> tuple[int, int, int]:
    """A file as written: another file renamed over it, or a write into it, changes this."""
    info = path.stat()
    return info.st_ino, info.st_size, info.st_mtime_ns


def _document_bytes(document: dict[str, Any]) -> bytes:
    """Compact JSON with sorted keys, written by orjson as the exports are."""
    return orjson.dumps(document, option=orjson.OPT_SORT_KEYS)


def build_resources(
    settings: Settings,
    as_of: datetime | None = None,
    *,
    strict: bool = False,
    remake: bool = False,
) -> dict[str, Any]:
    """The resources of the graph. Values between assets live under the instance's `storage/`
    with explicit IO managers, so an in-process run stores them as a multiprocess one does
    (Dagster's default would keep them in memory in-process)."""
    storage = settings.dagster_home / "storage"
    return {
        "speedbook": SpeedbookResource.from_settings(settings, as_of, strict=strict, remake=remake),
        "io_manager": dg.FilesystemIOManager(base_dir=str(storage)),
        "documents": DocumentIOManager(base_dir=str(storage / "documents")),
    }

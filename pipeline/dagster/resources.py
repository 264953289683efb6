"""What every asset shares: where the data lives, which date a build describes, what the assets
of a run read in common, and how the values passed between assets are stored."""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path
from typing import Any

import dagster as dg
import orjson
from pydantic import PrivateAttr

from pipeline.normalise.entities import Resolver
from pipeline.normalise.reviewed import ReviewedFiles
from pipeline.raw.inventory import Inventory, Listing, take_inventory
from pipeline.raw.snapshots import SnapshotStore, parse_utc
from pipeline.sources.registry import Source, load_registry
from pipeline.support.bulk import bulk_objects, long_lived_objects
from pipeline.support.settings import Settings
from pipeline.warehouse.swap import working_database


class SpeedbookResource(dg.ConfigurableResource):
    """The locations and the as-of date of a build, and a per-run cache of what several assets
    read: the registry, the inventory, the alias tables and the reviewed files, each loaded on
    first use. Dagster makes one resource per run and process, so every asset of a
    `speedbook build` (in-process) shares one inventory, and a step in its own process (the
    UI's multiprocess executor) loads its own.

    Every step writes the run's working copy of the warehouse (`database`), which the run's
    envelope (`speedbook build`, or the executor of a UI run) made before the first step and
    swaps in after the last; `in_place` writes the warehouse itself instead (tests that
    materialise part of the graph with `dg.materialize`)."""

    registry: str
    warehouse: str
    exports: str
    metadata: str  # the folder of reviewed files
    as_of: str = ""  # ISO 8601; empty means "every snapshot on disk"
    strict: bool = False  # publish no release while a snapshot in scope is rejected
    in_place: bool = False

    _run_id: str | None = PrivateAttr(default=None)
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
        in_place: bool = False,
    ) -> SpeedbookResource:
        return cls(
            registry=str(settings.registry),
            warehouse=str(settings.warehouse),
            exports=str(settings.exports),
            metadata=str(settings.metadata),
            as_of=as_of.isoformat() if as_of else "",
            strict=strict,
            in_place=in_place,
        )

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        run = context.run
        self._run_id = run.run_id if run is not None else None

    @property
    def database(self) -> Path:
        """The DuckDB file this run's steps read and write: the run's working copy."""
        settings = self.settings
        if self.in_place:
            return settings.database
        if self._run_id is None:
            raise dg.Failure("the warehouse resource is used outside a run")
        path = working_database(settings, self._run_id)
        if not path.is_file():  # a run made outside `speedbook build` and the job's executor
            raise dg.Failure(
                f"run {self._run_id} has no working copy of the warehouse ({path}): launch the "
                "`build` job (or Materialize) from the UI, or run `speedbook build`"
            )
        return path

    @property
    def settings(self) -> Settings:
        return Settings.resolve(self.registry, self.warehouse, self.exports, self.metadata)

    @property
    def as_of_time(self) -> datetime | None:
        return parse_utc(self.as_of) if self.as_of else None

    def store(self) -> SnapshotStore:
        return SnapshotStore(self.settings.raw_dir)

    def sources(self) -> dict[str, Source]:
        if self._sources is None:
            self._sources = load_registry(self.settings.registry)
        return self._sources

    def listing(self) -> Listing:
        """Every snapshot record of the store, read once per run (a large store takes seconds):
        the inventories and the release's citation check read it. Its records live as long as
        the run: made with the collector paused, then left out of its scans (a year of pages,
        117,000 records: 1.5 s listed with collections between them, 0.9 s without)."""
        if self._listing is None:
            with long_lived_objects():
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
        with bulk_objects():  # a 30 MB export is a million objects: no collection between them
            try:
                return json.loads(data) if data.startswith(_STANDARD) else orjson.loads(data)
            except ValueError as error:  # orjson's JSONDecodeError is one
                raise dg.Failure(
                    f"{path} is not the JSON document it should be ({error}): materialise "
                    f"{context.asset_key.to_user_string()} again"
                ) from None


def _identity(path: Path) -> tuple[int, int, int]:
    """A file as written: another file renamed over it, or a write into it, changes this."""
    info = path.stat()
    return info.st_ino, info.st_size, info.st_mtime_ns


# A document only the standard library can write opens with a space (JSON allows it; orjson's
# output opens with "{"), so that it is read back by the standard library too: orjson would read
# an integer past 64 bits as a float.
_STANDARD = b" "


def _document_bytes(document: dict[str, Any]) -> bytes:
    """Compact JSON with sorted keys. orjson, about 10x the standard library's speed on a 13 MB
    export (0.03 s against 0.32 s; reading it back 0.17 s against 0.27 s), at every build. It
    refuses integers past 64 bits, which the standard library writes; a NaN it writes as null,
    where the standard library refuses it: the export's blocking schema check, run on the
    document itself, refuses a NaN, so the release of that run never reads this file."""
    try:
        return orjson.dumps(document, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:
        text = json.dumps(document, ensure_ascii=False, sort_keys=True, allow_nan=False)
        return _STANDARD + text.encode("utf-8")


def build_resources(
    settings: Settings,
    as_of: datetime | None = None,
    *,
    strict: bool = False,
    in_place: bool = False,
) -> dict[str, Any]:
    """The resources of the graph. Values between assets live under the instance's `storage/`
    with explicit IO managers, so an in-process run stores them as a multiprocess one does
    (Dagster's default would keep them in memory in-process)."""
    storage = settings.dagster_home / "storage"
    return {
        "speedbook": SpeedbookResource.from_settings(
            settings, as_of, strict=strict, in_place=in_place
        ),
        "io_manager": dg.FilesystemIOManager(base_dir=str(storage)),
        "documents": DocumentIOManager(base_dir=str(storage / "documents")),
    }

"""Opening the warehouse the same way everywhere: an in-memory DuckDB session with the lake
attached as its default database (pipeline/warehouse/lake.py)."""

from __future__ import annotations

import os
import tempfile
import uuid
from pathlib import Path

import duckdb

from pipeline.support.duck import quote_literal, table_names
from pipeline.support.settings import Settings
from pipeline.warehouse.lake import LAKE_ALIAS, LakeLocation, attach

# DuckDB takes 80% of RAM by default; a build shares the machine, so it gets a fixed budget and
# spills sorts and joins to disk beyond it (SPEEDBOOK_DUCKDB_MEMORY overrides, e.g. "4GB"). A
# build's peak is this budget beside the release held in Python: at 4 days of polls 512 MB was
# no slower than 1 GB and kept the peak under 2 GiB (docs/performance.md).
MEMORY_ENV = "SPEEDBOOK_DUCKDB_MEMORY"
MEMORY_LIMIT = os.environ.get(MEMORY_ENV, "512MB")

__all__ = ["connect", "cursor", "lake_of", "session"]


def lake_of(settings: Settings) -> LakeLocation:
    """The lake these settings name (relative paths from the warehouse folder)."""
    return LakeLocation.parse(settings.catalog, settings.lake_data, base=settings.warehouse)


def _own_temp_directory() -> Path:
    """A folder of this session's own for what DuckDB spills: DuckDB names its spill files the
    same in every instance and deletes them all when one instance closes, so sessions sharing a
    folder (a reader beside a build, two workers) read each other's files ("Could not read enough
    bytes") or lose them. DuckDB creates the folder when it first spills and removes it when the
    session closes."""
    return Path(tempfile.gettempdir()) / f"speedbook-duckdb-{os.getpid()}-{uuid.uuid4().hex[:12]}"


def session() -> duckdb.DuckDBPyConnection:
    """A DuckDB session configured as every one of the build's is, with no lake attached."""
    con = duckdb.connect(
        config={
            "memory_limit": MEMORY_LIMIT,
            "allow_unsigned_extensions": False,  # the lake's extensions are signed binaries
            "autoinstall_known_extensions": False,  # never fetched behind a build's back
            "temp_directory": str(_own_temp_directory()),
        }
    )
    _configure(con)
    return con


def _configure(con: duckdb.DuckDBPyConnection) -> None:
    """The settings DuckDB keeps per session (a cursor starts without them)."""
    con.execute("SET TimeZone = 'UTC'")
    con.execute("SET enable_progress_bar = false")  # builds report their own progress


def cursor(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """Another session on `con`'s database, set up as `con` is: the same time zone, and the lake
    as its default database (a DuckDB cursor starts with neither)."""
    session = con.cursor()
    _configure(session)
    session.execute(f"USE {LAKE_ALIAS}")
    return session


def connect(
    settings: Settings, *, read_only: bool = False, snapshot: int | None = None
) -> duckdb.DuckDBPyConnection:
    """A session on the warehouse of `settings`; `snapshot`: as the lake was at that snapshot."""
    con = session()
    try:
        attach(con, lake_of(settings), read_only=read_only, snapshot=snapshot)
    except BaseException:
        con.close()
        raise
    return con


AS_OF_DATABASE = "as-of.duckdb"  # in the warehouse's state folder
SCRATCH_ALIAS = "as_of"


def attach_as_of(con: duckdb.DuckDBPyConnection, settings: Settings) -> None:
    """Attach, beside the lake `con` has, the database where the core, mart and release of an
    --as-of build go (`SCRATCH_ALIAS`): a DuckDB file of its own in the state folder, made again
    by each --as-of build, never the lake, whose core and mart stay the last full build's for
    its readers. Its `staging.<frame>` are views of the lake's staged facts, so the same SQL
    builds both; a session reads and writes it after `USE as_of`."""
    path = settings.state_dir / AS_OF_DATABASE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    con.execute(f"ATTACH {quote_literal(str(path))} AS {SCRATCH_ALIAS}")
    con.execute(f"CREATE SCHEMA IF NOT EXISTS {SCRATCH_ALIAS}.staging")
    for table in sorted(table_names(con, "staging", LAKE_ALIAS)):
        con.execute(
            f"CREATE OR REPLACE VIEW {SCRATCH_ALIAS}.staging.{table} AS "
            f"FROM {LAKE_ALIAS}.staging.{table}"
        )

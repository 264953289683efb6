"""Dagster's SQLite event log, with its engines kept instead of made afresh for every statement.

Dagster's `SqliteEventLogStorage` creates a SQLAlchemy engine, connects, and disposes of the
engine again for each event it stores and each query it answers (`NullPool`). That costs about
20 ms per event on this project's machine: more than half of the wall time of a build that brings
300 new snapshots, which records 1,400 events (a materialisation per raw asset, and three events
per freshness check: planned, output, evaluation). This subclass:

- keeps one engine per database file it opens (the index shard and the shards of the runs it
  touches, the last `KEPT_ENGINES` of them), with SQLAlchemy's connection pool, so that a
  statement is compiled once per process, not once per use;
- sets `synchronous=NORMAL`, SQLite's recommended setting with the write-ahead log Dagster
  already uses: a commit no longer waits for the disk, and a crash of the machine (not of the
  process) can lose only the last events, never corrupt the file. Since its connections stay
  open, so do the logs (the stock class's closing connections removed them): each is
  checkpointed every 256 pages and cut back to 1 MiB;
- remembers the tables it has found, which the stock class looks up, with an engine of its own,
  before most statements (a third of the lookups of a build);
- remembers the columns of the asset-key table and the data migrations it has found complete,
  which the stock class asks for five times in each asset-record lookup (a column listing or a
  query each time): 300 freshness checks look up their 300 raw assets one at a time, 0.64 s of
  which this leaves 0.35 s;
- opens a database already stamped with a migration revision without asking Alembic for the
  newest revision: the stock class loads every migration script for it (0.1 s per database, two
  per build) and then only uses it to tell whether the database was ever stamped.

Files, tables and layout are Dagster's own: an instance written by the stock class reads the
same. The instance's `dagster.yaml` (pipeline/dagster/runner.py) names it as its event log
storage.
"""

from __future__ import annotations

import os
import sqlite3
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from alembic.runtime.migration import MigrationContext
from dagster._core.storage.event_log import SqliteEventLogStorage
from dagster._core.storage.sqlite import SQLITE_BUSY_TIMEOUT_SECONDS
from dagster._serdes import ConfigurableClassData
from sqlalchemy import create_engine, event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

KEPT_ENGINES = 8  # the index shard, and the run shards used last: a UI reads many runs
# A connection kept open keeps its database's write-ahead log, which the stock class's closing
# connections removed: checkpoint it every 256 pages (1 MiB) and cut it back to 1 MiB after.
PRAGMAS = ("synchronous=NORMAL", "wal_autocheckpoint=256", "journal_size_limit=1048576")


def _pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    for pragma in PRAGMAS:
        cursor.execute(f"PRAGMA {pragma}")
    cursor.close()


def _remembered(found: set[str], name: str, ask: Callable[[str], bool]) -> bool:
    """`ask(name)`, asked again only while the answer is no (what is found stays found)."""
    if name in found:
        return True
    if ask(name):
        found.add(name)
        return True
    return False


class PooledSqliteEventLogStorage(SqliteEventLogStorage):
    """`SqliteEventLogStorage` whose engines outlive a statement (see the module docstring)."""

    def __init__(self, base_dir: str, inst_data: ConfigurableClassData | None = None) -> None:
        self._engines: OrderedDict[str, Engine] = OrderedDict()
        self._engines_pid = os.getpid()
        self._tables: set[str] = set()  # tables of the index shard known to exist
        self._asset_key_columns: set[str] = set()  # columns of its asset_keys table
        self._secondary_indexes: set[str] = set()  # data migrations known to be complete
        super().__init__(base_dir, inst_data)

    @classmethod
    def from_config_value(  # ty: ignore[invalid-method-override]
        cls, inst_data: ConfigurableClassData | None, config_value: Any
    ) -> PooledSqliteEventLogStorage:
        return cls(inst_data=inst_data, **config_value)

    def _engine(self, shard: str) -> Engine:
        if self._engines_pid != os.getpid():  # a forked child must not share its parent's sockets
            for engine in self._engines.values():
                engine.dispose(close=False)
            self._engines.clear()
            self._engines_pid = os.getpid()
        engine = self._engines.get(shard)
        if engine is None:
            engine = create_engine(
                self.conn_string_for_shard(shard),
                connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS},
            )
            event.listen(engine, "connect", _pragmas)
            self._engines[shard] = engine
            while len(self._engines) > KEPT_ENGINES:
                _, oldest = self._engines.popitem(last=False)
                oldest.dispose()
        else:
            self._engines.move_to_end(shard)
        if shard not in self._initialized_dbs:  # as the stock class: also after a wipe
            self._initdb(engine)
            self._initialized_dbs.add(shard)
        return engine

    def _initdb(self, engine: Engine, for_index_shard: bool = False) -> None:
        """What the stock `_initdb` does to a database stamped with a revision: nothing. It
        compares the database's revision with the newest one only for being both set, and the
        newest one is always set, so a stamped database needs no look at the scripts. Anything
        else (a new database, one stamped by nobody, a read that fails) is left to it."""
        try:
            with engine.connect() as connection:
                stamped = MigrationContext.configure(connection).get_current_revision()
        except (SQLAlchemyError, sqlite3.Error):  # the stock method meets it too, and retries
            stamped = None
        if not stamped:
            super()._initdb(engine, for_index_shard=for_index_shard)

    @contextmanager
    def _connect(self, shard: str) -> Iterator[Connection]:  # type: ignore[override]
        with self._db_lock, self._engine(shard).connect() as conn, conn.begin():
            yield conn

    def has_table(self, table_name: str) -> bool:
        """Asked before most statements (the stock answer opens an engine of its own, inside a
        transaction, too, so it cannot take the lock): a table once found stays. Dagster adds
        tables by migration and never drops one while running."""
        return _remembered(self._tables, table_name, super().has_table)

    def has_asset_key_col(self, column_name: str) -> bool:
        """As `has_table`: a column is added by a schema migration and never dropped."""
        return _remembered(self._asset_key_columns, column_name, super().has_asset_key_col)

    def has_secondary_index(self, name: str) -> bool:
        """A data migration found complete stays complete: only a wipe removes its row."""
        return _remembered(self._secondary_indexes, name, super().has_secondary_index)

    def _dispose_engines(self) -> None:
        with self._db_lock:
            for engine in self._engines.values():
                engine.dispose()
            self._engines.clear()

    def wipe(self) -> None:
        self._dispose_engines()  # the files are deleted: no connection may stay open on them
        self._tables.clear()
        self._asset_key_columns.clear()
        self._secondary_indexes.clear()
        super().wipe()

    def dispose(self) -> None:
        self._dispose_engines()
        super().dispose()

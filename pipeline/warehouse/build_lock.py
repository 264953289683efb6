"""One build at a time per lake, on one machine or many.

On this machine: an flock on `<warehouse>/build.lock` (pipeline/support/locking.py), which the
kernel drops when the process dies. A lake whose catalog is in PostgreSQL is shared by machines
that share no flock, so there a build also holds a PostgreSQL advisory lock in the catalog's
database for its whole duration: a session lock, which the server drops when the build's
connection closes (a killed build's too; TCP keepalives find a machine that vanished). The
catalog's database holds one lake, so the lock's key is a constant there.

The flock is taken first, then the advisory lock, on every machine in that order, so two builds
never wait for each other crosswise. The connection string never reaches a message: errors name
the lake as `LakeLocation.describe` does, and what libpq says is masked (`lake.scrubbed`).
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from pipeline.support.locking import LockBusy, warehouse_lock
from pipeline.support.settings import Settings

if TYPE_CHECKING:
    from pipeline.warehouse.lake import LakeLocation

# pg_advisory_lock(int4, int4): "spdb" and 1, the build; pg_locks shows them as classid, objid
ADVISORY_KEY = (0x73706462, 1)
POLL_SECONDS = 0.2  # as the flock's wait polls
CONNECT_TIMEOUT_S = 10
# libpq's keepalives: a build whose machine vanished loses the lock in about a minute
KEEPALIVES = {"keepalives": 1, "keepalives_idle": 30, "keepalives_interval": 10}
WAIT_HINT = "wait for it to finish or pass --wait SECONDS"


@contextmanager
def build_lock(settings: Settings, wait_seconds: float = 0.0) -> Iterator[None]:
    """Hold the build lock of the warehouse of `settings` (LockBusy after `wait_seconds`): its
    flock, and with the catalog on PostgreSQL the advisory lock in the catalog's database too.
    A connection that fails raises LakeError, without the connection string."""
    deadline = time.monotonic() + wait_seconds
    with warehouse_lock(settings.lock_file, wait_seconds):
        if not settings.catalog.startswith("postgres:"):
            yield  # the embedded lake: one machine, the flock is the lock
            return
        from pipeline.warehouse.connection import lake_of  # DuckDB, only for a remote catalog

        with advisory_lock(lake_of(settings), max(0.0, deadline - time.monotonic())):
            yield


def holder_name() -> str:
    """The application name a build's lock connection shows in pg_stat_activity: who holds it."""
    return f"speedbook build pid {os.getpid()} on {socket.gethostname()}"[:63]


@contextmanager
def advisory_lock(lake: LakeLocation, wait_seconds: float) -> Iterator[None]:
    """Hold the advisory lock in the database of `lake`'s catalog (a PostgreSQL one), taking it
    within `wait_seconds` or raising LockBusy; the lock goes with the connection."""
    import psycopg2  # dagster-postgres's driver: only a catalog on PostgreSQL needs it

    from pipeline.warehouse.lake import LakeError, scrubbed

    try:
        con = psycopg2.connect(
            lake.target,
            connect_timeout=CONNECT_TIMEOUT_S,
            application_name=holder_name(),
            **KEEPALIVES,
        )
    except psycopg2.ProgrammingError:  # libpq could not parse it, and quotes the part it failed on
        raise LakeError(
            f"cannot take the build lock in the catalog of {lake.describe()}: the catalog is not "
            "a libpq connection string (keyword=value pairs, or a postgresql:// URL)"
        ) from None
    except psycopg2.Error as error:
        raise LakeError(
            f"cannot take the build lock in the catalog of {lake.describe()}: "
            f"{scrubbed(_first_line(error), lake)}"
        ) from None
    try:
        con.autocommit = True
        with con.cursor() as cur:
            if not _take(cur, wait_seconds):
                raise LockBusy(
                    f"another build holds the warehouse ({lake.describe()}; "
                    f"{_holder(cur) or 'holder unknown'}); {WAIT_HINT}"
                )
        yield
    finally:
        con.close()  # the session ends, and the lock with it


def _take(cur: Any, wait_seconds: float) -> bool:
    """pg_try_advisory_lock, polled for up to `wait_seconds` (never a blocking wait: a build
    told to wait 10 s gives up after 10 s, as with the flock)."""
    deadline = time.monotonic() + wait_seconds
    while True:
        cur.execute("SELECT pg_try_advisory_lock(%s, %s)", ADVISORY_KEY)
        if cur.fetchone()[0]:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL_SECONDS)


def _holder(cur: Any) -> str | None:
    """Who holds the advisory lock: the holder's application name and since when it is
    connected, when this role may see them (pg_stat_activity hides other roles' sessions)."""
    cur.execute(
        "SELECT a.application_name, "
        "to_char(a.backend_start AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') "
        "FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
        "WHERE l.locktype = 'advisory' AND l.granted AND l.classid = %s AND l.objid = %s "
        "AND l.objsubid = 2 AND l.database = "
        "(SELECT oid FROM pg_database WHERE datname = current_database())",
        ADVISORY_KEY,
    )
    row = cur.fetchone()
    if row is None or not row[0]:
        return None
    return f"{row[0]} since {row[1]}"


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__

"""Where the warehouse lives: a DuckLake, a catalog database plus a folder of Parquet files.

The catalog is a SQLite file by default (several local processes read it while a build writes),
a DuckDB file (one process only), or a PostgreSQL database (many machines); the data is a local
folder or an S3 prefix. Only the attach string changes between them: every query is the same.
A setting names each (SPEEDBOOK_CATALOG, SPEEDBOOK_LAKE_DATA; docs/operations.md):

    sqlite:warehouse/catalog.sqlite       (the default)
    duckdb:warehouse/catalog.ducklake
    postgres:dbname=speedbook host=db.example.org user=speedbook   (the password: PGPASSWORD)

Credentials come from the environment only: PostgreSQL's from libpq's variables (PGPASSWORD,
PGUSER, ...), S3's from the standard AWS variables (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
AWS_SESSION_TOKEN, AWS_REGION, AWS_ENDPOINT_URL for a server other than AWS). They never reach a
message: errors name the catalog's kind and the data path, nothing more.
"""

from __future__ import annotations

import os
import re
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import duckdb

from pipeline.raw.s3_store import Credentials
from pipeline.support.duck import quote_literal
from pipeline.support.errors import LakeError
from pipeline.warehouse import extensions

CATALOG_KINDS = {"sqlite": extensions.SQLITE, "duckdb": None, "postgres": extensions.POSTGRES}
LAKE_ALIAS = "lake"  # the name the lake is attached under in every connection
DEFAULT_CATALOG_FILE = "catalog.sqlite"
DEFAULT_DATA_FOLDER = "lake"
# Rows an insert keeps in the catalog instead of writing a Parquet file of its own: only the
# tiniest, since rows inlined into a SQLite catalog are written one by one (a build's core tables,
# a few thousand rows, took 27 s to commit inlined, 0.3 s as files). Maintenance merges the small
# files a poll at a time leaves (pipeline/warehouse/maintenance.py).
INLINING_ROW_LIMIT = 100


@dataclass(frozen=True)
class LakeLocation:
    """A lake's catalog (`kind` and `target`: a file path or a libpq connection string) and the
    folder or S3 prefix of its data files."""

    kind: str  # sqlite | duckdb | postgres
    target: str
    data_path: str

    @classmethod
    def parse(cls, catalog: str, data_path: str, *, base: Path) -> LakeLocation:
        """`catalog` as `<kind>:<target>`; relative file paths are taken from `base`."""
        kind, sep, target = catalog.partition(":")
        if not sep or kind not in CATALOG_KINDS or not target.strip():
            raise LakeError(
                f"catalog {catalog[:80]!r} is not one of sqlite:<file>, duckdb:<file>, "
                "postgres:<connection string>"
            )
        if kind != "postgres":
            target = str((base / target).resolve()) if not Path(target).is_absolute() else target
        if not data_path.startswith("s3://"):
            folder = Path(data_path)
            data_path = str((folder if folder.is_absolute() else base / folder).resolve())
        return cls(kind, target.strip(), data_path.rstrip("/") + "/")

    @property
    def local(self) -> bool:
        """Both the catalog and the data are on this machine's disk."""
        return self.kind != "postgres" and not self.data_path.startswith("s3://")

    @property
    def attach_target(self) -> str:
        prefix = "" if self.kind == "duckdb" else f"{self.kind}:"
        return f"ducklake:{prefix}{self.target}"

    def describe(self) -> str:
        """For messages: the catalog without its connection options (they may hold a user)."""
        where = "PostgreSQL" if self.kind == "postgres" else self.target
        return f"DuckLake (catalog {self.kind}: {where}; data {self.data_path})"


def attach(
    con: duckdb.DuckDBPyConnection,
    lake: LakeLocation,
    *,
    read_only: bool = False,
    snapshot: int | None = None,
) -> None:
    """Attach `lake` as `lake` and make it the default database. `snapshot`: read the lake as
    it was at that snapshot (time travel; read-only)."""
    extensions.load(con, extensions.LAKE)
    helper = CATALOG_KINDS[lake.kind]
    if helper is not None:
        extensions.load(con, helper)
    if lake.data_path.startswith("s3://"):
        extensions.load(con, extensions.HTTPFS)
        _s3_secret(con, lake)
    elif not read_only:
        Path(lake.data_path).mkdir(parents=True, exist_ok=True)
        if lake.kind != "postgres":
            Path(lake.target).parent.mkdir(parents=True, exist_ok=True)
    if lake.kind == "sqlite" and not read_only:
        _write_ahead_log(Path(lake.target))
    options = [f"DATA_PATH {quote_literal(lake.data_path)}"]
    if lake.local:
        # The catalog keeps the absolute data path it was created with, and its files relative
        # to it: a warehouse folder that was moved or copied is read where it is now.
        options.append("OVERRIDE_DATA_PATH true")
    if snapshot is not None:
        options.append(f"SNAPSHOT_VERSION {int(snapshot)}")
    if read_only or snapshot is not None:
        options.append("READ_ONLY")
    else:
        options.append(f"DATA_INLINING_ROW_LIMIT {INLINING_ROW_LIMIT}")
    try:
        con.execute(
            f"ATTACH {quote_literal(lake.attach_target)} AS {LAKE_ALIAS} ({', '.join(options)})"
        )
    except duckdb.Error as error:
        raise LakeError(
            f"cannot open the warehouse, {lake.describe()}: {scrubbed(_first_line(error), lake)}"
        ) from None
    con.execute(f"USE {LAKE_ALIAS}")


def _write_ahead_log(catalog: Path) -> None:
    """SQLite's write-ahead log on the catalog (kept in the file): readers then never lock the
    build's commits out. In SQLite's default rollback journal a reader's shared lock makes a
    commit fail with "database is locked"; the benchmark's four readers failed whole builds so."""
    with closing(sqlite3.connect(catalog, timeout=30)) as db:
        if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            db.execute("PRAGMA journal_mode=WAL")


def _s3_secret(con: duckdb.DuckDBPyConnection, lake: LakeLocation) -> None:
    """A DuckDB secret for the data path's bucket, from the AWS variables (never from a file)."""
    credentials = Credentials.from_env(os.environ, f"the lake's data path {lake.data_path}")
    config = credentials.config
    options = [
        f"KEY_ID {quote_literal(config['access_key_id'])}",
        f"SECRET {quote_literal(config['secret_access_key'])}",
        f"REGION {quote_literal(config['region'])}",
        f"SCOPE {quote_literal(lake.data_path)}",
    ]
    if "token" in config:
        options.append(f"SESSION_TOKEN {quote_literal(config['token'])}")
    endpoint = config.get("endpoint")
    if endpoint:
        parts = urlsplit(endpoint)
        options += [
            f"ENDPOINT {quote_literal(parts.netloc)}",
            "URL_STYLE 'path'",
            f"USE_SSL {'false' if credentials.allow_http else 'true'}",
        ]
    try:
        con.execute(f"CREATE OR REPLACE TEMPORARY SECRET lake_data (TYPE s3, {', '.join(options)})")
    except duckdb.Error:  # its text could carry the values: say only what failed
        raise LakeError(f"cannot use the credentials for {lake.data_path}") from None


_PASSWORD_OPTION = re.compile(r"(password\s*=\s*)(\S+)", re.IGNORECASE)
_URL_USERINFO = re.compile(r"(postgres(?:ql)?://[^:/@\s]*:)([^@\s]*)(@)", re.IGNORECASE)
SECRET_VARIABLES = ("PGPASSWORD", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")


def scrubbed(text: str, lake: LakeLocation) -> str:
    """`text` with every secret it could carry masked: passwords in a connection string or URL,
    the values of the secret variables, the catalog's connection string itself."""
    if lake.kind == "postgres":
        text = text.replace(lake.target, "<catalog>")
    text = _URL_USERINFO.sub(r"\1***\3", _PASSWORD_OPTION.sub(r"\1***", text))
    for name in SECRET_VARIABLES:
        value = os.environ.get(name)
        if value and len(value) >= 4:
            text = text.replace(value, "***")
    return text


def _first_line(error: BaseException) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


def lake_snapshot(con: duckdb.DuckDBPyConnection) -> int:
    """The lake's newest snapshot id, as this connection sees it."""
    row = con.execute(f"SELECT max(snapshot_id) FROM {LAKE_ALIAS}.snapshots()").fetchone()
    return int(row[0]) if row and row[0] is not None else 0

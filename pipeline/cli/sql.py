"""`speedbook sql "QUERY"`: one read-only query on the warehouse, printed as a table, CSV or JSON.

Three locks keep it read-only: the DuckDB file is opened with read_only=True; the query must parse
(with DuckDB's own parser) as one reading statement; and external access (files, URLs, extension
downloads) is switched off and the configuration locked before the query runs.

Three limits keep it cheap: a timeout (a timer thread interrupts the connection), DuckDB's memory
limit, and a row limit on the table format. Rows are fetched in batches and printed as they come,
so CSV and JSON of any length never sit in memory whole.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import math
import re
import sys
import textwrap
import threading
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, NamedTuple, TextIO

import duckdb

from pipeline.cli.tables import render_table
from pipeline.support.errors import CommandError
from pipeline.support.settings import Settings

NAME = "sql"
HELP = "run one read-only SQL query on the warehouse (table, CSV or JSON)"
DESCRIPTION = """\
Run one read-only query on the warehouse (<warehouse>/speedbook.duckdb) and print the result.
Allowed: SELECT, WITH ... SELECT, FROM ..., VALUES, DESCRIBE, SHOW, SUMMARIZE, EXPLAIN of a
query, and the PRAGMAs that list the schema (table_info, show_tables, ...). Anything else
(DROP, INSERT, UPDATE, CREATE, ATTACH, COPY, INSTALL, LOAD, SET, several statements) is refused,
and files and URLs cannot be read. A query stops after --timeout seconds (default 60) and may
use --memory-limit of memory (default 1GB); the table format prints the first --max-rows rows
(default 1,000) and says how many there are. Run `speedbook build` first.

The views for analysts are in schema mart (sql/DATA_DICTIONARY.md describes every column)."""
EPILOG = """examples:
  speedbook sql "FROM mart.leaderboard WHERE rank = 1"
  speedbook sql "SELECT * FROM mart.peak_vs_live" --format csv > peak_vs_live.csv
  speedbook sql "DESCRIBE mart.source_health"
  speedbook sql - < query.sql"""

FORMATS = ("table", "csv", "json")
CELL_WIDTH = 60  # table format only; csv and json print values whole
DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MEMORY_LIMIT = "1GB"
DEFAULT_MAX_ROWS = 1000  # table format only; csv and json print every row
FETCH_BATCH = 10_000  # rows converted to Python at a time
Batch = list[tuple[Any, ...]]
Batches = Iterable[Batch]
_MEMORY = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]i?B)\s*$", re.IGNORECASE)
READING = {duckdb.StatementType.SELECT}
# PRAGMAs that only describe the schema or the database
PRAGMAS = frozenset(
    {
        "table_info",
        "show",
        "show_tables",
        "show_tables_expanded",
        "show_databases",
        "database_list",
        "database_size",
        "storage_info",
        "version",
        "platform",
    }
)
_EXPLAIN = re.compile(r"^\s*EXPLAIN\s+(?:(ANALY[SZ]E)\s+)?(.*)$", re.IGNORECASE | re.DOTALL)
_PRAGMA = re.compile(r"^\s*PRAGMA\s+([A-Za-z_][A-Za-z0-9_]*)", re.IGNORECASE)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("query", metavar="QUERY", help="the SQL query; - reads it from stdin")
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="table",
        help="table (default; long values cut at 60 characters, floats rounded to 4 "
        "decimals, at most --max-rows rows), csv or json (every row, values whole)",
    )
    parser.add_argument(
        "--timeout",
        type=_positive(float, "--timeout"),
        default=DEFAULT_TIMEOUT_S,
        metavar="SECONDS",
        help=f"stop the query after this long (default {DEFAULT_TIMEOUT_S:g})",
    )
    parser.add_argument(
        "--memory-limit",
        type=memory_limit,
        default=DEFAULT_MEMORY_LIMIT,
        metavar="SIZE",
        help=f"DuckDB's memory limit for the query, e.g. 500MB or 2GB "
        f"(default {DEFAULT_MEMORY_LIMIT})",
    )
    parser.add_argument(
        "--max-rows",
        type=_positive(int, "--max-rows"),
        default=DEFAULT_MAX_ROWS,
        metavar="N",
        help=f"rows the table format prints (default {DEFAULT_MAX_ROWS:,}); csv and json "
        "print every row",
    )


def _positive(kind: type[float] | type[int], option: str) -> Any:
    """An argparse type: a finite number above zero (float() alone takes nan, inf, -3)."""

    def parse(text: str) -> float | int:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{option} {text!r} is not a number") from None
        if not math.isfinite(value) or value <= 0:
            raise argparse.ArgumentTypeError(f"{option} {text!r} must be above zero")
        return value

    return parse


def memory_limit(text: str) -> str:
    """A --memory-limit value: a positive number and a unit (KB, MB, GB, TB or KiB...TiB),
    checked here because it goes into a SET statement."""
    match = _MEMORY.match(text)
    if not match or float(match.group(1)) <= 0:
        raise argparse.ArgumentTypeError(
            f"--memory-limit {text!r} is not a size such as 500MB or 2GB"
        )
    return f"{match.group(1)}{match.group(2).upper().replace('I', 'i')}"


@dataclass(frozen=True)
class Limits:
    """What one query may take."""

    timeout_s: float = DEFAULT_TIMEOUT_S
    memory_limit: str = DEFAULT_MEMORY_LIMIT


class RefusedQuery(ValueError):
    """The text is not one reading statement."""


def _one_line(error: Exception) -> str:
    """DuckDB's message without the caret diagram: the lines before the first blank one."""
    lines = str(error).strip().split("\n\n", 1)[0].splitlines()
    return " ".join(line.strip() for line in lines if line.strip())


def statement_name(text: str, kind: duckdb.StatementType | None) -> str:
    """The statement as its text names it (`INSTALL`, `ANALYZE`, `FORCE CHECKPOINT`): DuckDB files
    several under one type (INSTALL is a LOAD, ANALYZE a VACUUM, CHECKPOINT a CALL). After a
    WITH clause the type names it (`WITH ... DELETE` is a DELETE)."""
    words: list[str] = []
    for offset, token in duckdb.tokenize(text):
        if token == duckdb.token_type.comment:
            continue
        word = re.match(r"[A-Za-z_]+", text[offset:])
        if token != duckdb.token_type.keyword or not word:
            break
        words.append(word.group().upper())
        if words[0] != "FORCE" or len(words) == 2:
            break
    if not words or words[0] == "WITH":
        return kind.name if kind is not None else "this"
    return " ".join(words)


def check_query(text: str) -> duckdb.StatementType:
    """Raise RefusedQuery unless `text` is exactly one reading statement; return its type."""
    try:
        statements = duckdb.extract_statements(text)
    except duckdb.Error as error:
        raise RefusedQuery(f"not valid SQL: {_one_line(error)}") from None
    if not statements:
        raise RefusedQuery("the query is empty")
    if len(statements) > 1:
        raise RefusedQuery(f"one statement at a time, got {len(statements)}")
    statement = statements[0]
    try:
        kind: duckdb.StatementType | None = statement.type
    except ValueError:  # a type this Python client has no name for (UPDATE EXTENSIONS)
        kind = None
    if kind in READING:
        return kind
    name = statement_name(statement.query, kind)
    if kind == duckdb.StatementType.EXPLAIN:
        match = _EXPLAIN.match(statement.query)
        if match and match.group(1):
            raise RefusedQuery("EXPLAIN ANALYZE runs the statement; use EXPLAIN")
        if match and check_query(match.group(2)) in READING:
            return kind
        raise RefusedQuery("EXPLAIN only of a reading query")
    if name == "PRAGMA":  # a PRAGMA that sets something is a SET
        match = _PRAGMA.match(statement.query)
        if kind == duckdb.StatementType.PRAGMA and match and match.group(1).lower() in PRAGMAS:
            return kind
        allowed = ", ".join(sorted(PRAGMAS))
        raise RefusedQuery(f"only the PRAGMAs that describe the schema are allowed ({allowed})")
    raise RefusedQuery(
        f"{name} statements are refused: the warehouse is read-only here "
        "(SELECT, WITH, FROM, VALUES, DESCRIBE, SHOW, SUMMARIZE, EXPLAIN, PRAGMA table_info)"
    )


def open_read_only(database: Path, limits: Limits) -> duckdb.DuckDBPyConnection:
    """Open the warehouse for reading only, with no access to files, URLs or extensions, and the
    memory limit set before the configuration is locked."""
    if not database.is_file():
        raise CommandError(f"no warehouse at {database}: run `speedbook build` first")
    try:
        con = duckdb.connect(
            str(database),
            read_only=True,
            config={
                "enable_external_access": False,
                "autoinstall_known_extensions": False,
                "autoload_known_extensions": False,
            },
        )
    except duckdb.IOException as error:
        if "lock" in str(error).lower():
            raise CommandError(
                f"{database} is locked by another process writing to it: try again when it is done"
            ) from None
        raise CommandError(f"cannot open {database}: {_one_line(error)}") from None
    except duckdb.Error as error:
        raise CommandError(f"cannot open {database}: {_one_line(error)}") from None
    con.execute("SET TimeZone = 'UTC'")
    con.execute(f"SET memory_limit = '{memory_limit(limits.memory_limit)}'")
    con.execute("SET enable_progress_bar = false")  # stderr keeps to one line of error
    con.execute("SET lock_configuration = true")
    return con


class Query(NamedTuple):
    columns: list[str]
    kind: duckdb.StatementType  # as check_query found it: an EXPLAIN prints as a drawing
    batches: Iterator[Batch]  # the rows, FETCH_BATCH at a time


def _batches(cursor: duckdb.DuckDBPyConnection) -> Iterator[Batch]:
    while batch := cursor.fetchmany(FETCH_BATCH):
        yield batch


@contextmanager
def open_query(database: Path, text: str, limits: Limits) -> Iterator[Query]:
    """Check and start one read-only query; its rows are fetched while the block runs, all of it
    under the timeout. A refusal, a timeout, a memory overrun or any DuckDB error becomes one
    CommandError line."""
    try:
        kind = check_query(text)
    except RefusedQuery as error:
        raise CommandError(f"refused: {error}") from None
    con = open_read_only(database, limits)
    expired = threading.Event()

    def stop() -> None:
        expired.set()
        with suppress(duckdb.Error):
            con.interrupt()

    timer = threading.Timer(limits.timeout_s, stop)
    timer.daemon = True
    timer.start()
    try:
        cursor = con.execute(text)
        columns = [d[0] for d in cursor.description] if cursor.description else []
        yield Query(columns, kind, _batches(cursor) if columns else iter(()))
    except duckdb.Error as error:
        if expired.is_set():
            raise CommandError(
                f"the query ran longer than {limits.timeout_s:g} s and was stopped "
                "(raise the limit with --timeout SECONDS)"
            ) from None
        if isinstance(error, duckdb.OutOfMemoryException):
            raise CommandError(
                f"{_one_line(error)} (the limit is --memory-limit {limits.memory_limit})"
            ) from None
        raise CommandError(_one_line(error)) from None
    finally:
        timer.cancel()
        timer.join()  # an interrupt in flight lands before the connection closes
        con.close()


def _plain(value: Any) -> Any:
    """A value JSON can hold; nested lists, structs and maps keep their shape."""
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta | uuid.UUID):
        return str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def _text(value: Any) -> str | None:
    """One value as CSV text: nested values as JSON, null as an empty field."""
    value = _plain(value)
    if value is None:
        return None
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _table_cell(value: Any) -> object:
    if isinstance(value, float) and not (math.isnan(value) or math.isinf(value)):
        return f"{round(value, 4):,}"
    text = _text(value)
    if text is None:
        return None
    text = " ".join(text.split())
    return text if len(text) <= CELL_WIDTH else text[: CELL_WIDTH - 1] + "…"


def write_json(columns: Sequence[str], batches: Batches, out: TextIO) -> None:
    """Every row as a JSON array of objects, the same text json.dumps(..., indent=2) gives for
    the whole list, written one record at a time."""
    first = True
    for batch in batches:
        for row in batch:
            record = {name: _plain(value) for name, value in zip(columns, row, strict=True)}
            text = json.dumps(record, ensure_ascii=False, indent=2)
            out.write(("[\n" if first else ",\n") + textwrap.indent(text, "  "))
            first = False
    out.write("[]\n" if first else "\n]\n")


def write_csv(columns: Sequence[str], batches: Batches, out: TextIO) -> None:
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for batch in batches:
        writer.writerows([_text(v) for v in row] for row in batch)


def write_table(
    columns: Sequence[str],
    batches: Batches,
    out: TextIO,
    *,
    max_rows: int,
    explain: bool = False,
) -> None:
    """The first `max_rows` rows as a table, then how many rows there were; the rest are
    fetched only to be counted."""
    shown: list[tuple[Any, ...]] = []
    total = 0
    for batch in batches:
        total += len(batch)
        if len(shown) < max_rows:
            shown += batch[: max_rows - len(shown)]
    if explain:  # the plan is a drawing: print it as it is
        out.write("\n".join(str(row[-1]) for row in shown) + "\n")
        return
    out.write(render_table(columns, [[_table_cell(v) for v in row] for row in shown]) + "\n")
    if total > len(shown):
        out.write(f"(showing {len(shown):,} of {total:,} rows; use --format csv for all)\n")
    else:
        out.write(f"({total:,} row{'' if total == 1 else 's'})\n")


def run(args: argparse.Namespace, settings: Settings) -> int:
    text = sys.stdin.read() if args.query == "-" else args.query
    limits = Limits(timeout_s=args.timeout, memory_limit=args.memory_limit)
    out = sys.stdout
    with open_query(settings.database, text, limits) as query:
        if args.format == "json":
            write_json(query.columns, query.batches, out)
        elif args.format == "csv":
            write_csv(query.columns, query.batches, out)
        else:
            explain = query.kind == duckdb.StatementType.EXPLAIN
            write_table(query.columns, query.batches, out, max_rows=args.max_rows, explain=explain)
        out.flush()  # a reader that stopped early: BrokenPipeError, which cli.main ends quietly
    return 0

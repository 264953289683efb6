"""`speedbook sql "QUERY"`: one read-only query on the warehouse, printed as a table, CSV or JSON.

Three locks keep it read-only: the DuckDB file is opened with read_only=True; the query must parse
(with DuckDB's own parser) as one reading statement; and external access (files, URLs, extension
downloads) is switched off and the configuration locked before the query runs.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import io
import json
import math
import os
import re
import sys
import uuid
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any, NamedTuple

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
and files and URLs cannot be read. Run `speedbook build` first.

The views for analysts are in schema mart (sql/DATA_DICTIONARY.md describes every column)."""
EPILOG = """examples:
  speedbook sql "FROM mart.leaderboard WHERE rank = 1"
  speedbook sql "SELECT * FROM mart.peak_vs_live" --format csv > peak_vs_live.csv
  speedbook sql "DESCRIBE mart.source_health"
  speedbook sql - < query.sql"""

FORMATS = ("table", "csv", "json")
CELL_WIDTH = 60  # table format only; csv and json print values whole
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
        "decimals), csv or json (values whole)",
    )


class RefusedQuery(ValueError):
    """The text is not one reading statement."""


def _one_line(error: Exception) -> str:
    """DuckDB's message without the caret diagram: the lines before the first blank one."""
    lines = str(error).strip().split("\n\n", 1)[0].splitlines()
    return " ".join(line.strip() for line in lines if line.strip())


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
    kind = statement.type
    if kind in READING:
        return kind
    if kind == duckdb.StatementType.EXPLAIN:
        match = _EXPLAIN.match(statement.query)
        if match and match.group(1):
            raise RefusedQuery("EXPLAIN ANALYZE runs the statement; use EXPLAIN")
        if match and check_query(match.group(2)) in READING:
            return kind
        raise RefusedQuery("EXPLAIN only of a reading query")
    if kind == duckdb.StatementType.PRAGMA:
        match = _PRAGMA.match(statement.query)
        if match and match.group(1).lower() in PRAGMAS:
            return kind
        allowed = ", ".join(sorted(PRAGMAS))
        raise RefusedQuery(f"only the PRAGMAs that describe the schema are allowed ({allowed})")
    raise RefusedQuery(
        f"{kind.name} statements are refused: the warehouse is read-only here "
        "(SELECT, WITH, FROM, VALUES, DESCRIBE, SHOW, SUMMARIZE, EXPLAIN, PRAGMA table_info)"
    )


def open_read_only(database: Path) -> duckdb.DuckDBPyConnection:
    """Open the warehouse for reading only, with no access to files, URLs or extensions."""
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
                f"{database} is being written (a build is running?): try again when it finishes"
            ) from None
        raise CommandError(f"cannot open {database}: {_one_line(error)}") from None
    except duckdb.Error as error:
        raise CommandError(f"cannot open {database}: {_one_line(error)}") from None
    con.execute("SET TimeZone = 'UTC'")
    con.execute("SET lock_configuration = true")
    return con


class QueryResult(NamedTuple):
    columns: list[str]
    rows: list[tuple[Any, ...]]
    kind: duckdb.StatementType  # as check_query found it: an EXPLAIN prints as a drawing


def run_query(database: Path, text: str) -> QueryResult:
    """Check and run one read-only query; return column names, rows and the statement type."""
    try:
        kind = check_query(text)
    except RefusedQuery as error:
        raise CommandError(f"refused: {error}") from None
    con = open_read_only(database)
    try:
        cursor = con.execute(text)
        if cursor.description is None:
            return QueryResult([], [], kind)
        return QueryResult([d[0] for d in cursor.description], cursor.fetchall(), kind)
    except duckdb.Error as error:
        raise CommandError(_one_line(error)) from None
    finally:
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


def format_result(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], fmt: str, *, explain: bool = False
) -> str:
    if fmt == "json":
        records = [
            {name: _plain(value) for name, value in zip(columns, row, strict=True)} for row in rows
        ]
        return json.dumps(records, ensure_ascii=False, indent=2)
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([_text(v) for v in row] for row in rows)
        return buffer.getvalue().rstrip("\n")
    if explain:  # the plan is a drawing: print it as it is
        return "\n".join(str(row[-1]) for row in rows)
    table = render_table(columns, [[_table_cell(v) for v in row] for row in rows])
    return f"{table}\n({len(rows)} row{'' if len(rows) == 1 else 's'})"


def run(args: argparse.Namespace, settings: Settings) -> int:
    text = sys.stdin.read() if args.query == "-" else args.query
    result = run_query(settings.database, text)
    explain = result.kind == duckdb.StatementType.EXPLAIN
    try:
        print(format_result(result.columns, result.rows, args.format, explain=explain))
        sys.stdout.flush()
    except BrokenPipeError:  # `speedbook sql ... | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0

"""`speedbook sql "QUERY"`: one read-only query on the warehouse, printed as a table, CSV or JSON.

Three locks keep it read-only: the lake is attached read-only; the query must parse (with
DuckDB's own parser) as one reading statement; and external access (files, URLs, extension
downloads) is switched off, but for the lake's own catalog and data, and the configuration locked
before the query runs. It reads the last completed build (the lake's newest snapshot: a build
commits its core and mart in one transaction), or, with --snapshot or --release, the warehouse
as an earlier build left it (the lake's time travel).

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
from pipeline.support.duck import quote_literal
from pipeline.support.errors import CommandError
from pipeline.support.settings import Settings
from pipeline.warehouse.connection import connect, lake_of
from pipeline.warehouse.lake import LakeError

NAME = "sql"
HELP = "run one read-only SQL query on the warehouse (table, CSV or JSON)"
DESCRIPTION = """\
Run one read-only query on the warehouse (the lake: <warehouse>/catalog.sqlite and
<warehouse>/lake/ by default) and print the result. It reads the last completed build, even while
another build runs; --snapshot N or --release VERSION read the warehouse as that lake snapshot or
the build of that release left it.
Allowed: a query in any of DuckDB's forms (SELECT, WITH ..., FROM ..., PIVOT, UNPIVOT, VALUES,
TABLE, DESCRIBE, SHOW, SUMMARIZE), EXPLAIN of a query, and the PRAGMAs that list the schema
(table_info, show_tables, ...). Anything that writes or changes a setting (DROP, INSERT, UPDATE,
CREATE, ATTACH, COPY, INSTALL, LOAD, SET, EXPLAIN ANALYZE, several statements) is refused,
and files and URLs cannot be read. A query stops after --timeout seconds (default 60) and may
use --memory-limit of memory (default 1GB); the table format prints the first --max-rows rows
(default 1,000) and says how many there are. Run `speedbook build` first.

The views for analysts are in schema mart (docs/data-dictionary.md describes every column)."""
EPILOG = """examples:
  speedbook sql "FROM mart.leaderboard WHERE rank = 1"
  speedbook sql "SELECT * FROM mart.peak_vs_live" --format csv > peak_vs_live.csv
  speedbook sql "DESCRIBE mart.source_health"
  speedbook sql "PIVOT mart.leaderboard ON tier USING max(output_tokens_per_s) GROUP BY model_id"
  speedbook sql "SELECT snapshot_id, snapshot_time FROM lake.snapshots()"
  speedbook sql "FROM mart.provider_headline" --release 2026.11.29
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
# DuckDB runs a PIVOT whose columns it must first look up (no IN list) as several statements
# of its own making: a MULTI, read only when the statement the text holds is a query
COMPOSITE = duckdb.StatementType.MULTI
QUERY_FORMS = (
    "SELECT, WITH, FROM, PIVOT, UNPIVOT, VALUES, TABLE, DESCRIBE, SHOW, SUMMARIZE, "
    "EXPLAIN of a query, PRAGMA table_info"
)
# words that start a query: a refusal never names one of these as the refused statement
_QUERY_WORDS = frozenset(
    {"SELECT", "WITH", "FROM", "PIVOT", "PIVOT_WIDER", "UNPIVOT", "PIVOT_LONGER", "VALUES"}
    | {"TABLE", "DESCRIBE", "SHOW", "SUMMARIZE", "EXPLAIN"}
)
_ANALYZE = frozenset({"ANALYZE", "ANALYSE"})
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
    when = parser.add_mutually_exclusive_group()
    when.add_argument(
        "--snapshot",
        type=_positive(int, "--snapshot"),
        metavar="N",
        help="read the warehouse as lake snapshot N left it (`FROM lake.snapshots()` lists them)",
    )
    when.add_argument(
        "--release",
        metavar="VERSION",
        help="read the warehouse as the build of release VERSION left it (history.releases)",
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


class _Token(NamedTuple):
    offset: int
    kind: duckdb.token_type
    text: str


def _one_line(error: Exception) -> str:
    """DuckDB's message without the caret diagram: the lines before the first blank one."""
    lines = str(error).strip().split("\n\n", 1)[0].splitlines()
    return " ".join(line.strip() for line in lines if line.strip())


def _tokens(text: str) -> list[_Token]:
    """DuckDB's own tokens of `text`, comments left out, each with its text."""
    found = duckdb.tokenize(text)
    if not found:  # an empty statement (DuckDB 1.5 splits a PIVOT into an empty CREATE and it)
        return []
    ends = [offset for offset, _ in found[1:]] + [len(text)]
    return [
        _Token(offset, kind, text[offset:end].strip())
        for (offset, kind), end in zip(found, ends, strict=True)
        if kind != duckdb.token_type.comment
    ]


def _first_word(text: str) -> str:
    """The statement's first word, comments skipped, in capitals."""
    return next((t.text.upper() for t in _tokens(text)), "")


def _type(statement: duckdb.Statement) -> duckdb.StatementType | None:
    try:
        return statement.type
    except ValueError:  # a type this Python client has no name for (UPDATE EXTENSIONS)
        return None


def statement_name(text: str, kind: duckdb.StatementType | None) -> str:
    """The statement as its text names it (`INSTALL`, `ANALYZE`, `FORCE CHECKPOINT`): DuckDB files
    several under one type (INSTALL is a LOAD, ANALYZE a VACUUM, CHECKPOINT a CALL). After a
    WITH clause the type names it (`WITH ... DELETE` is a DELETE), unless DuckDB only knows it
    as its own composite of several statements (a MULTI): then it is "this"."""
    words: list[str] = []
    for token in _tokens(text):
        if token.kind != duckdb.token_type.keyword:
            break
        words.append(token.text.upper())
        if words[0] != "FORCE" or len(words) == 2:
            break
    if words and words[0] not in _QUERY_WORDS:
        return " ".join(words)
    if kind is not None and kind not in READING and kind != COMPOSITE:
        return kind.name
    return "this"


def _refusal(name: str) -> RefusedQuery:
    """What is refused and why, in words that never name a query as the refused statement."""
    what = "this statement is not a query and is" if name == "this" else f"{name} statements are"
    return RefusedQuery(
        f"{what} refused: `speedbook sql` runs queries only ({QUERY_FORMS}), so nothing it runs "
        "can change the warehouse or its settings"
    )


def _is_query(text: str) -> bool:
    """Whether DuckDB's parser takes the statement `text` as a subquery: only a query can be one,
    so a PIVOT reads and a CREATE TABLE ... AS PIVOT does not. `text` is one statement already."""
    tokens = _tokens(text)
    end = next((t.offset for t in tokens if t.text == ";"), len(text))
    try:  # the newline ends a trailing -- comment before the closing bracket
        wrapped = duckdb.extract_statements(f"SELECT * FROM (\n{text[:end]}\n)")
    except duckdb.Error:
        return False
    if _expanded(wrapped):  # DuckDB 1.5: the enum a PIVOT needs, then the wrapping SELECT
        kinds = [_type(s) for s in wrapped if _type(s) != duckdb.StatementType.TRANSACTION]
        return kinds[-1] in READING and all(k == duckdb.StatementType.CREATE for k in kinds[:-1])
    return len(wrapped) == 1 and _type(wrapped[0]) in READING | {COMPOSITE}


def _explained(text: str) -> str:
    """The statement an EXPLAIN explains; RefusedQuery for EXPLAIN ANALYZE, which runs it."""
    tokens = _tokens(text)
    words = [t.text.upper() for t in tokens]
    at = 1  # after EXPLAIN
    if at < len(words) and words[at] in _ANALYZE:
        raise RefusedQuery("EXPLAIN ANALYZE runs the statement; use EXPLAIN")
    if at < len(words) and words[at] == "(":  # options: EXPLAIN (FORMAT json) ...
        close = words.index(")", at) if ")" in words[at:] else len(words) - 1
        if _ANALYZE & set(words[at:close]):
            raise RefusedQuery("EXPLAIN (ANALYZE) runs the statement; use EXPLAIN")
        at = close + 1
    return text[tokens[at].offset :] if at < len(tokens) else ""


def _expanded(statements: list[duckdb.Statement]) -> bool:
    """DuckDB 1.5's expansion of one statement (a PIVOT with no IN list: the enum it needs, then
    the statement, perhaps in a transaction of its own): several statements, none with text."""
    return len(statements) > 1 and not any(s.query.strip() for s in statements)


def _pieces(text: str) -> list[str]:
    """The statements of `text` as its own `;` separate them (DuckDB's tokens: a ; in a string
    or a comment separates nothing), those with nothing but comments left out. DuckDB's own
    list of statements cannot count them: it expands one PIVOT into several, and gives the
    expansion text of its own (a cut rewrite of the PIVOT) when a ; ends it."""
    ends = [
        offset
        for offset, kind in duckdb.tokenize(text)
        if kind == duckdb.token_type.operator and text[offset] == ";"
    ]
    starts = [0] + [end + 1 for end in ends]
    pieces = [text[start:end] for start, end in zip(starts, [*ends, len(text)], strict=True)]
    return [piece for piece in pieces if duckdb.tokenize(piece)]


def check_query(text: str) -> duckdb.StatementType:
    """Raise RefusedQuery unless `text` is exactly one reading statement; return the type it
    runs as (EXPLAIN for an EXPLAIN of a PIVOT, which DuckDB files as a MULTI)."""
    # before DuckDB's parser, which runs IMPORT DATABASE and PRAGMA import_database as it
    # parses: they read the schema.sql of the folder they name
    first = _first_word(text)
    if first == "IMPORT":
        raise _refusal(first)
    if first == "PRAGMA" and not _describes(text):
        raise _pragma_refusal()
    try:
        statements = duckdb.extract_statements(text)
    except duckdb.Error as error:
        raise RefusedQuery(f"not valid SQL: {_one_line(error)}") from None
    if not statements:
        raise RefusedQuery("the query is empty")
    pieces = _pieces(text)
    if len(pieces) > 1 or (len(statements) > 1 and sum(bool(s.query) for s in statements) > 1):
        firsts = "; ".join(_first_word(p) or "?" for p in pieces)
        raise RefusedQuery(
            f"one statement at a time, got {max(len(pieces), 2)} ({firsts}): a write could hide "
            "after a ;"
        )
    if len(statements) > 1:
        # DuckDB 1.5 splits a PIVOT into statements of its own (with no text of their own, or a
        # cut rewrite when a ; ends it): the statement given is the text's one, a composite as
        # DuckDB 2 calls it
        kind: duckdb.StatementType | None = COMPOSITE
        query = pieces[0]
    else:
        kind = _type(statements[0])
        query = statements[0].query
    if kind in READING:
        return kind
    first = _first_word(query)
    if kind == duckdb.StatementType.EXPLAIN or (kind == COMPOSITE and first == "EXPLAIN"):
        explained = _explained(query)
        try:
            check_query(explained)
        except RefusedQuery as error:
            if str(error).startswith(("not valid SQL", "the query is empty")):
                raise RefusedQuery("EXPLAIN only of a reading query") from None
            raise
        return duckdb.StatementType.EXPLAIN
    if kind == COMPOSITE and _is_query(query):
        return kind
    name = statement_name(query, kind)
    if name == "PRAGMA":  # a PRAGMA that sets something is a SET
        if kind == duckdb.StatementType.PRAGMA and _describes(query):
            return kind
        raise _pragma_refusal()
    raise _refusal(name)


def _describes(text: str) -> bool:
    """Whether the PRAGMA `text` is one of those that only describe the schema."""
    words = [t.text.lower() for t in _tokens(text)[1:2]]
    return bool(words) and words[0] in PRAGMAS


def _pragma_refusal() -> RefusedQuery:
    allowed = ", ".join(sorted(PRAGMAS))
    return RefusedQuery(f"only the PRAGMAs that describe the schema are allowed ({allowed})")


def release_snapshot(settings: Settings, version: str) -> int:
    """The lake snapshot the build of release `version` committed (history.releases)."""
    with open_lake(settings) as con:
        try:
            row = con.execute(
                "SELECT lake_snapshot FROM history.releases WHERE version = ?", [version]
            ).fetchone()
        except duckdb.CatalogException:
            row = None
    if row is None:
        raise CommandError(f"no release {version!r} in history.releases (`speedbook releases`)")
    if row[0] is None:
        raise CommandError(f"release {version} does not name the lake snapshot it was built from")
    return int(row[0])


def open_lake(settings: Settings, snapshot: int | None = None) -> duckdb.DuckDBPyConnection:
    """The lake, attached read-only (at `snapshot`, if given)."""
    lake = lake_of(settings)
    if lake.local and not Path(lake.target).is_file():
        raise CommandError(f"no warehouse at {lake.target}: run `speedbook build` first")
    try:
        return connect(settings, read_only=True, snapshot=snapshot)
    except LakeError as error:
        raise CommandError(str(error)) from None


def open_read_only(
    settings: Settings, limits: Limits, snapshot: int | None = None
) -> duckdb.DuckDBPyConnection:
    """Open the warehouse for reading only, with no access to files, URLs or extensions but the
    lake's own, and the memory limit set before the configuration is locked."""
    con = open_lake(settings, snapshot)
    lake = lake_of(settings)
    allowed = [lake.data_path] + ([lake.target] if lake.kind != "postgres" else [])
    con.execute(f"SET allowed_directories = [{', '.join(map(quote_literal, allowed))}]")
    con.execute("SET enable_external_access = false")
    con.execute("SET autoload_known_extensions = false")
    con.execute(f"SET memory_limit = '{memory_limit(limits.memory_limit)}'")
    con.execute("SET lock_configuration = true")
    return con


class Query(NamedTuple):
    columns: list[str]
    kind: duckdb.StatementType  # as check_query found it: an EXPLAIN prints as a drawing
    batches: Iterator[Batch]  # the rows, FETCH_BATCH at a time


def _batches(cursor: duckdb.DuckDBPyConnection) -> Iterator[Batch]:
    while batch := cursor.fetchmany(FETCH_BATCH):
        yield batch


def _execute(con: duckdb.DuckDBPyConnection, text: str) -> duckdb.DuckDBPyConnection:
    """Run the checked query `text`. The statements DuckDB 1.5 expands one PIVOT into (the enum
    it needs, the statement, perhaps in a transaction) run one by one up to the last that is not
    the transaction's end, whose COMMIT would otherwise replace the rows (EXPLAIN of such a PIVOT
    printed nothing)."""
    statements = duckdb.extract_statements(text)
    if len(statements) == 1:
        return con.execute(text)
    transaction = duckdb.StatementType.TRANSACTION
    last = max(i for i, s in enumerate(statements) if _type(s) != transaction)
    for statement in statements[:last]:
        con.execute(statement)
    return con.execute(statements[last])


@contextmanager
def open_query(
    settings: Settings, text: str, limits: Limits, snapshot: int | None = None
) -> Iterator[Query]:
    """Check and start one read-only query; its rows are fetched while the block runs, all of it
    under the timeout. A refusal, a timeout, a memory overrun or any DuckDB error becomes one
    CommandError line."""
    try:
        kind = check_query(text)
    except RefusedQuery as error:
        raise CommandError(f"refused: {error}") from None
    con = open_read_only(settings, limits, snapshot)
    expired = threading.Event()

    def stop() -> None:
        expired.set()
        with suppress(duckdb.Error):
            con.interrupt()

    timer = threading.Timer(limits.timeout_s, stop)
    timer.daemon = True
    timer.start()
    try:
        cursor = _execute(con, text)
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
    snapshot = release_snapshot(settings, args.release) if args.release else args.snapshot
    with open_query(settings, text, limits, snapshot) as query:
        if args.format == "json":
            write_json(query.columns, query.batches, out)
        elif args.format == "csv":
            write_csv(query.columns, query.batches, out)
        else:
            explain = query.kind == duckdb.StatementType.EXPLAIN
            write_table(query.columns, query.batches, out, max_rows=args.max_rows, explain=explain)
        out.flush()  # a reader that stopped early: BrokenPipeError, which cli.main ends quietly
    return 0

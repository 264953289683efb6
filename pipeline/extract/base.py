"""What every parser shares: its input, its error, and validation against the staged models."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from operator import itemgetter
from pathlib import PurePath
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pandera.errors as pa_errors
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.raw.snapshots import SnapshotMeta
from pipeline.schema.ddl import arrow_schema
from pipeline.schema.ddl import columns as ddl_columns
from pipeline.schema.sql_checks import passes
from pipeline.schema.staging import FRAMES
from pipeline.sources.registry import Source
from pipeline.sources.reviewed import ReviewedFiles
from pipeline.support.duck import registered
from pipeline.support.text import TextDecodeError, decode_text


class ExtractError(ValueError):
    """A snapshot could not be read as its format expects. The message names the source, the
    snapshot and what was expected, so a maintainer knows which page changed and how."""

    def __init__(self, snapshot_id: str, message: str) -> None:
        super().__init__(f"{snapshot_id}: {message}")
        self.snapshot_id = snapshot_id


@dataclass(frozen=True)
class SnapshotInput:
    meta: SnapshotMeta
    source: Source
    data: bytes
    # The build's reviewed files, for the parsers that read them (`Parser.reads`).
    reviewed: ReviewedFiles | None = None

    @property
    def snapshot_id(self) -> str:
        return self.meta.snapshot_id

    @property
    def observed_at(self) -> pd.Timestamp:
        return pd.Timestamp(self.meta.retrieved_at)

    def fail(self, message: str) -> ExtractError:
        return ExtractError(self.snapshot_id, message)

    def reviewed_files(self) -> ReviewedFiles:
        if self.reviewed is None:
            raise self.fail(f"{self.source.format} is read through the reviewed files; none given")
        return self.reviewed

    def text(self) -> str:
        try:
            return decode_text(self.data, self.meta.content_type, self.snapshot_id)
        except TextDecodeError as error:
            # decode_text already names the snapshot; do not name it twice.
            message = str(error).removeprefix(f"{self.snapshot_id}: ")
            raise ExtractError(self.snapshot_id, message) from None


Frames = dict[str, pd.DataFrame]
ParseFunction = Callable[[SnapshotInput], Frames]


@dataclass(frozen=True)
class Parser:
    """A format's parser. `version` is part of the extraction cache key: bump it whenever the
    parser's output for the same bytes would change. A parser whose output also depends on
    reviewed files names them in `reads`; their digests join the key (`cache_version`)."""

    format: str
    version: str
    frames: tuple[str, ...]
    parse: ParseFunction
    reads: tuple[str, ...] = ()  # file names in the metadata folder, e.g. "claims.toml"

    def cache_version(self, digests: Mapping[str, str] | None) -> str:
        """`version`, then `+<file stem>.<digest>` per file it reads (`digests`: the reviewed
        files', `ReviewedFiles.digests`): what the staging cache keys on."""
        if not self.reads:
            return self.version
        if digests is None:
            raise ValueError(f"parser {self.format} reads {', '.join(self.reads)}: none given")
        missing = [name for name in self.reads if name not in digests]
        if missing:
            raise ValueError(f"parser {self.format} reads {', '.join(missing)}: no such file")
        return self.version + "".join(
            f"+{PurePath(name).stem}.{digests[name]}" for name in self.reads
        )


_PROVENANCE = ("source_id", "snapshot_id", "observed_at")


def _summarise(errors: pa_errors.SchemaErrors, limit: int = 6) -> str:
    cases = errors.failure_cases
    duplicate = cases["check"].astype(str) == "multiple_fields_uniqueness"
    # Provenance columns repeat on every row of a snapshot: naming them says nothing.
    cases = cases[~(duplicate & cases["column"].isin(_PROVENANCE))]
    parts: dict[str, None] = {}
    for row in cases.head(200).itertuples(index=False):
        column = getattr(row, "column", None) or "frame"
        if row.check == "multiple_fields_uniqueness":
            parts[f"duplicate row: {column} {row.failure_case!r} appears more than once"] = None
        else:
            parts[f"{column}: {row.check} failed for {row.failure_case!r}"] = None
    shown = list(parts)[:limit]
    more = (len(parts) if len(cases) <= 200 else len(cases)) - limit
    return "; ".join(shown) + (f"; and {more} more" if more > 0 else "")


class Records(list):
    """Rows of a staged frame whose validation was deferred to a batch (see `deferred`): the rows
    as the parser gave them, and the provenance every row takes unless it gives its own."""

    def __init__(self, rows: Iterable[Mapping[str, Any]], provenance: dict[str, Any]) -> None:
        super().__init__(row if type(row) is dict else dict(row) for row in rows)
        self.provenance = provenance

    def merged(self) -> list[dict[str, Any]]:
        """The rows with their provenance columns."""
        rows = [self.provenance | row for row in self]
        for key, value in self.provenance.items():
            for row in rows:
                if row[key] is None:
                    row[key] = value
        return rows


_deferred = threading.local()


@contextmanager
def deferred() -> Iterator[None]:
    """Within this block `validated` returns `Records`: the caller validates many snapshots' rows
    in one frame, which is much faster than a frame per snapshot."""
    _deferred.on = True
    try:
        yield
    finally:
        _deferred.on = False


def frame_of(frame_name: str, records: Records | Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    columns = list(FRAMES[frame_name].to_schema().columns)
    rows = records.merged() if isinstance(records, Records) else list(records)
    return pd.DataFrame.from_records(rows, columns=columns)


def staged_table(frame_name: str, parts: Sequence[Records]) -> pa.Table:
    """Rows of many snapshots as one Arrow table of the frame's model types, built column by
    column in Arrow (a DataFrame from row dicts took twice as long, and Pandera then coerced its
    object columns), in one call for the whole chunk (a call per snapshot cost 0.1 ms each, a
    chunk of pages a thousand of them). A provenance column keeps the rows' own values (a
    source that dates its figures itself) and takes the snapshot's where a row gives none: a
    null is no value of its own. A value Arrow cannot hold as its column's type (a string in a
    number column, an integer beyond 64 bits) raises `pa.ArrowException` or OverflowError, and a
    null where the model allows none ValueError; the caller then takes the pandas path, where
    Pandera's coercion decides."""
    model = FRAMES[frame_name]
    schema = arrow_schema(model)
    table = _dict_rows_table([row for records in parts for row in records], schema)
    # each row's snapshot, as positions into the parts
    owner = pa.array(np.repeat(np.arange(len(parts)), [len(records) for records in parts]))
    columns = []
    for field in schema:
        column = table.column(field.name)
        if field.name in _PROVENANCE:
            given = pa.array([records.provenance[field.name] for records in parts], field.type)
            column = pc.coalesce(column, pc.take(given, owner))
        columns.append(_nan_as_null(column))
    built = pa.Table.from_arrays(columns, schema=schema)
    # what goes into DuckDB is this table, not the frame Pandera validates, which coerces a null
    # flag to False: a null the model does not allow is the pandas path's to decide
    for name, _type, nullable, _description in ddl_columns(model):
        if not nullable and built.column(name).null_count:
            raise ValueError(f"{frame_name}: a null in {name}, which allows none")
    return built


def _dict_rows_table(rows: list[dict[str, Any]], schema: pa.Schema) -> pa.Table:
    """`pa.Table.from_pylist(rows, schema=schema)`, a column at a time where every row has the
    keys of the first (a parser's rows come from one literal): the values taken out of the rows
    by one `itemgetter` in C, and each column converted whole. An OpenRouter poll's 2,300
    endpoint rows of 35 fields: 13.5 ms by from_pylist, 6.3 ms so."""
    keys = list(rows[0]) if rows else []
    if not keys or len(set(map(len, rows))) != 1:
        return pa.Table.from_pylist(rows, schema=schema)
    try:  # as many keys as the first row, and each of its keys: the same keys
        if len(keys) == 1:  # itemgetter of one key gives the value, not a tuple of one
            values = {keys[0]: [row[keys[0]] for row in rows]}
        else:
            columns = zip(*map(itemgetter(*keys), rows), strict=True)
            values = dict(zip(keys, columns, strict=True))
    except KeyError:
        return pa.Table.from_pylist(rows, schema=schema)
    return pa.Table.from_arrays(
        [
            pa.array(values[field.name], field.type)
            if field.name in values
            else pa.nulls(len(rows), field.type)
            for field in schema
        ],
        schema=schema,
    )


def _nan_as_null(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """NaN is a null, as pandas (and so the pandas path) reads it."""
    if not pa.types.is_floating(column.type):
        return column
    return pc.if_else(pc.is_nan(column), pa.scalar(None, column.type), column)


_STAGED = "staged_rows"  # the name a staged table is read by in passes_in_sql


def passes_in_sql(con: duckdb.DuckDBPyConnection, frame_name: str, table: pa.Table) -> bool:
    """Whether a staged Arrow table (`staged_table`: the model's columns and types) passes its
    model's checks, asked of DuckDB where the table is (`con`, any connection; sql_checks.passes:
    never looser than Pandera). True means Pandera would pass it too, at a tenth of its time (one
    OpenRouter poll's four frames: 0.04 s against 0.3 s); False leaves the verdict to Pandera."""
    with registered(con, _STAGED, table):
        return passes(con, FRAMES[frame_name], _STAGED)


def validate_frame(frame_name: str, frame: pd.DataFrame) -> pd.DataFrame:
    """Validate with the frame's model; raises ValueError with a short summary."""
    try:
        return FRAMES[frame_name].validate(frame, lazy=True)
    except pa_errors.SchemaErrors as errors:
        raise ValueError(f"{frame_name} failed validation: {_summarise(errors)}") from None
    except pa_errors.SchemaError as error:
        raise ValueError(f"{frame_name} failed validation: {error}") from None


def validated(
    frame_name: str, snapshot: SnapshotInput, rows: Sequence[Mapping[str, Any]]
) -> pd.DataFrame:
    """Build a staged frame from row dicts (adding provenance columns) and validate it lazily."""
    provenance = {
        "source_id": snapshot.source.id,
        "snapshot_id": snapshot.snapshot_id,
        "observed_at": snapshot.observed_at,
    }
    records = Records(rows, provenance)
    if getattr(_deferred, "on", False):
        return records  # type: ignore[return-value]
    try:
        return validate_frame(frame_name, frame_of(frame_name, records))
    except ValueError as error:
        raise snapshot.fail(str(error)) from None

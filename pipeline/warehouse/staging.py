"""Extraction with a cache: each snapshot is parsed once per parser version, and its frames are
kept in the warehouse's `staging` schema, keyed by snapshot.

A snapshot is re-read only when its parser's version changed, its last extraction failed, or its
file was damaged and is good again. A file whose size, mtime or ctime moved since it was
extracted is hashed: the same bytes keep their staged rows (a copied warehouse, a touched file),
other bytes make the snapshot damaged. The ctime is what catches an edit that kept the size and
put the old mtime back (nobody can set a ctime).

Snapshots are parsed in chunks, in worker processes when there is enough work; a chunk's rows
are validated together (one Pandera call per frame, falling back to one snapshot at a time only
to name a culprit) and written in one transaction, so a killed build keeps every finished chunk
and loses none. Memory stays bounded by the chunk size.
"""

from __future__ import annotations

import itertools
import json
import multiprocessing
import os
import stat
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from typing import NamedTuple

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.extract import PARSERS, ExtractError, SnapshotInput
from pipeline.extract.base import (
    Records,
    deferred,
    frame_of,
    passes_in_sql,
    staged_table,
    validate_frame,
)
from pipeline.raw.snapshots import SnapshotDamaged, SnapshotMeta, still_verified
from pipeline.raw.store import Store, open_store
from pipeline.schema.ddl import sync_tables
from pipeline.schema.staging import FRAMES
from pipeline.sources.registry import Source
from pipeline.sources.reviewed import ReviewedFiles
from pipeline.support.duck import registered, transaction
from pipeline.support.faults import pause_point
from pipeline.support.file_keys import FileKey
from pipeline.support.progress import report
from pipeline.support.sizes import runs
from pipeline.warehouse.connection import MEMORY_LIMIT
from pipeline.warehouse.table_statistics import record_statistics

EXTRACTIONS_DDL = """
CREATE TABLE IF NOT EXISTS staging.extractions (
    snapshot_id VARCHAR NOT NULL,
    source_id VARCHAR NOT NULL,
    format VARCHAR NOT NULL,
    parser_version VARCHAR NOT NULL,
    sha256 VARCHAR NOT NULL,
    file_size BIGINT NOT NULL,
    file_mtime_ns BIGINT NOT NULL,
    status VARCHAR NOT NULL,      -- ok | failed | damaged
    error VARCHAR,
    row_counts VARCHAR,           -- JSON {frame: rows}
    extracted_at TIMESTAMPTZ NOT NULL,
    file_ctime_ns BIGINT
)
"""
# Below both, starting workers (~1.5 s) costs more than it saves: a thousand pages, or 64 MB as
# received (30 half-hourly polls, which take a second each to parse and validate).
PARALLEL_THRESHOLD = 1_000
PARALLEL_BYTES = 64 * 1024 * 1024
CHUNK = 1024  # snapshots per chunk at most...
# ...and at most this many bytes (as received) unless one snapshot alone is larger: a chunk's rows
# are proportional to its bytes, and a chunk of 1,024 half-hourly polls (2 MB each) held 19 million
# rows, 10 GB in one worker; with two workers holding two chunks each, 32 MB chunks took a week
# of polls to 2.1 GiB, 16 MB to 1.75 GiB, in the same time
CHUNK_BYTES = 16 * 1024 * 1024
WRITER_MEMORY = "256MB"  # DuckDB's budget in the writing process while workers parse


def ensure_staging(con: duckdb.DuckDBPyConnection) -> None:
    """Create the staging tables, or bring those of an older build to their models
    (`sync_tables`). A table rebuilt empty forgets the extractions of the formats that fill it,
    so their snapshots are read again: staging is a cache, nothing is lost."""
    with transaction(con):
        con.execute("CREATE SCHEMA IF NOT EXISTS staging")
        con.execute(EXTRACTIONS_DDL)
        for name in sync_tables(con, "staging", FRAMES):
            formats = [p.format for p in PARSERS.values() if name in p.frames]
            con.execute(
                "DELETE FROM staging.extractions WHERE format IN (SELECT unnest(?))", [formats]
            )
    record_statistics(con, ("staging",))  # the tables of sources not read stay empty


@dataclass
class ExtractReport:
    extracted: int = 0
    cached: int = 0
    failed: list[str] = field(default_factory=list)
    damaged: list[str] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)
    new_snapshot_ids: list[str] = field(default_factory=list)
    parse_seconds: float = 0.0  # summed over worker processes
    validate_seconds: float = 0.0
    write_seconds: float = 0.0


class _Job(NamedTuple):
    """A snapshot to extract (a tuple: a year of pages makes 110,000 of them per full build)."""

    meta: SnapshotMeta
    source: Source
    store_location: str  # a folder or an s3:// prefix (pipeline/raw/store.py open_store)
    size: int
    mtime_ns: int
    ctime_ns: int
    version: str  # the parser's cache version (Parser.cache_version)


@dataclass
class _Chunk:
    """What a worker hands back for a chunk of jobs."""

    frames: dict[str, pa.Table] = field(default_factory=dict)  # validated rows of ok jobs
    counts: dict[str, dict[str, int]] = field(default_factory=dict)  # snapshot -> frame -> rows
    failed: dict[str, str] = field(default_factory=dict)  # snapshot -> error
    damaged: dict[str, str] = field(default_factory=dict)
    parse_seconds: float = 0.0
    validate_seconds: float = 0.0


def _parse_data(
    meta: SnapshotMeta,
    source: Source,
    data: bytes,
    reviewed: ReviewedFiles | None,
    version: str,
) -> dict[str, Records] | str:
    """A snapshot's records per frame, or why its parser rejects it (a message naming it)."""
    sid = meta.snapshot_id
    parser = PARSERS[source.format]
    try:
        with deferred():
            snapshot = SnapshotInput(meta, source, data, reviewed)
            return parser.parse(snapshot)  # type: ignore[return-value]
    except ExtractError as error:
        return str(error)
    except RecursionError:
        return f"{sid}: document nested too deeply to parse"
    except Exception as error:  # a parser bug: this snapshot fails, the others still load
        name = f"{source.format} v{version}"
        return f"{sid}: parser {name} failed: {type(error).__name__}: {error}"


def parse_problem(
    meta: SnapshotMeta, source: Source, data: bytes, reviewed: ReviewedFiles | None
) -> str | None:
    """Why a build would reject these bytes as a snapshot of `source` (its parser's message,
    or its staged rows failing their model), or None when they would be read: the check of
    `snapshot add` before it stores anything."""
    parsed = _parse_data(meta, source, data, reviewed, PARSERS[source.format].version)
    if isinstance(parsed, str):
        return parsed
    for name, rows in parsed.items():
        try:
            validate_frame(name, frame_of(name, rows))
        except ValueError as error:
            return f"{meta.snapshot_id}: {error}"
    return None


def _parse(
    job: _Job, store: Store, reviewed: ReviewedFiles | None
) -> dict[str, Records] | str | SnapshotDamaged:
    try:
        data = store.read(job.meta)
    except SnapshotDamaged as error:
        return error
    except OSError as error:  # removed or unreadable since the plan looked at it
        return f"{job.meta.snapshot_id}: cannot read the snapshot: {error.strerror or error}"
    return _parse_data(job.meta, job.source, data, reviewed, job.version)


def _run_chunk(jobs: list[_Job], reviewed: ReviewedFiles | None) -> _Chunk:
    """Read, verify, parse and validate a chunk of snapshots (in a worker or in-line)."""
    chunk = _Chunk()
    if not jobs:
        return chunk
    store = open_store(jobs[0].store_location)
    parts: dict[str, list[Records]] = {}  # frame -> each snapshot's rows, in order
    started = time.perf_counter()
    for job in jobs:
        sid = job.meta.snapshot_id
        result = _parse(job, store, reviewed)
        if isinstance(result, SnapshotDamaged):
            chunk.damaged[sid] = str(result)
            continue
        if isinstance(result, str):
            chunk.failed[sid] = result
            continue
        chunk.counts[sid] = {name: len(rows) for name, rows in result.items()}
        for name, rows in result.items():
            parts.setdefault(name, []).append(rows)
    chunk.parse_seconds = time.perf_counter() - started
    started = time.perf_counter()
    checker = _checker()
    try:
        for name, frame_parts in parts.items():
            chunk.frames[name] = _checked_table(name, frame_parts, chunk.failed, checker)
    except duckdb.Error:
        _local.checker = None  # an error may leave a database unusable: the next chunk opens one
        checker.close()
        raise
    for sid in chunk.failed:
        chunk.counts.pop(sid, None)
    if chunk.failed:  # a snapshot that failed one frame is left out of all of them
        failed = pa.array(list(chunk.failed), pa.string())
        for name, table in chunk.frames.items():
            chunk.frames[name] = table.filter(
                pc.invert(pc.is_in(table.column("snapshot_id"), value_set=failed))
            )
    chunk.validate_seconds = time.perf_counter() - started
    return chunk


_local = threading.local()


def _checker() -> duckdb.DuckDBPyConnection:
    """The DuckDB, in memory, in which this thread (a worker's, most often) checks its chunks'
    tables in SQL: opened once, where opening one per chunk cost 15-30 ms, 20 µs a page. It
    holds nothing between chunks: each table is unregistered once checked."""
    checker = getattr(_local, "checker", None)
    if checker is None:
        checker = _local.checker = duckdb.connect(config={"threads": 1})
    return checker


def _checked_table(
    name: str, parts: list[Records], failed: dict[str, str], checker: duckdb.DuckDBPyConnection
) -> pa.Table:
    """A frame's rows of a chunk's snapshots, validated, as Arrow (the writer then only inserts,
    and Arrow pickles cheaply). Built in Arrow with the model's types and checked in SQL by
    `checker` (`passes_in_sql`), or where that fails in one Pandera call; where Pandera fails
    too, the rows go the pandas path, where Pandera coerces, and each snapshot of a frame that
    fails is validated alone to name the culprits (recorded in `failed`), so the rest of the
    chunk is still good."""
    try:
        table = staged_table(name, parts)
        if not passes_in_sql(checker, name, table):
            validate_frame(name, table.to_pandas())
        return table
    except (ValueError, OverflowError, pa.ArrowException):
        pass
    frame = frame_of(name, [row for records in parts for row in records.merged()])
    try:
        good = [validate_frame(name, frame)]
    except ValueError:
        owner = pd.Series([r.provenance["snapshot_id"] for r in parts for _ in range(len(r))])
        good = []
        for records in parts:
            sid = records.provenance["snapshot_id"]
            try:
                good.append(validate_frame(name, frame[owner.values == sid]))
            except ValueError as error:
                failed[sid] = f"{sid}: {error}"
    columns = list(FRAMES[name].to_schema().columns)
    kept = pd.concat(good, ignore_index=True) if good else frame.iloc[:0]
    return pa.Table.from_pandas(kept[columns], preserve_index=False)


def registered_ids(
    con: duckdb.DuckDBPyConnection, name: str, snapshot_ids: Sequence[str]
) -> AbstractContextManager[str]:
    """`snapshot_ids` readable as the view `name` (one column, snapshot_id) while the block
    runs: made from Arrow, not bound as a list parameter, which took 0.1 s per query for a
    year of pages' 117,000 ids."""
    return registered(con, name, pa.table({"snapshot_id": pa.array(snapshot_ids, pa.string())}))


def _differing_records(
    con: duckdb.DuckDBPyConnection, planned: pa.Table
) -> tuple[list[int], dict[int, tuple[str, tuple, str, str]]]:
    """Which `planned` snapshots (snapshot_id, parser_version, sha256, file_size, file_mtime_ns,
    file_ctime_ns, regular; by row number) have no extraction record, in order, and the record of
    each other one that does not already say its rows stand: (parser_version, (size, mtime_ns,
    ctime_ns), status, sha256). The compare is DuckDB's: a year of pages has 110,000 records, of
    which a day's build needs the few hundred that differ (fetching them all took 0.7 s), and a
    full build's new snapshots come back as numbers only."""
    with registered(con, "planned_snapshots", planned):
        new = con.sql(
            "SELECT p.row_number FROM planned_snapshots AS p "
            "ANTI JOIN staging.extractions AS e USING (snapshot_id) ORDER BY p.row_number"
        ).to_arrow_table()
        rows = con.execute(
            "SELECT p.row_number, e.parser_version, "
            "(e.file_size, e.file_mtime_ns, e.file_ctime_ns), e.status, e.sha256 "
            "FROM planned_snapshots AS p JOIN staging.extractions AS e USING (snapshot_id) "
            # what _plan counts cached without a look: still_verified() of an ok record
            "WHERE NOT coalesce(e.status = 'ok' AND e.parser_version = p.parser_version "
            "AND e.sha256 = p.sha256 AND p.regular AND e.file_size = p.file_size "
            "AND e.file_mtime_ns = p.file_mtime_ns AND e.file_ctime_ns = p.file_ctime_ns, false)"
        ).fetchall()
    return new.column(0).to_pylist(), {row[0]: row[1:] for row in rows}


def verified_files(
    con: duckdb.DuckDBPyConnection, snapshot_ids: Sequence[str] | None = None
) -> dict[str, tuple[str, FileKey]]:
    """The sha256 each snapshot's bytes were last found to hash to (extracted ok, or hashed
    again after a touch) and the file key its file had then: while the record names that sha256
    and the file keeps that key, the bytes stand. Of `snapshot_ids` only, when given (a release
    cites a few hundred of a year of pages' 110,000: reading them all took 0.5 s)."""
    where = "" if snapshot_ids is None else " AND snapshot_id IN (SELECT unnest(?::VARCHAR[]))"
    rows = con.execute(
        "SELECT snapshot_id, sha256, file_size, file_mtime_ns, file_ctime_ns "
        "FROM staging.extractions WHERE status = 'ok' AND file_ctime_ns IS NOT NULL" + where,
        [] if snapshot_ids is None else [list(snapshot_ids)],
    ).fetchall()
    return {row[0]: (row[1], (row[2], row[3], row[4])) for row in rows}


def staged_rows(con: duckdb.DuckDBPyConnection, frame: str, snapshot_ids: list[str]) -> int:
    """A frame's staged rows of these snapshots, as their extraction records count them (what
    each parse staged): counting the table read the whole staged history at every build. A
    record without counts (written before they were kept) has its rows counted in the table."""
    with registered_ids(con, "counted_ids", snapshot_ids):
        [(recorded, uncounted)] = con.execute(
            "SELECT coalesce(sum(CAST(row_counts ->> ? AS BIGINT)), 0), "
            "list(snapshot_id) FILTER (WHERE row_counts IS NULL) "
            "FROM staging.extractions SEMI JOIN counted_ids USING (snapshot_id)",
            [f"$.{frame}"],
        ).fetchall()
    if not uncounted:
        return int(recorded)
    sql = f"SELECT count(*) FROM staging.{frame} WHERE snapshot_id IN (SELECT unnest(?))"
    return int(recorded) + con.execute(sql, [uncounted]).fetchall()[0][0]


def _extraction_row(
    job: _Job,
    status: str,
    error: str | None,
    counts: dict[str, int] | None,
    now: datetime,
) -> dict[str, object]:
    return {
        "snapshot_id": job.meta.snapshot_id,
        "source_id": job.source.id,
        "format": job.source.format,
        "parser_version": job.version,
        "sha256": job.meta.sha256,
        "file_size": job.size,
        "file_mtime_ns": job.mtime_ns,
        "file_ctime_ns": job.ctime_ns,
        "status": status,
        "error": error,
        "row_counts": _counts_json(tuple(sorted((counts or {}).items()))),
        "extracted_at": now,
    }


@lru_cache(maxsize=4096)
def _counts_json(counts: tuple[tuple[str, int], ...]) -> str:
    """The JSON of a snapshot's rows per frame: a source's snapshots repeat a few of them."""
    return json.dumps(dict(counts))


def _upsert_extractions(
    con: duckdb.DuckDBPyConnection, rows: list[dict[str, object]], replace: bool = True
) -> None:
    """Insert extraction records; with `replace`, first delete earlier records of the same
    snapshots (not needed for snapshots never extracted before, and it scans the table)."""
    if not rows:
        return
    # the table's own column types (EXTRACTIONS_DDL), not a second list of them
    schema = con.sql("FROM staging.extractions LIMIT 0").to_arrow_table().schema
    incoming = pa.Table.from_pylist(rows, schema=schema)
    with registered(con, "incoming_extractions", incoming):
        if replace:
            con.execute(
                "DELETE FROM staging.extractions WHERE snapshot_id IN "
                "(SELECT snapshot_id FROM incoming_extractions)"
            )
        con.execute("INSERT INTO staging.extractions BY NAME SELECT * FROM incoming_extractions")


def _restat(con: duckdb.DuckDBPyConnection, jobs: list[_Job]) -> None:
    """Record the file times of snapshots whose bytes were found unchanged (hashed)."""
    if not jobs:
        return
    table = pa.table(
        {
            "snapshot_id": [job.meta.snapshot_id for job in jobs],
            "file_size": pa.array([job.size for job in jobs], pa.int64()),
            "file_mtime_ns": pa.array([job.mtime_ns for job in jobs], pa.int64()),
            "file_ctime_ns": pa.array([job.ctime_ns for job in jobs], pa.int64()),
        }
    )
    with registered(con, "restat", table):
        con.execute(
            "UPDATE staging.extractions AS e SET file_size = r.file_size, "
            "file_mtime_ns = r.file_mtime_ns, file_ctime_ns = r.file_ctime_ns "
            "FROM restat AS r WHERE e.snapshot_id = r.snapshot_id"
        )


def _plan(
    con: duckdb.DuckDBPyConnection,
    store: Store,
    snapshots: list[tuple[SnapshotMeta, Source]],
    result: ExtractReport,
    versions: dict[str, str],
) -> tuple[list[_Job], set[str]]:
    """The jobs to run, and which of their snapshots have staged rows to replace."""
    marks: list[dict[str, object]] = []
    unchanged: list[_Job] = []
    now = datetime.now(UTC)
    present: list[tuple[SnapshotMeta, Source, os.stat_result]] = []
    infos = store.stats_of(meta for meta, _source in snapshots)
    for (meta, source), info in zip(snapshots, infos, strict=True):
        if info is None:
            job = _Job(meta, source, store.location, 0, 0, 0, versions[source.format])
            result.damaged.append(f"{meta.snapshot_id}: file missing")
            marks.append(_extraction_row(job, "damaged", "file missing", None, now))
            continue
        present.append((meta, source, info))
    planned = pa.table(
        {
            "row_number": pa.array(range(len(present)), pa.int64()),
            "snapshot_id": [meta.snapshot_id for meta, _, _ in present],
            "parser_version": [versions[source.format] for _, source, _ in present],
            "sha256": [meta.sha256 for meta, _, _ in present],
            "file_size": pa.array([info.st_size for _, _, info in present], pa.int64()),
            "file_mtime_ns": pa.array([info.st_mtime_ns for _, _, info in present], pa.int64()),
            "file_ctime_ns": pa.array([info.st_ctime_ns for _, _, info in present], pa.int64()),
            "regular": pa.array([stat.S_ISREG(info.st_mode) for _, _, info in present]),
        }
    )
    new, differing = _differing_records(con, planned)
    result.cached += len(present) - len(new) - len(differing)  # their records say they stand
    jobs: list[_Job] = []
    seen: set[str] = set()
    root = store.location
    for number in sorted(new + list(differing)) if differing else new:
        done = differing.get(number)
        meta, source, info = present[number]
        version = versions[source.format]
        size, mtime_ns, ctime_ns = info.st_size, info.st_mtime_ns, info.st_ctime_ns
        job = _Job(meta, source, root, size, mtime_ns, ctime_ns, version)
        if done is not None:
            seen.add(meta.snapshot_id)
        # a record that now names other bytes (edited by hand) is read again against them
        if done is None or done[0] != version or done[2] == "failed" or done[3] != meta.sha256:
            jobs.append(job)  # read through the store, which refuses what is not a plain file
            continue
        if done[2] == "ok" and still_verified((done[3], done[1]), meta, info):
            result.cached += 1
            continue
        # The file changed since it was extracted: only its hash says whether the bytes did.
        # Read through the store: a link (to /dev/zero, say) or an oversized file is refused.
        try:
            store.read(meta)
        except SnapshotDamaged as error:
            result.damaged.append(str(error))
            marks.append(_extraction_row(job, "damaged", str(error), None, now))
            continue
        if done[2] == "ok":
            unchanged.append(job)  # touched or copied, same bytes: the staged rows stand
            result.cached += 1
        else:
            jobs.append(job)  # restored after damage: read it again
    _upsert_extractions(con, marks)
    _restat(con, unchanged)
    return jobs, seen


def _write(
    con: duckdb.DuckDBPyConnection,
    jobs: list[_Job],
    chunk: _Chunk,
    result: ExtractReport,
    previously_seen: set[str],
) -> None:
    """One transaction per chunk: replace its snapshots' rows, then record the extractions."""
    started = time.perf_counter()
    now = datetime.now(UTC)
    frame_names = sorted({name for job in jobs for name in PARSERS[job.source.format].frames})
    extraction_rows = []
    for job in jobs:
        sid = job.meta.snapshot_id
        if sid in chunk.damaged:
            result.damaged.append(chunk.damaged[sid])
            row = _extraction_row(job, "damaged", chunk.damaged[sid], None, now)
        elif sid in chunk.failed:
            result.failed.append(chunk.failed[sid])
            row = _extraction_row(job, "failed", chunk.failed[sid], None, now)
        else:
            counts = chunk.counts.get(sid, {})
            row = _extraction_row(job, "ok", None, counts, now)
            result.extracted += 1
            result.new_snapshot_ids.append(sid)
            for name, count in counts.items():
                result.rows[name] = result.rows.get(name, 0) + count
        extraction_rows.append(row)
    # Rows to replace exist only for snapshots extracted before (a new parser version, a
    # retried failure); deleting for the others would scan the whole table once per chunk.
    again = [job.meta.snapshot_id for job in jobs if job.meta.snapshot_id in previously_seen]
    con.execute("BEGIN TRANSACTION")
    try:
        for name in frame_names if again else ():
            con.execute(
                f"DELETE FROM staging.{name} WHERE snapshot_id IN (SELECT unnest(?))", [again]
            )
        for name, table in chunk.frames.items():
            if table.num_rows:
                with registered(con, "incoming", table):
                    con.execute(f"INSERT INTO staging.{name} BY NAME SELECT * FROM incoming")
        _upsert_extractions(con, extraction_rows, replace=bool(again))
        pause_point("staging-batch")  # inside the chunk's transaction
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    result.parse_seconds += chunk.parse_seconds
    result.validate_seconds += chunk.validate_seconds
    result.write_seconds += time.perf_counter() - started


def _chunks(jobs: list[_Job], size: int, max_bytes: int = CHUNK_BYTES) -> Iterator[list[_Job]]:
    """Consecutive runs of jobs, each of at most `size` jobs and `max_bytes` as received (a job
    larger than that is a chunk of its own)."""
    return runs(jobs, lambda job: job.meta.size, max_bytes, size)


def _worth_workers(jobs: list[_Job]) -> bool:
    """Whether these jobs are many or large enough to pay for starting worker processes."""
    if len(jobs) < 2:
        return False
    return len(jobs) >= PARALLEL_THRESHOLD or sum(j.meta.size for j in jobs) >= PARALLEL_BYTES


def _surely_parallel(con: duckdb.DuckDBPyConnection, snapshots: int, workers: int) -> bool:
    """Whether the plan will find enough work for workers, known before it runs: at least
    PARALLEL_THRESHOLD of the snapshots have no extraction record, so each is a job (every
    record is counted as one of theirs: a guess that is wrong only where files went missing)."""
    if workers < 2 or snapshots < PARALLEL_THRESHOLD:
        return False
    [(recorded,)] = con.execute("SELECT count(*) FROM staging.extractions").fetchall()
    return snapshots - recorded >= PARALLEL_THRESHOLD


def _worker_pool(workers: int) -> ProcessPoolExecutor:
    """Worker processes, started now: each imports the parsers (about a second) while the
    caller goes on."""
    # forkserver: a clean worker, not a fork of a process that may hold threads and locks
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("forkserver"))
    try:
        for _ in range(workers):  # a worker is started per task while none is idle
            pool.submit(_run_chunk, [], None)
    except BaseException:
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    return pool


def extract(
    con: duckdb.DuckDBPyConnection,
    store: Store,
    snapshots: Iterable[tuple[SnapshotMeta, Source]],
    *,
    reviewed: ReviewedFiles | None = None,
    workers: int | None = None,
    chunk_size: int = CHUNK,
    label: str = "extract",
    ensure: bool = True,
) -> ExtractReport:
    """Bring staging up to date for these snapshots. Failures are collected, not raised.
    `reviewed`: the build's reviewed files, which the prose parsers read (`Parser.reads`); a
    snapshot is read again when a file its parser reads changed. `ensure`: bring the staging
    tables to their models first (`ensure_staging`), which a caller that did may skip."""
    if ensure:
        ensure_staging(con)
    pairs = list(snapshots)
    # raises ValueError, before anything is written, if a parser needs reviewed files not given
    formats = {source.format for _meta, source in pairs}
    digests = reviewed.digests if reviewed else None
    versions = {name: PARSERS[name].cache_version(digests) for name in formats}
    result = ExtractReport()
    workers = workers if workers is not None else (os.cpu_count() or 1)
    pool: ProcessPoolExecutor | None = None
    try:
        # a full build's workers start while the plan looks at every file (a second at a year of
        # pages)
        if _surely_parallel(con, len(pairs), workers):
            pool = _worker_pool(workers)
        jobs, seen = _plan(con, store, pairs, result, versions)
        parallel = workers > 1 and _worth_workers(jobs)
        chunks = list(
            _chunks(jobs, chunk_size if parallel or len(jobs) > chunk_size else len(jobs) or 1)
        )
        if parallel:
            pool = pool or _worker_pool(workers)
            parsed = _parsed_by(pool, workers, chunks, reviewed)  # lazy: begins in the block
        else:
            parsed = ((batch, _run_chunk(batch, reviewed)) for batch in chunks)
        with _writing_beside_workers(con) if parallel else nullcontext():
            done = 0
            for batch, chunk in parsed:
                _write(con, batch, chunk, result, seen)
                done += len(batch)
                report(f"{label}: {done}/{len(jobs)} snapshots parsed ({result.cached} cached)")
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
    return result


@contextmanager
def _writing_beside_workers(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """`con` set to write while workers parse. The workers have the cores: DuckDB's own threads
    would take them from the parsers. It only appends meanwhile, and what it caches beyond that
    is memory the workers need: at 90 days of polls the writer held 1 GB beside two workers of
    400 MB each."""
    con.execute("SET threads = 1")
    con.execute(f"SET memory_limit = '{WRITER_MEMORY}'")
    try:
        yield
    finally:
        con.execute("RESET threads")
        con.execute(f"SET memory_limit = '{MEMORY_LIMIT}'")  # connect()'s


def _parsed_by(
    pool: ProcessPoolExecutor,
    workers: int,
    chunks: list[list[_Job]],
    reviewed: ReviewedFiles | None,
) -> Iterator[tuple[list[_Job], _Chunk]]:
    """Each chunk with what the pool's workers made of it, in order. At most two chunks are in
    flight per worker: memory stays bounded however many snapshots there are, and the workers
    never wait for the writer."""
    queue = iter(chunks)
    pending = deque(
        (batch, pool.submit(_run_chunk, batch, reviewed))
        for batch in itertools.islice(queue, 2 * workers)
    )
    while pending:
        batch, future = pending.popleft()
        chunk = future.result()
        following = next(queue, None)
        if following is not None:
            pending.append((following, pool.submit(_run_chunk, following, reviewed)))
        yield batch, chunk

"""Extraction with a cache: each snapshot is parsed once per parser version, and its frames are
kept in the warehouse's `staging` schema, keyed by snapshot.

A snapshot is re-read only when its parser's version changed or its file no longer matches what
was extracted (size or mtime moved; the sha256 then decides whether it was damaged). Parsing runs
in worker processes when there is enough of it, and results are written in batches, each batch in
one transaction, so a killed build keeps every finished batch and loses none.
"""

from __future__ import annotations

import json
import multiprocessing
import os
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow as pa

from pipeline.extract import PARSERS, ExtractError, SnapshotInput
from pipeline.progress import report
from pipeline.registry import Source
from pipeline.schema.ddl import comments, create_table
from pipeline.schema.staged import FRAMES
from pipeline.snapshots import SnapshotDamaged, SnapshotMeta, SnapshotStore, sha256_hex

EXTRACTIONS_DDL = """
CREATE TABLE IF NOT EXISTS staging.extractions (
    snapshot_id VARCHAR PRIMARY KEY,
    source_id VARCHAR NOT NULL,
    format VARCHAR NOT NULL,
    parser_version VARCHAR NOT NULL,
    sha256 VARCHAR NOT NULL,
    file_size BIGINT NOT NULL,
    file_mtime_ns BIGINT NOT NULL,
    status VARCHAR NOT NULL,      -- ok | failed | damaged
    error VARCHAR,
    row_counts VARCHAR,           -- JSON {frame: rows}
    extracted_at TIMESTAMPTZ NOT NULL
)
"""
PARALLEL_THRESHOLD = 48


def ensure_staging(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("CREATE SCHEMA IF NOT EXISTS staging")
    con.execute(EXTRACTIONS_DDL)
    for name, model in FRAMES.items():
        con.execute(create_table(model, f"staging.{name}"))
        for statement in comments(model, f"staging.{name}"):
            con.execute(statement)


@dataclass
class ExtractReport:
    extracted: int = 0
    cached: int = 0
    failed: list[str] = field(default_factory=list)
    damaged: list[str] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)
    new_snapshot_ids: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Job:
    meta: SnapshotMeta
    source: Source
    raw_root: str
    path: str
    size: int
    mtime_ns: int


@dataclass
class _Result:
    job: _Job
    frames: dict[str, pd.DataFrame] | None = None
    error: str | None = None
    damaged: bool = False


def _run(job: _Job) -> _Result:
    """Read, verify and parse one snapshot (in a worker process or in-line)."""
    store = SnapshotStore(Path(job.raw_root))
    try:
        data = store.read(job.meta)
    except SnapshotDamaged as error:
        return _Result(job, error=str(error), damaged=True)
    parser = PARSERS[job.source.format]
    try:
        return _Result(job, frames=parser.parse(SnapshotInput(job.meta, job.source, data)))
    except ExtractError as error:
        return _Result(job, error=str(error))
    except RecursionError:
        return _Result(job, error=f"{job.meta.snapshot_id}: document nested too deeply to parse")


def _previous(con: duckdb.DuckDBPyConnection) -> dict[str, tuple]:
    rows = con.execute(
        "SELECT snapshot_id, parser_version, sha256, file_size, file_mtime_ns, status "
        "FROM staging.extractions"
    ).fetchall()
    return {row[0]: row[1:] for row in rows}


def _plan(
    con: duckdb.DuckDBPyConnection,
    store: SnapshotStore,
    snapshots: Iterable[tuple[SnapshotMeta, Source]],
    report_: ExtractReport,
) -> list[_Job]:
    previous = _previous(con)
    jobs: list[_Job] = []
    for meta, source in snapshots:
        path = store.path_of(meta)
        try:
            stat = os.stat(path)
        except OSError:
            report_.damaged.append(f"{meta.snapshot_id}: file missing")
            _mark(con, meta, source, "damaged", "file missing", None, 0, 0)
            continue
        parser = PARSERS[source.format]
        done = previous.get(meta.snapshot_id)
        job = _Job(meta, source, str(store.root), str(path), stat.st_size, stat.st_mtime_ns)
        if done is None or done[0] != parser.version or done[4] == "failed":
            jobs.append(job)
            continue
        if (done[2], done[3]) == (stat.st_size, stat.st_mtime_ns) and done[4] == "ok":
            report_.cached += 1
            continue
        # The file moved since it was extracted: only its hash says whether it is the same bytes.
        if sha256_hex(path.read_bytes()) == meta.sha256:
            _mark(
                con,
                meta,
                source,
                "ok",
                None,
                None,
                stat.st_size,
                stat.st_mtime_ns,
                keep_counts=True,
            )
            report_.cached += 1
        else:
            report_.damaged.append(
                f"{meta.snapshot_id}: sha256 mismatch, the file was changed or damaged"
            )
            _mark(
                con,
                meta,
                source,
                "damaged",
                "sha256 mismatch",
                None,
                stat.st_size,
                stat.st_mtime_ns,
            )
    return jobs


def _mark(
    con: duckdb.DuckDBPyConnection,
    meta: SnapshotMeta,
    source: Source,
    status: str,
    error: str | None,
    counts: dict[str, int] | None,
    size: int,
    mtime_ns: int,
    *,
    keep_counts: bool = False,
) -> None:
    parser = PARSERS[source.format]
    existing = con.execute(
        "SELECT row_counts FROM staging.extractions WHERE snapshot_id = ?", [meta.snapshot_id]
    ).fetchone()
    row_counts = (
        existing[0] if keep_counts and existing else json.dumps(counts or {}, sort_keys=True)
    )
    con.execute("DELETE FROM staging.extractions WHERE snapshot_id = ?", [meta.snapshot_id])
    con.execute(
        "INSERT INTO staging.extractions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            meta.snapshot_id,
            source.id,
            source.format,
            parser.version,
            meta.sha256,
            size,
            mtime_ns,
            status,
            error,
            row_counts,
            datetime.now(UTC),
        ],
    )


def _write(con: duckdb.DuckDBPyConnection, results: list[_Result], report_: ExtractReport) -> None:
    """One transaction per batch: replace each snapshot's rows, then record the extraction."""
    con.execute("BEGIN TRANSACTION")
    try:
        batches: dict[str, list[pd.DataFrame]] = {}
        for result in results:
            job = result.job
            frame_names = PARSERS[job.source.format].frames
            for name in frame_names:
                con.execute(
                    f"DELETE FROM staging.{name} WHERE snapshot_id = ?", [job.meta.snapshot_id]
                )
            if result.frames is None:
                status = "damaged" if result.damaged else "failed"
                (report_.damaged if result.damaged else report_.failed).append(str(result.error))
                _mark(con, job.meta, job.source, status, result.error, None, job.size, job.mtime_ns)
                continue
            counts = {name: len(result.frames[name]) for name in frame_names}
            for name in frame_names:
                if len(result.frames[name]):
                    batches.setdefault(name, []).append(result.frames[name])
                report_.rows[name] = report_.rows.get(name, 0) + counts[name]
            _mark(con, job.meta, job.source, "ok", None, counts, job.size, job.mtime_ns)
            report_.extracted += 1
            report_.new_snapshot_ids.append(job.meta.snapshot_id)
        for name, frames in batches.items():
            columns = list(FRAMES[name].to_schema().columns)
            table = pa.Table.from_pandas(
                pd.concat(frames, ignore_index=True)[columns], preserve_index=False
            )
            con.register("incoming", table)
            con.execute(f"INSERT INTO staging.{name} BY NAME SELECT * FROM incoming")
            con.unregister("incoming")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def _batches(jobs: list[_Job], size: int) -> Iterator[list[_Job]]:
    for start in range(0, len(jobs), size):
        yield jobs[start : start + size]


def extract(
    con: duckdb.DuckDBPyConnection,
    store: SnapshotStore,
    snapshots: Iterable[tuple[SnapshotMeta, Source]],
    *,
    workers: int | None = None,
    batch_size: int = 256,
    label: str = "extract",
) -> ExtractReport:
    """Bring staging up to date for these snapshots. Failures are collected, not raised."""
    ensure_staging(con)
    result = ExtractReport()
    jobs = _plan(con, store, snapshots, result)
    workers = workers if workers is not None else (os.cpu_count() or 1)
    parallel = workers > 1 and len(jobs) >= PARALLEL_THRESHOLD
    done = 0
    pool = (
        ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("forkserver"))
        if parallel
        else None
    )
    try:
        for batch in _batches(jobs, batch_size):
            outcomes = (
                list(pool.map(_run, batch, chunksize=8)) if pool else [_run(j) for j in batch]
            )
            _write(con, outcomes, result)
            done += len(batch)
            report(f"{label}: {done}/{len(jobs)} snapshots parsed ({result.cached} cached)")
    finally:
        if pool is not None:
            pool.shutdown()
    return result

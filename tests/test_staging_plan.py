"""Which stored snapshots the staging cache reads again (pipeline/warehouse/staging.py, _plan): a
file whose key is unchanged since it was read stays cached, unless its record now names other
bytes (a sha256 edited by hand), its parser changed or its last read failed; a file touched
since is hashed (same bytes: cached, its new key recorded). The compare runs in DuckDB against
the extraction records: every way a record can differ is checked here. Real DuckDB and a real
snapshot store."""

from __future__ import annotations

import os
from datetime import UTC, datetime

import duckdb
import pytest

from pipeline.raw.snapshots import SnapshotMeta, SnapshotStore
from pipeline.sources.registry import load_registry
from pipeline.support.settings import BUNDLED_METADATA
from pipeline.warehouse.staging import (
    ExtractReport,
    _extraction_row,
    _Job,
    _plan,
    _upsert_extractions,
    ensure_staging,
)

SOURCE = load_registry(BUNDLED_METADATA / "sources.toml")["models-dev"]
VERSION = "1"
NOW = datetime(2026, 12, 1, tzinfo=UTC)


def _stored(store: SnapshotStore, day: int) -> SnapshotMeta:
    return store.add(
        SOURCE.id,
        b'{"a": %d}' % day,
        url=SOURCE.url,
        retrieved_at=datetime(2026, 11, day, tzinfo=UTC),
        content_type="application/json",
        obtained_by="manual",
        extension="json",
    ).meta


def _record(
    con: duckdb.DuckDBPyConnection,
    store: SnapshotStore,
    meta: SnapshotMeta,
    *,
    version: str = VERSION,
    status: str = "ok",
    sha256: str | None = None,
    key_shift: int = 0,
    no_ctime: bool = False,
) -> None:
    info = store.stat_of(meta)
    assert info is not None
    job = _Job(
        meta,
        SOURCE,
        str(store.root),
        info.st_size + key_shift,
        info.st_mtime_ns,
        info.st_ctime_ns,
        version,
    )
    row = _extraction_row(job, status, None if status == "ok" else "broken", {}, NOW)
    if sha256 is not None:
        row["sha256"] = sha256
    if no_ctime:
        row["file_ctime_ns"] = None  # a record from before change times were kept
    _upsert_extractions(con, [row])


def _plan_of(con, store, metas) -> tuple[list[str], set[str], ExtractReport]:
    report = ExtractReport()
    jobs, seen = _plan(con, store, [(m, SOURCE) for m in metas], report, {SOURCE.format: VERSION})
    return [job.meta.snapshot_id for job in jobs], seen, report


@pytest.fixture
def setup(tmp_path):
    store = SnapshotStore(tmp_path / "raw")
    con = duckdb.connect(":memory:")
    ensure_staging(con)
    return store, con


def test_a_record_that_names_other_bytes_is_read_again(setup):
    store, con = setup
    meta = _stored(store, 1)
    _record(con, store, meta)
    assert _plan_of(con, store, [meta])[0] == []  # read before, file and record unchanged
    _record(con, store, meta, sha256="0" * 64)
    jobs, seen, _ = _plan_of(con, store, [meta])
    assert jobs == [meta.snapshot_id] and seen == {meta.snapshot_id}  # its rows are replaced


@pytest.mark.parametrize(
    "change",
    [
        {"version": "0"},  # the parser changed since
        {"status": "failed"},  # the last read failed: tried again
    ],
)
def test_a_record_of_another_parser_or_a_failure_is_read_again(setup, change):
    store, con = setup
    kept, again = _stored(store, 1), _stored(store, 2)
    _record(con, store, kept)
    _record(con, store, again, **change)
    jobs, seen, report = _plan_of(con, store, [kept, again])
    assert jobs == [again.snapshot_id]
    assert seen == {again.snapshot_id}
    assert report.cached == 1


def test_a_snapshot_never_read_is_a_job_with_no_rows_to_replace(setup):
    store, con = setup
    old, new = _stored(store, 1), _stored(store, 2)
    _record(con, store, old)
    jobs, seen, report = _plan_of(con, store, [old, new])
    assert jobs == [new.snapshot_id] and seen == set() and report.cached == 1


@pytest.mark.parametrize("change", [{"key_shift": 1}, {"no_ctime": True}])
def test_a_file_touched_since_is_hashed_and_its_new_key_kept(setup, change):
    store, con = setup
    meta = _stored(store, 1)
    _record(con, store, meta, **change)
    jobs, _, report = _plan_of(con, store, [meta])
    assert jobs == [] and report.cached == 1 and report.damaged == []
    # fetched whole: a result left unfinished blocks the next register() on the connection
    [(size, ctime)] = con.execute(
        "SELECT file_size, file_ctime_ns FROM staging.extractions"
    ).fetchall()
    info = store.stat_of(meta)
    assert (size, ctime) == (info.st_size, info.st_ctime_ns)  # recorded: no hash next time
    assert _plan_of(con, store, [meta])[2].cached == 1


def test_a_file_changed_since_is_damaged_and_one_gone_missing(setup):
    store, con = setup
    changed, gone, kept = _stored(store, 1), _stored(store, 2), _stored(store, 3)
    for meta in (changed, gone, kept):
        _record(con, store, meta)
    path = store.path_of(changed)
    path.write_bytes(b'{"a": 9}')
    os.remove(store.path_of(gone))
    jobs, _, report = _plan_of(con, store, [changed, gone, kept])
    assert jobs == [] and report.cached == 1
    assert [line.split(":")[0] for line in report.damaged] == [
        gone.snapshot_id,
        changed.snapshot_id,
    ]
    statuses = dict(con.execute("SELECT snapshot_id, status FROM staging.extractions").fetchall())
    assert statuses == {
        changed.snapshot_id: "damaged",
        gone.snapshot_id: "damaged",
        kept.snapshot_id: "ok",
    }


def test_a_link_in_place_of_a_file_is_not_taken_as_unchanged(setup):
    store, con = setup
    meta = _stored(store, 1)
    _record(con, store, meta)
    path = store.path_of(meta)
    info = path.stat()
    target = path.with_name("elsewhere")
    path.rename(target)
    path.symlink_to(target)
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns), follow_symlinks=False)
    jobs, _, report = _plan_of(con, store, [meta])
    assert jobs == [] and report.cached == 0
    assert len(report.damaged) == 1 and meta.snapshot_id in report.damaged[0]

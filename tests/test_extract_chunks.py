"""Extraction chunks are bounded by snapshots and by bytes: a chunk of 1,024 half-hourly polls
(2 MB each) held 19 million rows, 10 GB in one worker."""

from concurrent.futures import ThreadPoolExecutor

import pytest
from conftest import lake_at

from pipeline.extract.base import passes_in_sql, staged_table
from pipeline.raw.snapshots import SnapshotMeta
from pipeline.sources.registry import load_registry
from pipeline.support.settings import BUNDLED_METADATA
from pipeline.warehouse.staging import (
    CHUNK_BYTES,
    PARALLEL_BYTES,
    PARALLEL_THRESHOLD,
    _checker,
    _chunks,
    _Job,
    _worth_workers,
)

SOURCE = load_registry(BUNDLED_METADATA / "sources.toml")["openrouter-endpoints"]


def job(n: int, size: int) -> _Job:
    meta = SnapshotMeta(
        source_id=SOURCE.id,
        url=SOURCE.url,
        retrieved_at="2026-12-01T00:00:00Z",
        sha256="0" * 64,
        size=size,
        content_type="application/json",
        obtained_by="fetched",
        file=f"{n:06d}.bundle",
    )
    return _Job(meta, SOURCE, "/nowhere", size, 0, 0, "1")


def test_small_snapshots_are_chunked_by_count():
    jobs = [job(n, 10_000) for n in range(2_500)]  # 1,024 of them are 10 MB: under a chunk
    assert [len(c) for c in _chunks(jobs, 1024)] == [1024, 1024, 452]


def test_large_snapshots_are_chunked_by_bytes_and_keep_their_order():
    polls = [job(n, 2_000_000) for n in range(100)]
    chunks = list(_chunks(polls, 1024))
    assert all(sum(j.meta.size for j in c) <= CHUNK_BYTES for c in chunks)
    assert len(chunks) == -(-100 // (CHUNK_BYTES // 2_000_000))
    assert [j for c in chunks for j in c] == polls


def test_a_snapshot_larger_than_a_chunk_is_a_chunk_of_its_own():
    jobs = [job(0, 10), job(1, CHUNK_BYTES * 2), job(2, 10)]
    assert [[j.meta.file for j in c] for c in _chunks(jobs, 1024)] == [
        ["000000.bundle"],
        ["000001.bundle"],
        ["000002.bundle"],
    ]
    assert list(_chunks([], 1024)) == []


def test_workers_start_for_many_snapshots_or_many_bytes_not_for_a_few_small_ones():
    assert not _worth_workers([job(n, 20_000) for n in range(PARALLEL_THRESHOLD - 1)])
    assert _worth_workers([job(n, 20_000) for n in range(PARALLEL_THRESHOLD)])
    polls = PARALLEL_BYTES // 2_000_000 + 1  # a day of half-hourly polls: 48 of 2 MB
    assert _worth_workers([job(n, 2_000_000) for n in range(polls)])
    assert not _worth_workers([job(n, 2_000_000) for n in range(polls - 2)])
    assert not _worth_workers([job(0, PARALLEL_BYTES * 2)])  # one job: nothing to share


@pytest.mark.e2e
def test_workers_stage_what_one_process_stages_and_the_writer_gets_its_memory_back(
    tmp_path, monkeypatch
):
    """The bundled snapshots through two worker processes, chunks of a few snapshots: the same
    staged rows as in one process, and DuckDB's budget, cut while the workers parse, restored."""
    import duckdb
    from conftest import BUNDLED_RAW

    import pipeline.warehouse.staging as staging
    from pipeline.raw.snapshots import SnapshotStore
    from pipeline.sources.reviewed import ReviewedFiles

    store = SnapshotStore(BUNDLED_RAW)
    sources = load_registry(BUNDLED_METADATA / "sources.toml")
    pairs = [(meta, sources[meta.source_id]) for meta in store.list()]
    reviewed = ReviewedFiles.load(BUNDLED_METADATA)
    monkeypatch.setattr(staging, "PARALLEL_THRESHOLD", 2)
    names = ("openrouter_endpoints", "models_dev_offers", "aa_endpoints")
    staged = {}
    for workers in (1, 2):
        with lake_at(tmp_path / f"{workers}") as con:
            limit = con.execute("SELECT current_setting('memory_limit')").fetchone()
            report = staging.extract(
                con, store, pairs, reviewed=reviewed, workers=workers, chunk_size=7
            )
            assert not report.failed and report.extracted == len(pairs)
            assert con.execute("SELECT current_setting('memory_limit')").fetchone() == limit
            staged[workers] = {
                name: con.execute(f"FROM staging.{name}").fetch_arrow_table() for name in names
            }
    with duckdb.connect() as con:
        for name in names:
            one, two = staged[1][name], staged[2][name]  # noqa: F841 (read by DuckDB by name)
            assert one.num_rows > 0, name
            (differ,) = con.execute(
                "SELECT count(*) FROM ((FROM two EXCEPT ALL FROM one) "
                "UNION ALL (FROM one EXCEPT ALL FROM two))"
            ).fetchone()
            assert differ == 0, name


def test_each_thread_checks_its_chunks_in_one_duckdb_that_keeps_nothing_between_them():
    checker = _checker()
    assert _checker() is checker  # opened once: a connection per chunk cost 15-30 ms
    table = staged_table("aa_endpoints", [])
    assert passes_in_sql(checker, "aa_endpoints", table)
    assert checker.execute("SELECT count(*) FROM duckdb_views() WHERE NOT internal").fetchall() == [
        (0,)
    ]
    with ThreadPoolExecutor(1) as pool:  # a connection serves one thread
        assert pool.submit(_checker).result() is not checker


@pytest.mark.e2e
def test_workers_start_before_the_plan_only_where_it_will_surely_use_them(tmp_path, monkeypatch):
    """A build with many snapshots never extracted starts its workers before the plan looks at
    every file; one whose snapshots are all recorded starts none."""
    from conftest import BUNDLED_RAW

    import pipeline.warehouse.staging as staging
    from pipeline.raw.snapshots import SnapshotStore
    from pipeline.sources.reviewed import ReviewedFiles

    store = SnapshotStore(BUNDLED_RAW)
    sources = load_registry(BUNDLED_METADATA / "sources.toml")
    pairs = [(meta, sources[meta.source_id]) for meta in store.list()]
    reviewed = ReviewedFiles.load(BUNDLED_METADATA)
    monkeypatch.setattr(staging, "PARALLEL_THRESHOLD", len(pairs) - 1)
    started = []
    pool = staging._worker_pool
    monkeypatch.setattr(staging, "_worker_pool", lambda n: started.append(n) or pool(n))
    planned_after = []  # the workers started when each plan began
    plan = staging._plan
    monkeypatch.setattr(
        staging, "_plan", lambda *args: planned_after.append(list(started)) or plan(*args)
    )
    with lake_at(tmp_path / "w") as con:
        staging.ensure_staging(con)
        assert staging._surely_parallel(con, len(pairs), 2)
        assert not staging._surely_parallel(con, len(pairs), 1)  # one process: no workers
        assert not staging._surely_parallel(con, len(pairs) - 2, 2)  # too few
        report = staging.extract(con, store, pairs, reviewed=reviewed, workers=2, chunk_size=9)
        assert report.extracted == len(pairs) and started == [2]  # started once...
        assert planned_after == [[2]]  # ...before the plan
        assert not staging._surely_parallel(con, len(pairs), 2)  # all recorded now
        report = staging.extract(con, store, pairs, reviewed=reviewed, workers=2)
        assert report.cached == len(pairs) and started == [2] and planned_after[1] == [2]


def _bundled_pairs():
    from conftest import BUNDLED_RAW

    from pipeline.raw.snapshots import SnapshotStore

    store = SnapshotStore(BUNDLED_RAW)
    sources = load_registry(BUNDLED_METADATA / "sources.toml")
    return store, [(meta, sources[meta.source_id]) for meta in store.list()]


@pytest.mark.e2e
def test_workers_started_for_a_plan_that_finds_too_little_are_stopped(tmp_path, monkeypatch):
    """Where the guess started workers and the plan then finds too little for them (files gone
    missing), the snapshots are parsed in this process and the workers stopped."""
    import pipeline.warehouse.staging as staging
    from pipeline.sources.reviewed import ReviewedFiles

    store, pairs = _bundled_pairs()
    monkeypatch.setattr(staging, "PARALLEL_THRESHOLD", 2)
    monkeypatch.setattr(staging, "_worth_workers", lambda jobs: False)
    pools = []
    pool = staging._worker_pool
    monkeypatch.setattr(staging, "_worker_pool", lambda n: pools.append(pool(n)) or pools[-1])
    with lake_at(tmp_path / "w") as con:
        report = staging.extract(
            con, store, pairs, reviewed=ReviewedFiles.load(BUNDLED_METADATA), workers=2
        )
    assert report.extracted == len(pairs) and len(pools) == 1
    with pytest.raises(RuntimeError, match="shutdown"):
        pools[0].submit(staging._run_chunk, [], None)


@pytest.mark.e2e
def test_a_failed_write_stops_the_workers_and_keeps_the_chunks_written(tmp_path, monkeypatch):
    import pipeline.warehouse.staging as staging
    from pipeline.sources.reviewed import ReviewedFiles

    store, pairs = _bundled_pairs()
    monkeypatch.setattr(staging, "PARALLEL_THRESHOLD", 2)
    pools = []
    pool = staging._worker_pool
    monkeypatch.setattr(staging, "_worker_pool", lambda n: pools.append(pool(n)) or pools[-1])
    write = staging._write
    writes = []

    def failing(*args):
        if writes:
            raise OSError("disk full")
        writes.append(write(*args))

    monkeypatch.setattr(staging, "_write", failing)
    with lake_at(tmp_path / "w") as con:
        with pytest.raises(OSError, match="disk full"):
            staging.extract(
                con,
                store,
                pairs,
                reviewed=ReviewedFiles.load(BUNDLED_METADATA),
                workers=2,
                chunk_size=3,
            )
        (recorded,) = con.execute("SELECT count(*) FROM staging.extractions").fetchone()
    assert recorded == 3  # the first chunk, written before the failure, is kept
    with pytest.raises(RuntimeError, match="shutdown"):
        pools[0].submit(staging._run_chunk, [], None)


def test_a_checker_an_error_may_have_left_unusable_is_not_kept(monkeypatch):
    import duckdb

    import pipeline.warehouse.staging as staging
    from pipeline.extract import PARSERS

    store, pairs = _bundled_pairs()
    meta, source = next(pair for pair in pairs if pair[1].format == "aa_provider_page")
    jobs = [_Job(meta, source, str(store.root), 0, 0, 0, PARSERS[source.format].version)]
    before = _checker()

    def broken(*args):
        raise duckdb.InternalException("the database is invalidated")

    monkeypatch.setattr(staging, "_checked_table", broken)
    with pytest.raises(duckdb.InternalException):
        staging._run_chunk(jobs, None)
    with pytest.raises(duckdb.ConnectionException):
        before.execute("SELECT 1")  # closed
    monkeypatch.undo()
    assert _checker() is not before
    assert not staging._run_chunk(jobs, None).failed  # the next chunk opens another

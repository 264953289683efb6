"""Extraction chunks are bounded by snapshots and by bytes: a chunk of 1,024 half-hourly polls
(2 MB each) held 19 million rows, 10 GB in one worker."""

from pipeline.extract.staging import (
    CHUNK_BYTES,
    PARALLEL_BYTES,
    PARALLEL_THRESHOLD,
    _chunks,
    _Job,
    _worth_workers,
)
from pipeline.raw.snapshots import SnapshotMeta
from pipeline.sources.registry import load_registry
from pipeline.support.settings import BUNDLED_METADATA

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

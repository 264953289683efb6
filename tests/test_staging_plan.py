"""Which stored snapshots the staging cache reads again (pipeline/extract/staging.py, _plan): a
file whose key is unchanged since it was read stays cached, unless its record now names other
bytes (a sha256 edited by hand); then it is read again, against them. Real DuckDB and a real
snapshot store."""

from __future__ import annotations

from datetime import UTC, datetime

import duckdb

from pipeline.extract.staging import ExtractReport, _plan, ensure_staging
from pipeline.raw.snapshots import SnapshotStore
from pipeline.sources.registry import load_registry
from pipeline.support.file_keys import file_key
from pipeline.support.settings import BUNDLED_METADATA

SOURCE = load_registry(BUNDLED_METADATA / "sources.toml")["models-dev"]
VERSION = "1"


def test_a_record_that_names_other_bytes_is_read_again(tmp_path):
    store = SnapshotStore(tmp_path / "raw")
    meta = store.add(
        SOURCE.id,
        b'{"a": 1}',
        url=SOURCE.url,
        retrieved_at=datetime(2026, 11, 30, tzinfo=UTC),
        content_type="application/json",
        obtained_by="manual",
        extension="json",
    ).meta
    key = file_key(store.path_of(meta).stat())
    con = duckdb.connect(":memory:")
    ensure_staging(con)
    versions = {SOURCE.format: VERSION}

    def plan(sha256: str) -> list[str]:
        previous = {meta.snapshot_id: (VERSION, key, "ok", sha256)}
        jobs = _plan(con, store, [(meta, SOURCE)], ExtractReport(), previous, versions)
        return [job.meta.snapshot_id for job in jobs]

    assert plan(meta.sha256) == []  # read before, file and record unchanged: cached
    assert plan("0" * 64) == [meta.snapshot_id]  # read before against other bytes: again

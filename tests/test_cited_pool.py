"""A compilation fetched again and appended by a later build derives the rows the first
build derived from it: the same endpoints, variants, citations and methods (the core SQL reads
the measured figures loaded by earlier builds). Each of the bundled compilation's rows links its
page, so its rows come out the same whichever pages are in the cited pool: this does not pin the
pool itself."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from test_build import copy_of

from pipeline.dagster.envelope import execute
from pipeline.raw.snapshots import SnapshotStore
from pipeline.warehouse.connection import connect

COMPILATION = "agentfieldbook-inference"
# what a compiled row is, but for its own snapshot (in its id, and its retrieval time)
COMPILED = (
    "SELECT provider_id, model_id, precision, service_tier, reasoning_effort, cited_source_id, "
    "method, statistic, window_minutes, lineage, endpoint_id, value, quote "
    "FROM core.observations WHERE origin = 'compilation_figures' AND snapshot_id = ? "
    "ORDER BY ALL"
)


def test_a_compilation_appended_later_derives_what_the_first_build_derived(built, tmp_path: Path):
    settings = copy_of(built, tmp_path)
    store = SnapshotStore(settings.raw_dir)
    (original,) = store.list(COMPILATION)
    added = store.add(
        COMPILATION,
        store.read(original) + b"\n<!-- fetched again -->\n",  # other bytes, the same rows
        url=original.url,
        retrieved_at=datetime(2026, 11, 30, tzinfo=UTC),
        content_type=original.content_type,
        obtained_by="manual",
        extension=original.file.rsplit(".", 1)[-1],
    )
    assert added.created
    again = added.meta
    outcome = execute(settings)
    assert outcome.success, outcome.failures
    with connect(settings.database, read_only=True) as con:
        # the build appended: it derived the new snapshot alone, the cited pages were loaded
        derived = con.execute("FROM staging.observation_scope").fetchall()
        assert derived == [(again.snapshot_id,)]
        appended = con.execute(COMPILED, [again.snapshot_id]).fetchall()
        first = con.execute(COMPILED, [original.snapshot_id]).fetchall()
    assert appended == first
    cited = [row for row in first if row[5] is not None]
    assert cited, "the bundled compilation cites measured pages"
    assert all(row[9] == row[5] for row in cited)  # a cited figure repeats its page's measurement

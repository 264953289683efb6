"""A compilation's figure joins the endpoint of the measurement it cites, from every measured
figure loaded (sql/core/30_cited_observations.sql): the pages of earlier builds as well as this
build's. A compilation fetched again and appended by a later build derives the rows the first
build derived from it. The Tokendyno page cites "Artificial Analysis, 2026" without a link, so
its rows name a page only through that pool: a pool of this build's rows alone leaves them
citing nothing. The Agent Fieldbook's rows link their pages."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from conftest import progress_lines
from test_build import copy_of

from pipeline.dagster.envelope import execute
from pipeline.raw.snapshots import SnapshotStore
from pipeline.warehouse.connection import connect

# what a compiled row is, but for its own snapshot (in its id, and its retrieval time)
COMPILED = (
    "SELECT provider_id, model_id, precision, service_tier, reasoning_effort, cited_source_id, "
    "method, statistic, window_minutes, lineage, endpoint_id, value, quote "
    "FROM core.observations WHERE origin = 'compilation_figures' AND snapshot_id = ? "
    "ORDER BY ALL"
)


@pytest.mark.parametrize(
    "compilation", ["tokendyno-fastest-llm-inference-2026", "agentfieldbook-inference"]
)
def test_a_compilation_appended_later_cites_the_pages_of_earlier_builds(
    built, tmp_path: Path, compilation: str
):
    settings = copy_of(built, tmp_path)
    store = SnapshotStore(settings.raw_dir)
    (original,) = store.list(compilation)
    added = store.add(
        compilation,
        store.read(original) + b"\n<!-- fetched again -->\n",  # other bytes, the same rows
        url=original.url,
        retrieved_at=datetime(2026, 11, 30, tzinfo=UTC),
        content_type=original.content_type,
        obtained_by="manual",
        extension=original.file.rsplit(".", 1)[-1],
    )
    assert added.created
    again = added.meta
    with progress_lines() as lines:
        outcome = execute(settings)
    assert outcome.success, outcome.failures
    # the build appended: it parsed the new snapshot alone, the cited pages were staged before
    parsed = [line for line in lines if "snapshots parsed" in line]
    assert len(parsed) == 1 and "staging_compilation_page: 1/1 snapshots parsed (" in parsed[0]
    with connect(settings, read_only=True) as con:
        appended = con.execute(COMPILED, [again.snapshot_id]).fetchall()
        first = con.execute(COMPILED, [original.snapshot_id]).fetchall()
    assert appended == first
    cited = [row for row in first if row[5] is not None]
    assert len(cited) >= 5, "the bundled compilation cites measured pages"
    assert all(row[9] == row[5] for row in cited)  # a cited figure repeats its page's measurement

"""Large bad input stays cheap: 100,000 catalogue entries no alias matches, and 200,000 names no
alias knows. Close-match suggestions are computed only for the names a build reports, and
messages and run events name the first few and count the rest (the full list stays in the
warehouse)."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest
from conftest import materialize
from test_build import copy_of

from pipeline.dagster.runner import dagster_instance
from pipeline.normalise.entities import Resolver
from pipeline.normalise.labels import MAX_SUGGESTED, resolve_labels
from pipeline.raw.snapshots import SnapshotStore
from pipeline.sources.registry import load_registry
from pipeline.sources.reviewed import ReviewedFiles
from pipeline.support.settings import Settings
from pipeline.warehouse.staging import extract

WHEN = datetime(2026, 11, 30, 6, tzinfo=UTC)
ROW = (
    "<tr><td>Mystery Cloud {n:06d}</td><td>{speed}</td><td>0.5</td><td>—</td></tr>"  # one endpoint
)
AA_PAGE = """<html><head><title>Kimi K2.6: API Provider Benchmarking &amp; Analysis</title></head>
<body><h1>Kimi K2.6 API Provider Benchmarking &amp; Analysis</h1><table>
<thead><tr><th>API Provider</th><th>Output Speed (tokens/s)</th><th>Latency (TTFT)</th>
<th>Blended Price ($/M tokens)</th></tr></thead>
<tbody>{rows}</tbody></table>
</body></html>"""


def _add(settings: Settings, source_id: str, data: bytes, extension: str, kind: str) -> str:
    source = load_registry(settings.registry)[source_id]
    return (
        SnapshotStore(settings.raw_dir)
        .add(
            source_id,
            data,
            url=source.url,
            retrieved_at=WHEN,
            content_type=kind,
            obtained_by="manual",
            extension=extension,
        )
        .meta.snapshot_id
    )


@pytest.mark.e2e
@pytest.mark.timeout(240)
def test_suggestions_are_computed_only_for_reported_names(settings: Settings, tmp_path: Path):
    """100,000 OpenRouter models no alias matches (stable ids: unreviewed entities of their own)
    took 101 s in normalise, computing suggestions nobody reads."""
    models = [{"id": f"acme/unknown-model-{n:06d}", "name": f"Unknown {n}"} for n in range(100_000)]
    data = json.dumps({"data": models}).encode()
    snapshot_id = _add(settings, "openrouter", data, "json", "application/json")
    store = SnapshotStore(settings.raw_dir)
    sources = load_registry(settings.registry)
    meta = next(m for m in store.list("openrouter") if m.snapshot_id == snapshot_id)
    with duckdb.connect(str(tmp_path / "w.duckdb")) as con:
        report = extract(con, store, [(meta, sources["openrouter"])], workers=1)
        assert not report.failed, report.failed
        resolver = Resolver.load(settings.metadata)
        platforms = ReviewedFiles.load(settings.metadata).platforms
        started = time.perf_counter()
        labels = resolve_labels(con, resolver, platforms, [snapshot_id])
        seconds = time.perf_counter() - started
    unreviewed = labels.unreviewed
    assert len(unreviewed) == 100_000
    assert unreviewed["suggestions"].map(len).eq(0).all()  # not reported: none computed
    assert seconds < 20, f"resolving 100,000 unreviewed entries took {seconds:.1f} s"


@pytest.mark.timeout(600)
def test_200000_unknown_names_give_short_messages_and_small_run_events(
    built: Settings, tmp_path: Path
):
    """Every one of 200,000 unknown providers is kept in staging.label_resolution; the check's
    message names five, and a run adds kilobytes to the Dagster instance, not 200 MB."""
    settings = copy_of(built, tmp_path)
    rows = "".join(ROW.format(n=n, speed=100 + n % 500) for n in range(200_000))
    _add(settings, "aa-kimi-k2-6", AA_PAGE.format(rows=rows).encode(), "html", "text/html")

    def instance_bytes() -> int:
        home = settings.dagster_home
        return sum(
            p.stat().st_size for p in home.rglob("*") if p.is_file() and "storage" not in p.parts
        )

    with dagster_instance(settings) as instance:
        before = instance_bytes()
        result = materialize(settings, "key:raw_inventory or key:staging_*", instance=instance)
        after = instance_bytes()
    evaluation = next(
        e
        for e in result.get_asset_check_evaluations()
        if e.check_name == "no_unresolved_names_in_figures"
    )
    described = evaluation.description or ""
    assert "200,000 unresolved" in described or evaluation.passed
    assert len(described) < 3_000, f"{len(described):,} characters"
    metadata = json.dumps({k: str(v.value) for k, v in evaluation.metadata.items()})
    assert len(metadata) < 20_000, f"{len(metadata):,} characters of check metadata"
    assert after - before < 5_000_000, f"the run added {after - before:,} bytes to the instance"
    # every name is kept (core_tables writes them to core.labels), with
    # suggestions only for those reported
    labels = result.output_for_node("staging_unresolved_names")
    mystery = labels.resolutions[labels.resolutions["label"].str.startswith("Mystery Cloud")]
    assert len(mystery) == 200_000
    assert mystery["suggestions"].map(len).gt(0).sum() <= MAX_SUGGESTED

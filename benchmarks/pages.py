"""The page scenario: Artificial Analysis-style pages, one per model per day
(benchmarks/corpus.py), the real build on them (from scratch, one more day, nothing new), and in
the same run lxml.html alone on the same pages (the extraction floor) and the latest figure of
every endpoint queried from the built lake."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from benchmarks.corpus import CorpusSpec, add_day, generate
from benchmarks.measure import Place, Progress, build, lxml_floor, query_s, render, scalar
from pipeline.raw.store import open_store

FLOOR_SAMPLE = 5_000  # pages lxml parses for the floor (an even sample of the corpus)
# The latest figure of every endpoint: as the build keeps it (what exports and analysts read),
# and computed from the whole history of observations (what the build computes once).
LATEST_KEPT = "SELECT count(*), sum(value) FROM mart.current_figures"
LATEST_FROM_HISTORY = (
    "SELECT count(*), sum(v) FROM (SELECT arg_max(value, observed_at) AS v "
    "FROM core.observations GROUP BY endpoint_id, metric, statistic)"
)


def run(spec: CorpusSpec, workdir: Path, progress: Progress = print) -> dict[str, Any]:
    started = time.perf_counter()
    corpus = generate(spec, workdir / "corpus", progress=progress)
    generate_s = round(time.perf_counter() - started, 1)
    progress(f"generated {corpus.pages:,} pages in {generate_s} s")
    place = Place(corpus.root, corpus.registry, corpus.metadata_dir, workdir / "exports")
    store = open_store(corpus.raw_dir)
    pages = [m for m in store.list() if m.source_id.startswith("bench-aa-model-")]
    sample = [store.read(m) for m in pages[:: max(1, len(pages) // FLOOR_SAMPLE)][:FLOOR_SAMPLE]]
    floor_rate = lxml_floor(sample)
    progress(f"lxml.html floor: {floor_rate:.0f} pages/s ({len(sample)} pages)")
    full = build(place, "full build", progress)
    observations = scalar(place, "SELECT count(*) FROM core.observations")
    added = add_day(corpus, spec, spec.days)
    day = build(place, f"one more day ({added} pages)", progress)
    noop = build(place, "nothing new", progress)
    extract_s = full.stages.get("extract")
    rate = round(corpus.pages / extract_s, 1) if extract_s else None
    return {
        "scenario": "pages",
        "spec": {"models": spec.models, "providers": spec.providers, "days": spec.days},
        "cpu_count": os.cpu_count(),
        "pages": corpus.pages,
        "observations": observations,
        "generate_s": generate_s,
        "full_build_s": full.wall_s,
        "stages_full_s": full.stages,
        "day_build_s": day.wall_s,
        "day_pages": added,
        "stages_day_s": day.stages,
        "noop_build_s": noop.wall_s,
        "noop_skipped": noop.skipped,
        "extract_pages_per_s": rate,
        "floor_lxml_pages_per_s": round(floor_rate, 1),
        "extract_to_floor_ratio": round(rate / floor_rate, 3) if rate else None,
        "peak_rss_mib": max(full.peak_rss_mib, day.peak_rss_mib, noop.peak_rss_mib),
        "latest_kept_query_s": query_s(place, LATEST_KEPT),
        "latest_from_history_query_s": query_s(place, LATEST_FROM_HISTORY),
    }


def table(result: dict[str, Any]) -> str:
    return render(
        [
            ("pages", f"{result['pages']:,}", f"{result['observations']:,} observations"),
            ("full build", f"{result['full_build_s']} s", ""),
            ("one more day", f"{result['day_build_s']} s", "target < 10 s"),
            ("nothing new", f"{result['noop_build_s']} s", ""),
            ("extraction", f"{result['extract_pages_per_s']} pages/s", ""),
            (
                "lxml.html alone",
                f"{result['floor_lxml_pages_per_s']} pages/s",
                f"ratio {result['extract_to_floor_ratio']}; target >= 0.333",
            ),
            ("peak memory", f"{result['peak_rss_mib']} MiB", "process tree; target < 2048"),
            ("latest figures (kept)", f"{result['latest_kept_query_s']} s", "target < 0.5 s"),
            ("latest figures (history)", f"{result['latest_from_history_query_s']} s", ""),
        ]
    )

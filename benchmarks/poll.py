"""The poll scenario: a history of half-hourly OpenRouter polls (benchmarks/poll_corpus.py), the
real build on it (from scratch; then rounds of one more poll and nothing new), and in the same
run the floor of the same work: DuckDB's `read_json` of the same response bodies into a table.
With `readers`, the same builds again with four processes querying `mart` views throughout."""

from __future__ import annotations

import os
import shutil
import statistics
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchmarks import readers as reading
from benchmarks.measure import (
    Place,
    Progress,
    build,
    lake_bytes,
    read_json_floor,
    render,
    store_bytes,
)
from benchmarks.poll_corpus import PollCorpus, PollSpec, add_poll, floor_files_in, generate

FLOOR_DIR = "read-json-floor"


def _place(workdir: Path, name: str, catalog: str, release_cadence: str = "") -> Place:
    return Place(
        root=workdir / name,
        registry=workdir / "corpus" / "registry.toml",
        metadata_dir=workdir / "corpus" / "metadata",
        exports=workdir / f"exports-{name}",
        catalog=catalog,
        release_cadence=release_cadence,
    )


def _fresh_copy(history: Path, place: Place) -> None:
    """A warehouse folder holding a copy of the history's snapshot store and nothing else."""
    shutil.rmtree(place.root, ignore_errors=True)
    shutil.rmtree(place.exports, ignore_errors=True)
    place.root.mkdir(parents=True)
    shutil.copytree(history, place.raw_dir)


def run(
    spec: PollSpec,
    workdir: Path,
    *,
    repeats: int = 1,
    rounds: int = 3,
    with_readers: bool = False,
    catalog: str = "",
    release_cadence: str = "",
    progress: Progress = print,
) -> dict[str, Any]:
    started = time.perf_counter()
    floor_dir = workdir / FLOOR_DIR
    corpus: PollCorpus = generate(spec, workdir / "corpus", floor_dir=floor_dir, progress=progress)
    generate_s = round(time.perf_counter() - started, 1)
    progress(f"generated {corpus.polls:,} polls ({corpus.members:,} responses) in {generate_s} s")
    floor_files = list(floor_files_in(floor_dir))
    history = corpus.raw_dir
    # full builds, each on a fresh lake over a copy of the history, each beside its floor
    fulls, floors, floor_cpus, peaks = [], [], [], []
    main = _place(workdir, "lake-0", catalog, release_cadence)
    for n in range(repeats):
        place = _place(workdir, f"lake-{n}", catalog, release_cadence)
        _fresh_copy(history, place)
        rows, floor_s, floor_cpu = read_json_floor(floor_files, workdir)
        floors.append(round(floor_s, 2))
        floor_cpus.append(round(floor_cpu, 2))
        progress(f"read_json floor: {floor_s:.1f} s, cpu {floor_cpu:.1f} s ({rows:,} responses)")
        full = build(place, f"full build {n + 1}/{repeats}", progress)
        fulls.append(full)
        peaks.append(full.peak_rss_mib)
        if n:
            shutil.rmtree(place.root)
            shutil.rmtree(place.exports, ignore_errors=True)
    observed = reading.state(main)
    stored, received = store_bytes(main.raw_dir)
    # rounds of one more poll (the first after the full build included) and nothing new
    polls, noops = [], []
    at_main = replace(corpus, root=main.root, raw_dir=main.raw_dir)
    for n in range(rounds):
        at_main = add_poll(at_main, spec, spec.polls + n)
        poll = build(main, f"one more poll {n + 1}/{rounds}", progress)
        noop = build(main, f"nothing new {n + 1}/{rounds}", progress)
        polls.append(poll)
        noops.append(noop)
        peaks += [poll.peak_rss_mib, noop.peak_rss_mib]
    full_s = statistics.median(b.wall_s for b in fulls)
    floor_s = statistics.median(floors)
    result: dict[str, Any] = {
        "scenario": "poll",
        "spec": {"models": spec.models, "days": spec.days, "polls_per_day": spec.polls_per_day},
        "catalog": catalog or "sqlite:catalog.sqlite",
        # a poll's build publishes no release within the cadence (the full build's is the first)
        "release_cadence": release_cadence or "every build",
        "cpu_count": os.cpu_count(),
        "polls": spec.polls,
        "responses": spec.polls * spec.models,
        "generate_s": generate_s,
        "full_build_s": [b.wall_s for b in fulls],
        "full_build_median_s": full_s,
        "floor_read_json_s": floors,
        "floor_read_json_median_s": floor_s,
        "full_to_floor_ratio": round(full_s / floor_s, 2) if floor_s else None,
        "full_build_cpu_s": [b.cpu_s for b in fulls],
        "floor_read_json_cpu_s": floor_cpus,
        "full_to_floor_cpu_ratio": round(
            statistics.median(b.cpu_s for b in fulls) / statistics.median(floor_cpus), 2
        ),
        "poll_build_cpu_s": [b.cpu_s for b in polls],
        "load_average": os.getloadavg()[0],
        "stages_full_s": fulls[0].stages,
        "poll_build_s": [b.wall_s for b in polls],
        "poll_build_median_s": statistics.median(b.wall_s for b in polls) if polls else None,
        "stages_first_poll_s": polls[0].stages if polls else {},
        "noop_build_s": [b.wall_s for b in noops],
        "noop_build_median_s": statistics.median(b.wall_s for b in noops) if noops else None,
        "noop_skipped": all(b.skipped for b in noops),
        "peak_rss_mib": max(peaks),
        "stored_bytes": stored,
        "received_bytes": received,
        "stored_share": round(stored / received, 4) if received else None,
        "lake_bytes": lake_bytes(main.root),
        "mart_state_after_full": observed,
    }
    if with_readers:
        result["readers"] = _with_readers(spec, workdir, corpus, history, catalog, progress)
    return result


def _with_readers(
    spec: PollSpec,
    workdir: Path,
    corpus: PollCorpus,
    history: Path,
    catalog: str,
    progress: Progress,
) -> dict[str, Any]:
    """A full build on a fresh lake, then one more poll, each with four readers querying
    throughout."""
    place = _place(workdir, "lake-readers", catalog)
    _fresh_copy(history, place)
    with reading.readers(place, workdir) as outs:
        full = build(place, "full build with readers", progress, check=False)
    after = reading.state(place)
    during_full = reading.summary(outs, None, after)  # type: ignore[arg-type]
    progress(f"readers during the full build: {during_full}")
    # the next poll after the history (the main lake's rounds added others to its own store)
    before = after
    add_poll(replace(corpus, root=place.root, raw_dir=place.raw_dir), spec, spec.polls)
    with reading.readers(place, workdir) as outs:
        poll = build(place, "one more poll with readers", progress, check=False)
    during_poll = reading.summary(outs, before, reading.state(place))  # type: ignore[arg-type]
    progress(f"readers during the poll build: {during_poll}")
    return {
        "full_build_s": full.wall_s,
        "full_build_status": full.status,
        "full_build_error": _error(full.output) if full.status else "",
        "poll_build_s": poll.wall_s,
        "poll_build_status": poll.status,
        "poll_build_error": _error(poll.output) if poll.status else "",
        "during_full": during_full,
        "during_poll": during_poll,
    }


def _error(output: str) -> str:
    """A failed build's problem lines (`<step>: <message>`), for the results."""
    lines = [line for line in output.splitlines() if line.startswith(("out_", "core_", "build "))]
    return " | ".join(lines[-3:])[:500]


def table(result: dict[str, Any]) -> str:
    rows: list[tuple[str, Any, str]] = [
        ("polls", f"{result['polls']:,}", f"{result['responses']:,} responses"),
        ("full build", f"{result['full_build_median_s']} s", f"runs {result['full_build_s']}"),
        ("read_json floor", f"{result['floor_read_json_median_s']} s", "same bodies"),
        ("full / floor", result["full_to_floor_ratio"], "target < 5x, and < 600 s"),
        ("full / floor, CPU", result["full_to_floor_cpu_ratio"], "CPU seconds of each"),
        ("one more poll", f"{result['poll_build_median_s']} s", f"runs {result['poll_build_s']}"),
        ("release cadence", result["release_cadence"], "of the polls' builds"),
        ("nothing new", f"{result['noop_build_median_s']} s", f"runs {result['noop_build_s']}"),
        ("peak memory", f"{result['peak_rss_mib']} MiB", "process tree; target < 2048"),
        ("store / received", f"{result['stored_share']:.1%}", f"{result['received_bytes']:,} B"),
        ("lake", f"{result['lake_bytes']:,} B", "Parquet and catalog"),
    ]
    readers = result.get("readers")
    if readers:
        for phase in ("full", "poll"):
            seen = readers[f"during_{phase}"]
            rows.append(
                (
                    f"{phase} build with readers",
                    f"{readers[f'{phase}_build_s']} s"
                    + (" FAILED" if readers[f"{phase}_build_status"] else ""),
                    f"{seen['queries']} queries, {seen['failures']} failed, "
                    f"{seen['half_built_states']} half-built",
                )
            )
    return render(rows)

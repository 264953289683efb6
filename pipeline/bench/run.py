"""`speedbook bench`: generate a synthetic corpus, run the real build on it three times (full,
one more day, nothing new), and measure each stage against floors of the same work.

Builds run as `speedbook build` subprocesses (the command a maintainer runs), pointed at the
corpus through SPEEDBOOK_REGISTRY / SPEEDBOOK_METADATA / SPEEDBOOK_WAREHOUSE / SPEEDBOOK_EXPORTS.
Peak memory is sampled from /proc over the whole process tree (workers included).
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import lxml.html

from pipeline.bench.corpus import Corpus, CorpusSpec, add_day, generate
from pipeline.bench.poll_corpus import PollCorpus
from pipeline.dagster.envelope import REPORT_FILE
from pipeline.raw.snapshots import COMPRESSED_SUFFIX, MAX_SNAPSHOT_BYTES, decompress
from pipeline.support.settings import DATABASE_FILE
from pipeline.warehouse.connection import connect
from pipeline.warehouse.spare import SPARE_DATABASE, spare_lock

FLOOR_SAMPLE = 5_000  # pages parsed by lxml alone for the parse floor (median of 3 passes)
# What pipeline/dagster/envelope.py `execute` reports when it skips a build (keep the two in
# step). Not just "nothing new": a build that runs every stage and publishes no new release
# prints "nothing new: identical to release ..." (pipeline/release/publish.py), and that build
# was not skipped.
SKIPPED_LINE = "nothing new since the last build"


@dataclass
class BuildMeasure:
    wall_s: float
    status: int
    peak_rss_mib: float
    stages: dict[str, float] = field(default_factory=dict)
    skipped: bool = False
    output: str = ""
    # This build wrote build_report.json (its run id differs from the one there before): a build
    # that ran without writing it would otherwise be measured with the previous build's stages.
    reported: bool = False
    # waited after the build for the update of the spare it started (pipeline/warehouse/spare.py)
    spare_update_s: float = 0.0


_PAGE_KIB = os.sysconf("SC_PAGE_SIZE") // 1024  # /proc/<pid>/stat counts resident pages


def _tree_rss_kib(root_pid: int) -> int:
    """Resident memory of a process and all its descendants, from /proc."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as handle:
                fields_ = handle.read().rsplit(")", 1)[1].split()
            ppid, pages = int(fields_[1]), int(fields_[21])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
        rss[int(entry)] = pages * _PAGE_KIB
    total, stack = 0, [root_pid]
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack.extend(children.get(pid, []))
    return total


def _stages(report: dict[str, Any]) -> dict[str, float]:
    """The run's stages, and the two steps around it that follow the warehouse's size, not what
    is new: copying the warehouse into the run's working copy (made while Dagster starts:
    `warehouse_copy_wait` is what the run then waited for it), and committing that copy
    (checkpoint, fsync, rename; pipeline/warehouse/swap.py), where the report gives them."""
    swap = {
        "warehouse_copy": "warehouse_copy_seconds",
        "warehouse_copy_wait": "warehouse_copy_waited_seconds",
        # the copy was the spare as its update after the last build left it: that update's time
        "warehouse_copy_ahead": "warehouse_copy_ahead_seconds",
        "warehouse_commit": "warehouse_commit_seconds",
    }
    return dict(report.get("stages", {})) | {
        stage: report[field] for stage, field in swap.items() if report.get(field) is not None
    }


def _spare_updated(root: Path) -> float:
    """Wait for the update of the spare a build starts after its commit, as the time between two
    polls would: no measurement that follows shares the cores with it. The seconds waited."""
    started = time.perf_counter()
    with spare_lock(root / SPARE_DATABASE):
        pass
    return round(time.perf_counter() - started, 3)


def run_build(corpus: Corpus | PollCorpus, exports: Path) -> BuildMeasure:
    env = dict(os.environ) | {
        "SPEEDBOOK_REGISTRY": str(corpus.registry),
        "SPEEDBOOK_METADATA": str(corpus.metadata_dir),
        "SPEEDBOOK_WAREHOUSE": str(corpus.root),
        "SPEEDBOOK_EXPORTS": str(exports),
    }
    before = _read_report(corpus)
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "pipeline.cli", "build"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.wait(0.2):
            peak = max(peak, _tree_rss_kib(process.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    output, _ = process.communicate()
    done.set()
    sampler.join()
    wall = time.perf_counter() - started
    spare_update = _spare_updated(corpus.root)
    report = _read_report(corpus)
    reported = bool(report.get("run_id")) and _report_id(report) != _report_id(before)
    skipped = SKIPPED_LINE in output
    return BuildMeasure(
        wall_s=round(wall, 2),
        status=process.returncode,
        peak_rss_mib=round(peak / 1024, 1),
        stages=_stages(report) if reported and not skipped else {},
        skipped=skipped,
        output=output,
        reported=reported,
        spare_update_s=spare_update,
    )


def _read_report(corpus: Corpus | PollCorpus) -> dict[str, Any]:
    with contextlib.suppress(OSError, ValueError):
        report = json.loads((corpus.root / REPORT_FILE).read_text(encoding="utf-8"))
        if isinstance(report, dict):
            return report
    return {}


def _report_id(report: dict[str, Any]) -> tuple[Any, Any]:
    return report.get("run_id"), report.get("finished_at")


def require_success(build: BuildMeasure, name: str, progress: Any) -> None:
    """Refuse to report figures of a build that failed, or that ran without writing its report
    (its stage times would be the previous build's). The build's output goes to progress; the
    error stays one line."""
    if build.status != 0:
        progress(f"{name} build output (last lines):\n{build.output[-3000:].rstrip()}")
        raise RuntimeError(f"the {name} build failed (exit {build.status}); its output is above")
    if not build.skipped and not build.reported:
        raise RuntimeError(
            f"the {name} build ran but did not write {REPORT_FILE}: no stage times to report"
        )


def checked_build(
    corpus: Corpus | PollCorpus, exports: Path, name: str, label: str, progress: Any
) -> BuildMeasure:
    """`run_build`, its wall time to progress as `label`, and `require_success` under `name`:
    what every build of every scenario goes through."""
    build = run_build(corpus, exports)
    progress(f"{label}: {build.wall_s} s (exit {build.status})")
    require_success(build, name, progress)
    return build


def parse_floor(corpus: Corpus, sample: int = FLOOR_SAMPLE) -> tuple[int, float]:
    """Pages per second parsing the corpus's own page bytes with lxml.html alone (one process):
    the cost no parser of these pages can avoid. Median of three passes over the same sample."""
    pages = sorted(
        p
        for p in corpus.raw_dir.glob("bench-aa-model-*/*.html*")
        if p.name.endswith((".html", ".html" + COMPRESSED_SUFFIX))
    )
    step = max(1, len(pages) // sample)
    chosen = [stored_bytes(p) for p in pages[::step][:sample]]
    rates = []
    for _ in range(3):
        started = time.perf_counter()
        for data in chosen:
            lxml.html.document_fromstring(data)
        rates.append(len(chosen) / (time.perf_counter() - started))
    return len(chosen), statistics.median(rates)


def stored_bytes(path: Path) -> bytes:
    """The bytes of a data file of the store as received: a `.gz` one decompressed."""
    data = path.read_bytes()
    if path.name.endswith(COMPRESSED_SUFFIX):
        return decompress(data, MAX_SNAPSHOT_BYTES)
    return data


def insert_floor(database: Path, scratch: Path) -> tuple[int, float]:
    """Seconds for one bulk INSERT ... SELECT of the staged endpoint rows from Arrow into a
    fresh DuckDB file, opened as the build opens its warehouse (same memory budget): the floor
    of loading those rows."""
    with connect(database, read_only=True) as con:
        table = con.sql("SELECT * FROM staging.aa_endpoints").to_arrow_table()
    target = scratch / "insert-floor.duckdb"
    target.unlink(missing_ok=True)
    with connect(target) as con:
        con.register("incoming", table)
        con.execute("CREATE TABLE t AS SELECT * FROM incoming LIMIT 0")
        started = time.perf_counter()
        con.execute("INSERT INTO t SELECT * FROM incoming")
        seconds = time.perf_counter() - started
    target.unlink(missing_ok=True)
    return table.num_rows, seconds


def latest_query(database: Path, query: str) -> float:
    """Median of three runs of a query on the built warehouse."""
    times = []
    with connect(database, read_only=True) as con:
        for _ in range(3):
            started = time.perf_counter()
            con.execute(query).fetchall()
            times.append(time.perf_counter() - started)
    return statistics.median(times)


# The current figure of every endpoint computed from the whole history (what a build does once),
# and the same figures read from the table the build keeps (what analysts and exports query).
LATEST_FROM_HISTORY = "SELECT count(*), sum(value) FROM mart.current_figures_at()"
LATEST_FROM_TABLE = "SELECT count(*), sum(value) FROM mart.current_figures"


def observations(database: Path) -> int:
    with connect(database, read_only=True) as con:
        return con.execute("SELECT count(*) FROM core.observations").fetchone()[0]  # type: ignore[index]


def run_bench(spec: CorpusSpec, workdir: Path, progress: Any = print) -> dict[str, Any]:
    corpus_root = workdir / "corpus"
    exports = workdir / "exports"
    started = time.perf_counter()
    corpus = generate(spec, corpus_root, progress=progress)
    generate_s = time.perf_counter() - started
    progress(f"generated {corpus.pages} pages in {generate_s:.1f} s")
    full = checked_build(corpus, exports, "full", "full build", progress)
    database = corpus.root / DATABASE_FILE
    observed = observations(database)
    added = add_day(corpus, spec, spec.days)
    label = f"one more day ({added} pages)"
    incremental = checked_build(corpus, exports, "one-more-day", label, progress)
    observed_after_day = observations(database)
    noop = checked_build(corpus, exports, "nothing-new", "nothing new", progress)
    floor_pages, floor_rate = parse_floor(corpus)
    insert_rows, insert_s = insert_floor(database, workdir)
    query_s = latest_query(database, LATEST_FROM_HISTORY)
    table_s = latest_query(database, LATEST_FROM_TABLE)
    extract_s = full.stages.get("extract", 0.0)
    result = {
        "scenario": "pages",
        "spec": {
            "models": spec.models,
            "providers": spec.providers,
            "days": spec.days,
            "seed": spec.seed,
        },
        "cpu_count": os.cpu_count(),
        "pages": corpus.pages,
        "observations": observed,  # after the full build
        "observations_after_day": observed_after_day,
        "generate_s": round(generate_s, 2),
        "full_build_s": full.wall_s,
        "incremental_build_s": incremental.wall_s,
        "incremental_pages": added,
        "noop_build_s": noop.wall_s,
        "noop_skipped": noop.skipped,
        "stages_full_s": full.stages,
        "stages_incremental_s": incremental.stages,
        "extract_pages_per_s": round(corpus.pages / extract_s, 1) if extract_s else None,
        "floor_parse_pages_per_s": round(floor_rate, 1),
        "floor_parse_sample_pages": floor_pages,
        "extract_to_floor_ratio": round(corpus.pages / extract_s / floor_rate, 3)
        if extract_s
        else None,
        "floor_insert_rows": insert_rows,
        "floor_insert_s": round(insert_s, 3),
        "load_s": full.stages.get("load"),
        "peak_rss_mib": max(full.peak_rss_mib, incremental.peak_rss_mib, noop.peak_rss_mib),
        "latest_query_s": round(query_s, 4),
        "latest_table_query_s": round(table_s, 4),
        "statuses": [full.status, incremental.status, noop.status],
    }
    return result


def render(result: dict[str, Any]) -> str:
    rows = [
        ("pages", result["pages"], ""),
        ("observations", result["observations"], ""),
        ("full build", f"{result['full_build_s']} s", "target < 600 s"),
        (
            "one more day",
            f"{result['incremental_build_s']} s",
            f"{result['incremental_pages']} pages; target < 15 s",
        ),
        ("nothing new", f"{result['noop_build_s']} s", "target < 5 s"),
        ("extract", f"{result['extract_pages_per_s']} pages/s", ""),
        (
            "lxml.html alone",
            f"{result['floor_parse_pages_per_s']} pages/s",
            f"ratio {result['extract_to_floor_ratio']}; target >= 0.333",
        ),
        (
            "bulk insert floor",
            f"{result['floor_insert_s']} s",
            f"{result['floor_insert_rows']} rows",
        ),
        ("peak memory", f"{result['peak_rss_mib']} MiB", "process tree; target < 2048"),
        ("latest figures from history", f"{result['latest_query_s']} s", "target < 0.5 s"),
        ("latest figures, kept table", f"{result['latest_table_query_s']} s", ""),
    ]
    for stage, seconds in sorted(result["stages_full_s"].items()):
        rows.append((f"  full: {stage}", f"{seconds} s", ""))
    for stage, seconds in sorted(result["stages_incremental_s"].items()):
        rows.append((f"  one more day: {stage}", f"{seconds} s", ""))
    width = max(len(r[0]) for r in rows)
    lines = [f"{'measure'.ljust(width)}  {'value':>18}  note", "-" * (width + 40)]
    lines += [f"{name.ljust(width)}  {value!s:>18}  {note}" for name, value, note in rows]
    return "\n".join(lines)

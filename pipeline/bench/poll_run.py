"""`speedbook bench --scenario openrouter`: a history of half-hourly OpenRouter polls, the real
build on it three times (from scratch, after one more poll, with nothing new), and in the same
run the floor of the same work: DuckDB's own `read_json` of the same response bodies into a
table.

The floor reads the bodies of every poll of the history (the bytes the full build parses, less
the bundle framing) as newline-delimited JSON files, uncompressed, into a fresh DuckDB file opened
as the build opens its warehouse: no parser of these responses can do less than that.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from pipeline.bench.poll_corpus import (
    SOURCE,
    PollCorpus,
    PollSpec,
    add_poll,
    floor_files_in,
    generate,
)
from pipeline.bench.run import checked_build
from pipeline.raw.snapshots import SnapshotStore
from pipeline.support.settings import DATABASE_FILE
from pipeline.warehouse.connection import connect

FLOOR_DIR = "read-json-floor"  # in the bench's --workdir, beside corpus/ and exports/


def kept_corpus(workdir: Path) -> tuple[Path, tuple[Path, ...]]:
    """The corpus folder of a poll bench's kept `workdir` and the floor's files (oldest poll
    first); SystemExit, saying what to run, when it holds no built warehouse."""
    root = workdir / "corpus"
    if not (root / DATABASE_FILE).is_file():
        raise SystemExit(f"{root}: no built warehouse; run `speedbook bench --workdir` first")
    return root, floor_files_in(workdir / FLOOR_DIR)


def read_json_floor(files: tuple[Path, ...], scratch: Path) -> tuple[int, float]:
    """Rows and seconds of `CREATE TABLE t AS SELECT * FROM read_json([...])` over `files`."""
    target = scratch / "read-json-floor.duckdb"
    target.unlink(missing_ok=True)
    try:
        with connect(target) as con:
            started = time.perf_counter()
            con.execute(
                "CREATE TABLE t AS SELECT * FROM read_json(?, format = 'newline_delimited')",
                [[str(path) for path in files]],
            )
            seconds = time.perf_counter() - started
            (rows,) = con.execute("SELECT count(*) FROM t").fetchone()  # type: ignore[misc]
    finally:
        target.unlink(missing_ok=True)
    return rows, seconds


def store_bytes(raw_dir: Path) -> tuple[int, int]:
    """Bytes on disk of every file of the snapshot store (records, logs and the listing cache
    included), and the sum of the sizes its records give (the bytes as received)."""
    on_disk = sum(path.stat().st_size for path in raw_dir.rglob("*") if path.is_file())
    received = sum(meta.size for meta in SnapshotStore(raw_dir).list(include_withdrawn=True))
    return on_disk, received


def poll_observations(database: Path) -> int:
    with connect(database, read_only=True) as con:
        return con.execute(  # type: ignore[index]
            "SELECT count(*) FROM core.observations WHERE source_id = ?", [SOURCE]
        ).fetchone()[0]


def run_poll_bench(spec: PollSpec, workdir: Path, progress: Any = print) -> dict[str, Any]:
    exports, floor_dir = workdir / "exports", workdir / FLOOR_DIR
    started = time.perf_counter()
    corpus: PollCorpus = generate(spec, workdir / "corpus", floor_dir=floor_dir, progress=progress)
    generate_s = time.perf_counter() - started
    progress(
        f"generated {corpus.polls:,} polls ({corpus.members:,} responses) in {generate_s:.1f} s"
    )
    full = checked_build(corpus, exports, "full", "full build", progress)
    database = corpus.root / DATABASE_FILE
    observed = poll_observations(database)
    history = corpus
    corpus = add_poll(corpus, spec, spec.polls)
    poll = checked_build(corpus, exports, "one-more-poll", "one more poll", progress)
    observed_after_poll = poll_observations(database)
    noop = checked_build(corpus, exports, "nothing-new", "nothing new", progress)
    floor_rows, floor_s = read_json_floor(history.floor_files, workdir)
    progress(f"read_json floor: {floor_s:.1f} s ({floor_rows:,} responses)")
    stored, received = store_bytes(corpus.raw_dir)
    return {
        "scenario": "openrouter",
        "spec": {
            "models": spec.models,
            "days": spec.days,
            "polls_per_day": spec.polls_per_day,
            "seed": spec.seed,
        },
        "cpu_count": os.cpu_count(),
        "polls": history.polls,
        "responses": history.members,
        "endpoints": history.endpoints,  # endpoint objects across the history's polls
        "generated_statistics": history.statistics,
        "observations": observed,  # after the full build: one per percentile figure
        "generated_statistics_after_poll": corpus.statistics,
        "observations_after_poll": observed_after_poll,
        "generate_s": round(generate_s, 2),
        "full_build_s": full.wall_s,
        "poll_build_s": poll.wall_s,
        "noop_build_s": noop.wall_s,
        "noop_skipped": noop.skipped,
        "stages_full_s": full.stages,
        "stages_poll_s": poll.stages,
        # waited after the poll build for the update of the spare it started, off its clock
        "spare_update_after_poll_s": poll.spare_update_s,
        "floor_read_json_s": round(floor_s, 2),
        "floor_read_json_rows": floor_rows,
        "full_to_floor_ratio": round(full.wall_s / floor_s, 2) if floor_s else None,
        "peak_rss_mib": max(full.peak_rss_mib, poll.peak_rss_mib, noop.peak_rss_mib),
        "stored_bytes": stored,
        "received_bytes": received,
        "stored_share": round(stored / received, 4) if received else None,
        "statuses": [full.status, poll.status, noop.status],
    }


def render(result: dict[str, Any]) -> str:
    rows = [
        ("polls", f"{result['polls']:,}", f"{result['responses']:,} responses"),
        ("observations", f"{result['observations']:,}", ""),
        (
            "full build",
            f"{result['full_build_s']} s",
            f"{result['full_to_floor_ratio']}x the floor; target < 600 s and < 5x",
        ),
        ("read_json floor", f"{result['floor_read_json_s']} s", "same bodies, DuckDB alone"),
        ("one more poll", f"{result['poll_build_s']} s", "release included; target < 10 s"),
        ("nothing new", f"{result['noop_build_s']} s", "target < 2 s"),
        ("peak memory", f"{result['peak_rss_mib']} MiB", "process tree; target < 2048"),
        (
            "snapshot store",
            f"{result['stored_bytes']:,} B",
            f"{result['stored_share']:.1%} of {result['received_bytes']:,} B received; "
            "target < 20%",
        ),
    ]
    for stage, seconds in sorted(result["stages_full_s"].items()):
        rows.append((f"  full: {stage}", f"{seconds} s", ""))
    for stage, seconds in sorted(result["stages_poll_s"].items()):
        rows.append((f"  one more poll: {stage}", f"{seconds} s", ""))
    width = max(len(r[0]) for r in rows)
    lines = [f"{'measure'.ljust(width)}  {'value':>18}  note", "-" * (width + 40)]
    lines += [f"{name.ljust(width)}  {value!s:>18}  {note}" for name, value, note in rows]
    return "\n".join(lines)

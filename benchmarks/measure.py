"""What every scenario measures the same way: a `speedbook build` run as a subprocess on a
corpus (its wall time, its stages from the build report, the peak resident memory of its whole
process tree), the floors of the same work (DuckDB's `read_json` of the same response bodies,
lxml.html alone on the same pages), the snapshot store's bytes, and queries on the built lake."""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import lxml.html

from pipeline.dagster.envelope import REPORT_FILE
from pipeline.raw.store import open_store
from pipeline.support.duck import quote_literal
from pipeline.support.settings import Settings
from pipeline.warehouse.connection import connect, session

Progress = Callable[[str], None]
# What pipeline/dagster/envelope.py `execute` reports when it skips a build (keep in step).
SKIPPED_LINE = "nothing new since the last build"
_PAGE_KIB = os.sysconf("SC_PAGE_SIZE") // 1024  # /proc/<pid>/stat counts resident pages


@dataclass(frozen=True)
class Place:
    """A corpus and where its builds write: the registry, reviewed files and snapshot store the
    corpus generator wrote, the lake beside them, and the releases."""

    root: Path  # the warehouse folder: raw/ (the snapshot store), the lake, the build's state
    registry: Path
    metadata_dir: Path
    exports: Path
    catalog: str = ""  # SPEEDBOOK_CATALOG for the builds: "" for the default (SQLite)
    release_cadence: str = ""  # SPEEDBOOK_RELEASE_CADENCE: "" for a release from every build

    @property
    def raw_dir(self) -> Path:
        return self.root / "raw"

    def env(self) -> dict[str, str]:
        env = dict(os.environ) | {
            "SPEEDBOOK_REGISTRY": str(self.registry),
            "SPEEDBOOK_METADATA": str(self.metadata_dir),
            "SPEEDBOOK_WAREHOUSE": str(self.root),
            "SPEEDBOOK_EXPORTS": str(self.exports),
        }
        for name in ("SPEEDBOOK_SNAPSHOTS", "SPEEDBOOK_LAKE_DATA"):
            env.pop(name, None)
        for name, value in (
            ("SPEEDBOOK_CATALOG", self.catalog),
            ("SPEEDBOOK_RELEASE_CADENCE", self.release_cadence),
        ):
            env.pop(name, None)
            if value:
                env[name] = value
        return env

    def settings(self) -> Settings:
        return Settings.resolve(
            registry=self.registry,
            warehouse=self.root,
            exports=self.exports,
            metadata=self.metadata_dir,
            catalog=self.catalog or None,
            release_cadence=self.release_cadence,
        )


@dataclass
class Build:
    wall_s: float
    status: int
    peak_rss_mib: float
    stages: dict[str, float] = field(default_factory=dict)
    skipped: bool = False
    output: str = ""
    cpu_s: float = 0.0  # user + system seconds of the build's process tree


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def tree_rss_kib(root_pid: int) -> int:
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


def _report(place: Place) -> dict[str, Any]:
    try:
        return json.loads((place.root / REPORT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def build(place: Place, name: str, progress: Progress, *, check: bool = True) -> Build:
    """`speedbook build` on the corpus, as a maintainer runs it. `check`: RuntimeError (with the
    output's tail to `progress`) when it fails; otherwise its status is in the result."""
    before = _report(place)
    cpu = _children_cpu()
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "pipeline.cli", "build"],
        env=place.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.wait(0.2):
            peak = max(peak, tree_rss_kib(process.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    output, _ = process.communicate()
    done.set()
    sampler.join()
    wall = time.perf_counter() - started
    skipped = SKIPPED_LINE in output
    report = _report(place)
    fresh = report.get("run_id") and report.get("run_id") != before.get("run_id")
    stages = dict(report.get("stages") or {}) if fresh and not skipped else {}
    result = Build(round(wall, 2), process.returncode, round(peak / 1024, 1), stages, skipped)
    result.output = output
    result.cpu_s = round(_children_cpu() - cpu, 2)
    progress(
        f"{name}: {result.wall_s} s, cpu {result.cpu_s} s (exit {result.status}, "
        f"peak {result.peak_rss_mib} MiB)"
    )
    if process.returncode != 0:
        progress(f"{name} build output (last lines):\n{output[-1500:].rstrip()}")
        if check:
            raise RuntimeError(f"the {name} build failed (exit {process.returncode})")
    elif check and not skipped and not stages:
        raise RuntimeError(f"the {name} build wrote no {REPORT_FILE}: no stage times")
    return result


def read_json_floor(files: list[Path], scratch: Path) -> tuple[int, float, float]:
    """Rows, seconds and CPU seconds (all DuckDB's threads) of `CREATE TABLE t AS SELECT * FROM
    read_json([...])` over `files` into a fresh DuckDB file, in a session set up as the
    build's (same memory budget): no parser of these responses can do less."""
    target = scratch / "read-json-floor.duckdb"
    target.unlink(missing_ok=True)
    con = session()
    try:
        con.execute(f"ATTACH {quote_literal(str(target))} AS floor")
        started, cpu = time.perf_counter(), time.process_time()
        con.execute(
            "CREATE TABLE floor.t AS SELECT * FROM read_json(?, format = 'newline_delimited')",
            [[str(path) for path in files]],
        )
        con.execute("CHECKPOINT floor")
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        (rows,) = con.execute("SELECT count(*) FROM floor.t").fetchone()  # type: ignore[misc]
    finally:
        con.close()
        target.unlink(missing_ok=True)
    return rows, seconds, cpu


def lxml_floor(pages: list[bytes]) -> float:
    """Pages per second parsing `pages` with lxml.html alone, median of three passes."""
    rates = []
    for _ in range(3):
        started = time.perf_counter()
        for data in pages:
            lxml.html.document_fromstring(data)
        rates.append(len(pages) / (time.perf_counter() - started))
    return statistics.median(rates)


def store_bytes(raw_dir: Path) -> tuple[int, int]:
    """Bytes on disk of every file of the snapshot store (records and the listing cache
    included), and the sum of the sizes its records give (the bytes as received)."""
    on_disk = sum(path.stat().st_size for path in raw_dir.rglob("*") if path.is_file())
    received = sum(meta.size for meta in open_store(raw_dir).list(include_withdrawn=True))
    return on_disk, received


def lake_bytes(root: Path) -> int:
    """Bytes of the lake on disk: its data files and a local catalog file."""
    files = [p for p in (root / "lake").rglob("*") if p.is_file()]
    files += [p for p in root.glob("catalog.*") if p.is_file()]
    return sum(p.stat().st_size for p in files)


def query_s(place: Place, sql: str) -> float:
    """Median of three runs of `sql` on the built lake, read-only, as an analyst's session."""
    times = []
    with connect(place.settings(), read_only=True) as con:
        for _ in range(3):
            started = time.perf_counter()
            con.execute(sql).fetchall()
            times.append(time.perf_counter() - started)
    return round(statistics.median(times), 4)


def scalar(place: Place, sql: str) -> Any:
    with connect(place.settings(), read_only=True) as con:
        return con.execute(sql).fetchone()[0]  # type: ignore[index]


def render(rows: list[tuple[str, Any, str]]) -> str:
    width = max(len(r[0]) for r in rows)
    lines = [f"{'measure'.ljust(width)}  {'value':>18}  note", "-" * (width + 40)]
    lines += [f"{name.ljust(width)}  {value!s:>18}  {note}" for name, value, note in rows]
    return "\n".join(lines)

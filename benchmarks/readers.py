"""Readers during a build: processes querying `mart` views in a loop, as analysts'
`speedbook sql` sessions would, while a build writes the lake. Each reader counts its failures
and the states it saw (row counts of three mart views, read in one statement, so from one lake
snapshot); a state that is neither the lake's before the build nor after it is a half-built one.
"""

from __future__ import annotations

import json
import multiprocessing
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchmarks.measure import Place
from pipeline.warehouse.connection import connect

READERS = 4
# Between one reader's queries: an analyst's session is not a tight loop, and four tight loops
# on a two-core machine would measure the cores taken from the build, not the lake.
PAUSE_S = 0.5
# One statement: its three counts come from one lake snapshot. endpoint_stats grows with every
# poll, current_figures and leaderboard change when the latest figures do.
STATE_SQL = (
    "SELECT (SELECT count(*) FROM mart.current_figures), "
    "(SELECT count(*) FROM mart.endpoint_stats), (SELECT count(*) FROM mart.leaderboard)"
)
# before a lake's first build there is nothing to read: these errors are that state, not failures
NOT_BUILT = ("does not exist", "no such table", "unable to open database file")


def state(place: Place) -> list[int] | None:
    """The lake's state as a reader sees it now, or None before its first build."""
    try:
        with connect(place.settings(), read_only=True) as con:
            return list(con.execute(STATE_SQL).fetchone())  # type: ignore[arg-type]
    except Exception as error:
        if any(words in str(error) for words in NOT_BUILT):
            return None
        raise


def _read(place: Place, stop: Any, out: str) -> None:
    """One reader: query until `stop` is set, reconnecting after an error; the (state, error)
    of each query go to `out` as JSON."""
    seen: list[tuple[float, list[int] | None, str]] = []
    con = None
    while not stop.is_set():
        started = time.perf_counter()
        try:
            if con is None:
                con = connect(place.settings(), read_only=True)
            row = con.execute(STATE_SQL).fetchone()
            seen.append((time.perf_counter() - started, list(row or ()), ""))
            time.sleep(PAUSE_S)
        except Exception as error:
            seen.append((time.perf_counter() - started, None, str(error).splitlines()[0][:300]))
            if con is not None:
                con.close()
            con = None
            time.sleep(PAUSE_S)
    if con is not None:
        con.close()
    Path(out).write_text(json.dumps(seen), encoding="utf-8")


@contextmanager
def readers(place: Place, scratch: Path, count: int = READERS) -> Iterator[list[Path]]:
    """`count` reader processes running for the duration of the block; the files their results
    are in (read them after the block with `summary`)."""
    context = multiprocessing.get_context("spawn")
    stop = context.Event()
    outs = [scratch / f"reader-{n}.json" for n in range(count)]
    for out in outs:
        out.unlink(missing_ok=True)
    processes = [context.Process(target=_read, args=(place, stop, str(out))) for out in outs]
    for process in processes:
        process.start()
    time.sleep(3)  # the readers have started and attached before the build begins
    try:
        yield outs
    finally:
        stop.set()
        for process in processes:
            process.join(120)


def summary(outs: list[Path], before: list[int] | None, after: list[int]) -> dict[str, Any]:
    """Queries, failures (with their messages), and states seen that are neither `before` nor
    `after` (half-built ones)."""
    queries, failures, half, not_built = 0, Counter[str](), 0, 0
    seconds: list[float] = []
    for out in outs:
        for elapsed, seen, error in json.loads(out.read_text(encoding="utf-8")):
            queries += 1
            if error:
                if before is None and any(words in error for words in NOT_BUILT):
                    not_built += 1  # the lake's state before its first build: nothing yet
                else:
                    failures[error] += 1
                continue
            seconds.append(elapsed)
            if seen not in (before, after):
                half += 1
    seconds.sort()
    return {
        "readers": len(outs),
        "queries": queries,
        "failures": sum(failures.values()),
        "failure_messages": dict(failures.most_common(5)),
        "not_built_yet": not_built,
        "half_built_states": half,
        "state_before": before,
        "state_after": after,
        "query_median_s": round(seconds[len(seconds) // 2], 3) if seconds else None,
    }

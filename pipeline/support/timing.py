"""Per-stage wall time of a build, for the build report and the benchmark.

Stages: inventory, extract (parse, and validate the frames before they are written), normalise,
load, sql, export. Each asset times its own work with a `StageClock` and records the seconds in
its materialisation's metadata (`STAGE_METADATA`); the runner sums them over the run's events,
whichever process ran the step.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager

STAGE_METADATA = "stage_seconds"  # the metadata key of a materialisation's {stage: seconds}


class StageClock:
    """Seconds spent in each stage by one piece of work."""

    def __init__(self) -> None:
        self._seconds: dict[str, float] = {}

    def add(self, stage: str, seconds: float) -> None:
        self._seconds[stage] = self._seconds.get(stage, 0.0) + seconds

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, time.perf_counter() - started)

    def seconds(self) -> dict[str, float]:
        return {name: round(seconds, 3) for name, seconds in sorted(self._seconds.items())}


def total_seconds(parts: Iterable[Mapping[str, float]]) -> dict[str, float]:
    """Stage seconds summed over several pieces of work (the steps of a run)."""
    clock = StageClock()
    for part in parts:
        for stage, seconds in part.items():
            clock.add(stage, float(seconds))
    return clock.seconds()

"""The executor of runs launched from the Dagster UI: one step at a time, each in its own process,
inside the build lock that `speedbook build` takes too (pipeline/dagster/envelope.py), so that two
builds of one warehouse never interleave. The lock lives in the run's orchestrating process, so
whatever launches the run, the UI, the daemon's schedules or `dg.execute_job`, takes it.
`speedbook build` runs in-process, where Dagster replaces the job's executor, and takes the lock
itself.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.forkserver
import os
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import dagster as dg

from pipeline.dagster.assets.fetch import RAW_FETCH
from pipeline.dagster.envelope import BuildRefused
from pipeline.raw.inventory import scope_problem
from pipeline.support.settings import Settings
from pipeline.warehouse.build_lock import build_lock

if TYPE_CHECKING:  # Dagster's own types of an executor's arguments (not re-exported)
    from dagster._core.execution.context.system import PlanOrchestrationContext
    from dagster._core.execution.plan.plan import ExecutionPlan
    from dagster._core.execution.retries import RetryMode
    from dagster._core.execution.step_dependency_config import StepDependencyConfig

# what the forkserver of a run's steps imports once (Dagster puts its executor module first)
PRELOAD = ["dagster._core.executor.multiprocess", "pipeline.dagster.graph"]


def forkserver_with_this_environment() -> None:
    """Make the forkserver that forks a run's steps one started with this process's environment
    as it is now. Python keeps one forkserver per process for the process's life, and a child
    gets the forkserver's environment, not its parent's: in a process that ran a multiprocess
    run (or a staging pool) before the environment changed, a step would open the instance,
    the lake and the stores of the old environment, or find no credentials. A server whose
    environment (as the kernel keeps it, /proc/<pid>/environ) is this one is kept: a
    deployment's runs are each a process of their own. Any other is stopped first (it exits
    once the processes it forked have: none, between runs) and a new one started."""
    server = multiprocessing.forkserver._forkserver  # type: ignore[attr-defined]
    pid = server._forkserver_pid
    if pid is not None:
        if _environment_of(pid) == dict(os.environ):
            return
        server._stop()
    multiprocessing.get_context("forkserver").set_forkserver_preload(PRELOAD)
    server.ensure_running()


def _environment_of(pid: int) -> dict[str, str] | None:
    """The environment process `pid` started with; None where the kernel does not say (a
    process that has exited, a system without /proc)."""
    try:
        data = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return None
    entries = (os.fsdecode(entry).partition("=") for entry in data.split(b"\0") if entry)
    return {name: value for name, _, value in entries} or None


class LockedExecutor(dg.Executor):
    """Runs the plan with `inner` (the multiprocess executor) inside the build lock."""

    def __init__(self, inner: dg.Executor, settings: Settings, as_of: datetime | None) -> None:
        self._inner = inner
        self._settings = settings
        self._as_of = as_of

    @property
    def retries(self) -> RetryMode:
        return self._inner.retries

    @property
    def step_dependency_config(self) -> StepDependencyConfig:
        return self._inner.step_dependency_config

    def execute(
        self, plan_context: PlanOrchestrationContext, execution_plan: ExecutionPlan
    ) -> Iterator[dg.DagsterEvent]:
        # A run that fetches first (a refresh schedule's) may start from an empty store: a new
        # deployment's first scheduled run is one.
        fetches = RAW_FETCH.to_python_identifier() in execution_plan.step_keys_to_execute
        problem = None if fetches else scope_problem(self._settings.snapshot_store, self._as_of)
        if problem is not None:
            raise BuildRefused(problem)
        # Taken at once or not at all: a run started while a build holds the warehouse fails
        # with the holder's pid, as a second `speedbook build` would.
        with build_lock(self._settings):
            forkserver_with_this_environment()
            yield from self._inner.execute(plan_context, execution_plan)


def build_executor(settings: Settings, as_of: datetime | None) -> dg.ExecutorDefinition:
    """One step at a time (each step writes the lake in its own transactions), each process
    forked from a server that imported the pipeline once, all inside the build lock."""
    multiprocess = dg.multiprocess_executor

    @dg.executor(
        name="one_step_at_a_time",
        config_schema=multiprocess.config_schema.as_field(),
        requirements=dg.multiple_process_executor_requirements(),
    )
    def one_step_at_a_time(init_context: dg.InitExecutorContext) -> dg.Executor:
        inner = multiprocess.executor_creation_fn(init_context)  # type: ignore[misc]
        return LockedExecutor(inner, settings, as_of)

    return one_step_at_a_time.configured(
        {
            "max_concurrent": 1,
            "start_method": {"forkserver": {"preload_modules": PRELOAD}},
        },
        name="one_step_at_a_time",
    )

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
# the forkserver this process started for its runs' steps, and the environment it has: {pid: env}
_SERVED: dict[int, dict[str, str]] = {}


def forkserver_with_this_environment() -> None:
    """Make the forkserver that forks a run's steps one started with this process's environment
    as it is now. Python keeps one forkserver per process for the process's life, and a child
    gets the forkserver's environment, not its parent's: in a process that ran a multiprocess
    run (or a staging pool) before the environment changed, a step would open the instance,
    the lake and the stores of the old environment, or find no credentials. Where the
    environment is the one the server started with (a deployment's runs, each its own process),
    the server is kept. A server started with another environment, or by someone else, is
    stopped first (it exits once the processes it forked have: none, between runs)."""
    server = multiprocessing.forkserver._forkserver  # type: ignore[attr-defined]
    environment = dict(os.environ)
    pid = server._forkserver_pid
    if pid is not None and _SERVED.get(pid) == environment:
        server.ensure_running()  # started again if it died
        if server._forkserver_pid == pid:
            return
    elif pid is not None:
        server._stop()
    multiprocessing.get_context("forkserver").set_forkserver_preload(PRELOAD)
    server.ensure_running()
    _SERVED.clear()
    _SERVED[server._forkserver_pid] = environment


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

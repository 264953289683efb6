"""The executor of runs launched from the Dagster UI: one step at a time, each in its own process,
inside the same envelope as `speedbook build` (pipeline/dagster/envelope.py): the warehouse lock
for the whole run, a working copy of the warehouse that every step writes
(pipeline/warehouse/swap.py), swapped in only when every step succeeded.

The envelope lives in the run's orchestrating process (the one that launches the step processes
and sees every event), so whatever launches the run, the UI, `dagster job execute` or
`dg.execute_job`, gets it. `speedbook build` runs in-process, where Dagster replaces the job's
executor, and wraps its run in the same envelope itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import TYPE_CHECKING

import dagster as dg

from pipeline.raw.inventory import scope_problem
from pipeline.support.locking import warehouse_lock
from pipeline.support.settings import Settings
from pipeline.warehouse.swap import BuildRefused, clean_working_copies, working_copy

if TYPE_CHECKING:  # Dagster's own types of an executor's arguments (not re-exported)
    from dagster._core.execution.context.system import PlanOrchestrationContext
    from dagster._core.execution.plan.plan import ExecutionPlan
    from dagster._core.execution.retries import RetryMode
    from dagster._core.execution.step_dependency_config import StepDependencyConfig

STEP_DONE = (dg.DagsterEventType.STEP_SUCCESS,)
STEP_NOT_DONE = (dg.DagsterEventType.STEP_FAILURE, dg.DagsterEventType.STEP_SKIPPED)


def every_step_succeeded(events: Iterable[dg.DagsterEvent], planned: Iterable[str]) -> bool:
    """The rule that commits a run's working copy: no step failed or was skipped, and every
    planned step succeeded (a failed blocking check fails its step; what depends on it never
    starts)."""
    succeeded: set[str] = set()
    for event in events:
        if event.event_type in STEP_NOT_DONE:
            return False
        if event.event_type in STEP_DONE and event.step_key:
            succeeded.add(event.step_key)
    wanted = set(planned)
    return bool(wanted) and wanted <= succeeded


class WorkingCopyExecutor(dg.Executor):
    """Runs the plan with `inner` (the multiprocess executor) inside the warehouse lock and a
    working copy of the warehouse, committed when every step succeeded."""

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
        settings = self._settings
        problem = scope_problem(settings.raw_dir, self._as_of)
        if problem is not None:
            raise BuildRefused(problem)
        # Taken at once or not at all: a run started while a build holds the warehouse fails
        # with the holder's pid, as a second `speedbook build` would.
        with warehouse_lock(settings.lock_file):
            for path in clean_working_copies(settings.warehouse):
                plan_context.log.info(f"removed the database a killed build left: {path}")
            with working_copy(settings, self._as_of, plan_context.run_id) as working:
                events: list[dg.DagsterEvent] = []
                for event in self._inner.execute(plan_context, execution_plan):
                    if event.is_step_event:
                        events.append(event)
                    yield event
                if every_step_succeeded(events, execution_plan.step_keys_to_execute):
                    working.commit()
                    plan_context.log.info(
                        f"warehouse committed: {working.target} ({working.summary()})"
                    )
                else:
                    plan_context.log.info(
                        f"a step failed: {working.target} is left as it was, the run's copy "
                        "is deleted"
                    )


def build_executor(settings: Settings, as_of: datetime | None) -> dg.ExecutorDefinition:
    """One step at a time (every step writes the one DuckDB file, which takes one writing
    process at a time), each process forked from a server that imported the pipeline once, all
    inside the working-copy envelope."""
    multiprocess = dg.multiprocess_executor

    @dg.executor(
        name="one_step_at_a_time",
        config_schema=multiprocess.config_schema.as_field(),
        requirements=dg.multiple_process_executor_requirements(),
    )
    def one_step_at_a_time(init_context: dg.InitExecutorContext) -> dg.Executor:
        inner = multiprocess.executor_creation_fn(init_context)  # type: ignore[misc]
        return WorkingCopyExecutor(inner, settings, as_of)

    return one_step_at_a_time.configured(
        {
            "max_concurrent": 1,
            "start_method": {"forkserver": {"preload_modules": ["pipeline.dagster.graph"]}},
        },
        name="one_step_at_a_time",
    )

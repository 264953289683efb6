"""The schedules: one per cadence of the registry's [cadences] table, at its cron string; a tick
requests a run of the cadence's refresh job when a source of it is due, tagged with the
warehouse that the instance's run queue starts one run at a time for. Beside them, the lake's
maintenance has a schedule of its own (pipeline/dagster/maintenance.py)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.test_utils import create_run_for_test
from dagster._utils.schedules import cron_string_iterator, is_valid_cron_string

from pipeline.dagster.maintenance import MAINTAIN_CRON, MAINTAIN_JOB
from pipeline.dagster.runner import dagster_instance, instance_yaml
from pipeline.dagster.schedules import (
    CADENCE_TAG,
    WAREHOUSE_TAG,
    fetch_run_config,
    queues_one_run_per_warehouse,
)
from pipeline.raw.due import due_sources
from pipeline.raw.outcomes import record_outcome
from pipeline.raw.snapshots import SnapshotStore
from pipeline.sources.registry import RegistryError, load_crons, load_registry
from pipeline.sources.schedule import cron_problem, next_tick
from pipeline.support.settings import BUNDLED_METADATA, Settings

BUNDLED_REGISTRY = BUNDLED_METADATA / "sources.toml"
TICK = datetime(2026, 12, 1, 2, 15, tzinfo=UTC)  # a tick of the bundled daily cron string


def _settings(tmp_path: Path, registry_text: str) -> Settings:
    registry = tmp_path / "sources.toml"
    registry.write_text(registry_text, encoding="utf-8")
    return Settings.resolve(
        registry=registry, warehouse=tmp_path / "warehouse", exports=tmp_path / "exports"
    )


def _with_cron(cadence: str, cron: str) -> str:
    """The bundled registry with `cadence`'s cron string replaced."""
    text = BUNDLED_REGISTRY.read_text(encoding="utf-8")
    line = re.compile(rf"^{cadence} = \".*\"$", re.MULTILINE)
    assert len(line.findall(text)) == 1
    return line.sub(f'{cadence} = "{cron}"', text)


def _definitions(settings: Settings, **kwargs: object) -> dg.Definitions:
    from pipeline.dagster.graph import build_definitions

    return build_definitions(settings, **kwargs)


def _schedules(defs: dg.Definitions) -> dict[str, dg.ScheduleDefinition]:
    return {schedule.name: schedule for schedule in defs.schedules or ()}


# --- the cron strings: in the registry, validated at load ---------------------------------------


def test_one_schedule_per_cadence_a_source_has_at_the_registry_cron_string(tmp_path):
    settings = _settings(tmp_path, BUNDLED_REGISTRY.read_text(encoding="utf-8"))
    crons = load_crons(settings.registry)
    used = {source.cadence for source in load_registry(settings.registry).values()}
    schedules = _schedules(_definitions(settings))
    # and the lake's own maintenance, at its fixed time (pipeline/dagster/maintenance.py)
    maintain = schedules.pop(f"{MAINTAIN_JOB}_schedule")
    assert (maintain.cron_schedule, maintain.job_name) == (MAINTAIN_CRON, MAINTAIN_JOB)
    assert maintain.default_status == dg.DefaultScheduleStatus.STOPPED
    assert set(schedules) == {f"refresh_{cadence}_schedule" for cadence in crons if cadence in used}
    assert "refresh_half_hourly_schedule" in schedules and "refresh_daily_schedule" in schedules
    assert "quarterly" in crons and "quarterly" not in used  # no source: no schedule
    for name, schedule in schedules.items():
        cadence = name.removeprefix("refresh_").removesuffix("_schedule")
        assert schedule.cron_schedule == crons[cadence]
        assert schedule.job_name == f"refresh_{cadence}"
        assert schedule.execution_timezone == "UTC"
        assert schedule.default_status == dg.DefaultScheduleStatus.STOPPED
    running = _schedules(_definitions(settings, schedules_running=True))
    assert {s.default_status for s in running.values()} == {dg.DefaultScheduleStatus.RUNNING}


def test_a_schedule_follows_its_cron_string_in_a_copied_registry(tmp_path):
    settings = _settings(tmp_path, _with_cron("daily", "40 5 * * 2-6"))
    schedule = _schedules(_definitions(settings))["refresh_daily_schedule"]
    assert schedule.cron_schedule == "40 5 * * 2-6"
    assert load_crons(BUNDLED_REGISTRY)["daily"] != "40 5 * * 2-6"  # the bundled one stands


def test_a_cadence_left_out_of_the_table_has_no_schedule(tmp_path):
    text = BUNDLED_REGISTRY.read_text(encoding="utf-8")
    text = re.sub(r"^yearly = .*$", "", text, flags=re.MULTILINE)
    defs = _definitions(_settings(tmp_path, text))
    assert "refresh_yearly_schedule" not in _schedules(defs)
    assert "refresh_yearly" not in {job.name for job in defs.jobs or ()}


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ('daily = "15 25 * * *"', "[cadences] daily = '15 25 * * *' is not a cron string"),
        ('daily = "*/30 * * * * *"', "[cadences] daily = '*/30 * * * * *' has 6 fields, not 5"),
        ('daily = "0 0 30 2 *"', "[cadences] daily = '0 0 30 2 *' never fires"),
        ('daily = ""', "[cadences] daily = '' is not a cron string"),
        ("daily = 15", "[cadences] daily = '15' is not text (int)"),
        (
            'fortnightly = "0 0 * * 1"',
            "[cadences] names unknown cadence 'fortnightly' (expected one of",
        ),
    ],
)
def test_a_bad_cron_string_is_refused_at_load_naming_it(tmp_path, table, expected):
    text = BUNDLED_REGISTRY.read_text(encoding="utf-8")
    text = re.sub(r"^daily = .*$", table, text, flags=re.MULTILINE)
    settings = _settings(tmp_path, text)
    for load in (load_registry, load_crons, _definitions_of_path):
        with pytest.raises(RegistryError) as error:
            load(settings.registry)
        assert expected in str(error.value) and str(settings.registry) in str(error.value)


def _definitions_of_path(registry: Path) -> dg.Definitions:
    return _definitions(Settings.resolve(registry=registry))


def test_cadences_must_be_a_table(tmp_path):
    text = 'cadences = "daily"\n' + BUNDLED_REGISTRY.read_text(encoding="utf-8").replace(
        "[cadences]\n", "[ignored]\n"
    )
    with pytest.raises(RegistryError, match=r"\[cadences\] must be a table of cron strings"):
        load_registry(_settings(tmp_path, text).registry)


def test_a_registry_without_cadences_loads_and_has_no_schedules(tmp_path):
    text = BUNDLED_REGISTRY.read_text(encoding="utf-8")
    start = text.index("[cadences]")
    text = text[:start] + text[text.index("[[source]]", start) :]
    settings = _settings(tmp_path, text)
    assert load_crons(settings.registry) == {}
    defs = _definitions(settings)
    # no refresh schedule or job: only the build and the lake's maintenance
    assert set(_schedules(defs)) == {f"{MAINTAIN_JOB}_schedule"}
    assert {job.name for job in defs.jobs or ()} == {"build", MAINTAIN_JOB}


CRONS = [
    "*/30 * * * *",
    "15 2 * * *",
    "45 2 * * 1",
    "0 0 L * *",
    "0 9 * * mon-fri",
    "@daily",
    "0 0 29 2 *",
    "5,35 */2 1-15 1,7 0",
    "15 25 * * *",
    "*/30 * * * * *",
    "0 0 30 2 *",
    "* * * *",
    "*/0 * * * *",
]


@pytest.mark.parametrize("cron", CRONS)
def test_the_registry_accepts_a_cron_string_exactly_when_dagster_does(cron):
    accepted = cron_problem(cron) is None
    assert accepted == is_valid_cron_string(cron), cron
    if accepted:  # and the schedule is made, firing when the registry says it next does
        schedule = dg.ScheduleDefinition(
            name="probe", cron_schedule=cron, job_name="probe", execution_timezone="UTC"
        )
        after = datetime(2026, 12, 1, 2, 15, 30, tzinfo=UTC)
        assert schedule.cron_schedule == cron
        fired = next(cron_string_iterator(after.timestamp(), cron, "UTC"))
        assert fired == next_tick(cron, after)  # Dagster's next tick is the registry's


# --- which sources a tick fetches ---------------------------------------------------------------


def _snapshot(store: SnapshotStore, source_id: str, when: datetime, data: bytes = b"{}") -> str:
    meta = store.add(
        source_id,
        data,
        url="https://example.org/",
        retrieved_at=when,
        content_type="application/json",
        obtained_by="fetched",
        extension="json",
    ).meta
    return meta.file


def test_due_sources_of_a_daily_tick(tmp_path):
    """Fetched at the previous tick: due. Fetched since (after this tick's time): not due,
    unless that fetch failed; an unchanged fetch re-confirms the snapshot as fresh."""
    text = (BUNDLED_METADATA / "sources.toml").read_text(encoding="utf-8")
    settings = _settings(tmp_path, text)
    store = SnapshotStore(settings.raw_dir)
    daily = [s.id for s in load_registry(settings.registry).values() if s.cadence == "daily"]
    assert daily == ["artificial-analysis-api", "models-dev", "vercel-ai-gateway-catalogue"]
    plan = due_sources(settings, TICK, "daily")
    assert plan.source_ids == daily and not plan.not_due  # no snapshot yet
    # models-dev fetched a minute after this tick; AA at the previous tick
    _snapshot(store, "models-dev", TICK + timedelta(minutes=1))
    _snapshot(store, "vercel-ai-gateway-catalogue", TICK + timedelta(minutes=1))
    last = _snapshot(store, "artificial-analysis-api", TICK - timedelta(days=1, seconds=-20))
    plan = due_sources(settings, TICK + timedelta(minutes=2), "daily")
    assert plan.source_ids == ["artificial-analysis-api"]
    assert [s.id for s in plan.not_due] == ["models-dev", "vercel-ai-gateway-catalogue"]
    # a fetch of AA since that found its bytes unchanged re-confirms it: not due
    record_outcome(
        settings.raw_dir,
        "artificial-analysis-api",
        "unchanged",
        "same bytes",
        snapshot=last,
        at=TICK + timedelta(minutes=1),
    )
    assert due_sources(settings, TICK + timedelta(minutes=2), "daily").source_ids == []
    # a failed fetch confirms nothing: due again at the next tick
    record_outcome(
        settings.raw_dir,
        "artificial-analysis-api",
        "failed",
        "HTTP 503",
        at=TICK + timedelta(minutes=3),
    )
    assert due_sources(settings, TICK + timedelta(minutes=4), "daily").source_ids == [
        "artificial-analysis-api"
    ]
    # the next day's tick: both due again
    assert due_sources(settings, TICK + timedelta(days=1), "daily").source_ids == daily
    # every cadence: the due sources of each (every source of the others has no snapshot)
    every = due_sources(settings, TICK + timedelta(minutes=4))
    assert "models-dev" not in every.source_ids and "openrouter-endpoints" in every.source_ids
    with pytest.raises(RegistryError, match="cadence 'fortnightly' has no cron string"):
        due_sources(settings, TICK, "fortnightly")


def test_a_half_hourly_source_fetched_at_the_last_tick_is_due_at_this_one(tmp_path):
    settings = _settings(tmp_path, (BUNDLED_METADATA / "sources.toml").read_text("utf-8"))
    store = SnapshotStore(settings.raw_dir)
    tick = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)
    _snapshot(store, "openrouter-endpoints", tick - timedelta(minutes=29, seconds=50))
    assert due_sources(settings, tick, "half_hourly").source_ids == ["openrouter-endpoints"]
    # a run that waited in the queue for a quarter of an hour still fetches it
    late = tick + timedelta(minutes=15)
    assert due_sources(settings, late, "half_hourly").source_ids == ["openrouter-endpoints"]
    _snapshot(store, "openrouter-endpoints", late, b'{"later": 1}')
    assert due_sources(settings, late + timedelta(minutes=1), "half_hourly").source_ids == []


def test_a_source_marked_unscheduled_is_never_due_and_the_hourly_tick_has_its_own(tmp_path):
    """openrouter-frontend-stats (an undocumented API: scheduled = false) is never due, not even
    without a snapshot; Vercel's hourly endpoint statistics are due at the hourly tick."""
    settings = _settings(tmp_path, (BUNDLED_METADATA / "sources.toml").read_text("utf-8"))
    sources = load_registry(settings.registry)
    assert not sources["openrouter-frontend-stats"].scheduled
    assert sources["openrouter-frontend-stats"].cadence == "half_hourly"
    assert all(s.scheduled for s in sources.values() if s.id != "openrouter-frontend-stats")
    tick = datetime(2026, 12, 1, 10, 10, tzinfo=UTC)
    every = due_sources(settings, tick)
    assert "openrouter-frontend-stats" not in every.source_ids + [s.id for s in every.not_due]
    assert due_sources(settings, tick, "hourly").source_ids == ["vercel-ai-gateway-endpoints"]
    assert load_crons(settings.registry)["hourly"] == "10 * * * *"
    # enabled by its maintainer (the line removed): the half-hourly tick fetches it
    enabled = settings.registry.read_text("utf-8").replace("scheduled = false\n", "")
    settings.registry.write_text(enabled, encoding="utf-8")
    assert due_sources(settings, tick, "half_hourly").source_ids == [
        "openrouter-endpoints",
        "openrouter-frontend-stats",
    ]


# --- a tick ------------------------------------------------------------------------------------


@pytest.fixture
def instance():
    with dg.instance_for_test() as instance:
        yield instance


def _tick(
    settings: Settings, instance: dg.DagsterInstance, cadence: str, at: datetime
) -> dg.RunRequest | dg.SkipReason:
    schedule = _schedules(_definitions(settings))[f"refresh_{cadence}_schedule"]
    context = dg.build_schedule_context(instance=instance, scheduled_execution_time=at)
    data = schedule.evaluate_tick(context)
    assert len(data.run_requests or []) + (data.skip_message is not None) == 1
    return data.run_requests[0] if data.run_requests else dg.SkipReason(data.skip_message)


def test_a_tick_requests_a_refresh_run_tagged_with_the_warehouse(tmp_path, instance):
    settings = _settings(tmp_path, BUNDLED_REGISTRY.read_text(encoding="utf-8"))
    request = _tick(settings, instance, "daily", TICK)
    assert isinstance(request, dg.RunRequest)
    assert request.tags[WAREHOUSE_TAG] == str(settings.warehouse)
    assert request.tags[CADENCE_TAG] == "daily"
    assert request.run_config == fetch_run_config("daily")
    assert request.run_config == {"ops": {"raw_fetch": {"config": {"cadence": "daily"}}}}
    defs = _definitions(settings)
    for job in defs.jobs or ():  # every job of the location carries the tag, the build's too
        assert defs.resolve_job_def(job.name).tags[WAREHOUSE_TAG] == str(settings.warehouse)


def test_a_tick_with_nothing_due_or_a_run_still_queued_is_skipped(tmp_path, instance):
    settings = _settings(tmp_path, BUNDLED_REGISTRY.read_text(encoding="utf-8"))
    store = SnapshotStore(settings.raw_dir)
    for source_id in ("artificial-analysis-api", "models-dev", "vercel-ai-gateway-catalogue"):
        _snapshot(store, source_id, TICK + timedelta(seconds=30))
    skipped = _tick(settings, instance, "daily", TICK + timedelta(minutes=1))
    assert isinstance(skipped, dg.SkipReason)
    assert "no source of cadence daily is due (3 fetched since the last tick)" in (
        skipped.skip_message or ""
    )
    waiting = create_run_for_test(
        instance,
        job_name="refresh_daily",
        status=dg.DagsterRunStatus.NOT_STARTED,
        tags={WAREHOUSE_TAG: str(settings.warehouse)},
    )
    skipped = _tick(settings, instance, "daily", TICK + timedelta(days=1))
    assert isinstance(skipped, dg.SkipReason)
    assert f"run {waiting.run_id} of refresh_daily is still waiting" in (skipped.skip_message or "")
    # a queued run of another warehouse, or one already running, is no reason to skip
    instance.report_run_canceled(waiting)
    create_run_for_test(
        instance,
        job_name="refresh_daily",
        status=dg.DagsterRunStatus.NOT_STARTED,
        tags={WAREHOUSE_TAG: str(tmp_path / "elsewhere")},
    )
    create_run_for_test(
        instance,
        job_name="refresh_daily",
        status=dg.DagsterRunStatus.STARTED,
        tags={WAREHOUSE_TAG: str(settings.warehouse)},
    )
    assert isinstance(_tick(settings, instance, "daily", TICK + timedelta(days=1)), dg.RunRequest)


def test_the_build_job_never_fetches_and_a_refresh_job_does(tmp_path):
    settings = _settings(tmp_path, BUNDLED_REGISTRY.read_text(encoding="utf-8"))
    defs = _definitions(settings)
    fetch = dg.AssetKey("raw_fetch")
    build = defs.resolve_job_def("build")
    refresh = defs.resolve_job_def("refresh_half_hourly")
    assert fetch not in build.asset_layer.selected_asset_keys
    assert fetch in refresh.asset_layer.selected_asset_keys
    assert (
        refresh.asset_layer.selected_asset_keys - {fetch} == build.asset_layer.selected_asset_keys
    )
    graph = defs.resolve_asset_graph()
    assert fetch in graph.get(dg.AssetKey("raw_inventory")).parent_keys  # the build comes after


def test_a_source_id_that_would_be_a_raw_asset_of_the_layer_is_refused(tmp_path):
    text = BUNDLED_REGISTRY.read_text(encoding="utf-8").replace('id = "models-dev"', 'id = "fetch"')
    with pytest.raises(RegistryError, match="id 'fetch' is reserved"):
        load_registry(_settings(tmp_path, text).registry)


# --- the run queue -----------------------------------------------------------------------------


def test_the_instance_queues_one_run_at_a_time_per_warehouse(tmp_path):
    settings = _settings(tmp_path, BUNDLED_REGISTRY.read_text(encoding="utf-8"))
    with dagster_instance(settings) as instance:
        assert queues_one_run_per_warehouse(instance)
        queue = instance.get_concurrency_config().run_queue_config
        assert queue.tag_concurrency_limits == [
            {"key": WAREHOUSE_TAG, "value": {"applyLimitPerUniqueValue": True}, "limit": 1}
        ]
        assert type(instance.run_coordinator).__name__ == "QueuedRunCoordinator"
    assert (settings.dagster_home / "dagster.yaml").read_text() == instance_yaml(
        settings.dagster_home
    )


def test_a_dagster_yaml_of_ones_own_is_kept_and_checked(tmp_path):
    settings = _settings(tmp_path, BUNDLED_REGISTRY.read_text(encoding="utf-8"))
    config = settings.dagster_home / "dagster.yaml"
    config.parent.mkdir(parents=True)
    theirs = "telemetry:\n  enabled: false\n"
    config.write_text(theirs)
    with dagster_instance(settings) as instance:
        assert not queues_one_run_per_warehouse(instance)
    assert config.read_text() == theirs
    config.write_text(theirs + "concurrency:\n  runs:\n    max_concurrent_runs: 1\n")
    with dagster_instance(settings) as instance:
        assert queues_one_run_per_warehouse(instance)  # one run at all: one per warehouse


def test_speedbook_ui_passes_schedules_running_and_notes_a_queue_without_the_limit(
    tmp_path, monkeypatch, capsys
):
    from pipeline.cli import main, ui

    settings = _settings(tmp_path, BUNDLED_REGISTRY.read_text(encoding="utf-8"))
    monkeypatch.setenv("DAGSTER_HOME", str(settings.dagster_home))  # restored after the test
    launched: list[dict[str, str]] = []

    def supervise(_command: list[str], env: dict[str, str]) -> int:
        launched.append(dict(env))
        return 0  # dagster dev is never started here (tests/test_cli_ui.py starts it)

    monkeypatch.setattr(ui, "supervise", supervise)
    args = ["--registry", str(settings.registry), "--warehouse", str(settings.warehouse)]
    main(["ui", *args])
    assert "SPEEDBOOK_SCHEDULES" not in launched[-1]
    assert "run queue may start two runs" not in capsys.readouterr().err
    main(["ui", *args, "--schedules-running"])
    assert launched[-1]["SPEEDBOOK_SCHEDULES"] == "running"
    (settings.dagster_home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    main(["ui", *args])
    assert "run queue may start two runs on this warehouse at once" in capsys.readouterr().err


def test_the_queue_starts_one_of_two_runs_of_a_warehouse_and_one_of_another(tmp_path, instance):
    """The run queue's own rule (the counter its daemon dequeues by), fed the limits of the
    instance `speedbook ui` prepares: a run of a warehouse waits while another of it is in
    progress; a run of another warehouse does not."""
    from dagster._utils.tags import TagConcurrencyLimitsCounter

    settings = _settings(tmp_path, BUNDLED_REGISTRY.read_text(encoding="utf-8"))
    with dagster_instance(settings) as ours:
        limits = ours.get_concurrency_config().run_queue_config.tag_concurrency_limits
    here = {WAREHOUSE_TAG: str(settings.warehouse)}
    first, second = (
        create_run_for_test(instance, job_name="refresh_daily", tags=here) for _ in "12"
    )
    other = create_run_for_test(
        instance, job_name="build", tags={WAREHOUSE_TAG: str(tmp_path / "other")}
    )
    counter = TagConcurrencyLimitsCounter(limits, [])
    assert not counter.is_blocked(first)
    counter.update_counters_with_launched_item(first)
    assert counter.is_blocked(second)  # waits for the first
    assert not counter.is_blocked(other)
    # once the first has finished, nothing in progress holds the second back
    assert not TagConcurrencyLimitsCounter(limits, []).is_blocked(second)

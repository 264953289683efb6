"""A scheduled run end to end, as the daemon launches it: the tick of the daily schedule, then its
run (each step in its own process, inside the warehouse lock and a working copy) against a real
HTTP server on 127.0.0.1. It fetches the due sources, builds and publishes; a source whose
server fails is that source's outcome, the build goes on, and the source shows failing
freshness once it is older than its cadence; a second tick with nothing new publishes nothing."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import dagster as dg
import pytest
from api_world import MODELS_DEV, PROVIDERS, ApiWorld, api_world, toml_entry
from http_fixtures import ok, status

from pipeline.dagster.runner import dagster_instance
from pipeline.dagster.schedules import WAREHOUSE_TAG
from pipeline.raw.outcomes import latest_outcomes, read_outcomes
from pipeline.support.settings import Settings

OLD = datetime(2026, 5, 20, 9, tzinfo=UTC)  # the providers' last good snapshot: long stale


@pytest.fixture
def api(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ApiWorld]:
    yield from api_world(tmp_path, monkeypatch)


def _settings(api: ApiWorld) -> Settings:
    """models.dev served, OpenRouter's providers (daily here) failing with a 404; the registry
    schedules the daily cadence."""
    api.add("models-dev")
    api.add("openrouter-providers", cadence="daily")
    api.serve("/api.json", ok(MODELS_DEV))
    api.serve("/api/v1/providers", status(404, body=b"gone"))
    # the tick half a day away, so that no tick falls between the two runs of the test
    hour = (datetime.now(UTC).hour + 12) % 24
    text = f'[cadences]\ndaily = "0 {hour} * * *"\n\n' + "\n".join(
        toml_entry(fields) for fields in api.entries.values()
    )
    api.registry.write_text(text, encoding="utf-8")
    settings = Settings.resolve(
        registry=api.registry, warehouse=api.tmp / "warehouse", exports=api.tmp / "exports"
    )
    api.store.add(
        "openrouter-providers",
        PROVIDERS,
        url="https://openrouter.ai/api/v1/providers",
        retrieved_at=OLD,
        content_type="application/json",
        obtained_by="fetched",
        extension="json",
    )
    return settings


def _tick(settings: Settings, instance: dg.DagsterInstance) -> dg.RunRequest | None:
    from pipeline.dagster.graph import build_definitions

    schedule = build_definitions(settings).resolve_schedule_def("refresh_daily_schedule")
    context = dg.build_schedule_context(
        instance=instance, scheduled_execution_time=datetime.now(UTC)
    )
    data = schedule.evaluate_tick(context)
    return data.run_requests[0] if data.run_requests else None


def _run(
    settings: Settings, instance: dg.DagsterInstance, request: dg.RunRequest
) -> dg.ExecuteJobResult:
    job = dg.build_reconstructable_job(
        "pipeline.dagster.graph",
        "build_job",
        reconstructable_kwargs={
            "registry": str(settings.registry),
            "warehouse": str(settings.warehouse),
            "exports": str(settings.exports),
            "metadata": str(settings.metadata),
            "job_name": request.job_name or "refresh_daily",
        },
    )
    return dg.execute_job(
        job,
        instance=instance,
        run_config=request.run_config,
        tags=request.tags,
        raise_on_error=False,
    )


def _messages(instance: dg.DagsterInstance, run_id: str) -> list[str]:
    return [r.user_message for r in instance.all_logs(run_id) if r.dagster_event is None]


def _fresh(instance: dg.DagsterInstance, source: str) -> bool:
    key = dg.AssetCheckKey(dg.AssetKey(f"raw_{source.replace('-', '_')}"), "fresh")
    record = instance.event_log_storage.get_latest_asset_check_execution_by_key([key])[key]
    evaluation = record.event.dagster_event.event_specific_data
    return evaluation.passed


@pytest.mark.e2e
@pytest.mark.timeout(900)
def test_a_scheduled_run_fetches_builds_and_publishes_then_a_quiet_tick_publishes_nothing(api):
    settings = _settings(api)
    with dagster_instance(settings) as instance:
        request = _tick(settings, instance)
        assert request is not None and request.tags[WAREHOUSE_TAG] == str(settings.warehouse)
        result = _run(settings, instance, request)
        assert result.success, _messages(instance, result.run_id)[-5:]
        run = instance.get_run_by_id(result.run_id)
        assert run.tags[WAREHOUSE_TAG] == str(settings.warehouse)

        # the due sources were fetched: one new, one failed, each outcome recorded
        outcomes = latest_outcomes(settings.raw_dir)
        assert outcomes["models-dev"].outcome == "new"
        assert outcomes["openrouter-providers"].outcome == "failed"
        assert "404" in outcomes["openrouter-providers"].detail
        assert len(api.server.requests("/api.json")) == 1
        messages = _messages(instance, result.run_id)
        assert any(m.startswith("fetch failed: openrouter-providers") for m in messages)

        # ... and the build published a release that reads both sources
        releases = sorted(p.name for p in settings.exports.iterdir() if p.name != "latest")
        assert len(releases) == 1 and (settings.exports / "latest").is_dir()
        assert any(m.startswith(f"published release {releases[0]}") for m in messages), messages

        # the failed source, older than its cadence at the data date, fails freshness in the UI
        assert _fresh(instance, "models-dev")
        assert not _fresh(instance, "openrouter-providers")

        # the next tick: models.dev is not due (fetched since the last tick), the failed
        # source is fetched again, and with nothing new no release is added
        again = _tick(settings, instance)
        assert again is not None
        second = _run(settings, instance, again)
        assert second.success, _messages(instance, second.run_id)[-5:]
        assert len(api.server.requests("/api.json")) == 1
        assert len(api.server.requests("/api/v1/providers")) == 2
        assert len(read_outcomes(settings.raw_dir, "openrouter-providers")) == 2
        after = sorted(p.name for p in settings.exports.iterdir() if p.name != "latest")
        assert after == releases
        assert any(m.startswith("nothing new") for m in _messages(instance, second.run_id))
        assert not _fresh(instance, "openrouter-providers")

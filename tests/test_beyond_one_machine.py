"""Beyond one machine, end to end, on real servers started by the test session (PostgreSQL and
SeaweedFS on 127.0.0.1): the snapshot store on S3, the lake's catalog in PostgreSQL and its data
on S3, Dagster's instance storage in PostgreSQL. The same build of the bundled corpus publishes
byte for byte the exports the embedded default publishes."""

from __future__ import annotations

import multiprocessing
import os
import secrets
from datetime import UTC, datetime
from pathlib import Path

import obstore
import pytest
from api_world import MODELS_DEV, api_world, toml_entry
from conftest import BUNDLED_RAW
from http_fixtures import ok
from servers import Postgres, S3Bucket, S3Server
from test_scheduled_run import _messages as run_messages
from test_scheduled_run import _run as launched_run
from test_scheduled_run import _tick as scheduled_tick

from pipeline.dagster.envelope import execute
from pipeline.dagster.executor import forkserver_with_this_environment
from pipeline.dagster.runner import dagster_instance
from pipeline.release.contracts import EXPORT_FILES
from pipeline.release.remote import complete_versions, read_latest
from pipeline.support.settings import Settings
from pipeline.warehouse.connection import connect

pytestmark = pytest.mark.e2e


def s3_store(bucket: S3Bucket):  # obstore's S3Store on the test bucket
    from obstore.store import S3Store

    server = bucket.server
    return S3Store(
        bucket.name,
        endpoint=server.endpoint,
        access_key_id=server.access_key_id,
        secret_access_key=server.secret_access_key,
        region=server.region,
        client_options={"allow_http": True},
    )


def upload_bundled_snapshots(bucket: S3Bucket, prefix: str) -> int:
    """The bundled store's files under `prefix`, as they are (the layout is the same on S3)."""
    store, count = s3_store(bucket), 0
    for path in sorted(BUNDLED_RAW.rglob("*")):
        relative = path.relative_to(BUNDLED_RAW)
        if path.is_file() and len(relative.parts) == 2 and not path.name.startswith("."):
            obstore.put(store, f"{prefix}/{relative.as_posix()}", path.read_bytes())
            count += 1
    return count


def remote_settings(
    root: Path, postgres_database: str, bucket: S3Bucket, monkeypatch: pytest.MonkeyPatch
) -> Settings:
    """A machine whose every store is a server: only its Dagster run logs' folder is local."""
    monkeypatch.setenv("SPEEDBOOK_CATALOG", f"postgres:{postgres_database}")
    monkeypatch.setenv("SPEEDBOOK_LAKE_DATA", f"s3://{bucket.name}/lake")
    monkeypatch.setenv("SPEEDBOOK_SNAPSHOTS", f"s3://{bucket.name}/raw")
    return Settings.resolve(
        registry=Settings.resolve().registry,
        warehouse=root / "warehouse",
        exports=root / "exports",
    )


def test_the_bundled_corpus_gives_the_same_exports_embedded_and_on_postgresql_and_s3(
    built: Settings,
    tmp_path: Path,
    postgres_server: Postgres,
    postgres_database: str,
    s3_bucket: S3Bucket,
    s3_env: S3Server,
    monkeypatch: pytest.MonkeyPatch,
):
    assert upload_bundled_snapshots(s3_bucket, "raw") > 100
    settings = remote_settings(tmp_path, postgres_database, s3_bucket, monkeypatch)

    outcome = execute(settings, None)

    assert outcome.success, outcome.failures + outcome.failed_checks
    assert not (settings.warehouse / "raw").exists()  # every snapshot was read from S3
    with connect(settings, read_only=True) as con:
        data_path = con.execute(
            "SELECT value FROM lake.options() WHERE option_name = 'data_path'"
        ).fetchone()
        snapshots = con.execute("SELECT count(*) FROM core.snapshots").fetchone()
    assert data_path is not None and data_path[0].startswith(f"s3://{s3_bucket.name}/lake")
    with connect(built, read_only=True) as con:
        assert con.execute("SELECT count(*) FROM core.snapshots").fetchone() == snapshots
    here, there = built.exports / "latest", settings.exports / "latest"
    assert os.readlink(here) == os.readlink(there)  # the same version
    for name in [*EXPORT_FILES, "datapackage.json"]:
        assert (there / name).read_bytes() == (here / name).read_bytes(), name


def _storage_variable(queue) -> None:  # in a process forked by the forkserver
    queue.put(os.environ.get("SPEEDBOOK_DAGSTER_STORAGE"))


def _forked_sees() -> str | None:
    context = multiprocessing.get_context("forkserver")
    queue = context.SimpleQueue()
    process = context.Process(target=_storage_variable, args=(queue,))
    process.start()
    process.join(60)
    return queue.get()


def test_a_run_forks_its_steps_with_its_own_environment_not_the_forkservers(
    monkeypatch: pytest.MonkeyPatch,
):
    """Python's forkserver outlives a run and gives its children its own environment: a run
    started after the environment changed gets a server started with the new one."""
    monkeypatch.delenv("SPEEDBOOK_DAGSTER_STORAGE", raising=False)
    forkserver_with_this_environment()
    assert _forked_sees() is None
    monkeypatch.setenv("SPEEDBOOK_DAGSTER_STORAGE", "postgresql+psycopg2://u@127.0.0.1:1/d")
    assert _forked_sees() is None  # what the server started with: the defect's cause
    forkserver_with_this_environment()
    assert _forked_sees() == "postgresql+psycopg2://u@127.0.0.1:1/d"


def test_a_scheduled_run_fetches_into_s3_builds_on_postgresql_and_s3_and_publishes_to_s3(
    tmp_path: Path,
    postgres_server: Postgres,
    postgres_database: str,
    s3_bucket: S3Bucket,
    s3_env: S3Server,
    monkeypatch: pytest.MonkeyPatch,
):
    """As the daemon runs it: the daily schedule's tick, then its run (each step in its own
    process) with every store a server: models.dev fetched from 127.0.0.1 into the S3 store,
    the lake in PostgreSQL and on S3, Dagster's runs in PostgreSQL, the release on S3."""
    dagster_database = f"dagster_{secrets.token_hex(4)}"
    postgres_server.psql(f"CREATE DATABASE {dagster_database}")
    monkeypatch.setenv(
        "SPEEDBOOK_DAGSTER_STORAGE",
        postgres_server.url(dagster_database).replace("postgresql://", "postgresql+psycopg2://", 1),
    )
    monkeypatch.setenv("SPEEDBOOK_RELEASES", f"s3://{s3_bucket.name}/releases")
    for world in api_world(tmp_path, monkeypatch):
        world.add("models-dev")
        world.serve("/api.json", ok(MODELS_DEV))
        hour = (datetime.now(UTC).hour + 12) % 24  # no real tick falls within the test
        world.registry.write_text(
            f'[cadences]\ndaily = "0 {hour} * * *"\n\n'
            + "\n".join(toml_entry(fields) for fields in world.entries.values()),
            encoding="utf-8",
        )
        settings = remote_settings(tmp_path, postgres_database, s3_bucket, monkeypatch)
        settings = Settings.resolve(
            registry=world.registry, warehouse=settings.warehouse, exports=settings.exports
        )
        with dagster_instance(settings) as instance:
            request = scheduled_tick(settings, instance)
            assert request is not None
            result = launched_run(settings, instance, request)
            assert result.success, run_messages(instance, result.run_id)[-5:]
            runs = postgres_server.psql(
                "SELECT count(*) FROM runs WHERE status = 'SUCCESS'", dagster_database
            )
            assert runs.strip().splitlines()[-1].strip() == "1"
        # the fetched snapshot is on S3, not in the warehouse folder
        keys = [
            meta["path"]
            for batch in obstore.list(s3_store(s3_bucket), prefix="raw/models-dev/")
            for meta in batch
        ]
        assert any(key.endswith(".meta.json") for key in keys)
        assert not (settings.warehouse / "raw" / "models-dev").exists()
        # the lake's catalog is in PostgreSQL and the release names the snapshot it came from
        with connect(settings, read_only=True) as con:
            (offers,) = con.execute("SELECT count(*) FROM core.catalogue_offers").fetchone()
            (released,) = con.execute(
                "SELECT lake_snapshot FROM history.releases ORDER BY built_at DESC LIMIT 1"
            ).fetchone()
        assert offers > 1000 and released is not None
        # the release is on S3, complete, and `latest` names it
        version = read_latest(settings.releases)
        assert version is not None and version == os.readlink(settings.exports / "latest")
        assert complete_versions(settings.releases) == [version]

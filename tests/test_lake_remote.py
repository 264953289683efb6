"""The lake beyond one machine: its catalog in PostgreSQL and its data on S3, against real servers
on 127.0.0.1 started by the test session (tests/servers.py). Only the settings change: the same
build commits the same core; credentials come from the environment and never reach a message."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import obstore
import pytest
from conftest import UP_TO_CORE, failures, materialize
from servers import S3Bucket, S3Server

from pipeline.support.settings import Settings
from pipeline.warehouse.connection import connect
from pipeline.warehouse.lake import LakeError

pytestmark = pytest.mark.e2e

CORE = "SELECT count(*) FROM core.endpoints"


@pytest.fixture
def remote(
    settings: Settings,
    postgres_database: str,
    s3_bucket: S3Bucket,
    s3_env: S3Server,
    monkeypatch: pytest.MonkeyPatch,
) -> Settings:
    monkeypatch.setenv("SPEEDBOOK_CATALOG", f"postgres:{postgres_database}")
    monkeypatch.setenv("SPEEDBOOK_LAKE_DATA", f"s3://{s3_bucket.name}/lake")
    return Settings.resolve()


def _objects(bucket: S3Bucket, prefix: str) -> list[str]:
    from obstore.store import S3Store

    server = bucket.server
    store = S3Store(
        bucket.name,
        endpoint=server.endpoint,
        access_key_id=server.access_key_id,
        secret_access_key=server.secret_access_key,
        region=server.region,
        client_options={"allow_http": True},
    )
    return [meta["path"] for batch in obstore.list(store, prefix=prefix) for meta in batch]


def test_a_build_on_postgresql_and_s3_commits_the_same_core_as_the_embedded_lake(
    remote: Settings, s3_bucket: S3Bucket, tmp_path: Path
):
    result = materialize(remote, UP_TO_CORE)
    assert result.success, failures(result)
    with connect(remote, read_only=True) as con:
        endpoints = con.execute(CORE).fetchone()
        kind = con.execute(
            "SELECT value FROM lake.options() WHERE option_name = 'data_path'"
        ).fetchone()
    assert kind is not None and kind[0].startswith(f"s3://{s3_bucket.name}/lake")
    # small inserts stay in the catalog (data inlining); a larger one is a Parquet file on S3
    with connect(remote) as con:
        con.execute("CREATE TABLE main.probe AS SELECT range AS i FROM range(50000)")
        assert con.execute("SELECT sum(i) FROM main.probe").fetchone() == (1249975000,)
    assert any(name.endswith(".parquet") for name in _objects(s3_bucket, "lake/"))
    embedded = replace(remote, catalog="sqlite:embedded.sqlite", lake_data="embedded-lake")
    local = materialize(embedded, UP_TO_CORE)
    assert local.success, failures(local)
    with connect(embedded, read_only=True) as con:
        assert con.execute(CORE).fetchone() == endpoints
        here = con.execute("FROM core.endpoints ORDER BY ALL").fetchall()
    with connect(remote, read_only=True) as con:
        assert con.execute("FROM core.endpoints ORDER BY ALL").fetchall() == here


def test_a_wrong_password_or_secret_is_reported_without_it(
    remote: Settings, postgres_database: str, s3_env: S3Server, monkeypatch: pytest.MonkeyPatch
):
    url = urlsplit(postgres_database)
    netloc = f"{url.username}:not-the-password-123@{url.hostname}:{url.port}"
    bad = urlunsplit(url._replace(netloc=netloc))
    monkeypatch.setenv("SPEEDBOOK_CATALOG", f"postgres:{bad}")
    with pytest.raises(LakeError) as error:
        connect(Settings.resolve())
    assert "not-the-password-123" not in str(error.value)
    assert "PostgreSQL" in str(error.value)
    monkeypatch.setenv("SPEEDBOOK_CATALOG", remote.catalog)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wrong-secret-value-456")
    with pytest.raises(Exception) as failed, connect(Settings.resolve()) as con:
        con.execute("CREATE TABLE probe AS SELECT range AS i FROM range(100000)")
    assert "wrong-secret-value-456" not in str(failed.value)


def test_missing_aws_credentials_are_named_not_guessed(
    remote: Settings, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    with pytest.raises(Exception, match="AWS_SECRET_ACCESS_KEY"):
        connect(remote)

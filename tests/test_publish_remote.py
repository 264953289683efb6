"""Releases published to object storage (pipeline/release/remote.py), against SeaweedFS on
127.0.0.1 started by the test session (tests/servers.py): the layout, the `_SUCCESS` marker and
the `latest` pointer; nothing ever overwritten; what a reader listing the bucket sees while a
publish is paused or after it was killed; clear errors without secrets; and the published lake,
read with DuckDB over S3 and over plain HTTP, answering as the local lake does.

The fast tests publish the real 1.2.1 release of the bundled corpus (tests/old_release.py), and
the same folder under a second version name: publishing moves bytes and never reads them.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from functools import partial
from pathlib import Path

import duckdb
import obstore
import pytest
from old_release import VERSION as A
from old_release import unpack_1_2_1
from servers import S3Bucket, S3Server

from pipeline.release.publish import PAUSE_ENV, latest_version
from pipeline.release.remote import (
    LAKE_CATALOG,
    MARKER,
    POINTER,
    RemotePublishError,
    complete_versions,
    lake_data_url,
    publish_remote,
    read_latest,
    write_lake_catalog,
)
from pipeline.support.settings import Settings
from pipeline.warehouse import extensions
from pipeline.warehouse.connection import connect, lake_of
from pipeline.warehouse.lake import LakeLocation

B = "2026.11.30"
PAUSED_WITHIN = 120.0  # seconds a paused publisher may take to reach its point


@pytest.fixture
def releases(tmp_path: Path) -> tuple[Path, Path]:
    """Release A (the real 1.2.1 folder) and B (the same files under a later version)."""
    exports = tmp_path / "exports"
    a = unpack_1_2_1(exports)
    b = exports / B
    shutil.copytree(a, b)
    return a, b


@pytest.fixture
def target(s3_bucket: S3Bucket, s3_env: S3Server) -> str:
    return f"s3://{s3_bucket.name}/releases"


def _client(bucket: S3Bucket):  # an obstore S3Store on the whole bucket, as the tests' own
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


def objects(bucket: S3Bucket, prefix: str = "releases/") -> dict[str, str]:
    """Every object under `prefix`: its key relative to it -> its ETag."""
    listed = obstore.list(_client(bucket), prefix=prefix)
    return {
        item["path"].removeprefix(prefix): str(item["e_tag"]) for batch in listed for item in batch
    }


def read_object(bucket: S3Bucket, key: str) -> bytes:
    return bytes(obstore.get(_client(bucket), f"releases/{key}").bytes())


def local_files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


# --- layout, marker, pointer --------------------------------------------------------------------


def test_two_releases_go_under_their_versions_then_their_markers_then_latest(
    releases, target, s3_bucket
):
    a, b = releases
    first = publish_remote(a, target)
    assert (first.version, first.latest, first.put) == (A, A, len(local_files(a)))
    second = publish_remote(b, target)
    assert second.latest == B
    stored = objects(s3_bucket)
    for version, folder in ((A, a), (B, b)):
        files = local_files(folder)
        assert {k.removeprefix(f"{version}/") for k in stored if k.startswith(version)} == {
            *files,
            MARKER,
        }
        for name, data in files.items():
            assert read_object(s3_bucket, f"{version}/{name}") == data
        marker = json.loads(read_object(s3_bucket, f"{version}/{MARKER}"))
        assert marker["version"] == version and marker["lake"] is None
        assert set(marker["files"]) == set(files)
        for name, data in files.items():
            assert marker["files"][name] == {
                "sha256": hashlib.sha256(data).hexdigest(),
                "size": len(data),
            }
    pointer = json.loads(read_object(s3_bucket, POINTER))
    assert pointer == {
        "version": B,
        "success": f"{B}/{MARKER}",
        "success_url": f"{target}/{B}/{MARKER}",
    }
    assert set(stored) == {k for k in stored if k.startswith((A, B))} | {POINTER}
    assert complete_versions(target) == [A, B] and read_latest(target) == B


def test_publishing_a_release_again_puts_nothing_and_says_so(releases, target, s3_bucket):
    a, _ = releases
    publish_remote(a, target)
    before = objects(s3_bucket)
    again = publish_remote(a, target)
    assert (again.put, again.put_bytes, again.files) == (0, 0, len(local_files(a)))
    assert "0 put" in again.message and f"{again.files} already there" in again.message
    assert objects(s3_bucket) == before


@pytest.mark.parametrize("change", ["a changed file", "a file more", "a file fewer"])
def test_a_version_there_with_other_content_fails_and_nothing_is_written(
    releases, target, s3_bucket, change
):
    a, b = releases
    publish_remote(a, target)
    publish_remote(b, target)
    before = objects(s3_bucket)
    if change == "a changed file":
        with (b / "CHANGELOG.md").open("a", encoding="utf-8") as handle:
            handle.write("\nedited after publishing\n")
        named = f"{B}/CHANGELOG.md"
    elif change == "a file more":
        (b / "extra.txt").write_text("not in the published release\n", encoding="utf-8")
        named = f"{B}/_SUCCESS"  # the files are there; the marker lists another set
    else:
        (b / "changes.json").unlink()
        named = f"{B}/changes.json"
    with pytest.raises(RemotePublishError, match="never overwritten") as error:
        publish_remote(b, target)
    assert f"{target}/{named}" in str(error.value)
    assert objects(s3_bucket) == before


def test_latest_moves_forward_never_back_unless_the_caller_moves_it_back(
    releases, target, s3_bucket
):
    a, b = releases
    publish_remote(b, target)
    older = publish_remote(a, target)
    assert older.latest == B and read_latest(target) == B
    assert complete_versions(target) == [A, B]  # published, not latest
    assert publish_remote(a, target, take_latest=False).latest == B
    back = publish_remote(a, target, may_go_back=True)  # the local latest went back to A
    assert back.latest == A and read_latest(target) == A


def test_an_as_of_release_leaves_latest_alone(releases, target):
    a, b = releases
    publish_remote(a, target)
    assert publish_remote(b, target, take_latest=False).latest == A
    assert read_latest(target) == A and complete_versions(target) == [A, B]


@pytest.mark.parametrize(
    "pointer", [b"", b"\xff\xfe", b"[1, 2]", b'{"version": "../../etc"}', b"{" * 5000]
)
def test_a_pointer_that_is_not_ours_is_replaced(releases, target, s3_bucket, pointer):
    a, _ = releases
    obstore.put(_client(s3_bucket), f"releases/{POINTER}", pointer)
    assert read_latest(target) is None
    assert publish_remote(a, target).latest == A
    assert json.loads(read_object(s3_bucket, POINTER))["version"] == A


# --- readers during a publish, and a killed publisher --------------------------------------------

PUBLISH = """
import sys
from pathlib import Path
from pipeline.release.remote import publish_remote
publish_remote(Path(sys.argv[1]), sys.argv[2])
"""


def _paused_publisher(folder: Path, target: str, point: str, tmp: Path) -> subprocess.Popen:
    """A publisher of `folder` in a process of its own, sleeping at `point` (the marker written)."""
    marker, log = tmp / f"paused-{point}", tmp / f"publisher-{point}.log"
    env = {**os.environ, PAUSE_ENV: f"{point}:{marker}"}
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-c", PUBLISH, str(folder), target],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    deadline = time.monotonic() + PAUSED_WITHIN
    while not marker.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            pytest.fail(f"the publisher never paused at {point}:\n{log.read_text()}")
        time.sleep(0.05)
    return process


@pytest.mark.parametrize("point", ["remote-uploading", "remote-uploaded", "remote-marked"])
def test_a_reader_never_sees_a_half_release_and_a_killed_publish_is_completed_next_time(
    releases, target, s3_bucket, tmp_path, point
):
    a, b = releases
    publish_remote(a, target)
    publisher = _paused_publisher(b, target, point, tmp_path)
    try:
        # what a reader sees meanwhile: latest names A; B is complete only once marked
        assert read_latest(target) == A
        assert json.loads(read_object(s3_bucket, POINTER))["version"] == A
        stored = objects(s3_bucket)
        assert any(key.startswith(f"{B}/") for key in stored)  # B is under way
        if point == "remote-marked":
            assert complete_versions(target) == [A, B]
            assert f"{B}/{MARKER}" in stored
        else:
            assert complete_versions(target) == [A]
            assert f"{B}/{MARKER}" not in stored
        if point == "remote-uploading":
            assert len([k for k in stored if k.startswith(f"{B}/")]) == 1
    finally:
        os.killpg(publisher.pid, signal.SIGKILL)
        publisher.wait()
    assert read_latest(target) == A  # killed: the pointer stayed where it was
    completed = publish_remote(b, target)
    assert completed.latest == B and complete_versions(target) == [A, B]
    marker = json.loads(read_object(s3_bucket, f"{B}/{MARKER}"))
    assert set(marker["files"]) == set(local_files(b))
    expected_put = {"remote-uploading": completed.files - 1}.get(point, 0)
    assert completed.put == expected_put


# --- bad input -----------------------------------------------------------------------------------


def test_bad_credentials_and_a_missing_bucket_are_named_without_the_secret(
    releases, target, s3_bucket, monkeypatch
):
    a, _ = releases
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wrong-secret-value-456")
    with pytest.raises(RemotePublishError) as error:
        publish_remote(a, target)
    text = str(error.value)
    assert "wrong-secret-value-456" not in text and target in text
    assert "AWS_SECRET_ACCESS_KEY" in text  # the signature does not match: check it
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", s3_bucket.server.secret_access_key)
    with pytest.raises(RemotePublishError, match="the bucket does not exist") as missing:
        publish_remote(a, "s3://no-such-bucket-here/releases")
    assert s3_bucket.server.secret_access_key not in str(missing.value)
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    with pytest.raises(RemotePublishError, match="set AWS_ACCESS_KEY_ID"):
        publish_remote(a, target)
    assert objects(s3_bucket) == {}


@pytest.mark.parametrize(
    ("address", "said"),
    [
        ("https://example.org/releases", "not an s3://bucket/prefix address"),
        ("s3://Not_A_Bucket/releases", "not an S3 bucket name"),
        ("s3://key:sup3r-secret@bucket-name/releases", "must not carry credentials"),
        ("s3://bucket-name/../elsewhere", "not a folder name"),
        ("s3://bucket-name/releases?x=1", "takes no ?query"),
    ],
)
def test_a_target_that_is_not_an_s3_prefix_is_refused(releases, s3_env, address, said):
    a, _ = releases
    with pytest.raises(RemotePublishError, match="the release target") as error:
        publish_remote(a, address)
    assert said in str(error.value) and "sup3r-secret" not in str(error.value)
    with pytest.raises(RemotePublishError, match=re.escape(said)):
        lake_data_url(address)


def test_only_a_release_folder_of_files_is_published(releases, target, s3_bucket, tmp_path):
    _, b = releases
    with pytest.raises(RemotePublishError, match="is not a release folder"):
        publish_remote(tmp_path / "exports" / "not-a-version", target)
    with pytest.raises(RemotePublishError, match="is not a release folder"):
        publish_remote(tmp_path / "exports" / "2026.12.01", target)  # no such folder
    (b / "schemas").mkdir()
    (b / "schemas" / "elsewhere").symlink_to("/etc/hostname")
    with pytest.raises(RemotePublishError, match="a link in a release folder"):
        publish_remote(b, target)
    (b / "schemas" / "elsewhere").unlink()
    (b / MARKER).write_text("{}", encoding="utf-8")
    with pytest.raises(RemotePublishError, match="the publish's own marker"):
        publish_remote(b, target)
    assert objects(s3_bucket) == {}


# --- the lake: its files published, its catalog read over S3 and HTTP -----------------------------


def _duckdb(server: S3Server | None = None) -> duckdb.DuckDBPyConnection:
    """A DuckDB session with the lake's extensions, and an S3 secret for `server`."""
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    for name in (extensions.LAKE, extensions.SQLITE, extensions.HTTPFS):
        extensions.load(con, name)
    if server is not None:
        host = server.endpoint.removeprefix("http://")
        con.execute(
            f"CREATE SECRET (TYPE s3, KEY_ID '{server.access_key_id}', "
            f"SECRET '{server.secret_access_key}', REGION '{server.region}', "
            f"ENDPOINT '{host}', URL_STYLE 'path', USE_SSL false)"
        )
    return con


def _small_lake(folder: Path, kind: str) -> duckdb.DuckDBPyConnection:
    """A lake with a table in Parquet files (over the inlining limit), one inlined, rows deleted
    from both, and a view: each kind of thing a catalog copy must carry."""
    folder.mkdir(parents=True)
    con = _duckdb()
    con.execute(
        f"ATTACH 'ducklake:{kind}:{folder / 'catalog'}' AS lake "
        f"(DATA_PATH '{folder / 'data'}/', DATA_INLINING_ROW_LIMIT 100)"
    )
    con.execute("USE lake")
    con.execute("CREATE SCHEMA core")
    con.execute("CREATE TABLE core.big AS SELECT range AS i, range::VARCHAR AS s FROM range(5000)")
    con.execute(
        "CREATE TABLE core.small AS SELECT range AS i, TIMESTAMPTZ '2026-06-28 00:00:00+00' "
        "+ to_hours(range) AS at, [range, range + 1] AS pair, range % 2 = 0 AS even "
        "FROM range(20)"
    )
    con.execute("DELETE FROM core.big WHERE i % 1000 = 0")
    con.execute("DELETE FROM core.small WHERE i = 3")
    con.execute(
        "CREATE VIEW core.both AS SELECT i FROM core.big UNION ALL SELECT i FROM core.small"
    )
    return con


LAKE_QUERIES = (
    "FROM core.big ORDER BY ALL",
    "FROM core.small ORDER BY ALL",
    "SELECT count(*), sum(i) FROM core.both",
)


@pytest.mark.parametrize("kind", ["sqlite", "duckdb"])
def test_the_lake_files_its_catalog_names_are_published_and_read_back(
    releases, target, s3_bucket, tmp_path, kind
):
    """Its catalog in SQLite or in a DuckDB file (whose inlined rows are typed); PostgreSQL's
    is the end-to-end test's below."""
    a, b = releases
    lake = tmp_path / "lake"
    con = _small_lake(lake, kind)
    expected = [con.execute(query).fetchall() for query in LAKE_QUERIES]
    small = LakeLocation(kind, str(lake / "catalog"), f"{lake / 'data'}/")
    write_lake_catalog(con, a, lake_data_url(target), small)
    con.close()
    published = publish_remote(a, target, lake_data=str(tmp_path / "lake" / "data"))
    stored = objects(s3_bucket)
    data_files = sorted(k for k in stored if k.startswith("lake/data/"))
    assert data_files and all(k.startswith("lake/data/core/big/") for k in data_files)
    marker = json.loads(read_object(s3_bucket, f"{A}/{MARKER}"))
    assert marker["lake"]["catalog"] == LAKE_CATALOG
    assert sorted(f"lake/data/{k}" for k in marker["lake"]["files"]) == data_files
    assert published.files == len(local_files(a)) + len(data_files)

    reader = _duckdb(s3_bucket.server)  # the published catalog names its published data path
    reader.execute(f"ATTACH 'ducklake:sqlite:{target}/{A}/{LAKE_CATALOG}' AS lake (READ_ONLY)")
    reader.execute("USE lake")
    assert [reader.execute(query).fetchall() for query in LAKE_QUERIES] == expected

    # a data file the catalog names and the lake lost: named, nothing of B written
    shutil.copytree(a / "lake", b / "lake")
    lost = next((tmp_path / "lake" / "data").rglob("*.parquet"))
    lost.unlink()
    with pytest.raises(RemotePublishError, match=f"data file core/big/{lost.name}"):
        publish_remote(b, target, lake_data=str(tmp_path / "lake" / "data"))
    assert not any(key.startswith(f"{B}/") for key in objects(s3_bucket))


def test_a_catalog_copy_that_is_not_a_ducklake_catalog_is_refused(releases, target):
    a, _ = releases
    (a / "lake").mkdir()
    (a / LAKE_CATALOG).write_bytes(b"not a database at all")
    with pytest.raises(RemotePublishError, match="not a readable DuckLake catalog"):
        publish_remote(a, target, lake_data="/nonexistent")


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def static_http(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A plain static HTTP server on 127.0.0.1 serving a folder (no range requests, no S3):
    the folder, and its base URL."""
    folder = tmp_path / "site"
    folder.mkdir()
    handler = partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield folder, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _mirror(bucket: S3Bucket, folder: Path) -> None:
    """Copy every object under the prefix into `folder`: what any static host would serve."""
    for key in objects(bucket):
        path = folder / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(read_object(bucket, key))


def _catalog(base: str, version: str) -> str:
    """The published lake of a release, as DuckDB's ATTACH names it."""
    return f"ducklake:sqlite:{base}/{version}/{LAKE_CATALOG}"


HISTORY = (
    "SELECT endpoint_id, metric, scope, method, statistic, observed_at, value, snapshot_id "
    "FROM mart.endpoint_stats ORDER BY ALL"
)


@pytest.mark.e2e
def test_the_published_lake_answers_a_history_query_over_s3_and_http_as_the_local_lake(
    built: Settings, target, s3_bucket, tmp_path, static_http
):
    version = latest_version(built.exports)
    assert version is not None
    folder = tmp_path / "exports" / version
    shutil.copytree(built.exports / version, folder)
    with connect(built, read_only=True) as con:
        local = con.execute(HISTORY).fetchall()
        write_lake_catalog(con, folder, lake_data_url(target), lake_of(built))
    assert len(local) > 100_000  # the whole series of every endpoint, not a page of it
    publish_remote(folder, target, lake_data=lake_of(built).data_path)

    over_s3 = _duckdb(s3_bucket.server)
    over_s3.execute(
        f"ATTACH 'ducklake:sqlite:{target}/{version}/{LAKE_CATALOG}' AS lake (READ_ONLY)"
    )
    over_s3.execute("USE lake")
    assert over_s3.execute(HISTORY).fetchall() == local

    site, base = static_http
    _mirror(s3_bucket, site)
    over_http = _duckdb()
    started = time.perf_counter()
    over_http.execute(
        f"ATTACH 'ducklake:sqlite:{base}/{version}/{LAKE_CATALOG}' AS lake "
        f"(READ_ONLY, DATA_PATH '{base}/lake/data/', OVERRIDE_DATA_PATH true)"
    )
    attached = time.perf_counter()
    over_http.execute("USE lake")
    rows = over_http.execute(HISTORY).fetchall()
    queried = time.perf_counter()
    assert rows == local
    print(
        f"over HTTP on 127.0.0.1: ATTACH {attached - started:.2f} s, "
        f"history query ({len(rows):,} rows) {queried - attached:.2f} s"
    )
    # the release's Parquet, for readers without the lake
    days = sorted((built.exports / version / "parquet/history/endpoint_figures").iterdir())
    history = [f"{version}/parquet/history/endpoint_figures/{day.name}" for day in days]
    remote = ", ".join(f"'{base}/{path}'" for path in history)  # HTTP has no listing to glob
    remote_rows = over_http.execute(f"FROM read_parquet([{remote}]) ORDER BY ALL").fetchall()
    local = ", ".join(f"'{built.exports / path}'" for path in history)
    local_rows = over_http.execute(f"FROM read_parquet([{local}]) ORDER BY ALL").fetchall()
    assert remote_rows == local_rows and len(local_rows) > 100_000


@pytest.mark.e2e
def test_a_build_publishes_to_the_target_and_the_next_build_completes_a_failed_publish(
    settings: Settings, s3_server: S3Server, s3_env
):
    bucket = S3Bucket(s3_server, f"later-{os.getpid()}-{time.time_ns() % 10**9}")
    target = f"s3://{bucket.name}/speedbook"
    settings = replace(settings, releases=target)
    from pipeline.dagster.envelope import execute

    failed = execute(settings)  # the bucket does not exist yet
    said = " ".join([*failed.failures, *(p.message for p in failed.problems)])
    assert not failed.success and "the bucket does not exist" in said, said
    assert s3_server.secret_access_key not in said
    version = latest_version(settings.exports)  # the local release stands
    assert version is not None and (settings.exports / version / LAKE_CATALOG).is_file()

    s3_server.create_bucket(bucket.name)
    completed = execute(settings)
    assert completed.success, completed.failures
    assert completed.release == version and not completed.published  # nothing new locally
    assert complete_versions(target) == [version] and read_latest(target) == version
    reader = _duckdb(s3_server)
    reader.execute(
        f"ATTACH 'ducklake:sqlite:{target}/{version}/{LAKE_CATALOG}' AS lake (READ_ONLY)"
    )
    with connect(settings, read_only=True) as con:
        assert reader.execute("SELECT count(*) FROM lake.core.endpoints").fetchone() == (
            con.execute("SELECT count(*) FROM core.endpoints").fetchone()
        )


LAKE_ROWS = (
    "FROM core.endpoints ORDER BY ALL",
    "FROM core.snapshots ORDER BY ALL",  # inlined in the catalog: timestamps, booleans
    "FROM staging.openrouter_frontend_daily ORDER BY ALL",  # Parquet files on S3
    "SELECT count(*), count(DISTINCT endpoint_id) FROM core.observations",
)


@pytest.mark.e2e
def test_a_lake_on_postgresql_and_s3_is_published_and_reads_as_it(
    settings: Settings, postgres_database: str, s3_bucket: S3Bucket, s3_env, tmp_path, target
):
    """The catalog copied out of PostgreSQL (inlined rows in its own types) and the data files
    read from the lake's S3 prefix: the published lake answers as the lake does."""
    from conftest import UP_TO_CORE, failures, materialize

    lake = replace(
        settings,
        catalog=f"postgres:{postgres_database}",
        lake_data=f"s3://{s3_bucket.name}/lake",
    )
    built = materialize(lake, UP_TO_CORE)
    assert built.success, failures(built)
    folder = unpack_1_2_1(tmp_path / "exports")  # the release beside the lake is any release
    with connect(lake, read_only=True) as con:
        expected = [con.execute(query).fetchall() for query in LAKE_ROWS]
        write_lake_catalog(con, folder, lake_data_url(target), lake_of(lake))
    published = publish_remote(folder, target, lake_data=lake_of(lake).data_path)
    assert published.files > len(local_files(folder))
    reader = _duckdb(s3_bucket.server)
    reader.execute(f"ATTACH '{_catalog(target, A)}' AS lake (READ_ONLY)")
    reader.execute("USE lake")
    assert [reader.execute(query).fetchall() for query in LAKE_ROWS] == expected

"""The snapshot store on S3 (pipeline/raw/s3_store.py), against the session's SeaweedFS server:
the local store's layout and records, reads verified, damage found, withdrawals, writers at once,
readers during a write, and failures (credentials, bucket, hostile keys) that say what is wrong
and never carry a secret."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import obstore
import pytest
from conftest import FIXTURES
from obstore.store import S3Store
from servers import S3Bucket, S3Server

from pipeline.raw.s3_store import S3Location, S3SnapshotStore, StoreUnavailable
from pipeline.raw.snapshots import (
    COMPRESS_FROM,
    SnapshotDamaged,
    SnapshotError,
    SnapshotStore,
)
from pipeline.raw.store import open_store, verify
from pipeline.support.settings import Settings

REPO = Path(__file__).resolve().parents[1]
MODELS = (FIXTURES / "openrouter" / "api-v1-models-2026-05.json").read_bytes()  # 432 KB: gzip
PROVIDERS = (FIXTURES / "openrouter" / "api-v1-providers-2026-05.json").read_bytes()  # plain
MODELS_URL = "https://openrouter.ai/api/v1/models"
PROVIDERS_URL = "https://openrouter.ai/api/v1/providers"
MAY = datetime(2026, 5, 12, 19, 10, 11, tzinfo=UTC)
JUNE = datetime(2026, 6, 13, 8, 0, 0, tzinfo=UTC)


def _add(store, source_id: str, data: bytes, url: str, when: datetime, **extra):
    return store.add(
        source_id,
        data,
        url=url,
        retrieved_at=when,
        content_type="application/json",
        obtained_by="fetched",
        extension="json",
        **extra,
    )


def _raw(bucket: S3Bucket) -> S3Store:
    """A client of the bucket itself, to look at or damage objects behind the store's back."""
    server = bucket.server
    return S3Store(
        bucket.name,
        endpoint=server.endpoint,
        access_key_id=server.access_key_id,
        secret_access_key=server.secret_access_key,
        region=server.region,
        client_options={"allow_http": True},
    )


def _keys(bucket: S3Bucket) -> list[str]:
    return sorted(meta["path"] for batch in obstore.list(_raw(bucket)) for meta in batch)


@pytest.fixture
def store(s3_env: S3Server, s3_bucket: S3Bucket) -> S3SnapshotStore:
    return S3SnapshotStore(f"{s3_bucket.url}/raw")


def test_same_layout_and_records_as_the_local_store(store, s3_bucket, tmp_path):
    local = SnapshotStore(tmp_path / "raw")
    for target in (store, local):
        _add(target, "openrouter", MODELS, MODELS_URL, MAY)
        _add(target, "openrouter-providers", PROVIDERS, PROVIDERS_URL, MAY)
        _add(target, "openrouter-providers", PROVIDERS + b"\n", PROVIDERS_URL, JUNE)
        _add(target, "openrouter-providers", PROVIDERS, PROVIDERS_URL, JUNE.replace(hour=9))
    on_disk = sorted(
        str(path.relative_to(local.root))
        for path in local.root.rglob("*")
        if path.is_file() and not path.name.startswith(".")
    )
    assert ["raw/" + key for key in on_disk] == _keys(s3_bucket)
    assert len(MODELS) >= COMPRESS_FROM and any(key.endswith(".json.gz") for key in on_disk)
    for key in on_disk:  # the records, and the compressed bytes, are the same bytes
        remote = bytes(obstore.get(_raw(s3_bucket), "raw/" + key).bytes())
        assert remote == (local.root / key).read_bytes(), key
    assert store.list() == local.list()
    # A, B, then A again: a record pointing at the old bytes, as on disk
    again = store.list("openrouter-providers")[-1]
    assert again.bytes_file == store.list("openrouter-providers")[0].file
    assert store.read(again) == PROVIDERS


def test_reads_are_verified_and_identical_bytes_are_stored_once(store):
    first = _add(store, "openrouter", MODELS, MODELS_URL, MAY)
    assert first.created and store.read(first.meta) == MODELS
    same = _add(store, "openrouter", MODELS, MODELS_URL, JUNE)
    assert not same.created and same.meta == first.meta
    assert store.find("openrouter", first.meta.file) == first.meta
    assert store.latest("openrouter") == first.meta
    assert store.list(as_of=datetime(2026, 1, 1, tzinfo=UTC)) == []
    assert store.has_snapshots() and store.has_record(first.meta)
    info = store.stat_of(first.meta)
    assert info is not None and 0 < info.st_size < len(MODELS)  # the gzip object's size
    assert store.stats_of([first.meta]) == [info]


def test_verify_rehashes_every_object_and_finds_damage(store, s3_bucket):
    models = _add(store, "openrouter", MODELS, MODELS_URL, MAY).meta
    providers = _add(store, "openrouter-providers", PROVIDERS, PROVIDERS_URL, MAY).meta
    assert verify(store) == (2, [])
    raw = _raw(s3_bucket)
    # one byte changed in the plain object, the gzip object replaced by other bytes
    damaged = PROVIDERS.replace(b"{", b"[", 1)
    obstore.put(raw, f"raw/openrouter-providers/{providers.file}", damaged)
    obstore.put(raw, f"raw/openrouter/{models.file}.gz", b"not gzip at all")
    checked, problems = verify(store)
    assert checked == 2 and len(problems) == 2
    assert any("openrouter-providers" in p and "sha256 mismatch" in p for p in problems)
    assert any("openrouter/" in p and "not a readable gzip file" in p for p in problems)
    with pytest.raises(SnapshotDamaged, match="sha256 mismatch"):
        store.read(providers)
    obstore.delete(raw, f"raw/openrouter/{models.file}.gz")
    with pytest.raises(SnapshotDamaged, match=r"cannot read s3://.*no such object"):
        store.read(models)


def test_withdrawal_keeps_bytes_and_record_and_happens_once(store, s3_bucket):
    meta = _add(store, "openrouter-providers", PROVIDERS, PROVIDERS_URL, MAY).meta
    keys_before = _keys(s3_bucket)
    withdrawal = store.withdraw(meta, "captured from a staging host", JUNE)
    assert store.list() == [] and store.withdrawals() == [withdrawal]
    assert store.list(include_withdrawn=True) == [meta]
    assert store.withdrawal(meta) == withdrawal and not store.has_snapshots()
    marker = f"raw/openrouter-providers/{meta.file}.withdrawn.json"
    assert _keys(s3_bucket) == sorted([*keys_before, marker])
    record = json.loads(bytes(obstore.get(_raw(s3_bucket), marker).bytes()))
    assert record == {
        "reason": "captured from a staging host",
        "snapshot_id": meta.snapshot_id,
        "withdrawn_at": "2026-06-13T08:00:00Z",
    }
    with pytest.raises(SnapshotError, match="already withdrawn"):
        store.withdraw(meta, "again", JUNE)
    assert store.read(meta) == PROVIDERS  # bytes kept, still verifiable
    with pytest.raises(SnapshotError, match="was withdrawn"):  # its name is not taken again
        _add(store, "openrouter-providers", PROVIDERS, PROVIDERS_URL, MAY)


WRITER = """
import os, sys
from datetime import UTC, datetime, timedelta
from pipeline.raw.store import open_store
store = open_store(sys.argv[1])
start = datetime.fromisoformat(sys.argv[2])
results = []
for n in range(int(sys.argv[3])):
    body = (sys.argv[4] + str(n)).encode()
    result = store.add("openrouter-providers", body, url="https://openrouter.ai/api/v1/providers",
                       retrieved_at=start + timedelta(minutes=n), content_type="application/json",
                       obtained_by="fetched", extension="json")
    results.append("created" if result.created else "unchanged")
print(" ".join(results))
"""


def _writer(location: str, start: datetime, count: int, body: str, **env: str):
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, location, start.isoformat(), str(count), body],
        cwd=REPO,
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_two_writers_at_once_lose_nothing_and_store_shared_bytes_once(store):
    # different bytes at different times: all of both kept
    one = _writer(store.location, MAY, 8, "one-")
    two = _writer(store.location, JUNE, 8, "two-")
    outs = [proc.communicate(timeout=120) for proc in (one, two)]
    assert [proc.returncode for proc in (one, two)] == [0, 0], outs
    listed = store.list("openrouter-providers")
    assert len(listed) == 16
    assert {store.read(meta).decode() for meta in listed} == {
        f"{who}-{n}" for who in ("one", "two") for n in range(8)
    }
    # the same bytes at the same second from both: one record, whichever won
    same = [_writer(store.location, JUNE.replace(year=2027), 4, "same-") for _ in range(2)]
    outs = [proc.communicate(timeout=120) for proc in same]
    assert [proc.returncode for proc in same] == [0, 0], outs
    assert len(store.list("openrouter-providers")) == 20
    assert verify(store) == (20, [])


@pytest.fixture(params=["local", "s3"])
def either_store(request, tmp_path):
    """The same test on both backends, through open_store as callers get them."""
    if request.param == "local":
        return open_store(tmp_path / "raw")
    request.getfixturevalue("s3_env")
    bucket = request.getfixturevalue("s3_bucket")
    return open_store(f"{bucket.url}/raw")


def test_a_reader_listing_during_a_write_never_sees_a_snapshot_without_bytes(
    either_store, tmp_path
):
    store = either_store
    marker = tmp_path / "paused"
    writer = _writer(
        store.location, MAY, 1, "paused-", SPEEDBOOK_TEST_PAUSE=f"snapshot-record:{marker}"
    )
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert writer.poll() is None, writer.communicate()
            assert time.monotonic() < deadline, "the writer never reached its pause"
            time.sleep(0.1)
        # its bytes are in, its record not yet: no reader lists the snapshot
        assert store.list() == [] and not store.has_snapshots()
    finally:
        os.kill(writer.pid, signal.SIGKILL)  # killed between its bytes and its record
        writer.communicate()
    assert store.list() == [] and verify(store) == (0, [])
    # the same bytes stored again: the bytes already there are checked, then the record put
    again = _add(store, "openrouter-providers", b"paused-0", PROVIDERS_URL, MAY)
    assert again.created and store.read(again.meta) == b"paused-0"


def test_bad_credentials_say_so_and_never_show_the_secret(s3_env, s3_bucket, monkeypatch):
    wrong = "WrongSecret-" + s3_env.secret_access_key[::-1]
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", wrong)
    monkeypatch.setenv("AWS_SESSION_TOKEN", "SessionToken-abcdef0123456789")
    store = S3SnapshotStore(f"{s3_bucket.url}/raw")
    for attempt in (
        lambda: store.list(),
        lambda: _add(store, "openrouter", MODELS, MODELS_URL, MAY),
        lambda: store.has_snapshots(),
    ):
        with pytest.raises(StoreUnavailable) as failed:
            attempt()
        message = str(failed.value)
        assert message.startswith(f"{s3_bucket.url}/raw")
        assert "AWS_SECRET_ACCESS_KEY" in message or "AWS_ACCESS_KEY_ID" in message, message
        for secret in (wrong, s3_env.secret_access_key, "SessionToken-abcdef0123456789"):
            assert secret not in message


def test_missing_credentials_are_a_clear_error_before_any_request(s3_env, s3_bucket, monkeypatch):
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    with pytest.raises(StoreUnavailable, match="set AWS_SECRET_ACCESS_KEY"):
        S3SnapshotStore(f"{s3_bucket.url}/raw").list()


def test_a_missing_bucket_is_an_error_not_an_empty_store(s3_env):
    store = S3SnapshotStore("s3://no-such-bucket-here/raw")
    with pytest.raises(StoreUnavailable, match="the bucket does not exist"):
        store.list()
    with pytest.raises(StoreUnavailable, match="the bucket does not exist"):
        _add(store, "openrouter", MODELS, MODELS_URL, MAY)


def test_an_endpoint_that_does_not_answer_fails_quickly(s3_env, monkeypatch):
    from servers import free_port

    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{free_port()}")
    started = time.monotonic()
    with pytest.raises(StoreUnavailable, match="no answer from the endpoint"):
        S3SnapshotStore("s3://speedbook/raw").list()
    assert time.monotonic() - started < 30


def test_hostile_keys_are_left_out_and_reported(store, s3_bucket):
    good = _add(store, "openrouter", MODELS, MODELS_URL, MAY).meta
    record = bytes(obstore.get(_raw(s3_bucket), f"raw/openrouter/{good.file}.meta.json").bytes())
    raw = _raw(s3_bucket)
    planted = {
        "raw/stray.meta.json": record,  # no source folder
        "raw/openrouter/nested/x.meta.json": record,  # a folder inside a source's
        "raw/Not_A_Slug/x.meta.json": record,
        "raw/%2E%2E/escape.meta.json": record,  # obstore refuses a real `..` itself
        "raw/openrouter/.hidden.meta.json": record,
        # a record whose file leaves its folder, one that is not JSON, one that names another
        "raw/openrouter/evil.json.meta.json": record.replace(
            good.file.encode(), b"../../etc/passwd"
        ),
        "raw/openrouter/junk.json.meta.json": b"\xff\xfe not json",
        "raw/openrouter/other.json.meta.json": record,
    }
    for key, data in planted.items():
        obstore.put(raw, key, data)
    errors: list[str] = []
    assert store.list(errors=errors) == [good]
    joined = "\n".join(errors)
    assert "evil.json.meta.json: invalid snapshot metadata" in joined
    assert "junk.json.meta.json: unreadable snapshot metadata" in joined
    assert "other.json.meta.json: metadata names another file" in joined
    assert "nested/x.meta.json: not in the store's layout" in joined
    assert "Not_A_Slug/x.meta.json: not in the store's layout" in joined
    assert "%2E%2E/escape.meta.json: not in the store's layout" in joined
    with pytest.raises(SnapshotError, match="not a source id"):
        store.list("../openrouter")
    with pytest.raises(SnapshotError):  # without an errors list, a bad record is raised
        store.list("openrouter")


@pytest.mark.parametrize(
    ("location", "expected"),
    [
        ("s3://AKIAEXAMPLE:hunter2secret@bucket/raw", "must not carry credentials"),
        ("s3://bucket/../raw", "not a folder name"),
        ("s3://bucket/raw?versionId=1", r"takes no \?query"),
        ("s3://Bucket_Name/raw", "not an S3 bucket name"),
        ("s3://bucket/ra w", "not a folder name"),
        ("s3://", "not an S3 bucket name"),
        ("gs://bucket/raw", "not an s3://bucket/prefix address"),
    ],
)
def test_hostile_store_addresses_are_refused(location, expected):
    with pytest.raises(SnapshotError, match=expected) as refused:
        S3Location.parse(location)
    assert "hunter2secret" not in str(refused.value)


def test_open_store_chooses_by_location(tmp_path, s3_env):
    assert isinstance(open_store(tmp_path / "raw"), SnapshotStore)
    remote = open_store("s3://speedbook/team/raw/")
    assert isinstance(remote, S3SnapshotStore) and remote.location == "s3://speedbook/team/raw"


def test_snapshot_commands_work_on_an_s3_store(cli, settings, s3_env, s3_bucket):
    location = f"{s3_bucket.url}/team/raw"
    providers = FIXTURES / "openrouter" / "api-v1-providers-2026-05.json"
    where = ("--snapshots", location)
    added = cli(
        "snapshot",
        "add",
        "openrouter-providers",
        str(providers),
        *where,
        "--retrieved-at",
        "2026-05-12T19:10:11Z",
    )
    assert added.status == 0, added.err
    assert added.out.startswith("stored openrouter-providers/20260512T191011Z-")
    snapshot_id = added.out.split()[1]
    again = cli(
        "snapshot",
        "add",
        "openrouter-providers",
        str(providers),
        *where,
        "--retrieved-at",
        "2026-05-13T00:00:00Z",
    )
    assert again.out.startswith("unchanged: identical bytes already stored as " + snapshot_id)
    listed = cli("snapshot", "list", *where)
    assert listed.status == 0 and snapshot_id in listed.out
    assert cli("snapshot", "verify", *where).out == "1 snapshots checked, 0 problem(s)\n"
    removed = cli(
        "snapshot", "remove", "openrouter-providers", snapshot_id, *where, "--reason", "test"
    )
    assert removed.status == 0, removed.err
    assert "(withdrawn " in cli("snapshot", "list", "openrouter-providers", *where).out
    # nothing went to the warehouse's own folder
    assert not (settings.raw_dir / "openrouter-providers" / snapshot_id.split("/")[1]).exists()
    # the environment variable does the same as the option
    os.environ["SPEEDBOOK_SNAPSHOTS"] = location
    try:
        assert snapshot_id in cli("snapshot", "list").out
        # every command reads the store on S3, not the warehouse's folder
        listed = cli("sources", "--json")
        assert listed.status == 0, listed.err
        rows = {row["id"]: row for row in json.loads(listed.out)}
        assert rows["openrouter-providers"]["snapshots"] == 0  # withdrawn above
        assert rows["openrouter-providers"]["latest_snapshot"] is None
    finally:
        del os.environ["SPEEDBOOK_SNAPSHOTS"]


def test_snapshot_commands_fail_clearly_without_showing_secrets(
    cli, settings, s3_env, s3_bucket, monkeypatch
):
    wrong = "Wrong/Secret+" + s3_env.secret_access_key
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", wrong)
    providers = FIXTURES / "openrouter" / "api-v1-providers-2026-05.json"
    where = ("--snapshots", f"{s3_bucket.url}/raw")
    for args in (
        ("snapshot", "list", *where),
        ("snapshot", "verify", *where),
        ("snapshot", "add", "openrouter-providers", str(providers), *where),
    ):
        result = cli(*args)
        assert result.status == 2, (args, result)
        assert "check AWS_SECRET_ACCESS_KEY" in result.err or "AWS_ACCESS_KEY" in result.err
        assert wrong not in result.err + result.out and s3_env.secret_access_key not in result.err
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", s3_env.secret_access_key)
    missing = cli("snapshot", "list", "--snapshots", "s3://no-such-bucket-here/raw")
    assert missing.status == 2 and "the bucket does not exist" in missing.err
    bad = cli("snapshot", "list", "--snapshots", "s3://user:pa55word@bucket/raw")
    assert bad.status == 2 and "must not carry credentials" in bad.err and "pa55word" not in bad.err


def test_a_local_store_apart_from_the_warehouse(cli, settings, tmp_path, monkeypatch):
    apart = tmp_path / "elsewhere" / "raw"
    providers = FIXTURES / "openrouter" / "api-v1-providers-2026-05.json"
    added = cli(
        "snapshot",
        "add",
        "openrouter-providers",
        str(providers),
        "--snapshots",
        str(apart),
        "--retrieved-at",
        "2026-05-12T19:10:11Z",
    )
    assert added.status == 0, added.err
    assert [p.name for p in (apart / "openrouter-providers").iterdir()] != []
    monkeypatch.setenv("SPEEDBOOK_SNAPSHOTS", str(apart))
    resolved = Settings.resolve()
    assert resolved.raw_dir == apart and resolved.snapshot_store == str(apart)
    assert cli("snapshot", "verify").out == "1 snapshots checked, 0 problem(s)\n"
    listed = cli("sources", "--json")
    assert listed.status == 0, listed.err
    rows = {row["id"]: row for row in json.loads(listed.out)}
    assert rows["openrouter-providers"]["snapshots"] == 1  # read from the store apart


def test_settings_choose_the_store(tmp_path, monkeypatch):
    monkeypatch.delenv("SPEEDBOOK_SNAPSHOTS", raising=False)
    default = Settings.resolve(warehouse=tmp_path / "wh")
    assert default.snapshot_store == str(tmp_path / "wh" / "raw")
    assert default.raw_dir == tmp_path / "wh" / "raw" and not default.snapshots_on_object_store
    monkeypatch.setenv("SPEEDBOOK_SNAPSHOTS", "s3://team-bucket/speedbook/raw")
    on_s3 = Settings.resolve(warehouse=tmp_path / "wh")
    assert on_s3.snapshot_store == "s3://team-bucket/speedbook/raw"
    assert on_s3.snapshots_on_object_store and on_s3.raw_dir == tmp_path / "wh" / "raw"
    option = Settings.resolve(warehouse=tmp_path / "wh", snapshots=tmp_path / "x")
    assert option.snapshot_store == str(tmp_path / "x")  # the option beats the variable

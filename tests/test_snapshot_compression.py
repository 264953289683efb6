"""Large snapshots are stored gzip-compressed (`<file>.gz`); the record keeps the sha256 and size
of the bytes as received, and every reader gets those bytes back. A `.gz` that is truncated,
corrupted, a bomb or followed by other bytes is a damaged snapshot with a reason, never a crash
or a hang; a plain store (every store written before compression) still reads."""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
import zlib
from datetime import UTC, datetime
from pathlib import Path

import pytest
from api_world import api_world, model_body
from conftest import BUNDLED_RAW, build_into
from http_fixtures import ok

from pipeline.raw.bundle import BundleMember, write_bundle
from pipeline.raw.snapshots import (
    COMPRESS_FROM,
    COMPRESSED_SUFFIX,
    SnapshotDamaged,
    SnapshotStore,
    compress,
    decompress,
    write_data_file,
)

SOURCE = "openrouter-endpoints"
URL = "https://openrouter.ai/api/v1/models"
MODELS = [f"bench/model-{n}" for n in range(12)]  # 12 responses: a bundle over COMPRESS_FROM
WHEN = datetime(2026, 11, 30, 6, tzinfo=UTC)


def poll_bundle(models: list[str] = MODELS) -> bytes:
    members = [
        BundleMember(f"{URL}/{model}/endpoints", 200, (("content-type", "application/json"),), body)
        for model in models
        for body in [model_body(model)]
    ]
    return write_bundle(members)


def add(store: SnapshotStore, data: bytes, when: datetime = WHEN):
    return store.add(
        SOURCE,
        data,
        url=URL,
        retrieved_at=when,
        content_type="application/vnd.speedbook.bundle",
        obtained_by="manual",
        extension="bundle",
    ).meta


def packed_path(store: SnapshotStore, meta) -> Path:
    return store.source_dir(meta.source_id) / (meta.data_file + COMPRESSED_SUFFIX)


@pytest.fixture
def api(tmp_path, monkeypatch):
    yield from api_world(tmp_path, monkeypatch)


def test_a_large_capture_added_by_hand_is_stored_compressed(settings, cli):
    data = poll_bundle()
    assert len(data) >= COMPRESS_FROM
    capture = settings.raw_dir.parent / "poll.bundle"
    capture.write_bytes(data)
    result = cli("snapshot", "add", SOURCE, str(capture), "--retrieved-at", "2026-11-30T06:00:00Z")
    assert result.status == 0, result.err
    store = SnapshotStore(settings.raw_dir)
    meta = store.latest(SOURCE)
    folder = store.source_dir(SOURCE)
    assert not (folder / meta.file).exists()
    packed = folder / (meta.file + COMPRESSED_SUFFIX)
    assert store.path_of(meta) == packed
    assert packed.stat().st_size < len(data) / 3  # twelve near-identical responses
    assert gzip.decompress(packed.read_bytes()) == data  # any gzip reader opens it
    # the record describes the bytes as received, and reading gives exactly those back
    assert (meta.size, meta.sha256) == (len(data), hashlib.sha256(data).hexdigest())
    assert store.read(meta) == data
    assert f"({len(data)} bytes, sha256 {meta.sha256[:12]})" in result.out
    verify = cli("snapshot", "verify")
    assert verify.status == 0, verify.err


def test_a_large_poll_fetched_is_stored_compressed(api):
    for model in MODELS:
        api.serve_model(model, ok(model_body(model)))
    api.add(SOURCE, models=MODELS, models_from=None)
    report = api.fetch()
    assert report.get(SOURCE).outcome == "new", report.get(SOURCE).detail
    meta = api.store.latest(SOURCE)
    assert meta.size >= COMPRESS_FROM
    assert api.store.path_of(meta) == packed_path(api.store, meta)
    data = api.store.read(meta)
    assert hashlib.sha256(data).hexdigest() == meta.sha256 and len(data) == meta.size
    assert report.get(SOURCE).bytes == meta.size  # the outcome counts the bytes received


def test_small_snapshots_stay_plain_and_the_same_bytes_always_compress_alike(tmp_path):
    store = SnapshotStore(tmp_path / "raw")
    small = add(store, poll_bundle(MODELS[:1]))
    assert store.path_of(small).name == small.file
    assert store.read(small) == poll_bundle(MODELS[:1])
    data = poll_bundle()
    assert compress(data) == compress(data)  # no name, no time in the gzip header
    assert write_data_file(tmp_path / "x.bundle", data).read_bytes() == compress(data)


def test_bytes_that_come_back_reuse_the_compressed_file(tmp_path):
    store = SnapshotStore(tmp_path / "raw")
    first, other = poll_bundle(), poll_bundle(MODELS[::-1])
    a = add(store, first, WHEN)
    add(store, other, WHEN.replace(hour=7))
    again = add(store, first, WHEN.replace(hour=8))
    assert again.bytes_file == a.file and again.file != a.file
    assert store.path_of(again) == packed_path(store, a)
    assert store.read(again) == first
    files = sorted(p.name for p in store.source_dir(SOURCE).iterdir() if ".meta" not in p.name)
    assert [name.endswith(COMPRESSED_SUFFIX) for name in files] == [True, True]


def test_a_plain_store_of_large_files_still_reads(tmp_path):
    """Snapshots stored before compression are plain files, whatever their size; where both a
    plain and a compressed file exist, the plain one is read."""
    store = SnapshotStore(tmp_path / "raw")
    data = poll_bundle()
    meta = add(store, data)
    packed = store.path_of(meta)
    plain = packed.with_name(meta.file)
    plain.write_bytes(data)
    assert store.path_of(meta) == plain and store.read(meta) == data
    packed.unlink()
    assert store.read(meta) == data


def bomb(size: int) -> bytes:
    """A gzip stream many times the size it is stored in."""
    return compress(b"\0" * size)


DAMAGE = {
    "truncated": (lambda packed, data: packed[: len(packed) // 2], "not a whole gzip file"),
    "corrupted": (
        lambda packed, data: packed[:200] + bytes([packed[200] ^ 0xFF]) + packed[201:],
        "not a readable gzip file",
    ),
    "not gzip at all": (lambda packed, data: data, "not a readable gzip file"),
    "bomb": (lambda packed, data: bomb(64 * len(data)), "decompresses to more than"),
    "trailing garbage": (
        lambda packed, data: packed + b"garbage",
        "bytes after the end of its gzip stream",
    ),
    "a second gzip member": (
        lambda packed, data: packed + compress(b"more"),
        "bytes after the end of its gzip stream",
    ),
    "other bytes, whole gzip": (lambda packed, data: compress(data[:-1] + b"!"), "sha256 mismatch"),
    "empty": (lambda packed, data: b"", "not a whole gzip file"),
}


@pytest.mark.parametrize("damage", DAMAGE)
def test_a_damaged_compressed_file_is_a_damaged_snapshot(settings, cli, damage):
    store = SnapshotStore(settings.raw_dir)
    data = poll_bundle()
    meta = add(store, data)
    packed = store.path_of(meta)
    spoil, reason = DAMAGE[damage]
    packed.write_bytes(spoil(packed.read_bytes(), data))
    with pytest.raises(SnapshotDamaged, match=reason) as error:
        store.read(meta)
    assert str(error.value).startswith(f"{meta.snapshot_id}: ")
    result = cli("snapshot", "verify")
    assert result.status == 1
    assert f"damaged: {meta.snapshot_id}: " in result.err and reason in result.err


def test_a_read_names_the_file_it_could_not_read(tmp_path):
    """The plain file is read when there is one, else the compressed one beside it; a message
    names the file looked at: the compressed one when it is there but not readable, the plain
    one when neither is there."""
    store = SnapshotStore(tmp_path / "raw")
    data = poll_bundle()
    meta = add(store, data)
    packed = packed_path(store, meta)
    plain = packed.with_name(meta.data_file)
    packed.rename(tmp_path / "kept.gz")
    packed.symlink_to(tmp_path / "kept.gz")
    with pytest.raises(SnapshotDamaged, match="symbolic link, not followed") as error:
        store.read(meta)
    assert str(packed) in str(error.value)
    packed.unlink()
    with pytest.raises(SnapshotDamaged, match="No such file") as error:
        store.read(meta)
    assert str(plain) in str(error.value) and COMPRESSED_SUFFIX not in str(error.value)
    plain.write_bytes(data)  # a plain file beside none: read as it is
    assert store.read(meta) == data
    plain.unlink()
    (tmp_path / "kept.gz").rename(packed)
    assert store.read(meta) == data


def test_decompression_stops_at_the_cap():
    """A bomb is cut one byte past the cap: it costs no more than a file of the cap."""
    stream = bomb(10_000_000)
    assert len(stream) < 20_000
    with pytest.raises(OSError, match="decompresses to more than 1,000 bytes"):
        decompress(stream, 1000)
    assert decompress(compress(b"x" * 1000), 1000) == b"x" * 1000
    raw = zlib.compress(b"x" * 1000)  # zlib, not gzip: the store never writes it
    with pytest.raises(OSError, match="not a readable gzip file"):
        decompress(raw, 1000)


def test_a_compressed_snapshot_can_be_withdrawn(settings, cli):
    store = SnapshotStore(settings.raw_dir)
    meta = add(store, poll_bundle())
    result = cli("snapshot", "remove", SOURCE, meta.file, "--reason", "a test poll")
    assert result.status == 0, result.err
    assert meta.snapshot_id not in {m.snapshot_id for m in store.list(SOURCE)}
    assert store.read(meta) == poll_bundle()  # its bytes stay


def test_a_build_of_a_compressed_store_publishes_the_same_exports(built, tmp_path):
    """The bundled store with every data file of COMPRESS_FROM or more replaced by its `.gz`
    builds to byte-identical exports."""
    raw = tmp_path / "warehouse" / "raw"
    shutil.copytree(BUNDLED_RAW, raw)
    store = SnapshotStore(raw)
    compressed = 0
    for meta in store.list(include_withdrawn=True):
        path = store.path_of(meta)
        if path.exists() and path.stat().st_size >= COMPRESS_FROM:
            write_data_file(path, path.read_bytes())
            path.unlink()
            compressed += 1
    assert compressed >= 3
    settings = build_into(tmp_path)
    assert SnapshotStore(settings.raw_dir).list()  # built from the compressed store
    ours, theirs = settings.exports / "latest", built.exports / "latest"
    names = sorted(p.name for p in theirs.iterdir() if p.is_file())
    assert names == sorted(p.name for p in ours.iterdir() if p.is_file())
    for name in names:
        assert (ours / name).read_bytes() == (theirs / name).read_bytes(), name
    inference = json.loads((ours / "inference.json").read_text())
    assert inference  # a real export, not two empty folders

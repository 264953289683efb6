"""Files in the store that are not regular files: a FIFO named like a record, a symlink to
/dev/zero as a record, a data file, the outcome log or the listing cache. None is followed or
read without bound; each is reported as a skipped (or damaged) snapshot with the reason.

Whatever links to /dev/zero is read only by commands run in subprocesses with a 1 GB address-space
limit and a timeout, so a regression fails the test (MemoryError, TimeoutExpired) instead of
exhausting the machine; in-process tests link to regular files and have a pytest timeout."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from conftest import BUNDLED_RAW, REPO_ROOT

from pipeline.raw import snapshots
from pipeline.raw.outcomes import OLD_LOG_NAME, log_path, read_outcomes, record_outcome
from pipeline.raw.snapshots import META_SUFFIX, SnapshotDamaged, SnapshotStore

WHEN = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
FIFO_RECORD = "20261201T000000Z-aaaaaaaaaaaa.html" + META_SUFFIX
LINK_RECORD = "20261202T000000Z-bbbbbbbbbbbb.html" + META_SUFFIX
ONE_GB = 1 << 30


def run_limited(
    *args: str, warehouse: Path, memory: int = ONE_GB, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "SPEEDBOOK_WAREHOUSE": str(warehouse)}
    env.pop("SPEEDBOOK_REGISTRY", None)
    return subprocess.run(
        [sys.executable, "-m", "pipeline.cli", *args],
        preexec_fn=limit,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=REPO_ROOT,
    )


@pytest.fixture
def warehouse(tmp_path: Path) -> Path:
    """A copy of the bundled corpus with a FIFO and a link to /dev/zero among kimi's records."""
    warehouse = tmp_path / "warehouse"
    shutil.copytree(BUNDLED_RAW, warehouse / "raw")
    folder = warehouse / "raw" / "aa-kimi-k2-6"
    os.mkfifo(folder / FIFO_RECORD)
    (folder / LINK_RECORD).symlink_to("/dev/zero")
    (warehouse / "raw" / ".snapshot-index.json").unlink(missing_ok=True)
    (warehouse / "raw" / ".snapshot-index.json").symlink_to("/dev/zero")
    return warehouse


def _add(store: SnapshotStore, data: bytes, when: datetime = WHEN) -> snapshots.SnapshotMeta:
    return store.add(
        "example-page",
        data,
        url="https://example.org/page",
        retrieved_at=when,
        content_type="text/html",
        obtained_by="manual",
        extension="html",
    ).meta


@pytest.mark.timeout(20)
def test_the_library_skips_a_fifo_and_a_link_naming_each(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    good = _add(store, b"<html>fine</html>")
    folder = tmp_path / "example-page"
    os.mkfifo(folder / FIFO_RECORD)
    (folder / LINK_RECORD).symlink_to(folder / (good.file + META_SUFFIX))  # even a good target
    errors: list[str] = []
    assert store.list(errors=errors) == [good]
    assert sorted(errors) == [
        f"{folder / FIFO_RECORD}: unreadable snapshot metadata: not a regular file (a FIFO)",
        f"{folder / LINK_RECORD}: unreadable snapshot metadata: a symbolic link, not followed",
    ]


@pytest.mark.timeout(20)
def test_an_oversized_record_is_skipped_unread(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    good = _add(store, b"<html>fine</html>")
    big = tmp_path / "example-page" / FIFO_RECORD
    big.write_text(json.dumps({"note": "x" * 70_000}))
    errors: list[str] = []
    assert store.list(errors=errors) == [good]
    assert errors == [f"{big}: unreadable snapshot metadata: larger than 64 kB"]


@pytest.mark.timeout(20)
@pytest.mark.parametrize("kind", ["fifo", "link to a good copy"])
def test_a_data_file_that_is_not_a_regular_file_is_damaged(tmp_path: Path, kind: str) -> None:
    store = SnapshotStore(tmp_path)
    meta = _add(store, b"<html>fine</html>")
    path = store.path_of(meta)
    copy = tmp_path / "copy.html"
    shutil.copy(path, copy)
    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to(copy)
    with pytest.raises(SnapshotDamaged) as error:
        store.read(meta)
    assert str(error.value).startswith(f"example-page/{meta.file}: cannot read {path}: ")
    assert ("FIFO" if kind == "fifo" else "symbolic link") in str(error.value)


@pytest.mark.timeout(20)
def test_a_data_file_over_the_store_cap_is_not_read(tmp_path, monkeypatch) -> None:
    store = SnapshotStore(tmp_path)
    meta = _add(store, b"<html>" + b"x" * 2000 + b"</html>")
    monkeypatch.setattr(snapshots, "MAX_SNAPSHOT_BYTES", 1000)
    with pytest.raises(SnapshotDamaged, match="larger than 1 kB"):
        store.read(meta)


@pytest.mark.timeout(20)
def test_a_fifo_or_link_as_the_listing_cache_is_ignored(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    good = _add(store, b"<html>fine</html>")
    cache = tmp_path / ".snapshot-index.json"
    assert store.list() == [good] and cache.is_file()
    cache.unlink()
    os.mkfifo(cache)
    assert store.list() == [good]
    cache.unlink()
    cache.symlink_to(tmp_path / "elsewhere.json")  # written through, it would land there
    assert store.list() == [good]


@pytest.mark.timeout(20)
@pytest.mark.parametrize("kind", ["fifo", "link"])
def test_an_outcome_log_that_is_not_a_regular_file(tmp_path: Path, kind: str) -> None:
    raw = tmp_path / "raw"
    # at the old place in the store (never adopted) and at its own place (never read)
    for log in (raw / "example-page" / OLD_LOG_NAME, log_path(raw, "example-page")):
        log.parent.mkdir(parents=True, exist_ok=True)
        if kind == "fifo":
            os.mkfifo(log)
        else:
            (tmp_path / "elsewhere.jsonl").write_text("")
            log.symlink_to(tmp_path / "elsewhere.jsonl")
    assert read_outcomes(raw, "example-page") == []
    with pytest.raises(OSError, match=r"not a regular file|symbolic link"):
        record_outcome(raw, "example-page", "new", "stored x")


def test_a_long_outcome_log_is_read_from_its_end(tmp_path, monkeypatch) -> None:
    from pipeline.raw import outcomes

    raw = tmp_path / "raw"
    for n in range(200):
        record_outcome(raw, "example-page", "unchanged", f"check {n}", at=WHEN)
    record_outcome(raw, "example-page", "failed", "HTTP 500", at=WHEN)
    monkeypatch.setattr(outcomes, "MAX_LOG_BYTES", 4096)
    records = read_outcomes(raw, "example-page")
    assert 0 < len(records) < 201 and records[-1].detail == "HTTP 500"


# --- the commands ------------------------------------------------------------------------------


@pytest.mark.timeout(120)
def test_snapshot_list_sources_and_verify_finish_and_name_each_file(warehouse: Path) -> None:
    folder = warehouse / "raw" / "aa-kimi-k2-6"
    fifo = f"warning: {folder / FIFO_RECORD}: unreadable snapshot metadata: not a regular file"
    link = f"{folder / LINK_RECORD}: unreadable snapshot metadata: a symbolic link, not followed"

    listing = run_limited("snapshot", "list", warehouse=warehouse)
    assert listing.returncode == 1, listing.stderr
    assert "aa-kimi-k2-6/" in listing.stdout
    assert fifo in listing.stderr and link in listing.stderr

    (folder / OLD_LOG_NAME).unlink(missing_ok=True)
    os.mkfifo(folder / OLD_LOG_NAME)
    openrouter_log = log_path(warehouse / "raw", "openrouter")
    openrouter_log.parent.mkdir(parents=True, exist_ok=True)
    openrouter_log.unlink(missing_ok=True)
    openrouter_log.symlink_to("/dev/zero")
    sources = run_limited("sources", "--json", warehouse=warehouse)
    assert sources.returncode == 0, sources.stderr
    by_id = {row["id"]: row for row in json.loads(sources.stdout)}
    assert by_id["aa-kimi-k2-6"]["snapshots"] >= 1
    assert "snapshot skipped" in sources.stderr and LINK_RECORD in sources.stderr

    # a data file replaced by a link to /dev/zero: damaged, reported, never read
    victim = next(p for p in sorted(folder.glob("*.html")))
    victim.unlink()
    victim.symlink_to("/dev/zero")
    verify = run_limited("snapshot", "verify", warehouse=warehouse)
    assert verify.returncode == 1
    assert f"damaged: aa-kimi-k2-6/{victim.name}: cannot read {victim}: " in verify.stderr
    assert "symbolic link" in verify.stderr


@pytest.mark.e2e
@pytest.mark.timeout(300)
def test_a_build_skips_them_and_publishes(warehouse: Path, tmp_path: Path) -> None:
    # gpt-oss has two snapshots: its newest data file becomes a link to /dev/zero
    # (read by hand: in this process the listing cache, a link to /dev/zero, is never opened)
    folder = warehouse / "raw" / "aa-gpt-oss-120b"
    records = [json.loads(p.read_text()) for p in sorted(folder.glob("*" + META_SUFFIX))]
    assert len(records) == 2
    newest = max(records, key=lambda record: record["retrieved_at"])
    data = folder / (newest.get("bytes_file") or newest["file"])
    data.unlink()
    data.symlink_to("/dev/zero")
    log = log_path(warehouse / "raw", "openrouter")  # the build reads every outcome log
    log.parent.mkdir(parents=True, exist_ok=True)
    log.unlink(missing_ok=True)
    os.mkfifo(log)
    build = run_limited(
        "build",
        "--exports",
        str(tmp_path / "exports"),
        warehouse=warehouse,
        memory=6 * ONE_GB,  # a lake build's address space (DuckLake, SQLite): 3 GB failed it
        timeout=240,
    )
    # 4: published, with a snapshot newer than the one its source is read from not used
    assert build.returncode == 4, build.stderr[-2000:] + build.stdout[-2000:]
    assert f"snapshot skipped: {warehouse / 'raw' / 'aa-kimi-k2-6' / FIFO_RECORD}" in build.stderr
    damaged = f"damaged snapshot, not used: aa-gpt-oss-120b/{newest['file']}: cannot read"
    assert damaged in build.stderr
    assert (tmp_path / "exports" / "latest" / "inference.json").is_file()

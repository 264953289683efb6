"""`snapshot add` streams the file into the store (hashing while it copies) under a size cap, and
the temporary file a killed writer leaves is removed by the next add or listing, never one a live
writer is still filling. Real processes, killed with SIGKILL at a pause point mid-copy."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from pipeline.raw import snapshots
from pipeline.raw.snapshots import SnapshotError, SnapshotStore
from pipeline.support.faults import PAUSE_ENV

SOURCE = "aa-kimi-k2-6"
MB = 1 << 20


def _env(settings, **extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), **extra}
    env["SPEEDBOOK_WAREHOUSE"] = str(settings.warehouse)
    env.pop("SPEEDBOOK_REGISTRY", None)
    return env


def _add_command(page: Path, *extra: str) -> list[str]:
    """--force: these pages are filler no parser reads, and only a forced add streams (without
    it the parser reads the file first, whole, as a build would)."""
    return [
        *[sys.executable, "-m", "pipeline.cli", "snapshot", "add", SOURCE, str(page)],
        *["--force", *extra],
    ]


def _temporaries(settings) -> list[Path]:
    return sorted(settings.raw_dir.rglob(".tmp-*"))


def _page(tmp_path: Path, size: int, fill: bytes = b"x") -> Path:
    """A page of `size` bytes, written a megabyte at a time."""
    page = tmp_path / "big.html"
    body = size - 26
    with page.open("wb") as out:
        out.write(b"<html><body>")
        for start in range(0, body, MB):
            out.write(fill * min(MB, body - start))
        out.write(b"</body></html>")
    return page


def _start_paused(settings, page: Path, marker: Path) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        _add_command(page, "--retrieved-at", "2026-11-29T08:00:00Z"),
        env=_env(settings, **{PAUSE_ENV: f"snapshot-copy:{marker}"}),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=REPO_ROOT,
    )
    deadline = time.monotonic() + 60
    while not marker.exists():
        if process.poll() is not None:
            pytest.fail(f"exited ({process.returncode}) before the pause: {process.stderr.read()}")
        if time.monotonic() > deadline:
            process.kill()
            pytest.fail("never reached the pause point snapshot-copy")
        time.sleep(0.05)
    return process


@pytest.mark.e2e
@pytest.mark.timeout(180)
def test_a_killed_add_leaves_a_temporary_that_the_next_listing_removes(settings, cli, tmp_path):
    page = _page(tmp_path, 8 * MB)
    before = SnapshotStore(settings.raw_dir).list(SOURCE)
    left: list[Path] = []
    for round_ in range(3):
        marker = tmp_path / f"paused-{round_}"
        process = _start_paused(settings, page, marker)
        # each add first removed what the one killed before it left: one temporary, its own
        (temporary,) = _temporaries(settings)
        assert temporary.parent.name == SOURCE and temporary not in left
        assert 0 < temporary.stat().st_size < page.stat().st_size  # killed in mid-copy
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
        left.append(temporary)
    assert len(_temporaries(settings)) == 1  # ten kills of a 500 MB add used to leave ten

    listing = cli("snapshot", "list", SOURCE)
    assert listing.status == 0, listing.err
    assert _temporaries(settings) == []
    assert listing.err == f"removed a temporary file a killed writer left: {temporary}\n"
    assert SnapshotStore(settings.raw_dir).list(SOURCE) == before  # nothing else changed

    result = subprocess.run(
        _add_command(page, "--retrieved-at", "2026-11-29T08:00:00Z"),
        env=_env(settings),
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    store = SnapshotStore(settings.raw_dir)
    newest = store.list(SOURCE)[-1]
    assert newest.size == page.stat().st_size
    assert newest.sha256 == hashlib.sha256(page.read_bytes()).hexdigest()
    assert store.read(newest) == page.read_bytes()
    assert _temporaries(settings) == []


@pytest.mark.timeout(180)
def test_the_next_add_removes_a_dead_writers_temporary_but_never_a_live_ones(
    settings, cli, tmp_path
):
    page = _page(tmp_path, 4 * MB)
    live = _start_paused(settings, page, tmp_path / "live")
    try:
        (temporary,) = _temporaries(settings)
        other = tmp_path / "other.html"
        other.write_text("<html>another capture</html>")
        result = cli(
            "snapshot", "add", SOURCE, str(other), "--retrieved-at", "2026-11-28", "--force"
        )
        assert result.status == 0, result.err
        assert cli("snapshot", "list", SOURCE).status == 0
        assert _temporaries(settings) == [temporary]  # its writer is alive: left alone
    finally:
        live.send_signal(signal.SIGKILL)
        live.wait(timeout=30)
    another = tmp_path / "third.html"
    another.write_text("<html>a third capture</html>")
    result = cli(
        "snapshot", "add", SOURCE, str(another), "--retrieved-at", "2026-11-28T01:00:00Z", "--force"
    )
    assert result.status == 0, result.err
    assert f"removed a temporary file a killed writer left: {temporary}" in result.err
    assert _temporaries(settings) == []


@pytest.mark.e2e
@pytest.mark.timeout(120)
def test_add_streams_the_file_instead_of_reading_it_whole(settings, tmp_path):
    def peak_rss_kb(page: Path, when: str) -> int:
        """The command's own peak resident memory (VmHWM of the process after exec: a parent's
        memory, which a forked child's rusage would count, is not in it)."""
        report = (
            "import atexit, sys\n"
            "def peak():\n"
            "    status = open('/proc/self/status').read()\n"
            "    print(status.split('VmHWM:')[1].split()[0], file=sys.stderr)\n"
            "atexit.register(peak)\n"
            "from pipeline.cli import main\n"
            "sys.exit(main(sys.argv[1:]))\n"
        )
        command = [sys.executable, "-c", report, *_add_command(page, "--retrieved-at", when)[3:]]
        result = subprocess.run(
            command, env=_env(settings), capture_output=True, text=True, cwd=REPO_ROOT, timeout=90
        )
        assert result.returncode == 0, result.stderr
        return int(result.stderr.split()[-1])

    small = tmp_path / "small.html"
    small.write_text("<html>small</html>")
    baseline = peak_rss_kb(small, "2026-11-28T00:00:00Z")
    large = _page(tmp_path, 96 * MB, fill=b"y")
    peak = peak_rss_kb(large, "2026-11-29T00:00:00Z")
    assert peak - baseline < 24 * 1024, f"peak {peak} kB against {baseline} kB for a small file"
    assert baseline > 10_000  # the figure is the command's own
    digest = hashlib.sha256(large.read_bytes()).hexdigest()
    (stored,) = [m for m in SnapshotStore(settings.raw_dir).list(SOURCE) if m.sha256 == digest]
    assert stored.size == large.stat().st_size


def test_a_file_over_the_cap_is_refused_before_anything_is_copied(settings, cli, tmp_path):
    page = tmp_path / "huge.html"
    with page.open("wb") as out:  # sparse: 300 MB that take no disk
        out.truncate(300_000_000)
    before = sorted(settings.raw_dir.rglob("*"))
    result = cli("snapshot", "add", SOURCE, str(page))
    assert result.status == 2
    assert result.err.strip() == (
        f"speedbook snapshot: error: {page}: 300 MB is larger than 256 MB, the store's cap for "
        "one snapshot"
    )
    assert sorted(settings.raw_dir.rglob("*")) == before


def test_the_store_counts_the_cap_while_copying(tmp_path, monkeypatch):
    # a stream whose size is not known in advance (a pipe, a file still growing)
    monkeypatch.setattr(snapshots, "MAX_SNAPSHOT_BYTES", 3 * MB)
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys\nfor _ in range(4): sys.stdout.buffer.write(b'z' * 2**20)",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    store = SnapshotStore(tmp_path)
    try:
        with pytest.raises(SnapshotError) as error:
            store.add_stream(
                "example-page",
                writer.stdout,
                url="https://example.org/",
                retrieved_at=snapshots.parse_utc("2026-11-29"),
                content_type="text/html",
                obtained_by="manual",
                extension="html",
            )
    finally:
        writer.stdout.close()
        writer.wait(timeout=30)
    assert str(error.value) == (
        "example-page: the bytes are larger than 3.1 MB, the store's cap for one snapshot"
    )
    assert list(tmp_path.rglob("*.html")) == [] and list(tmp_path.rglob(".tmp-*")) == []


def test_a_listing_removes_what_a_killed_cache_writer_left_in_the_store_root(tmp_path):
    store = SnapshotStore(tmp_path)
    store.add(
        "example-page",
        b"<html>x</html>",
        url="https://example.org/",
        retrieved_at=snapshots.parse_utc("2026-11-29"),
        content_type="text/html",
        obtained_by="manual",
        extension="html",
    )
    leftover = tmp_path / ".tmp-abc123.json"
    leftover.write_text('{"version": 3, "entr')
    listing = SnapshotStore(tmp_path)
    assert len(listing.list()) == 1
    assert not leftover.exists() and listing.cleaned == [leftover]

"""A build writes a copy of the warehouse and swaps it in only when it succeeds: readers (a held
`duckdb.connect(..., read_only=True)`, a `speedbook sql` query) never make a build fail and keep
reading the file they opened; a failed, refused or killed build leaves the warehouse as it was;
an --as-of build keeps its own file. Real processes throughout."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import dagster as dg
import duckdb
import pytest
from conftest import REPO_ROOT

from pipeline.dagster.runner import dagster_instance
from pipeline.raw.snapshots import SnapshotStore
from pipeline.support.locking import warehouse_lock
from pipeline.support.settings import Settings
from pipeline.warehouse.swap import AS_OF_DATABASE, WORKING_PREFIX

KIMI_PAGE = (Path(__file__).parent / "fixtures" / "aa_kimi_page.html").read_text()
PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
KIMI = (
    "SELECT value FROM mart.current_figures WHERE endpoint_id LIKE 'cerebras/kimi-k2.6/%' "
    "AND metric = 'output_tokens_per_s' AND tier = 'T1'"
)
# Holds the warehouse open read-only (as the README shows analysts doing), reads, says so, waits
# for the word, and reads again on the same connection.
READER = f"""
import json, sys, time, pathlib, duckdb
path, ready, go = sys.argv[1:4]
con = duckdb.connect(path, read_only=True)
first = con.execute({KIMI!r}).fetchall()
pathlib.Path(ready).write_text("ready")
while not pathlib.Path(go).exists():
    time.sleep(0.1)
print(json.dumps([first, con.execute({KIMI!r}).fetchall()]))
"""
# Holds the warehouse open for writing (a DuckDB session someone left open, an old tool).
WRITER = """
import sys, time, pathlib, duckdb
con = duckdb.connect(sys.argv[1])
pathlib.Path(sys.argv[2]).write_text("open")
time.sleep(600)
"""


def environment(settings: Settings, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in PROXY_VARS}
    env |= {
        "PYTHONPATH": str(REPO_ROOT),
        "SPEEDBOOK_REGISTRY": str(settings.registry),
        "SPEEDBOOK_WAREHOUSE": str(settings.warehouse),
        "SPEEDBOOK_EXPORTS": str(settings.exports),
    }
    return env | extra


def speedbook(settings: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pipeline.cli", *args],
        env=environment(settings),
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO_ROOT,
    )


def start(settings: Settings, *command: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        list(command),
        env=environment(settings),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO_ROOT,
    )


def wait_for(path: Path, process: subprocess.Popen[str], seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.1)


def copy_of(built: Settings, root: Path) -> Settings:
    shutil.copytree(built.warehouse, root / "warehouse", symlinks=True)
    shutil.copytree(built.exports, root / "exports", symlinks=True)
    return Settings.resolve(built.registry, root / "warehouse", root / "exports")


def add_kimi(settings: Settings, speed: str, when: datetime) -> None:
    SnapshotStore(settings.raw_dir).add(
        "aa-kimi-k2-6",
        KIMI_PAGE.replace("{speed}", speed).encode(),
        url="https://artificialanalysis.ai/models/kimi-k2-6/providers",
        retrieved_at=when,
        content_type="text/html",
        obtained_by="manual",
        extension="html",
    )


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def opens(pid: int, path: Path, *, replaced: bool = False) -> bool:
    """Whether process `pid` has `path` open (its file descriptors, from /proc); `replaced`:
    the file it opened is no longer under that name (another was renamed over it)."""
    folder = Path(f"/proc/{pid}/fd")
    name = f"{path} (deleted)" if replaced else str(path)
    try:
        return any(os.readlink(fd) == name for fd in folder.iterdir())
    except OSError:
        return False


def leftovers(settings: Settings) -> list[str]:
    return sorted(p.name for p in settings.warehouse.iterdir() if p.name.startswith(WORKING_PREFIX))


@pytest.mark.timeout(400)
def test_readers_during_a_build_keep_reading_and_never_break_it(built, tmp_path):
    settings = copy_of(built, tmp_path)
    add_kimi(settings, "1,040", datetime(2026, 11, 30, 6, tzinfo=UTC))
    ready, go = tmp_path / "ready", tmp_path / "go"
    reader = start(
        settings, sys.executable, "-c", READER, str(settings.database), str(ready), str(go)
    )
    query = start(
        settings,
        *[
            sys.executable,
            "-m",
            "pipeline.cli",
            "sql",
            "FROM range(10000000000000) SELECT count(*)",
        ],
        "--timeout",
        "600",
    )
    try:
        wait_for(ready, reader)
        deadline = time.monotonic() + 60
        while not opens(query.pid, settings.database):  # the query holds the file open
            assert query.poll() is None, query.communicate()
            assert time.monotonic() < deadline, "speedbook sql never opened the warehouse"
            time.sleep(0.1)
        build = speedbook(settings, "build")
        assert build.returncode == 0, build.stdout + build.stderr[-3000:]
        assert "Could not set lock" not in build.stderr
        # still querying the file it opened, which the build's copy replaced
        assert query.poll() is None and opens(query.pid, settings.database, replaced=True)
        go.write_text("go")
        out, err = reader.communicate(timeout=60)
        assert reader.returncode == 0, err
    finally:
        for process in (reader, query):
            if process.poll() is None:
                process.kill()
                process.wait()
    first, same = json.loads(out)
    assert first == same  # the open connection still reads the file it opened
    with duckdb.connect(str(settings.database), read_only=True) as con:
        fresh = con.execute(KIMI).fetchall()
    assert (1040.0,) in fresh and [1040.0] not in first  # a new one reads the new build
    assert leftovers(settings) == []


@pytest.mark.timeout(400)
def test_a_killed_build_changes_nothing_and_its_copy_is_removed_next_time(built, tmp_path):
    settings = copy_of(built, tmp_path)
    add_kimi(settings, "1,050", datetime(2026, 11, 30, 6, tzinfo=UTC))
    before = digest(settings.database)
    marker = tmp_path / "paused"
    process = subprocess.Popen(
        [sys.executable, "-m", "pipeline.cli", "build"],
        env=environment(settings, SPEEDBOOK_TEST_PAUSE=f"core-transaction:{marker}"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO_ROOT,
    )
    try:
        wait_for(marker, process, 240)
        assert [n for n in leftovers(settings) if n.endswith(".duckdb")]  # the run's own copy
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert digest(settings.database) == before
    rebuilt = speedbook(settings, "build")
    assert rebuilt.returncode == 0, rebuilt.stderr[-3000:]
    assert "removed the database a killed build left" in rebuilt.stderr
    assert leftovers(settings) == []
    with duckdb.connect(str(settings.database), read_only=True) as con:
        assert (1050.0,) in con.execute(KIMI).fetchall()


def test_a_build_refuses_a_warehouse_open_for_writing_in_one_line(built, tmp_path):
    settings = copy_of(built, tmp_path)
    add_kimi(settings, "1,060", datetime(2026, 11, 30, 6, tzinfo=UTC))
    before = digest(settings.database)
    opened = tmp_path / "open"
    writer = start(settings, sys.executable, "-c", WRITER, str(settings.database), str(opened))
    try:
        wait_for(opened, writer)
        refused = speedbook(settings, "build")
    finally:
        writer.kill()
        writer.wait()
    assert refused.returncode == 2
    (line,) = [line for line in refused.stderr.splitlines() if not line.startswith("[")]
    assert line.startswith(f"speedbook build: error: {settings.database} is open for writing")
    assert f"PID {writer.pid}" in line
    assert digest(settings.database) == before
    assert sorted(p.name for p in settings.exports.iterdir()) == ["2026.11.29", "latest"]


def test_an_as_of_build_keeps_its_own_file(built, tmp_path):
    settings = copy_of(built, tmp_path)
    before = digest(settings.database)
    result = speedbook(settings, "build", "--as-of", "2026-06-30")
    assert result.returncode == 0, result.stderr[-3000:]
    assert digest(settings.database) == before  # what analysts query is untouched
    as_of = settings.warehouse / AS_OF_DATABASE
    assert f"warehouse: {as_of}" in result.stdout
    with duckdb.connect(str(as_of), read_only=True) as con:
        con.execute("SET TimeZone = 'UTC'")
        (bound,) = con.execute("SELECT as_of FROM core.build_state").fetchone()
    assert bound == datetime(2026, 6, 30, 23, 59, 59, tzinfo=UTC)
    assert (settings.exports / "2026.06.28" / "inference.json").is_file()
    assert os.readlink(settings.exports / "latest") == "2026.11.29"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--as-of", "2020-01-01"], "--as-of 2020-01-01T23:59:59Z is before the first snapshot"),
        (["--warehouse", "{empty}"], "has no snapshot store"),
    ],
)
def test_a_build_with_nothing_to_read_is_refused_up_front(built, tmp_path, cli, args, message):
    settings = copy_of(built, tmp_path)
    before = digest(settings.database)
    (tmp_path / "empty").mkdir()
    where = ["--warehouse", str(settings.warehouse), "--exports", str(settings.exports)]
    result = cli("build", *where, *[a.replace("{empty}", str(tmp_path / "empty")) for a in args])
    assert result.status == 2
    (line,) = [line for line in result.err.splitlines() if not line.startswith("[")]
    assert line.startswith("speedbook build: error: ") and message in line
    assert digest(settings.database) == before
    assert not (tmp_path / "empty" / "speedbook.duckdb").exists()
    assert not (tmp_path / "empty" / "dagster").exists()


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_run_launched_as_the_ui_launches_it_takes_the_lock_and_swaps(built, tmp_path):
    """The build job with its own executor (a process per step, as the UI runs it): it takes the
    warehouse lock, and writes a working copy that it swaps in, so a held reader is no obstacle."""
    settings = copy_of(built, tmp_path)
    add_kimi(settings, "1,070", datetime(2026, 11, 30, 6, tzinfo=UTC))
    job = dg.build_reconstructable_job(
        "pipeline.dagster.graph",
        "build_job",
        reconstructable_kwargs={
            "registry": str(settings.registry),
            "warehouse": str(settings.warehouse),
            "exports": str(settings.exports),
            "metadata": str(settings.metadata),
        },
    )
    before = digest(settings.database)
    with dagster_instance(settings) as instance:
        with warehouse_lock(settings.lock_file):  # a `speedbook build` is running
            blocked = dg.execute_job(job, instance=instance, raise_on_error=False)
        assert not blocked.success
        logged = [
            str(r.dagster_event) for r in instance.all_logs(blocked.run_id) if r.dagster_event
        ]
        assert any("another build holds" in line for line in logged), logged[-3:]
        assert digest(settings.database) == before
        ready, go = tmp_path / "ready", tmp_path / "go"
        reader = start(
            settings, sys.executable, "-c", READER, str(settings.database), str(ready), str(go)
        )
        try:
            wait_for(ready, reader)
            result = dg.execute_job(job, instance=instance, raise_on_error=False)
            go.write_text("go")
            out, err = reader.communicate(timeout=60)
        finally:
            if reader.poll() is None:
                reader.kill()
        assert result.success
    assert reader.returncode == 0, err
    first, same = json.loads(out)
    assert first == same and [1070.0] not in first
    with duckdb.connect(str(settings.database), read_only=True) as con:
        assert (1070.0,) in con.execute(KIMI).fetchall()
    assert os.readlink(settings.exports / "latest") == "2026.11.30"
    assert leftovers(settings) == []

"""`speedbook ui` does not take the warehouse lock, but says so when a build holds it; and on
SIGTERM, SIGINT or SIGHUP it stops `dagster dev` with every process it started."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import nullcontext, suppress
from pathlib import Path

import pytest

from pipeline.cli import main, ui
from pipeline.support.locking import warehouse_lock
from pipeline.support.settings import Settings


class Launched(Exception):
    """Raised instead of replacing the test process with `dagster dev`."""


def test_build_holder_names_the_build_and_leaves_the_lock_file_alone(tmp_path: Path) -> None:
    lock = tmp_path / "build.lock"
    assert ui.build_holder(lock) is None  # no build ever ran
    with warehouse_lock(lock):
        text = lock.read_text()
        assert ui.build_holder(lock) == text.strip() and text.startswith("pid ")
        assert lock.read_text() == text  # the probe never writes
    assert ui.build_holder(lock) is None
    with warehouse_lock(lock):  # the probe left no lock behind
        pass


@pytest.mark.parametrize("building", [True, False])
def test_ui_notes_a_running_build_and_still_opens(
    settings: Settings,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    building: bool,
) -> None:
    monkeypatch.setenv("DAGSTER_HOME", str(settings.dagster_home))  # restored after the test

    def supervise(*_args: object) -> int:
        raise Launched

    monkeypatch.setattr(ui, "supervise", supervise)
    holding = warehouse_lock(settings.lock_file) if building else nullcontext()
    with holding, pytest.raises(Launched):
        main(["ui"])
    err = capsys.readouterr().err
    assert ("note: a build is running" in err) is building
    assert "a run launched from the UI fails at once until it finishes" in err or not building


# --- stopping ------------------------------------------------------------------------------------

FAKE_DEV = """
import os, signal, subprocess, sys, time
mode, pids = sys.argv[1], sys.argv[2]
# a service of its own, as dagster dev starts the webserver, the daemon and code servers
ignore = "signal.signal(signal.SIGTERM, signal.SIG_IGN); " if mode == "stubborn" else ""
service = subprocess.Popen([sys.executable, "-c", ignore + "import time; time.sleep(600)"])
if mode == "stubborn":
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
with open(pids + ".tmp", "w") as out:
    out.write(f"{os.getpid()} {service.pid}")
os.replace(pids + ".tmp", pids)
time.sleep(600)  # Ctrl-C (SIGINT) ends it, and leaves its service running, as dagster dev can
"""


def _alive(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie waiting to be reaped is not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"


def _descendants(root: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with suppress(OSError):
                stat = (entry / "stat").read_text()
                ppid = int(stat[stat.rfind(")") + 2 :].split()[1])
                children.setdefault(ppid, []).append(int(entry.name))
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def _wait_gone(pids: set[int], seconds: float) -> set[int]:
    deadline = time.monotonic() + seconds
    while (left := {pid for pid in pids if _alive(pid)}) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def _kill_all(pids: set[int]) -> None:
    """Test cleanup: end what this test started and a failure left running, by pid."""
    for pid in pids:
        with suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture
def started() -> Iterator[set[int]]:
    """Pids this test started (and their descendants, as found): killed if still alive."""
    pids: set[int] = set()
    yield pids
    _kill_all({pid for pid in pids if _alive(pid)})


def _ignore_sigint() -> None:  # a background job of a non-interactive shell starts so
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=str)
@pytest.mark.parametrize("mode", ["polite", "stubborn"])
def test_a_stop_signal_ends_the_whole_group(tmp_path, started, stop, mode):
    """polite: the child stops on SIGINT (as dagster dev does) and leaves its service, which the
    group's SIGTERM ends; stubborn: nothing listens, and SIGKILL ends them."""
    script, pids = tmp_path / "dev.py", tmp_path / "pids"
    script.write_text(FAKE_DEV)
    supervisor = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import os, sys; from pipeline.cli import ui; "
            "ui.SHUTDOWN_GRACE_S = ui.TERMINATE_GRACE_S = 1.0; "
            f"sys.exit(ui.supervise([sys.executable, {str(script)!r}, {mode!r}, {str(pids)!r}], "
            "os.environ))",
        ],
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_ignore_sigint,
        start_new_session=True,
    )
    started.add(supervisor.pid)
    deadline = time.monotonic() + 60
    while not pids.exists():
        assert supervisor.poll() is None and time.monotonic() < deadline, supervisor.stderr
        time.sleep(0.05)
    child, service = (int(pid) for pid in pids.read_text().split())
    started.update({child, service})
    supervisor.send_signal(stop)
    _, err = supervisor.communicate(timeout=60)
    assert supervisor.returncode == 0, err
    assert not _wait_gone({child, service}, 5), err
    assert f"speedbook ui: {stop.name}: stopping dagster dev" in err
    assert err.rstrip().endswith("speedbook ui: stopped")
    assert ("SIGKILL" in err) is (mode == "stubborn")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.e2e
@pytest.mark.timeout(600)
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
def test_sigterm_stops_the_ui_with_its_webserver_daemon_and_code_servers(tmp_path, started):
    """`speedbook ui &` then `kill`: it used to replace itself with `dagster dev`, which a SIGTERM
    ended alone, leaving the webserver, the daemon and the code servers running."""
    port = _free_port()
    command = [sys.executable, "-m", "pipeline.cli", "ui", "--port", str(port)]
    command += ["--warehouse", str(tmp_path / "warehouse"), "--exports", str(tmp_path / "out")]
    log = tmp_path / "ui.err"  # a file: dagster's log lines would fill a pipe nobody reads yet
    with log.open("w") as err_file:
        ui_process = subprocess.Popen(
            command,
            stdout=subprocess.DEVNULL,
            stderr=err_file,
            preexec_fn=_ignore_sigint,
            start_new_session=True,
        )
    started.add(ui_process.pid)
    deadline = time.monotonic() + 400  # dagster dev starts four Python processes
    while not _answers(port):
        assert ui_process.poll() is None, log.read_text()
        assert time.monotonic() < deadline, "the webserver never answered"
        time.sleep(1)
    family = _descendants(ui_process.pid)
    started.update(family)
    names = " ".join(Path(f"/proc/{pid}/cmdline").read_text() for pid in family if _alive(pid))
    assert "dagster_webserver" in names and "dagster._daemon" in names, names

    ui_process.send_signal(signal.SIGTERM)
    ui_process.wait(timeout=120)
    err = log.read_text()
    assert ui_process.returncode == 0, err
    assert not _wait_gone(family, 10), (err, family)
    assert not _answers(port)  # nothing listens on its port any more
    assert "speedbook ui: SIGTERM: stopping dagster dev" in err and "speedbook ui: stopped" in err


def _answers(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/server_info", timeout=5):
            return True
    except OSError:
        return False

"""Work run in a Python process of its own (pipeline/support/apart.py): its output, its failure
in one line, a stop, and no process left behind when the build that started it is killed. Real
processes, with small modules written for the test."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from pipeline.support.apart import Apart, Stopped

MODULES = {
    "says_hello": "print('hello', flush=True)\n",
    "fails": "import sys\nprint('first line', file=sys.stderr)\nraise SystemExit('disk full')\n",
    "sleeps": (
        "import pathlib, sys, time\n"
        "from pipeline.support.apart import die_with_parent\n"
        "die_with_parent()\n"
        "pathlib.Path(sys.argv[1]).write_text('started')\n"
        "time.sleep(120)\n"
    ),
}


@pytest.fixture
def modules(tmp_path: Path) -> dict[str, str]:
    for name, text in MODULES.items():
        (tmp_path / f"{name}.py").write_text(text)
    return {"PYTHONPATH": str(tmp_path)}


def test_what_the_process_prints_is_its_result(modules):
    assert Apart("says_hello", [], "greeting", env=modules).wait() == "hello\n"


def test_a_failure_is_one_line_naming_the_work(modules):
    with pytest.raises(OSError, match=r"^writing the files failed: disk full$"):
        Apart("fails", [], "writing the files", env=modules).wait()


def test_a_stop_kills_the_process(modules, tmp_path):
    marker = tmp_path / "started"
    work = Apart("sleeps", [str(marker)], "sleeping", env=modules)
    stop = threading.Event()
    _wait_for(marker)
    stop.set()
    started = time.monotonic()
    with pytest.raises(Stopped, match="sleeping was stopped"):
        work.wait(stop)
    assert time.monotonic() - started < 10
    assert work._process.poll() is not None  # killed and reaped


PARENT = """
import sys, time
from pipeline.support.apart import Apart
work = Apart("sleeps", [sys.argv[1]], "sleeping", env={"PYTHONPATH": sys.argv[2]})
print(work._process.pid, flush=True)
time.sleep(120)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"  # a zombie has ended; only its exit status waits to be read


def _wait_for(path: Path) -> None:
    deadline = time.monotonic() + 30
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal")
def test_a_killed_build_leaves_no_process_of_its_own_behind(modules, tmp_path):
    marker = tmp_path / "started"
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, str(marker), modules["PYTHONPATH"]],
        stdout=subprocess.PIPE,
        text=True,
    )
    child = int(parent.stdout.readline())
    _wait_for(marker)
    assert _alive(child)
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 10
    while _alive(child):
        assert time.monotonic() < deadline, "the process apart outlived the build"
        time.sleep(0.02)

"""The `speedbook` command ends its process with os._exit once the command is done
(pipeline/cli/quick_exit.py): its status, its output and its exit handlers must be what the
interpreter's own exit gives, and a thread still running must not be cut short. Real processes."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pipeline.cli import _load_commands, build_parser
from pipeline.cli.quick_exit import STREAM_LOST, status_of

# output kept in the streams' buffers until the exit flushes it, whatever the caller's setting
BUFFERED = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=60,
        env=BUFFERED,
    )


def test_the_command_gives_its_status_and_all_its_output():
    shown = subprocess.run(
        [sys.executable, "-m", "pipeline.cli", "--help"], capture_output=True, text=True, timeout=60
    )
    assert shown.returncode == 0
    assert shown.stdout == build_parser(_load_commands()).format_help()  # all of it, in order
    wrong = subprocess.run(
        [sys.executable, "-m", "pipeline.cli", "build", "--no-such-option"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert wrong.returncode == 2
    assert "unrecognized arguments: --no-such-option" in wrong.stderr


def test_buffered_output_and_exit_handlers_are_not_lost():
    done = _python(
        """
        import atexit, sys
        from pipeline.cli.quick_exit import exit_now
        atexit.register(lambda: sys.stderr.write("handler ran\\n"))
        for i in range(200_000):
            print(f"line {i}")
        sys.stderr.write("unflushed")
        exit_now(3)
        """
    )
    assert done.returncode == 3
    lines = done.stdout.splitlines()
    assert len(lines) == 200_000 and lines[-1] == "line 199999"
    assert done.stderr == "unflushedhandler ran\n"


def test_a_thread_still_running_is_waited_for(tmp_path: Path):
    marker = tmp_path / "finished"
    done = _python(
        f"""
        import threading, time
        from pathlib import Path
        from pipeline.cli.quick_exit import exit_now
        def work():
            time.sleep(0.5)
            Path({str(marker)!r}).write_text("done")
        threading.Thread(target=work).start()
        exit_now(5)
        """
    )
    assert done.returncode == 5
    assert marker.read_text() == "done"


def _status_writing_to_a_closed_pipe(ending: str) -> int:
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from pipeline.cli.quick_exit import exit_now\n"
            f"import sys, time\ntime.sleep(0.5)\nsys.stdout.write('x' * 100)\n{ending}\n",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=BUFFERED,
    )
    assert process.stdout is not None
    process.stdout.close()  # the reader is gone before the writer flushes
    return process.wait(timeout=60)


def test_output_to_a_pipe_nobody_reads_exits_as_the_interpreter_would():
    assert _status_writing_to_a_closed_pipe("exit_now(0)") == _status_writing_to_a_closed_pipe(
        "sys.exit(0)"
    )
    assert _status_writing_to_a_closed_pipe("exit_now(0)") == STREAM_LOST


@pytest.mark.parametrize(
    ("code", "status"), [(None, 0), (0, 0), (2, 2), ("speedbook: cannot go on", 1)]
)
def test_a_system_exit_means_the_status_the_interpreter_gives_it(code, status, capsys):
    assert status_of(code) == status
    assert capsys.readouterr().err == ("speedbook: cannot go on\n" if status == 1 else "")

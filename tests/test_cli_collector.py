"""The `speedbook` command's process runs the cyclic collector at the command's thresholds and
leaves nothing to the interpreter's last collection; a command that fails exits with its status
all the same."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pipeline.cli import COLLECTOR_THRESHOLDS

# what the process's collector is like when the interpreter exits (atexit runs after sys.exit)
PROBE = """
import atexit, gc, json, sys
atexit.register(lambda: print(json.dumps([gc.get_threshold(), gc.get_freeze_count()])))
from pipeline.cli import run
sys.argv = ["speedbook", *sys.argv[1:]]
run()
"""


def _speedbook(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, SPEEDBOOK_WAREHOUSE=str(tmp_path / "warehouse"))
    return subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_command_runs_at_the_thresholds_and_freezes_what_is_left(tmp_path):
    done = _speedbook(tmp_path, "sources")
    assert done.returncode == 0, done.stderr
    thresholds, frozen = json.loads(done.stdout.splitlines()[-1])
    assert tuple(thresholds) == COLLECTOR_THRESHOLDS != (700, 10, 10)
    assert frozen > 10_000  # the command's objects, its modules' included


def test_a_failing_command_keeps_its_status(tmp_path):
    missing = _speedbook(tmp_path, "sql", "SELECT 1")  # no warehouse built there
    assert missing.returncode == 2
    assert "run `speedbook build` first" in missing.stderr
    assert json.loads(missing.stdout.splitlines()[-1])[1] > 0

"""Pause points for crash tests: `SPEEDBOOK_TEST_PAUSE=<point>:<marker file>` makes the process
write its pid to the marker and sleep when it reaches <point>, so a test can SIGKILL it there.
Unset (always, outside tests), a pause point costs one environment lookup.

A subsystem with its own kill points may read another variable (publishing reads
`SPEEDBOOK_TEST_PUBLISH_PAUSE`), so a test can pause one without naming points of the other."""

from __future__ import annotations

import os
import time
from pathlib import Path

PAUSE_ENV = "SPEEDBOOK_TEST_PAUSE"


def pause_point(point: str, env: str = PAUSE_ENV) -> None:
    """Sleep at `point` if the variable `env` asks for it (after writing our pid to its marker)."""
    setting = os.environ.get(env)
    if not setting:
        return
    wanted, _, marker = setting.partition(":")
    if wanted == point and marker:
        Path(marker).write_text(f"{os.getpid()}\n", encoding="utf-8")
        time.sleep(3600)

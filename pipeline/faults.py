"""Pause points for crash tests: `SPEEDBOOK_TEST_PAUSE=<point>:<marker file>` makes the process
write its pid to the marker and sleep when it reaches <point>, so a test can SIGKILL it there.
Unset (always, outside tests), a pause point costs one environment lookup."""

from __future__ import annotations

import os
import time
from pathlib import Path

PAUSE_ENV = "SPEEDBOOK_TEST_PAUSE"


def pause_point(point: str) -> None:
    setting = os.environ.get(PAUSE_ENV)
    if not setting:
        return
    wanted, _, marker = setting.partition(":")
    if wanted == point and marker:
        Path(marker).write_text(f"{os.getpid()}\n", encoding="utf-8")
        time.sleep(3600)

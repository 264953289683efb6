"""Progress lines of long work, through the standard `logging` module (logger `speedbook`).

Plain functions log here and know nothing of where the lines go. The command line shows them on
stderr (`log_to_stderr`, as `[  12.3s] message`); a Dagster run captures the logger into its run
log (the instance's `python_logs: managed_python_loggers`, written by pipeline/dagster/runner.py),
whichever process runs the step.
"""

from __future__ import annotations

import logging
import sys
import time
from typing import TextIO

LOGGER = "speedbook"


def report(message: str) -> None:
    logging.getLogger(LOGGER).info(message)


def warn(message: str) -> None:
    logging.getLogger(LOGGER).warning(message)


class ElapsedFormatter(logging.Formatter):
    """`[  12.3s] message`: seconds since the formatter was made (the command's start)."""

    def __init__(self) -> None:
        super().__init__()
        self.started = time.time()

    def format(self, record: logging.LogRecord) -> str:
        return f"[{record.created - self.started:6.1f}s] {record.getMessage()}"


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever `sys.stderr` is when a line is logged (as `logging.lastResort` does),
    so a redirected or captured stderr gets the lines."""

    @property
    def stream(self) -> TextIO:  # type: ignore[override]
        return sys.stderr

    @stream.setter
    def stream(self, _value: object) -> None:
        pass


def log_to_stderr() -> None:
    """Show the `speedbook` logger's lines, INFO and above, on stderr. Called by the command
    line; calling it again adds no second handler and restarts the clock."""
    logger = logging.getLogger(LOGGER)
    logger.setLevel(logging.INFO)
    handler = next((h for h in logger.handlers if isinstance(h, _StderrHandler)), None)
    if handler is None:
        handler = _StderrHandler()
        logger.addHandler(handler)
    handler.setFormatter(ElapsedFormatter())

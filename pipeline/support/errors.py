"""Errors shared across modules."""

from __future__ import annotations


class CommandError(Exception):
    """A user-facing failure: the CLI prints it as one line and exits with `status`."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


class LakeError(ValueError):
    """A catalog or data location that cannot be read as one (pipeline/warehouse/lake.py). Here,
    not there, so a command can catch it without importing DuckDB (a tenth of a second of a
    build with nothing new)."""

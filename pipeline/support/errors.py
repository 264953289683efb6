"""Errors shared across modules."""

from __future__ import annotations


class CommandError(Exception):
    """A user-facing failure: the CLI prints it as one line and exits with `status`."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status

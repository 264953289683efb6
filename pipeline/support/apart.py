"""Work run in a Python process of its own (`python -m <module> ARGS...`), beside the build's.

A build's process spends most of its time in Python, holding the GIL; work handed to a thread of
it waits for the GIL at every switch (each block of the spare's update did, behind Dagster's
imports: 4 s instead of 1.2). In a process of its own the work has its own interpreter and only
shares the cores. Its result is what it prints on stdout; its failure, the last line it printed
on stderr.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

POLL_SECONDS = 0.05  # how often a wait looks at its stop event
_PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when its parent dies
_PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the folder holding `pipeline/`


class Stopped(RuntimeError):
    """The work was stopped before it ended (its caller gave up on it)."""


def die_with_parent() -> None:
    """Called first by the module a process apart runs: on Linux, have the kernel kill this
    process when the build that started it dies (a SIGKILL leaves no writer behind in the
    folders the next build cleans). Elsewhere, or when the call fails, nothing happens."""
    if not sys.platform.startswith("linux"):
        return
    parent = os.getppid()
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the request was made
        os._exit(1)


def child_environment(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment with `env` over it, for a `python -m` child that imports this
    very `pipeline`, wherever the parent found it."""
    environment = dict(os.environ) | dict(env or {})
    environment["PYTHONPATH"] = os.pathsep.join(
        [str(_PACKAGE_ROOT), *filter(None, [environment.get("PYTHONPATH")])]
    )
    return environment


class Apart:
    """`python -m module *args`, started at once; `wait()` for what it printed."""

    def __init__(
        self, module: str, args: Sequence[str], what: str, env: Mapping[str, str] | None = None
    ) -> None:
        self.what = what  # for errors: "updating the spare", "writing the Parquet files"
        self._process = subprocess.Popen(
            [sys.executable, "-m", module, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=child_environment(env),
        )

    def wait(self, stop: threading.Event | None = None) -> str:
        """What the process printed on stdout, once it ended well. OSError with the last line
        of its stderr when it failed; Stopped (the process killed) when `stop` is set first."""
        try:
            while True:
                # looked at before each wait: a process that ends within the wait after `stop`
                # was set is still stopped, not taken as done
                if stop is not None and stop.is_set():
                    raise Stopped(f"{self.what} was stopped")
                try:
                    # without a stop event there is nothing to look at meanwhile
                    timeout = POLL_SECONDS if stop is not None else None
                    out, err = self._process.communicate(timeout=timeout)
                    break
                except subprocess.TimeoutExpired:
                    continue
        finally:
            self.stop()
        if self._process.returncode != 0:
            lines = err.strip().splitlines()
            last = lines[-1] if lines else f"exit status {self._process.returncode}"
            raise OSError(f"{self.what} failed: {last}")
        return out

    def stop(self) -> None:
        """Kill the process if it still runs, and reap it."""
        if self._process.poll() is None:
            self._process.kill()
            self._process.communicate()

"""`speedbook ui`: open the Dagster UI on the instance that `speedbook build` writes to."""

from __future__ import annotations

import argparse
import fcntl
import os
import shutil
import sys
from pathlib import Path

from pipeline.support.errors import CommandError
from pipeline.support.settings import (
    ENV_EXPORTS,
    ENV_METADATA,
    ENV_REGISTRY,
    ENV_SCHEDULES,
    ENV_WAREHOUSE,
    SCHEDULES_RUNNING,
    Settings,
)

NAME = "ui"
HELP = "open the Dagster UI (dagster dev) on this project's instance"
DESCRIPTION = (
    "Run `dagster dev -m pipeline.definitions` with DAGSTER_HOME set to <warehouse>/dagster, so "
    "the runs `speedbook build` made appear with their history. `dagster dev` also runs the "
    "daemon: the schedules (one per cadence of the registry's [cadences] table: fetch what is "
    "due, build, publish when content changed) and the run queue, which starts one run at a "
    "time per warehouse. Schedules start stopped: turn them on in the UI (Automation), with "
    "`dagster schedule start`, or with --schedules-running. The UI does not take the "
    "warehouse lock (it would stop every `speedbook build` while it is open); every run "
    "launched from it does, and fails at once while a `speedbook build` holds it."
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=3000, help="web server port (default 3000)")
    parser.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    parser.add_argument(
        "--schedules-running",
        action="store_true",
        help="start the schedules running the first time this instance sees them (default: "
        "stopped until turned on; after that, the state the UI gave them)",
    )


def build_holder(lock_file: Path) -> str | None:
    """Who holds the warehouse lock right now (the lock file's text), or None if nobody does.

    Only a probe: a shared lock, dropped at once, and the file is never written, so a build
    that starts meanwhile still reports its own pid."""
    try:
        handle = os.open(lock_file, os.O_RDONLY)
    except OSError:
        return None  # no lock file yet: no build ever ran here
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return os.pread(handle, 200, 0).decode("utf-8", "replace").strip() or "holder unknown"
        fcntl.flock(handle, fcntl.LOCK_UN)
        return None
    finally:
        os.close(handle)


def run(args: argparse.Namespace, settings: Settings) -> int:
    from pipeline.dagster.runner import dagster_instance

    holder = build_holder(settings.lock_file)
    if holder is not None:
        # The UI itself is safe to open during a build (it only reads); a run launched from it
        # takes the warehouse lock too, so it fails at once while the build holds it.
        print(
            f"note: a build is running ({settings.lock_file}: {holder}); a run launched from the "
            "UI fails at once until it finishes (runs take the warehouse lock)",
            file=sys.stderr,
        )

    from pipeline.dagster.schedules import WAREHOUSE_TAG, queues_one_run_per_warehouse

    with dagster_instance(settings) as instance:  # creates the instance folder and dagster.yaml
        if not queues_one_run_per_warehouse(instance):
            print(
                f"note: {settings.dagster_home / 'dagster.yaml'} is not Speedbook's and its run "
                f"queue may start two runs on this warehouse at once (add a tag limit of 1 per "
                f'value of {WAREHOUSE_TAG}: README "Running unattended"); the warehouse lock '
                "still fails the second",
                file=sys.stderr,
            )
    executable = shutil.which("dagster") or os.path.join(os.path.dirname(sys.executable), "dagster")
    if not os.path.exists(executable):
        raise CommandError("the `dagster` command is not installed; run `make install`")
    env = os.environ | {
        "DAGSTER_HOME": str(settings.dagster_home),
        ENV_REGISTRY: str(settings.registry),
        ENV_WAREHOUSE: str(settings.warehouse),
        ENV_EXPORTS: str(settings.exports),
        ENV_METADATA: str(settings.metadata),
    }
    if args.schedules_running:
        env[ENV_SCHEDULES] = SCHEDULES_RUNNING
    command = [
        executable,
        "dev",
        "-m",
        "pipeline.definitions",
        "-h",
        args.host,
        "-p",
        str(args.port),
    ]
    print(f"DAGSTER_HOME={settings.dagster_home} {' '.join(command)}")
    os.execve(executable, command, env)
    return 0  # not reached

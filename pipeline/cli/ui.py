"""`speedbook ui`: open the Dagster UI on the instance that `speedbook build` writes to.

`dagster dev` starts the webserver and the daemon (which start code servers) and stops them on
Ctrl-C only: a SIGTERM or SIGHUP (`kill`, a closed terminal, a service manager) ended it and left
them running, and a background job started by a shell ignores SIGINT. So `speedbook ui` runs
`dagster dev` as the leader of a process group of its own and stays as its supervisor: on
SIGTERM, SIGINT or SIGHUP it asks `dagster dev` to shut its services down (SIGINT, what Ctrl-C
sends), then stops whatever of the group is left (SIGTERM, then SIGKILL), and exits.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import FrameType

from pipeline.support.errors import CommandError
from pipeline.support.settings import (
    ENV_CATALOG,
    ENV_DAGSTER_STORAGE,
    ENV_EXPORTS,
    ENV_LAKE_DATA,
    ENV_METADATA,
    ENV_REGISTRY,
    ENV_SCHEDULES,
    ENV_SNAPSHOTS,
    ENV_WAREHOUSE,
    SCHEDULES_RUNNING,
    Settings,
)

NAME = "ui"
HELP = "open the Dagster UI (dagster dev) on this project's instance"
DESCRIPTION = (
    "Run `dagster dev -m pipeline.definitions` with DAGSTER_HOME set to <warehouse>/dagster, so "
    "the runs `speedbook build` made appear with their history (stored there in SQLite, or in "
    "PostgreSQL when SPEEDBOOK_DAGSTER_STORAGE holds a postgresql:// URL). `dagster dev` also "
    "runs the daemon: the schedules (one per cadence of the registry's [cadences] table: fetch "
    "what is due, build, publish when content changed) and the run queue, which starts one run "
    "at a time per warehouse. Schedules start stopped: turn them on in the UI (Automation), with "
    "`dagster schedule start`, or with --schedules-running. The UI does not take the "
    "warehouse lock (it would stop every `speedbook build` while it is open); every run "
    "launched from it does, and fails at once while a `speedbook build` holds it. SIGTERM, "
    "SIGINT (Ctrl-C) or SIGHUP stop it with the webserver, daemon and code servers it started."
)
EXAMPLES = (
    "speedbook ui                       # http://127.0.0.1:3000",
    "speedbook ui --port 3100 --schedules-running &",
    "kill %1                            # stops the webserver, daemon and code servers too",
)
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
SHUTDOWN_GRACE_S = 30.0  # for dagster dev to stop its services as on Ctrl-C
TERMINATE_GRACE_S = 5.0  # for what is left of the group after a SIGTERM


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
    from pipeline.dagster.envelope import BuildRefused
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

    try:
        instance = dagster_instance(settings)  # creates the instance folder and dagster.yaml
    except BuildRefused as error:  # a storage setting that is not a PostgreSQL URL
        raise CommandError(str(error)) from None
    with instance:
        if not queues_one_run_per_warehouse(instance):
            print(
                f"note: {settings.dagster_home / 'dagster.yaml'} is not Speedbook's and its run "
                f"queue may start two runs on this warehouse at once (add a tag limit of 1 per "
                f"value of {WAREHOUSE_TAG}: docs/operations.md); the warehouse lock "
                "still fails the second",
                file=sys.stderr,
            )
    executable = shutil.which("dagster") or os.path.join(os.path.dirname(sys.executable), "dagster")
    if not os.path.exists(executable):
        raise CommandError("the `dagster` command is not installed; run `make install`")
    # the code location and the runs it launches read the same settings from these
    env = os.environ | {
        "DAGSTER_HOME": str(settings.dagster_home),
        ENV_REGISTRY: str(settings.registry),
        ENV_WAREHOUSE: str(settings.warehouse),
        ENV_EXPORTS: str(settings.exports),
        ENV_METADATA: str(settings.metadata),
        ENV_CATALOG: settings.catalog,
        ENV_LAKE_DATA: settings.lake_data,
        ENV_SNAPSHOTS: settings.snapshots,
        ENV_DAGSTER_STORAGE: settings.dagster_storage,
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
    print(f"DAGSTER_HOME={settings.dagster_home} {' '.join(command)}", flush=True)
    return supervise(command, env)


def group_members(pgid: int) -> list[int]:
    """The live (not zombie) processes of process group `pgid`: from /proc where there is one,
    else any process the group still has, as kill(0) sees it."""
    proc = Path("/proc")
    if not proc.is_dir():
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return []
        except PermissionError:
            pass
        return [pgid]
    members = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # gone meanwhile
        # pid (comm) state ppid pgrp ...: comm may hold spaces and brackets, so split after it
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 2 and fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(int(entry.name))
    return members


def wait_for_group(pgid: int, seconds: float) -> bool:
    """Wait until no process of the group is alive; False when some still are after `seconds`."""
    deadline = time.monotonic() + seconds
    while group_members(pgid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.1)
    return True


def _wait(child: subprocess.Popen[bytes], seconds: float) -> None:
    with contextlib.suppress(subprocess.TimeoutExpired):
        child.wait(timeout=seconds)


def stop_group(child: subprocess.Popen[bytes], *, grace: float | None = None) -> list[str]:
    """Stop `child` (a process group leader) and everything of its group: SIGINT for its own
    shutdown, then SIGTERM, then SIGKILL to what is left. Returns the signals that had to be
    sent to the group."""
    pgid = child.pid
    if child.poll() is None:
        child.send_signal(signal.SIGINT)
        _wait(child, SHUTDOWN_GRACE_S if grace is None else grace)
    forced: list[str] = []
    for stop in (signal.SIGTERM, signal.SIGKILL):
        if child.poll() is not None and not group_members(pgid):
            break
        forced.append(stop.name)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, stop)
        _wait(child, TERMINATE_GRACE_S)
        wait_for_group(pgid, TERMINATE_GRACE_S)
    child.wait()  # reaped: its pid is free, and no zombie is left in the group
    return forced


def supervise(command: Sequence[str], env: Mapping[str, str]) -> int:
    """Run `command` as the leader of a new process group and wait for it. On SIGTERM, SIGINT or
    SIGHUP, stop the whole group (stop_group) and return 0; when the command ends by itself,
    stop what it left of its group and return its status."""
    received: list[int] = []

    def note(signum: int, _frame: FrameType | None) -> None:
        received.append(signum)

    # handlers before the start: a signal ignored here (a shell's background job ignores
    # SIGINT) would stay ignored in the child, and dagster dev could not be asked to stop
    previous = {signum: signal.signal(signum, note) for signum in STOP_SIGNALS}
    try:
        child = subprocess.Popen(list(command), env=dict(env), start_new_session=True)
        try:
            while not received and child.poll() is None:
                _wait(child, 0.5)
        finally:
            if received:
                name = signal.Signals(received[0]).name
                say(f"{name}: stopping dagster dev, its webserver, daemon and code servers")
            forced = stop_group(child)
        if forced:
            say(f"what was left of them was stopped with {' and '.join(forced)}")
        if received:
            say("stopped")
            return 0
        return child.returncode
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def say(message: str) -> None:
    print(f"speedbook ui: {message}", file=sys.stderr, flush=True)

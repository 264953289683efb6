"""`speedbook ui`: open the Dagster UI on the instance that `speedbook build` writes to."""

from __future__ import annotations

import argparse
import os
import shutil
import sys

from pipeline.errors import CommandError
from pipeline.settings import ENV_EXPORTS, ENV_REGISTRY, ENV_WAREHOUSE, Settings

NAME = "ui"
HELP = "open the Dagster UI (dagster dev) on this project's instance"
DESCRIPTION = (
    "Run `dagster dev -m pipeline.definitions` with DAGSTER_HOME set to <warehouse>/dagster, so "
    "the runs `speedbook build` made appear with their history."
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=3000, help="web server port (default 3000)")
    parser.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")


def run(args: argparse.Namespace, settings: Settings) -> int:
    from pipeline.runner import dagster_instance

    dagster_instance(settings).dispose()  # creates the instance folder and dagster.yaml
    executable = shutil.which("dagster") or os.path.join(os.path.dirname(sys.executable), "dagster")
    if not os.path.exists(executable):
        raise CommandError("the `dagster` command is not installed; run `make install`")
    env = os.environ | {
        "DAGSTER_HOME": str(settings.dagster_home),
        ENV_REGISTRY: str(settings.registry),
        ENV_WAREHOUSE: str(settings.warehouse),
        ENV_EXPORTS: str(settings.exports),
    }
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

"""The `speedbook` command line. Each subcommand is a module of this package with
`NAME`, `HELP`, `DESCRIPTION`, `EXAMPLES` (shown under its --help), `configure(parser)` and
`run(args, settings) -> exit status`.

Every command module is imported to build the parser, so each imports at its top only what
`configure` needs and leaves the rest (Dagster, the release code) to `run`: `speedbook build`
with nothing new, every half hour, then costs its own work and not every command's imports."""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import NoReturn

from pipeline.cli.examples import with_examples
from pipeline.support.errors import CommandError
from pipeline.support.progress import log_to_stderr
from pipeline.support.settings import Settings

# The cyclic collector's generations for a command's process. A build holds a few hundred
# thousand long-lived objects (Dagster's definitions, a release in Python); at Python's default
# (700, 10, 10) the collections walk them again and again to free almost nothing: 1.5 s of a
# page scenario's day build, 0.5 s of a poll's; at these, half or less (docs/decisions.md).
COLLECTOR_THRESHOLDS = (10_000, 10, 10)

COMMAND_MODULES = (
    "build",
    "sources",
    "snapshot",
    "resolve",
    "ui",
    "fetch",
    "preview",
    "diff",
    "releases",
    "sql",
    "dictionary",
    "schemas",
    "validate",
    "maintain",
)


def _add_location_options(parser: argparse.ArgumentParser, *, nested: bool = False) -> None:
    """The location options on a command and on each of its actions (`snapshot list ...`), so
    they are accepted before or after the action. An action's copy has no default: argparse
    copies every attribute of an action's namespace over the command's, and a default there
    would erase a value given before the action."""
    default = argparse.SUPPRESS if nested else None
    group = parser.add_argument_group("locations")
    group.add_argument(
        "--registry",
        metavar="FILE",
        default=default,
        help="source registry (default: $SPEEDBOOK_REGISTRY, else pipeline/metadata/sources.toml)",
    )
    group.add_argument(
        "--warehouse",
        metavar="DIR",
        default=default,
        help="raw snapshots, the lake, Dagster instance (default: $SPEEDBOOK_WAREHOUSE, "
        "else ./warehouse)",
    )
    group.add_argument(
        "--snapshots",
        metavar="DIR|S3URL",
        default=default,
        help="the snapshot store: a folder or s3://bucket/prefix, credentials from the AWS_* "
        "variables (default: $SPEEDBOOK_SNAPSHOTS, else <warehouse>/raw)",
    )
    group.add_argument(
        "--exports",
        metavar="DIR",
        default=default,
        help="releases (default: $SPEEDBOOK_EXPORTS, else ./exports)",
    )
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            # choices maps each name and alias to its parser; add the options once per parser
            children = {id(child): child for child in action.choices.values()}
            for child in children.values():
                _add_location_options(child, nested=True)


def _load_commands(names: Sequence[str] = COMMAND_MODULES) -> dict[str, ModuleType]:
    modules = (importlib.import_module(f"pipeline.cli.{name}") for name in names)
    return {module.NAME: module for module in modules}


def _commands_for(argv: Sequence[str]) -> dict[str, ModuleType]:
    """The command modules the parser needs: only the one named when the first word names one
    (options come after the command), else all of them (`--help`, a mistyped command). So
    `speedbook build` with nothing new imports no other command's needs (DuckDB for `sql`, the
    identity rules for `resolve`: a quarter of a second of a build that does nothing)."""
    if argv and argv[0] in COMMAND_MODULES:
        return _load_commands((argv[0],))
    return _load_commands()


def build_parser(commands: dict[str, ModuleType] | None = None) -> argparse.ArgumentParser:
    commands = commands or _load_commands()
    parser = argparse.ArgumentParser(
        prog="speedbook",
        description="Build and inspect Speedbook, a versioned, source-graded dataset of LLM "
        "inference speed and model access.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, module in commands.items():
        child = sub.add_parser(name, help=module.HELP, description=module.DESCRIPTION)
        if hasattr(module, "EXAMPLES"):
            with_examples(child, module.EXAMPLES)
        module.configure(child)
        _add_location_options(child)
    return parser


def run() -> NoReturn:
    """The `speedbook` command."""
    gc.set_threshold(*COLLECTOR_THRESHOLDS)
    status = main()
    # Every object left is freed with the process: the interpreter's last collection would only
    # walk them (0.7 s after a build).
    gc.freeze()
    sys.exit(status)


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    commands = _commands_for(argv)
    args = build_parser(commands).parse_args(argv)
    log_to_stderr()
    settings = Settings.resolve(
        args.registry, args.warehouse, args.exports, snapshots=args.snapshots
    )
    try:
        return int(commands[args.command].run(args, settings))
    except CommandError as error:
        print(f"speedbook {args.command}: error: {error}", file=sys.stderr)
        return error.status
    except KeyboardInterrupt:
        print(f"speedbook {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `speedbook sql ... | head`: the reader has what it wanted
        # stdout is gone: point it at /dev/null so the interpreter's final flush stays quiet
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, as a shell reports a command killed by it

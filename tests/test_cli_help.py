"""Every `speedbook` command (and every `snapshot` action) has a --help with examples, every
example is a command line the real parser accepts, and docs/commands.md names every command."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

import pytest

from pipeline.cli import COMMAND_MODULES, build_parser
from pipeline.cli.examples import HEADING

DOCS = Path(__file__).parents[1] / "docs" / "commands.md"
SHELL = {">", ">>", "<", "|", "&", "&&", ";"}  # what follows is the shell's, not speedbook's


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _helps() -> dict[str, argparse.ArgumentParser]:
    """`build`, ..., and `snapshot add`, ...: every parser a user asks --help of."""
    found = {}
    for name, parser in _subparsers(build_parser()).items():
        found[name] = parser
        found |= {f"{name} {action}": child for action, child in _subparsers(parser).items()}
    return found


def _examples(parser: argparse.ArgumentParser) -> list[list[str]]:
    """The example command lines of a parser's --help, as argv after `speedbook`."""
    epilog = parser.epilog or ""
    assert epilog.startswith(HEADING), parser.prog
    lines = []
    for line in epilog.splitlines()[1:]:
        words = shlex.split(line, comments=True)
        while words and "=" in words[0] and words[0] != "speedbook":
            words = words[1:]  # KEY=value before the command
        if words[:1] != ["speedbook"]:
            continue  # another command (kill %1)
        cut = next((i for i, word in enumerate(words) if word in SHELL), len(words))
        lines.append(words[1:cut])
    return lines


def test_every_command_and_action_has_help():
    helps = _helps()
    assert set(COMMAND_MODULES) <= set(helps)
    assert {"snapshot add", "snapshot list", "snapshot verify", "snapshot remove"} <= set(helps)


@pytest.mark.parametrize("name", sorted(_helps()))
def test_every_help_has_examples_the_parser_accepts(name):
    parser = _helps()[name]
    assert parser.description or name.startswith("snapshot "), name
    examples = _examples(parser)
    assert examples, f"speedbook {name} --help has no example"
    assert any(" ".join(example).startswith(name) for example in examples), examples
    for example in examples:
        try:
            build_parser().parse_args(example)
        except SystemExit as error:  # argparse refused it
            pytest.fail(f"speedbook {' '.join(example)}: refused by the parser ({error})")
    assert HEADING in parser.format_help()


def test_docs_commands_names_every_command_with_an_example():
    text = DOCS.read_text(encoding="utf-8")
    for name in COMMAND_MODULES:
        (row,) = [line for line in text.splitlines() if line.startswith(f"| `{name}` |")]
        example = row.rstrip(" |").rsplit("| `", 1)[1].rstrip("`")
        words = shlex.split(example)
        assert words[:2] == ["speedbook", name], row
        build_parser().parse_args(words[1:])  # argparse exits (a failure) if it refuses it

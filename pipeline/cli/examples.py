"""Examples under every command's --help: a command module's EXAMPLES (the command lines, each
with an optional `# comment`), shown as they are written while the description above them is
wrapped as usual. tests/test_cli_help.py parses every example with the real parser."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

HEADING = "examples:"


class ExamplesFormatter(argparse.HelpFormatter):
    """argparse's formatter, except that the examples keep their lines."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith(HEADING):
            return text
        return super()._fill_text(text, width, indent)


def examples_epilog(lines: Sequence[str]) -> str:
    return HEADING + "\n" + "\n".join(f"  {line}" for line in lines)


def with_examples(parser: argparse.ArgumentParser, lines: Sequence[str]) -> None:
    """Show `lines` as the examples of `parser` (a command or one of its actions)."""
    parser.epilog = examples_epilog(lines)
    parser.formatter_class = ExamplesFormatter

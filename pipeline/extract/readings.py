"""Reading one record of a JSON API value by value, where a value that is not what the API
documents concerns that value alone: it is left null and quoted in the record's `unread` text,
and the rest of the record is staged. Shared by the per-endpoint statistics parsers of the
undocumented OpenRouter website API and of Vercel's AI Gateway.

A record that cannot be read at all (not an object, no identity) raises `Unreadable`; the parser
names it in the problem of the response it came from. `summary` is how such problems are listed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pipeline.extract.jsondoc import json_number
from pipeline.extract.prices import PER_TOKEN, usd_per_mtok
from pipeline.schema.staging import MAX_COUNT, MAX_PRICE_USD_PER_MTOK
from pipeline.support.text import clean_repeated_text, clean_text, shorten

SHOWN_PROBLEMS = 5  # problems quoted in one summary; the rest are counted
QUOTED = 40  # characters of a refused value quoted in a note


class Unreadable(Exception):
    """A value, a record or a response that cannot be read as its API documents it."""


class _Scope:
    """The `where` of jsondoc's readers: their errors become `Unreadable`."""

    def fail(self, message: str) -> Unreadable:
        return Unreadable(message)


SCOPE = _Scope()


def summary(problems: Sequence[str]) -> str | None:
    """The first few problems, '; '-joined, and how many more; None when there are none."""
    if not problems:
        return None
    # a problem may quote what the source sent: cleaned as any text from a source is
    shown = "; ".join(clean_text(problem, 200) for problem in problems[:SHOWN_PROBLEMS])
    more = len(problems) - SHOWN_PROBLEMS
    return shown + (f"; and {more} more" if more > 0 else "")


def label(value: Any, max_length: int = 500) -> str | None:
    """A string as clean text (markup and control characters removed); None for anything else
    or for a string with nothing left."""
    if type(value) is not str:
        return None
    return clean_repeated_text(value, max_length) or None


def _quoted(value: Any) -> str:
    return shorten(repr(value), QUOTED)


@dataclass
class Reading:
    """The values of one record, read one at a time; `notes` collects what was not read."""

    notes: list[str] = field(default_factory=list)

    @property
    def unread(self) -> str | None:
        """What was left null because it was not what the API documents; None when all was read."""
        return summary(self.notes)

    def _refuse(self, what: str, value: Any, expected: str) -> None:
        self.notes.append(f"{what} is {_quoted(value)}: expected {expected}")

    def number(self, value: Any, what: str, low: float, high: float) -> float | None:
        """A number from `low` to `high` (a JSON number, or a string holding one); None for null."""
        if value is None:
            return None
        try:
            number = json_number(SCOPE, value, what)
        except Unreadable:
            self._refuse(what, value, "a number")
            return None
        if not low <= number <= high:
            self._refuse(what, value, f"{low:g} to {high:g}")
            return None
        return number

    def positive(self, value: Any, what: str, bound: float, divisor: float = 1.0) -> float | None:
        """A figure above 0 and under `bound` once divided by `divisor` (milliseconds into
        seconds); None for null. A 0 is no figure of a speed or a time: it is left null."""
        if value is None:
            return None
        try:
            number = json_number(SCOPE, value, what) / divisor
        except Unreadable:
            self._refuse(what, value, "a number")
            return None
        if not 0 < number < bound:
            self._refuse(what, value, "a positive figure")
            return None
        return number

    def count(self, value: Any, what: str, *, zero: bool = False) -> int | None:
        """A whole number above 0 (0 too with `zero`), at most MAX_COUNT; None for null."""
        if value is None:
            return None
        low = 0 if zero else 1
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= MAX_COUNT:
            self._refuse(what, value, f"a whole number from {low} to {MAX_COUNT:,}")
            return None
        return value

    def code(self, value: Any, what: str) -> int | None:
        """A status code: any whole number within MAX_COUNT of 0; None for null."""
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or abs(value) > MAX_COUNT:
            self._refuse(what, value, "a whole number")
            return None
        return value

    def flag(self, value: Any, what: str) -> bool | None:
        if value is None or isinstance(value, bool):
            return value
        self._refuse(what, value, "true or false")
        return None

    def text(self, value: Any, what: str, max_length: int = 500) -> str | None:
        """A label as clean text; None for null. A value that is not a string is noted."""
        if value is None:
            return None
        if type(value) is not str:
            self._refuse(what, value, "a string")
            return None
        return label(value, max_length)

    def price_per_token(self, value: Any, what: str, *, variable: bool = False) -> float | None:
        """USD per token (a string or a number) as USD per million tokens; None for null, and
        with `variable` for -1, OpenRouter's mark of a variable price (its routers)."""
        if value is None:
            return None
        try:
            price = usd_per_mtok(SCOPE, value, what, per_tokens=PER_TOKEN, variable=variable)
        except Unreadable:
            self._refuse(what, value, "a price of 0 or more per token")
            return None
        if price is not None and price >= MAX_PRICE_USD_PER_MTOK:
            self._refuse(what, value, "a price per token")
            return None
        return price

    def mapping(self, value: Any, what: str) -> dict[str, Any]:
        """An object; {} for null, and for anything else (noted)."""
        if value is None:
            return {}
        if not isinstance(value, dict):
            self._refuse(what, value, "an object")
            return {}
        return value

    def names(self, value: Any, what: str) -> list[str] | None:
        """A list of strings (supported parameters); None for null or anything else (noted)."""
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            self._refuse(what, value, "a list of strings")
            return None
        return value
